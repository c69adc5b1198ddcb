"""Claims about the kernels of rank-1 hardmax heads on D_2 (docs/derivations/harmonics.md,
Lemmas H2-H4): the agreement kernel ``C``, the head-target agreement ``b`` and the error
``1 - 2 a.b + a.C.a``.

The library (``core.head_kernels``) is compared with Monte Carlo on ``D_2`` (exact binomial
intervals for the probabilities, CLT for the error; Bonferroni-corrected so that the claim's family
of intervals has level 99.9%), and its closed forms for ``b`` with the Gegenbauer series.

Its test: ``tests/claims/test_kernels.py``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

import workbench.core.harmonics as gegenbauer
import workbench.core.head_kernels as head_kernels
from workbench.core.intervals import bonferroni_level
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

if TYPE_CHECKING:
    import torch


AGREEMENT_RESOLUTION = 0.03  # kernel entries: departures of 0.03 (3 % of errors above 1)


def _picks(Q: torch.Tensor, K: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """+1 where head (q, k) picks x_1, i.e. <q,y><k, x_1 - x_2> > 0; shape (n, H)."""
    import torch
    return torch.sign((y @ Q.T) * ((X[:, 0] - X[:, 1]) @ K.T))


def _d2_series_tail(L: int) -> float:
    """Rigorous bound on the d = 2 series tail ``1/2 sum_{l odd > L} |eta_l|^3 / sqrt2``:
    ``|eta_l| = 4 / (pi l sqrt2)`` gives terms ``8 / (pi^3 l^3)`` and
    ``sum_{l odd >= L+2} l^-3 <= 1 / (4 L^2)``."""
    return 2.0 / (math.pi**3 * L * L)


def _agreement(hits: torch.Tensor, expected: float, level: float,
               params: dict[str, Any]) -> Evidence:
    """The frequency of the events ``hits`` (Clopper-Pearson at ``level``) equals ``expected``."""
    from workbench.core.montecarlo import sample_mean
    est = sample_mean(hits.double(), level, "clopper_pearson", (0.0, 1.0))
    return Evidence.estimate(est, "==", expected, params=params, resolution=AGREEMENT_RESOLUTION)


@claim(
    "kernels.agreement",
    "Kernels of rank-1 hardmax heads on D_2: C, b and the error 1 - 2a.b + a.C.a",
    "lemma",
    depends_on=("harmonics.sign_coefficients",),
    statement="C_hh' = 1/2 + (2/pi^2) asin<q,q'> asin<k,k'>; b = Pr[head picks target];"
    " err = 1 - 2 a.b + a.C.a",
    ref="derivations/harmonics.md#lemma-h2-the-kernels-c-and-b", mark="ours", no_grad=True,
)
def kernels_agreement(ctx: CheckContext) -> list[Evidence]:
    import torch

    from workbench.core.montecarlo import sample_mean
    from workbench.core.sphere import make_generator, sample_instances, uniform_sphere
    n = ctx.pick(20_000, 400_000)
    dims = ctx.pick((2, 5), (2, 3, 5, 8, 16, 64))
    H = 4
    cosines = torch.tensor([-1.0, -0.5, 0.0, 0.3, 0.9, 1.0], dtype=torch.float64)
    per_d = H * (H - 1) // 2 + H + len(cosines) + 1
    level = bonferroni_level(per_d * len(dims))  # the claim's intervals hold jointly at 99.9%
    out: list[Evidence] = []
    g = make_generator(ctx.seed + 4242)
    for d in dims:
        Q = uniform_sphere(H, d=d, generator=g)
        K = uniform_sphere(H, d=d, generator=g)
        K[0] = Q[0]  # a tied head (q = k) among random ones
        # heads with prescribed <q,k> (q = e1, k in the (e1, e2) plane) for b(c)
        Qc = torch.zeros(len(cosines), d, dtype=torch.float64)
        Qc[:, 0] = 1.0
        Kc = torch.zeros_like(Qc)
        Kc[:, 0], Kc[:, 1] = cosines, torch.sqrt(1 - cosines**2)
        X, y = sample_instances(n, 2, d, points="orthonormal", generator=g)
        s = _picks(Q, K, X, y)
        target = torch.sign(torch.einsum("nd,nd->n", y, X[:, 0] - X[:, 1]))
        C = head_kernels.agreement_kernel(Q, K)
        b = head_kernels.head_target_agreement(d, (Q * K).sum(-1))
        for h in range(H):
            for h2 in range(h + 1, H):
                out.append(_agreement(s[:, h] == s[:, h2], float(C[h, h2]), level,
                                      {"d": d, "entry": f"C[{h},{h2}]", "n": n}))
            out.append(_agreement(s[:, h] == target, float(b[h]), level,
                                  {"d": d, "entry": f"b[{h}]", "n": n}))
        sc = _picks(Qc, Kc, X, y)
        bc = head_kernels.head_target_agreement(d, cosines)
        for j, c in enumerate(cosines.tolist()):
            out.append(_agreement(sc[:, j] == target, float(bc[j]), level,
                                  {"d": d, "entry": "b(c)", "cos_qk": c, "n": n}))
        # the error of sum_h a_h x_{pick_h} against 1 - 2 a.b + a.C.a
        a = torch.randn(H, generator=g, dtype=torch.float64) / H + 1.0 / H
        picked = torch.where(s.unsqueeze(-1) > 0, X[:, :1], X[:, 1:2])  # (n, H, d)
        model = torch.einsum("h,nhd->nd", a, picked)
        f = torch.where(target.unsqueeze(-1) > 0, X[:, 0], X[:, 1])
        err = head_kernels.kernel_error(a, b, C)
        out.append(Evidence.estimate(
            sample_mean(((f - model) ** 2).sum(-1), level, "normal"), "==", err,
            params={"d": d, "entry": "error", "n": n, "H": H},
            resolution=AGREEMENT_RESOLUTION * max(1.0, err)))
        # C_hh = 1 exactly (a head always agrees with itself)
        out.append(Evidence(float((C.diagonal() - 1).abs().max()), 0.0, "==", "exact",
                            {"d": d, "entry": "diag(C)"}, note="max |C_hh - 1|"))
    # d = 2: the closed form against the general-d Gegenbauer series (rigorous tail bound)
    L = ctx.pick(4001, 40001)
    c = torch.linspace(-1, 1, 41, dtype=torch.float64)
    diff = float((head_kernels.head_target_agreement_d2(c)
                  - head_kernels.head_target_agreement_series(2, c, L)).abs().max())
    out.append(Evidence.identity(diff, {"d": 2, "max_degree": L},
                                 tolerance=_d2_series_tail(L) + 1e-13,
                                 note="max |closed form - series|; tolerance = series tail bound"))
    # d >= 3: the 1-D integral formula against the series (tail estimated from the terms)
    for d, L in ctx.pick(((5, 1001), (8, 601)), ((3, 4001), (5, 2001), (8, 601), (64, 201))):
        diff = float((head_kernels.head_target_agreement(d, c)
                      - head_kernels.head_target_agreement_series(d, c, L)).abs().max())
        out.append(Evidence.identity(diff, {"d": d, "max_degree": L},
                                     tolerance=_series_tail_estimate(d, L) + 1e-13,
                                     note="max |integral formula - series|; tolerance = tail "
                                     "estimate"))
    return out


def _series_tail_estimate(d: int, L: int) -> float:
    """``1/2 sum_{l odd > L} |eta_l|^3 / sqrt(N(d,l))``: summed to 16 L, then a power-law
    remainder with the terms' decay rate ``l^-(3 + (d-2)/2)`` (an estimate, not a proof)."""
    L2 = 16 * L + 1
    eta = np.abs(gegenbauer.sign_coefficients(d, L2))
    ls = np.arange(L + 2, L2 + 1, 2)
    terms = eta[ls] ** 3 / np.sqrt([float(gegenbauer.dim_harmonics(d, int(k))) for k in ls])
    p = 3 + (d - 2) / 2
    rest = terms[-1] * L2 / (2 * (p - 1))
    return 0.5 * float(terms.sum() + rest)
