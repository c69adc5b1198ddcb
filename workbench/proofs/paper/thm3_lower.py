"""Theorem 3, lower side: rank-r attention cannot represent the biased target (N = 2).

Certified machinery, not training: the derived bound of ``workbench.core.bounds.biased``
(docs/derivations/biased_lower_bound.md) for generalized attention (Eq. 2, biases included) of
key-rank r on the target of ``workbench.proofs.support.theorem3.reference_target`` (a reading,
docs/derivations/constructions.md#4-theorem-3-the-biased-family-inferred-reading). Trained models
are recorded by ``remark4.norm_condition``. Evidence:

- Step 1's closed form of the target against ``workbench.constructions.biased`` (also for random
  signs, where the thresholds' symmetry cannot hide a sign slip);
- the Gegenbauer coefficients of the step target against independent piecewise quadrature
  (Gauss-Legendre in the angle);
- soundness: the bound lies below the error of an explicit rank-1 model (uniform attention,
  ``M = (sum_j c_j) I``, error 1/2), measured by Monte Carlo;
- constant error: ``B >= C_CONST`` for every (r, H) on the grid with ``r <= d - 3`` inside the
  theorem's hypothesis read with unit norms, ``d H < exp(c (d - r))``;
- full rank (``r >= d - 1``) gives ``B = 0``, as the upper side's construction requires;
- the degrees summed carry most of the target's energy (the truncation is not what keeps the
  bound up: dropped degrees only lower it).

Its test: ``tests/claims/test_thm3_lower.py``.
"""

from __future__ import annotations

import math

import numpy as np

import workbench.core.bounds.biased as biased_bounds
import workbench.proofs.support.theorem3 as theorem3
from workbench.core.harmonics import normalized_gegenbauer
from workbench.core.intervals import Estimate
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim
from workbench.proofs.support.theorem3 import C_HYP

C_CONST = 0.25  # "constant error": half of what the uniform-attention model reaches (1/2)


def in_hypothesis(d: int, r: int, H: int, norm_sq: float = 1.0, c: float = C_HYP) -> bool:
    """Theorem 3's hypothesis ``d H max_h ||V_h||^2 < exp(c (d - r))``."""
    return d * H * norm_sq < math.exp(c * (d - r))


def quadrature_coefficients(
    d: int, rho: float, tau: np.ndarray, c: np.ndarray, L: int, nodes: int = 24
) -> np.ndarray:
    """``eta_l(rho)`` by Gauss-Legendre quadrature in the angle (``t = cos theta``) on each
    constant piece of the step, independent of the antiderivative used by the library: the
    weight becomes ``sin^(d-2) theta`` and every piece's integrand is smooth (a trigonometric
    polynomial), so ``nodes`` points per piece reach float rounding at the degrees checked."""
    S = biased_bounds.step_values(tau, c)  # on the pieces of t, left to right
    cuts = np.clip(np.sort(tau) / (math.sqrt(2.0) * rho), -1.0, 1.0)
    theta = np.arccos(np.concatenate([[-1.0], cuts, [1.0]]))  # decreasing from pi to 0
    x, w = np.polynomial.legendre.leggauss(nodes)
    mid, half = (theta[:-1] + theta[1:]) / 2, (theta[:-1] - theta[1:]) / 2  # half >= 0
    angles = mid[:, None] + half[:, None] * x[None]  # (pieces, nodes)
    weights = half[:, None] * w[None] * np.sin(angles) ** (d - 2)
    per_piece = (normalized_gegenbauer(d, L, np.cos(angles)) * weights[None]).sum(-1)
    return (per_piece * S[None]).sum(-1) / weights.sum()


def decomposition_gap(d: int, coefficients: str, n: int, seed: int) -> float:
    """``max ||f* - ((sum c) x2 + (x1 - x2) g(t))||^2`` over samples: the construction's target
    against Step 1's closed form, ``g(t) = sum_j c_j [t > tau_j]``, ``t = <x1 - x2, y>``."""
    import torch

    import workbench.constructions.biased as biased_lib
    from workbench.core.sphere import sample_instances
    fam = biased_lib.theorem3_family(d, 2, coefficients=coefficients, generator=seed)
    X, y = sample_instances(n, 2, d, "orthonormal", "gaussian", generator=seed + 1)
    t = torch.einsum("bd,bd->b", X[:, 0] - X[:, 1], y)
    g = ((t[:, None] > fam.biases[None, :, 1]).double() * fam.coeffs[None]).sum(-1)
    closed = fam.coeffs.sum() * X[:, 1] + (X[:, 0] - X[:, 1]) * g[:, None]
    return float((fam.target(X, y) - closed).square().sum(-1).max())


def uniform_model_error(d: int, n: int, seed: int) -> Estimate:
    """Monte Carlo error (normal interval, 99.9 %) of one rank-1 head with ``W = 0`` (uniform
    attention) and ``M = (sum_j c_j) I`` on the biased target."""
    import torch

    from workbench.core.montecarlo import sample_mean
    from workbench.core.sphere import sample_instances
    from workbench.models.attention import GeneralizedAttention
    _, c = theorem3.reading(d)
    model = GeneralizedAttention(d, 1, 1, score="bias", score_options={"max_len": 2},
                                 dtype=torch.float64)
    with torch.no_grad():
        model.W.zero_()
        model.M.copy_(float(c.sum()) * torch.eye(d, dtype=torch.float64).expand(1, 1, d, d))
        X, y = sample_instances(n, 2, d, "orthonormal", "gaussian", generator=seed)
        err = (model(X, y)[0] - theorem3.reference_target(X, y)).square().sum(-1)
    return sample_mean(err, 0.999, "normal")


@claim(
    "thm3.low_rank_lower",
    "Theorem 3 (lower side, target a reading, N = 2): rank-r attention keeps constant error",
    "theorem",
    depends_on=("thm2.harmonic_bound", "thm3.biased_construction"),
    statement=f"err(H heads of rank r <= d-3) >= B(d, r, H) >= {C_CONST} whenever d H < "
    f"exp(c (d - r)) (c = {C_HYP}, unit norms); B = 0 for r >= d-1",
    ref="derivations/biased_lower_bound.md#what-the-claims-assert",
    mark="reading", threads=1,
)
def low_rank_lower(ctx: CheckContext) -> list[Evidence]:
    d = ctx.pick(6, 8)
    E = theorem3.target_energies(d, ctx)
    tau, c = (t.numpy() for t in theorem3.reading(d))
    out: list[Evidence] = []
    # (0) Step 1: the target is (sum c) x2 + (x1 - x2) g(t); a non-symmetric law too
    for law in ("alternating", "random_signs"):
        gap = decomposition_gap(d, law, 2000, ctx.seed + 11)
        out.append(Evidence.identity(gap, {"d": d, "coefficients": law, "n": 2000},
                                     tolerance=1e-20, note="construction's f* vs (sum c) x2 + "
                                     "(x1-x2) g(<x1-x2, y>)"))
    # (1) coefficients against independent quadrature, at two radii
    for rho in (math.sqrt(d) * 0.8, math.sqrt(d) * 1.3):
        L = 8
        lib = biased_bounds.step_coefficients(d, np.array([rho]), tau, c, L)[:, 0]
        ref = quadrature_coefficients(d, rho, tau, c, L)
        out.append(Evidence.identity(float(np.max(np.abs(lib - ref))),
                                     {"d": d, "rho": rho, "degrees": f"0..{L}"}, tolerance=1e-9,
                                     note="eta_l(rho): closed-form antiderivative vs quadrature"))
    # (2) soundness: below an explicit rank-1 model's error
    b1 = biased_bounds.biased_lower_bound(E, 1, 1)
    m = uniform_model_error(d, ctx.pick(4000, 40_000), ctx.seed + 5)
    out.append(Evidence(b1.value, m.mean, "<=", "interval", {"d": d, "r": 1, "H": 1,
                        "model_error": m.mean, "model_ci": (m.lo, m.hi), "samples": b1.samples},
                        ci=b1.ci, ci_level=b1.level, interval="hoeffding",
                        note="bound (Hoeffding CI) <= error of uniform attention with "
                        "M = (sum c_j) I (measured)"))
    # (3) constant error inside the hypothesis, r <= d - 3
    Hs = (1, 2, 4, 8, 16, 32, 64)
    for r in range(1, d - 2):
        for H in Hs:
            if not in_hypothesis(d, r, H):
                continue
            b = biased_bounds.biased_lower_bound(E, r, H)
            out.append(Evidence(b.value, C_CONST, ">=", "interval",
                                {"d": d, "r": r, "H": H, "c": C_HYP, "L": b.max_degree,
                                 "samples": b.samples, "dH": d * H,
                                 "exp_c_d_minus_r": math.exp(C_HYP * (d - r))},
                                ci=b.ci, ci_level=b.level, interval="hoeffding",
                                note="certified error of every rank-r, H-head model"))
    # (4) full rank: nothing is lost at any degree
    for r in (d - 1, d):
        b = biased_bounds.biased_lower_bound(E, r, 1)
        out.append(Evidence(b.value, 0.0, "==", "exact", {"d": d, "r": r, "H": 1},
                            note="B = 0 for r >= d-1 (D_l >= N(d,l) at every degree summed)"))
    # (5) the summed degrees carry most of the energy
    out.append(Evidence(b1.energy_summed, 0.8 * b1.energy, ">=", "monte_carlo",
                        {"d": d, "L": b1.max_degree, "energy": b1.energy},
                        note="energy at degrees <= L (stratified mean over rho; a diagnostic "
                        "without interval) >= 80% of E S^2 / 2"))
    return out
