"""The bound beyond two keys (3 <= N <= d-2 on D_N; docs/derivations/beyond_two_keys.md):
its steps checked on data, and its rigorous value against an independent computation whose
theoretical side (the fiber's dimension, the count D_l, the pairs' factor, Parseval's total)
comes from the sympy encoding ``workbench.core.symbolic.n_keys``.

Its test: ``tests/claims/test_beyond_two_keys.py``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from workbench.core.bounds.sequence_length.n_keys import degree_count, n_keys_bound
from workbench.core.bounds.sequence_length.n_keys_energy import coefficient, energy_enclosures
from workbench.core.intervals import bonferroni_level
from workbench.core.invariant_harmonics import fiber_head_rank
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim
from workbench.proofs.support.n_keys_fiber import (
    fiber_coordinates,
    independent_energies,
    nearest_t,
    u_statistic,
)

if TYPE_CHECKING:
    import sympy as sp


REF = "derivations/beyond_two_keys.md"
L_INDEP = 21  # degrees of the independent evaluation (the bound's default truncation)
# (d, r, H, N): quick, then the full-scale additions
VALUE_POINTS = ((8, 1, 2, 3), (10, 1, 4, 4), (10, 2, 1, 4), (11, 1, 3, 5))
VALUE_POINTS_FULL = ((16, 1, 8, 4), (16, 2, 4, 6), (12, 1, 16, 3))
RANK_CASES = ((5, 1, 3, 2), (6, 2, 3, 2), (5, 1, 5, 2))  # (n, r, l, linear forms)


def _subs(expr: sp.Expr, **vals: int) -> sp.Expr:
    from workbench.core.symbolic.n_keys import l_
    from workbench.core.symbolic.symbols import H as H_sym
    from workbench.core.symbolic.symbols import N as N_sym
    from workbench.core.symbolic.symbols import d as d_sym
    from workbench.core.symbolic.symbols import r as r_sym
    names = {"d": d_sym, "r": r_sym, "H": H_sym, "N": N_sym, "l": l_}
    return expr.subs({names[k]: v for k, v in vals.items()})


def independent_bound(d: int, r: int, H: int, N: int) -> tuple[float, float]:
    """``(value, tolerance)``: the bound from the sympy encoding's n, D_l, (N-1)/2 and 2/N with
    ``Gamma_l`` by float tensor quadrature; the degrees above ``L_INDEP`` are credited with the
    loss ``1 - m_{L+2}``, exact up to ``tolerance`` (``m_l`` decreases in l)."""
    from workbench.core.symbolic.n_keys import (
        count_expr,
        fiber_dim_expr,
        pair_factor_expr,
        parseval_total,
    )
    n = int(_subs(fiber_dim_expr(), d=d, N=N))
    gam = independent_energies(d, N, L_INDEP, grid=120)

    def loss(l: int) -> float:
        big = (2 * l + n - 2) * math.comb(l + n - 3, l - 1) // l
        count = int(_subs(count_expr("eq2"), d=d, r=r, N=N, l=l))
        return max(0.0, 1.0 - H * count / big)

    kept = sum(g * loss(l) for g, l in zip(gam, range(1, L_INDEP + 1, 2)))
    tail = float(_subs(parseval_total(), N=N)) - float(gam.sum())
    factor = float(_subs(pair_factor_expr(), N=N))
    last = loss(L_INDEP + 2)
    return factor * (kept + tail * last), factor * max(tail, 0.0) * (1 - last) + 1e-9


@claim("nkeys.bound_value", "The bound beyond two keys: its rigorous enclosure against an "
       "independent evaluation at several (d, r, H, N)", "theorem",
       depends_on=("nkeys.steps",),
       statement="err >= (N-1)/2 sum_{l odd} Gamma_l (1 - min(1, H D_l/N(n,l))), n = d - N + 1, "
       "for every Eq. 2 model on D_N, 3 <= N <= d-2",
       ref=f"{REF}#result", mark="ours", threads=1)
def bound_value_claim(ctx: CheckContext) -> list[Evidence]:
    out = []
    for d, r, H, N in ctx.pick(VALUE_POINTS, VALUE_POINTS + VALUE_POINTS_FULL):
        bv = n_keys_bound(d, r, H, N)
        lo, hi = bv.enclosure
        want, tol = independent_bound(d, r, H, N)
        miss = max(lo - want, want - hi, 0.0)
        out.append(Evidence.identity(miss, {"d": d, "r": r, "H": H, "N": N, "bound": lo},
                                     tolerance=tol + 1e-7 * abs(want),
                                     note="distance of the independent value from the enclosure"))
        out.append(Evidence.identity(float(not bv.rigorous), {"d": d, "N": N},
                                     note="the enclosure is rigorous"))
    return out


def _fiber_form(n_draws: int, d: int, N: int) -> Evidence:
    from workbench.core.sphere import sample_instances
    Xt, yt = sample_instances(n_draws, N, d, points="orthonormal", generator=d * 31 + N)
    X, y = Xt.numpy(), yt.numpy()
    _, c, kap = fiber_coordinates(X, y)
    wrong = int((nearest_t(X, y) != np.sign(c) * (np.abs(c) > kap)).sum())
    return Evidence.identity(wrong, {"d": d, "N": N, "draws": n_draws},
                             note="draws where t differs from sign(c) 1[|c| > kappa]")


@claim("nkeys.steps", "The steps of the bound beyond two keys on data: the fiber form of the "
       "target, the closed form of gamma_l, the linear-form count, Parseval and the energies "
       "against a U-statistic", "lemma", ref=f"{REF}#step-5-the-target-on-the-fiber",
       mark="ours", threads=1)
def steps_claim(ctx: CheckContext) -> list[Evidence]:
    import sympy as sp
    import torch

    from workbench.core.montecarlo import sample_mean
    from workbench.core.symbolic.n_keys import gamma_closed_form, kappa, parseval_total
    out = [_fiber_form(ctx.pick(4000, 40_000), d, N) for d, N in ((8, 3), (10, 6))]
    for n, l, k in ((5, 3, 0.4), (9, 5, 0.15)):  # the sympy closed form against arb's
        exact = float(gamma_closed_form(n, l).subs(kappa, sp.Rational(k)).evalf(30))
        out.append(Evidence.identity(abs(exact - float(coefficient(n, l, k).mid())),
                                     {"n": n, "l": l, "kappa": k}, tolerance=1e-12,
                                     note="gamma_l(kappa): sympy closed form vs the arb one"))
    for n, r, l, lin in RANK_CASES:
        N = lin + 1
        rank = fiber_head_rank(n, r, l, lin, seed=ctx.seed + 7)
        out.append(Evidence.identity(max(0, rank - degree_count(n + N - 1, r, N, l)),
                                     {"n": n, "r": r, "l": l, "linear": lin, "rank": rank},
                                     note="numerical rank of one head's degree-l space above "
                                     "D_l"))
    for d, N in ((9, 3), (10, 4)):
        e = energy_enclosures(d, N, 61)
        over = sum(lo for lo, _ in e) - float(_subs(parseval_total(), N=N))
        out.append(Evidence.identity(max(over, 0.0), {"d": d, "N": N, "degrees": 61},
                                     note="sum_{l <= 61} Gamma_l above 2/N"))
    level = bonferroni_level(3)
    rng = np.random.default_rng(ctx.seed + 401)
    for d, N, l in ((8, 3, 1), (9, 4, 1), (9, 5, 1)):
        vals = torch.from_numpy(u_statistic(ctx.pick(60_000, 400_000), d, N, l, rng))
        lo, hi = energy_enclosures(d, N, l)[-1]
        out.append(Evidence.estimate(sample_mean(vals, level, "normal"), "==", (lo + hi) / 2,
                                     params={"d": d, "N": N, "l": l}, resolution=0.04,
                                     note="U-statistic of Gamma_l over two fiber draws"))
    return out
