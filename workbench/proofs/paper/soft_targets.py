"""Targets beyond hardmax (docs/derivations/soft_targets.md): the harmonic count for any odd
profile psi, checked against closed forms and an independent quadrature; the soft-nearest
bound reaching the hardmax one as beta -> inf; its monotonicity in beta (evidence); the
full-rank softmax head computing its own soft target exactly; trained low-rank models on the
soft target never below its bound (the workbench trainer, generalized attention).

Its test: ``tests/claims/test_soft_targets.py``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from workbench.core.bounds.profiles import profile_harmonic
from workbench.core.bounds.profiles.profile_energy import profile_energies
from workbench.core.harmonics import gegenbauer_transform
from workbench.core.profiles import Profile, sign_profile, tanh_profile
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim
from workbench.proofs.support.soft_training import soft_nearest_heldout

REF = "derivations/soft_targets.md"


def _monomial(k: int) -> Profile:
    return Profile(f"t^{k}", lambda t: np.asarray(t) ** k, sympy=lambda t: t**k,
                   key=("monomial", k))


@claim("targets.profile_energies", "eta_l(psi)^2 of an odd profile: closed forms for t and "
       "t^3, quadrature for tanh, Parseval", "lemma", depends_on=("harmonics.sign_coefficients",),
       statement="eta_l(psi) = E psi(t) sqrt(N(d,l)) P_l(t); sum_l eta_l^2 = E psi^2",
       ref=f"{REF}#step-s3-energy-per-degree-conditioning", mark="ours")
def profile_energies_claim(ctx: CheckContext) -> list[Evidence]:
    import sympy as sp

    from workbench.core.symbolic.targets import monomial_energies, profile_soft
    out: list[Evidence] = []
    dsym = sp.Symbol("d", positive=True)
    for d in ctx.pick((3, 7), (3, 4, 7, 16)):
        for k in (1, 3):
            e = profile_energies(_monomial(k), d, 7)
            exact = monomial_energies(k, dsym)
            for i, l in enumerate(range(1, 8, 2)):
                want = float(exact.get(l, sp.Integer(0)).subs(dsym, d))
                out.append(Evidence((e.lo[i] + e.hi[i]) / 2, want, "==", "interval",
                                    {"psi": f"t^{k}", "d": d, "l": l}, ci=(e.lo[i], e.hi[i]),
                                    ci_level=1.0, tolerance=1e-30,
                                    note="arb enclosure against the moment closed form"))
    t = sp.Symbol("t", real=True)
    for d, beta in ctx.pick(((8, 4.0),), ((5, 1.0), (8, 4.0), (12, 16.0))):
        e = profile_energies(tanh_profile(beta), d, 5)
        f = sp.lambdify(t, profile_soft(t, sp.Float(beta)), "mpmath")
        for i, l in enumerate((1, 3, 5)):
            q = float(gegenbauer_transform(f, d, l, dps=25)) ** 2
            out.append(Evidence((e.lo[i] + e.hi[i]) / 2, q, "==", "interval",
                                {"psi": f"tanh({beta} t/sqrt2)", "d": d, "l": l},
                                ci=(e.lo[i], e.hi[i]), ci_level=1.0, tolerance=1e-15,
                                note="arb enclosure against mpmath tanh-sinh quadrature"))
        full = profile_energies(tanh_profile(beta), d, 81)
        out.append(Evidence(sum(full.lo), full.total[0], "==", "interval",
                            {"psi": f"tanh({beta} t/sqrt2)", "d": d, "L": 81},
                            ci=(sum(full.lo), sum(full.hi)), ci_level=1.0, tolerance=1e-9,
                            note="Parseval: sum of the degree energies = E psi^2"))
    return out


@claim("targets.soft_harmonic_bound", "The harmonic count for the soft target tanh(beta t/"
       "sqrt2): an independent evaluation, and beta -> inf reaches the hardmax bound", "theorem",
       depends_on=("targets.profile_energies", "thm2.harmonic_bound"),
       statement="err >= 1/2 sum_{l odd} eta_l(psi_beta)^2 (1 - min(1, H D_l/N)); "
       "x - sqrt(2x) delta <= LB(psi_beta) <= x + sqrt(2x) delta + delta^2/2, x = LB(sign), "
       "delta = ||psi_beta - sign||",
       ref=f"{REF}#step-s5-the-result", mark="ours")
def soft_harmonic_bound_claim(ctx: CheckContext) -> list[Evidence]:
    from workbench.core.bounds.profiles.soft_limit import distance_to_sign
    from workbench.proofs.support.soft_reference import (
        independent_profile_bound,
        mp_distance_to_sign,
    )

    out: list[Evidence] = []
    for beta, d, r, H in ctx.pick(((4.0, 6, 1, 2), (16.0, 8, 2, 1)),
                                  ((4.0, 6, 1, 2), (16.0, 8, 2, 1), (1.0, 4, 1, 1),
                                   (8.0, 12, 3, 4))):
        b = profile_harmonic.profile_bound(tanh_profile(beta), d, r, H, max_degree=21)
        series = b.bound_value.part(profile_harmonic.SERIES).enclosure
        lo, hi = independent_profile_bound(beta, d, r, H, 21)
        out.append(Evidence((lo + hi) / 2, (series[0] + series[1]) / 2, "==", "interval",
                            {"beta": beta, "d": d, "r": r, "H": H, "L": 21}, ci=(lo, hi),
                            ci_level=1.0, tolerance=1e-12,
                            note="library (arb, the tail counted) inside the mpmath energies, "
                            "math.comb counts and the counted rest of E psi^2"))
    # step S6: the library's ||psi_beta - sign||^2 against mpmath, and the gap to hardmax
    for d, r, H in ctx.pick(((6, 1, 2),), ((6, 1, 2), (8, 2, 1))):
        hard = profile_harmonic.profile_bound(sign_profile(), d, r, H).enclosure[0]
        for beta in (64.0, 1024.0):
            enc = distance_to_sign(beta, d)
            ref = mp_distance_to_sign(beta, d)
            out.append(Evidence((enc[0] + enc[1]) / 2, ref, "==", "interval",
                                {"beta": beta, "d": d}, ci=enc, ci_level=1.0, tolerance=1e-12,
                                note="||psi_beta - sign||^2: arb enclosure vs mpmath"))
            soft = profile_harmonic.profile_bound(tanh_profile(beta), d, r, H)
            out.append(Evidence(abs(soft.enclosure[0] - hard),
                                math.sqrt(2 * hard * ref) + ref / 2, "<=", "interval",
                                {"beta": beta, "d": d, "r": r, "H": H}, tolerance=1e-12,
                                note="beta -> inf: |LB(psi_beta) - LB(sign)| <= sqrt(2 LB(sign))"
                                " delta + delta^2/2 (step S6), which -> 0"))
    return out


@claim("targets.soft_bound_monotone", "The soft-nearest harmonic count is non-decreasing in "
       "beta (evidence; proved for degree 1 only)", "conjecture",
       depends_on=("targets.soft_harmonic_bound",), ref=f"{REF}#monotonicity-in-beta",
       mark="ours")
def soft_bound_monotone_claim(ctx: CheckContext) -> list[Evidence]:
    out: list[Evidence] = []
    betas = ctx.pick((1.0, 4.0, 16.0), (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0))
    for d, r, H in ctx.pick(((6, 1, 2), (8, 2, 1)), ((6, 1, 2), (8, 2, 1), (12, 1, 4),
                                                      (16, 3, 2))):
        vals = [profile_harmonic.profile_bound(tanh_profile(b), d, r, H, max_degree=31)
                for b in betas]
        for a, b, beta in zip(vals, vals[1:], betas[1:]):
            out.append(Evidence(b.enclosure[1], a.enclosure[0], ">=", "interval",
                                {"beta": beta, "d": d, "r": r, "H": H, "L": 31},
                                note="LB(beta) >= LB(previous beta)"))
    return out


@claim("targets.full_rank_soft_exact", "One full-rank head at inverse temperature beta "
       "computes the soft target exactly (the separation at finite temperature)", "fact",
       ref=f"{REF}#the-separation-at-finite-temperature", mark="ours", threads=1, no_grad=True)
def full_rank_soft_exact_claim(ctx: CheckContext) -> list[Evidence]:
    from workbench.constructions.full_rank import full_rank_model
    from workbench.core.sphere import sample_instances
    from workbench.core.targets import profile_target, soft_nearest_neighbour

    out: list[Evidence] = []
    for d, beta, N in ctx.pick(((6, 4.0, 2), (8, 16.0, 5)),
                               ((6, 4.0, 2), (8, 16.0, 5), (16, 1.0, 2), (4, 64.0, 3))):
        X, y = sample_instances(4000, N, d, "orthonormal", generator=ctx.seed)
        A = full_rank_model(d, beta)(X, y)
        err = float((A - soft_nearest_neighbour(X, y, beta)).norm(dim=-1).max())
        out.append(Evidence(err, 0.0, "==", "exact", {"d": d, "beta": beta, "N": N},
                            tolerance=1e-12, note="max |A - X softmax(beta X^T y)| in float64"))
        if N == 2:
            f = profile_target(X, y, tanh_profile(beta).psi)
            err2 = float((A - f).norm(dim=-1).max())
            out.append(Evidence(err2, 0.0, "==", "exact", {"d": d, "beta": beta, "N": 2},
                                tolerance=1e-12,
                                note="max |A - (u + psi_beta(<y,w>) w)/sqrt2|: the profile"))
    return out


@claim("targets.trained_respect_soft_bound", "Trained low-rank models on the soft target never "
       "beat its harmonic count", "experiment", depends_on=("targets.soft_harmonic_bound",),
       ref=f"{REF}#evidence-against-models", mark="ours", threads=1)
def trained_respect_soft_bound_claim(ctx: CheckContext) -> list[Evidence]:
    out: list[Evidence] = []
    steps = ctx.pick(150, 600)
    for d, r, H, beta in ctx.pick(((6, 1, 1, 8.0), (6, 1, 2, 4.0)),
                                  ((6, 1, 1, 8.0), (6, 1, 2, 4.0), (8, 2, 2, 16.0))):
        est = soft_nearest_heldout(d, r, H, beta, "orthonormal", seed=ctx.seed, steps=steps,
                                   eval_seed=ctx.seed + 1)
        b = profile_harmonic.profile_bound(tanh_profile(beta), d, r, H)
        out.append(Evidence.estimate(est, ">=", b.enclosure[0], "trained",
                                     {"d": d, "r": r, "H": H, "beta": beta, "steps": steps},
                                     note="held-out error of a trained Eq. 2 layer against "
                                     "the soft target's harmonic count"))
    return out


def _softmax_target(X: Any, y: Any, beta: float) -> Any:
    from workbench.core.targets import soft_nearest_neighbour

    return soft_nearest_neighbour(X, y, beta)


@claim("targets.one_head_witness_exact", "One Bayes head (M = I) on a soft target has error "
       "1/2 (E psi^2 - sum_l eta_l(psi)^2 C(l+r-1,r-1)/N(d,l)): against its own Monte Carlo",
       "lemma", depends_on=("targets.profile_energies", "thm2.one_head_exact"),
       statement="E||f - X phi||^2 = 1/2 (E psi^2 - sum_l eta_l(psi)^2 C(l+r-1, r-1)/N(d,l)), "
       "2 phi_1 - 1 = E[psi(<y,w>) | P w, y]",
       ref="derivations/witnesses_beyond_two.md#one-head-any-profile", mark="ours",
       threads=1, no_grad=True)
def one_head_witness_exact_claim(ctx: CheckContext) -> list[Evidence]:
    """The exact error (arb energies) against the head's Monte Carlo error: its output formed
    from the keys, the target the softmax of ``core.targets`` (not the profile form)."""
    from workbench.constructions.optimized import DELTA, bernstein_ci
    from workbench.constructions.profile_one_head import (
        profile_one_head_error,
        profile_one_head_losses,
    )
    out: list[Evidence] = []
    n = ctx.pick(200_000, 1_000_000)
    for d, r, beta in ctx.pick(((8, 1, 4.0), (6, 2, 16.0)),
                               ((8, 1, 4.0), (6, 2, 16.0), (16, 1, 1.0), (12, 5, 8.0))):
        exact = profile_one_head_error(tanh_profile(beta), d, r)
        lo, hi = exact.enclosure
        x = profile_one_head_losses(tanh_profile(beta).psi, d, r, n, ctx.seed + d + r,
                                    target=functools.partial(_softmax_target, beta=beta))
        ci = bernstein_ci(x, 2.0)
        out.append(Evidence(float(x.mean()), (lo + hi) / 2, "==", "monte_carlo",
                            {"d": d, "r": r, "beta": beta, "n": n, "exact": [lo, hi],
                             "degrees": exact.degrees_summed},
                            ci=ci, ci_level=1 - DELTA, tolerance=(hi - lo) / 2,
                            interval="bernstein", resolution=0.01,
                            note="empirical-Bernstein CI of the Bayes head's error vs the "
                            "exact series (its truncation as tolerance)"))
    return out
