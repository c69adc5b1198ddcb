"""The fiber bound for a soft profile (docs/derivations/soft_targets.md, step F, Lemmas P1-P5)
against an evaluation that shares no code with it.

Monte Carlo over ``c ~ Beta(Hr/2, m/2)`` (numpy's sampler); the profile's energies by scipy's
Gauss-Jacobi rule in ``t`` (the library: arb integrals in the angle); the kernel
``k_psi = sum_l eta_l^2 P_l`` by scipy's Gegenbauer polynomials; each fiber's eigenvalues by
Gauss-Jacobi quadrature of ``k_psi(c + (1-c) t) P_j(t)`` (the library: exact cosine series);
the Ky Fan sum by expanding the multiplicities; a bounded-values interval on
``1/2 (E_L - KyFan)``. Compared with ``direct_fiber_part`` at the same truncation L, both value
classes, several beta.

Its test: ``tests/claims/test_soft_fiber.py``.
"""

from __future__ import annotations

import math

import numpy as np

from workbench.core.bounds import EQ2, QUERY_VALUES
from workbench.core.bounds.profiles import profile_fiber as pf
from workbench.core.profiles import tanh_profile
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

RESOLUTION = 0.004  # a 3-5 % departure of bounds of 0.06-0.37

REF = "derivations/soft_targets.md"


def value_evidence(beta: float, d: int, r: int, H: int, vc: str, L: int, n: int,
                   seed: int) -> Evidence:
    import torch

    from workbench.core.montecarlo import sample_mean
    from workbench.proofs.support.soft_reference import fiber_values, scipy_energies, top_sum
    r_star, m = H * r, d - H * r
    e = scipy_energies(beta, d, L)
    c = np.random.default_rng(seed).beta(r_star / 2, m / 2, size=n)
    vals, mult = fiber_values(e, d, m, c)
    count = H if vc == EQ2 else sum(mult)
    total = sum(e.values())
    err = 0.5 * (total - top_sum(vals, mult, count))
    est = sample_mean(torch.from_numpy(err), 0.999, "bounded", (0.0, 0.5))
    bound = pf.direct_fiber_part(tanh_profile(beta), d, r, H, vc, L).lower
    return Evidence.estimate(est, "==", bound,
                             params={"beta": beta, "d": d, "r": r, "H": H, "class": vc, "L": L,
                                     "n": n}, resolution=RESOLUTION,
                             note="Monte Carlo over c ~ Beta, scipy kernel and fiber "
                             "quadrature vs direct_fiber_part")


@claim(
    "targets.profile_fiber_value",
    "The fiber bound of the soft profile tanh(beta t/sqrt2) equals an independent Monte Carlo "
    "over c ~ Beta at several beta and both value classes",
    "lemma",
    depends_on=("thm2.fiber_value", "targets.profile_energies"),
    statement="F_L(psi) = 1/2 (sum_{l<=L} eta_l^2 - E_c KyFan_H(c)), fiber values of the kernel "
    "sum_{l<=L} eta_l^2 P_l",
    ref=f"{REF}#step-f-the-fiber-bound-for-a-profile",
    mark="ours",
)
def profile_fiber_value_claim(ctx: CheckContext) -> list[Evidence]:
    n = ctx.pick(20_000, 100_000)
    quick = ((4.0, 8, 1, 4, EQ2, 21), (16.0, 8, 1, 2, EQ2, 41), (8.0, 8, 1, 2, QUERY_VALUES, 31),
             (4.0, 6, 5, 1, EQ2, 21))
    full = (*quick, (16.0, 16, 1, 8, EQ2, 41), (1.0, 8, 1, 1, EQ2, 11),
            (16.0, 6, 1, 1, EQ2, 41), (4.0, 16, 1, 4, QUERY_VALUES, 21))
    return [value_evidence(b, d, r, H, vc, L, n, ctx.seed + 1310 + i)
            for i, (b, d, r, H, vc, L) in enumerate(ctx.pick(quick, full))]


def mixture_quadrature(beta: float, d: int, r: int, H: int, nodes: int) -> float:
    """``E_t[(1 - t) B(psi_{beta sqrt(1-t)})]`` by scipy's Gauss-Jacobi rule in t (weight
    ``(1 - t^2)^{(d-3)/2}``), B the library's D_2 bound at each node (the mixture step only is
    independent here; B is checked by the claims above and by targets.soft_harmonic_bound)."""
    from scipy.special import roots_jacobi

    from workbench.core.bounds.profiles.profile_fiber import profile_lower_bound

    t, w = roots_jacobi(nodes, (d - 3) / 2, (d - 3) / 2)
    w = w / w.sum()
    vals = [profile_lower_bound(tanh_profile(beta * math.sqrt(1 - x)), d, r, H).value for x in t]
    return float(np.sum(w * (1 - t) * np.array(vals)))


@claim(
    "targets.soft_iid_mixture",
    "On i.i.d. keys the soft-nearest bound is the mixture E_t[(1-t) B(psi_{beta sqrt(1-t)})]: "
    "the proved lower sum lies below a quadrature of the mixture and within 1 % of it, and "
    "trained models on i.i.d. keys stay above it",
    "lemma",
    depends_on=("targets.profile_fiber_value",),
    statement="soft_iid_bound <= E_t[(1-t) B(psi_{beta sqrt(1-t)})], t ~ (1-t^2)^{(d-3)/2}",
    ref=f"{REF}#step-t-the-iid-transfer-it-becomes-a-mixture",
    mark="ours",
)
def soft_iid_mixture_claim(ctx: CheckContext) -> list[Evidence]:
    from workbench.core.bounds.profiles.profile_iid import soft_iid_bound

    out = []
    for beta, d, r, H in ctx.pick(((1.0, 8, 1, 1), (4.0, 6, 1, 2)),
                                  ((1.0, 8, 1, 1), (4.0, 6, 1, 2), (2.0, 6, 1, 1),
                                   (4.0, 8, 1, 4), (1000.0, 16, 1, 8))):
        quad = mixture_quadrature(beta, d, r, H, 12)
        lower = soft_iid_bound(beta, d, r, H).value
        params = {"beta": beta, "d": d, "r": r, "H": H}
        out.append(Evidence(lower, quad * (1 + 1e-3), "<=", "identity", params,
                            note="proved lower sum vs 12-node quadrature of the mixture"))
        out.append(Evidence(lower, 0.99 * quad, ">=", "identity", params,
                            note="the lower sum loses at most 1 % (chords, curvature, "
                            "truncation share)"))
    return out + trained_iid_evidence(ctx)


def trained_iid_evidence(ctx: CheckContext) -> list[Evidence]:
    """Eq. 2 layers (dot scores of key-rank r, full value maps) trained on the soft target with
    i.i.d. keys, measured on fresh i.i.d. samples: the error over all of them never below the
    i.i.d. mixture bound, and in each bin of ``t = <x1, x2>`` (six of about equal mass) never
    below the bin's own bound ``E[(1-t) B(psi_{beta sqrt(1-t)}) | t in bin]`` (step T holds at
    each t). The bins see what the mixture averages away: a wrong effective temperature moves
    the bound up at one end of t and down at the other."""
    from workbench.core.bounds.profiles.profile_iid import soft_iid_bins, soft_iid_bound
    from workbench.proofs.support.soft_training import binned_evidence, soft_task

    out: list[Evidence] = []
    steps = ctx.pick(150, 600)
    samples = ctx.pick(400_000, 800_000)
    # at H = 1 (e.g. (6, 1, 1), beta = 2) the trained layer lies only 1.5-6 % above the bins'
    # bounds since Lemma T1's chords: closer than these samples resolve (inconclusive), so the
    # layers are trained at H >= 2, where the margin is 20-30 %
    for d, r, H, beta in ctx.pick(((6, 1, 2, 4.0),), ((6, 1, 2, 4.0), (8, 1, 2, 8.0))):
        params = {"d": d, "r": r, "H": H, "beta": beta, "steps": steps, "points": "iid"}
        out += binned_evidence(soft_task(d, beta, "iid"), r, H, soft_iid_bins(beta, d, r, H),
                               soft_iid_bound(beta, d, r, H).value, params, "soft",
                               seed=ctx.seed, steps=steps, samples=samples,
                               eval_seed=ctx.seed + 3)
    return out
