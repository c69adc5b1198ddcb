"""The one-head Bayes witness on D_N (docs/derivations/witnesses_beyond_two.md, "One head, N
keys"): at N = 2 its Bayes error is the exact one-head formula (the harmonic series, an
independent computation); beyond two keys its measured error never lies below the N >= 3 bound
B_N (``workbench.core.bounds.sequence_length.n_keys``).

Its test: ``tests/claims/test_witnesses.py``.
"""

from __future__ import annotations

from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

REF = "derivations/witnesses_beyond_two.md#one-head-n-keys"


@claim("witnesses.nkeys_one_head", "One Bayes head on D_N: the exact one-head error at N = 2, "
       "never below B_N beyond", "lemma", depends_on=("thm2.one_head_exact",),
       statement="1 - E|p|^2 = 1/2 (1 - sum_l eta_l^2 C(l+r-1,r-1)/N(d,l)) at N = 2; "
       "err(witness) >= B_N for 3 <= N <= d - 2",
       ref=REF, mark="ours", threads=1, no_grad=True)
def nkeys_one_head_claim(ctx: CheckContext) -> list[Evidence]:
    from workbench.constructions.nkeys_one_head import (
        bayes_error_estimate,
        nkeys_one_head_losses,
    )
    from workbench.constructions.optimized import DELTA, bernstein_ci, one_head_exact_error
    from workbench.core.bounds.sequence_length.n_keys import n_keys_bound

    out: list[Evidence] = []
    n = ctx.pick(12_800, 64_000)
    for d, r in ctx.pick(((6, 1),), ((6, 1), (8, 2))):
        est, se = bayes_error_estimate(d, r, 2, n, seed=ctx.seed + 11)
        lo, hi = one_head_exact_error(d, r)
        out.append(Evidence(est, (lo + hi) / 2, "==", "monte_carlo",
                            {"d": d, "r": r, "N": 2, "n": n, "exact": [lo, hi]},
                            ci=(est - 4 * se, est + 4 * se), ci_level=0.9999,
                            tolerance=(hi - lo) / 2, interval="normal", resolution=0.01,
                            note="two independent inner sets per batch, 4 standard errors of "
                            "the batch means, against the harmonic series"))
    m = ctx.pick(5_000, 20_000)
    for d, r, N in ctx.pick(((8, 1, 3), (12, 2, 5)), ((8, 1, 3), (12, 2, 5), (16, 1, 6))):
        loss = nkeys_one_head_losses(d, r, N, m, ctx.seed + 100 + N)
        ci = bernstein_ci(loss, 2.0)
        b = n_keys_bound(d, r, 1, N)
        out.append(Evidence(float(loss.mean()), b.value, ">=", "monte_carlo",
                            {"d": d, "r": r, "H": 1, "N": N, "n": m,
                             "bound_rigorous": b.rigorous},
                            ci=ci, ci_level=1 - DELTA, interval="bernstein",
                            note="the witness's measured error against B_N at H = 1"))
    return out
