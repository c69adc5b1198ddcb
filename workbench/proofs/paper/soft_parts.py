"""Every part ``workbench bounds lower --target soft-nearest`` prints, confronted where it is
printed (docs/derivations/soft_targets.md, "Which claim confronts which part").

The parts are taken from :func:`~workbench.core.bounds.profiles.profile_fiber.profile_lower_bound`,
the call the command makes, at points where each is printed: H >= 2, H r < d and H r >= d,
beta = 4 and beta = 1000. Each is compared with a computation that shares no code with it:

- ``harmonic count``: energies by scipy's Gauss-Jacobi rule (beta <= 16) or mpmath's split
  quadrature, ``math.comb`` counts and the counted rest of ``E psi^2``
  (:func:`~workbench.proofs.support.soft_reference.independent_profile_bound`) at the printed L;
- ``fiber``: the profile's energies by scipy's Gauss-Jacobi rule in t, each fiber's eigenvalues
  by Gauss-Jacobi quadrature of the kernel, and the average over ``c ~ Beta(Hr/2, m/2)`` by a
  Gauss-Jacobi rule in c (deterministic, unlike ``targets.profile_fiber_value``'s Monte Carlo);
  0 where ``H r >= d``;
- ``harmonic count via hardmax (S6)``: step S6's formula ``x - sqrt(2x) delta`` with delta by
  mpmath quadrature and x the hardmax count (``thm2.harmonic_bound`` confronts x);
- ``fiber via hardmax`` (Lemma P5): ``F(sign) - delta``, F(sign) by the same c-quadrature with
  the arcsine kernel ``(2/pi) arcsin x`` written out (no energies), delta by mpmath.

Its test: ``tests/claims/test_soft_parts.py``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

REF = "derivations/soft_targets.md"
C_NODES = 600  # Gauss-Jacobi nodes in c (the top-H sum has kinks: error ~1e-7 here)
T_NODES = 200  # Gauss-Jacobi nodes in t per fiber eigenvalue
QUAD_TOL = 2e-5  # what the two quadratures may miss (measured below 1e-6 at these points)
SMOOTH_BETA = 16.0  # up to here scipy's 400-node rule in t resolves tanh(beta t/sqrt2)

# (beta, d, r, H): H >= 2 with H r < d and H r >= d, at beta = 4 and beta = 1000
QUICK = ((4.0, 8, 1, 4), (4.0, 6, 2, 3), (1000.0, 16, 1, 8), (1000.0, 8, 2, 4))
FULL = (*QUICK, (16.0, 8, 1, 2), (1000.0, 8, 1, 1), (64.0, 12, 1, 3))

Kernel = Callable[[np.ndarray], np.ndarray]


def energy_kernel(beta: float, d: int, L: int) -> tuple[Kernel, float]:
    """``k_L = sum_{l odd <= L} eta_l^2 P_l`` of ``tanh(beta t/sqrt2)`` and ``sum eta_l^2``,
    the energies by scipy's 400-node Gauss-Jacobi rule in t."""
    from workbench.proofs.support.soft_reference import gegenbauer_normalized, scipy_energies

    e = scipy_energies(beta, d, L)

    def kernel(x: np.ndarray) -> np.ndarray:
        return np.asarray(sum(v * gegenbauer_normalized(d, l, x) for l, v in e.items()))

    return kernel, float(sum(e.values()))


def arcsine_kernel(x: np.ndarray) -> np.ndarray:
    """The hardmax kernel ``E_y sign<y,a> sign<y,b> = (2/pi) arcsin <a,b>`` (E sign^2 = 1)."""
    return np.asarray(2 / math.pi * np.arcsin(np.clip(x, -1.0, 1.0)))


def fiber_quadrature(kernel: Kernel, total: float, d: int, r: int, H: int, top: int | None
                     = None) -> float:
    """``1/2 (total - E_c KyFan_top(c))``, ``c ~ Beta(Hr/2, m/2)``: the fiber values of
    Lemma F3 (factors 1, ``c + (1-c)/m``, ``2(1-c)/(m+2)``, multiplicities 1, m,
    ``m(m+1)/2 - 1``) by Gauss-Jacobi in t, the c-average by Gauss-Jacobi in c; ``top`` = H
    (Eq. 2) by default. 0 when ``H r >= d``."""
    from scipy.special import roots_jacobi

    from workbench.proofs.support.soft_reference import top_sum

    rs, m = H * r, d - H * r
    if m <= 0:
        return 0.0
    x, wc = roots_jacobi(C_NODES, m / 2 - 1, rs / 2 - 1)
    c, wc = (1 + x) / 2, wc / wc.sum()
    if m == 1:
        k = kernel(2 * c - 1)
        vals, mult = np.stack([(total + k) / 2, (total - k) / 2]), [1, 1]
    else:
        t, w = roots_jacobi(T_NODES, (m - 3) / 2, (m - 3) / 2)
        w = w / w.sum()
        kx = kernel(c[:, None] + (1 - c[:, None]) * t[None, :])
        lam = [kx @ w, kx @ (w * t), kx @ (w * (m * t * t - 1) / (m - 1))]
        vals = np.stack([lam[0], lam[1] * (c + (1 - c) / m), lam[2] * 2 * (1 - c) / (m + 2)])
        mult = [1, m, m * (m + 1) // 2 - 1]
    return float(0.5 * (total - wc @ top_sum(vals, mult, H if top is None else top)))


@functools.lru_cache(maxsize=32)
def mp_delta(beta: float, d: int) -> float:
    """``||tanh(beta t/sqrt2) - sign||`` by mpmath quadrature (split at the transition)."""
    from workbench.proofs.support.soft_reference import mp_distance_to_sign

    return math.sqrt(mp_distance_to_sign(beta, d))


def scipy_whole(beta: float, d: int) -> float:
    """``E tanh(beta t/sqrt2)^2`` by the 400-node Gauss-Jacobi rule of ``scipy_energies``."""
    from scipy.special import roots_jacobi

    t, w = roots_jacobi(400, (d - 3) / 2, (d - 3) / 2)
    return float(w @ np.tanh(beta * t / math.sqrt(2)) ** 2 / w.sum())


@functools.lru_cache(maxsize=32)
def independent_series(beta: float, d: int, r: int, H: int, L: int) -> tuple[float, float]:
    """The harmonic count at truncation L with the counted tail, without the library's code:
    scipy's Gauss-Jacobi energies where tanh is smooth on the scale of its 400 nodes
    (beta <= 16), mpmath's split quadrature above."""
    from workbench.proofs.support.soft_reference import independent_profile_bound, scipy_energies

    quad = (scipy_energies(beta, d, L), scipy_whole(beta, d)) if beta <= SMOOTH_BETA else None
    return independent_profile_bound(beta, d, r, H, L, energies=quad)


def part_evidence(name: str, lo: float, degree: int | None, beta: float, d: int, r: int,
                  H: int) -> Evidence:
    """The printed part ``name`` (lower end ``lo``, series degree ``degree``) against its
    independent value at ``(beta, d, r, H)``."""
    from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound

    at = {"beta": beta, "d": d, "r": r, "H": H, "part": name}
    if name == "harmonic count":
        assert degree is not None
        want, tol = independent_series(beta, d, r, H, degree)[0], 1e-9
        note = "quadrature energies, math.comb counts, counted tail, at the printed L"
        at["L"] = degree
    elif name == "fiber":
        assert degree is not None
        want, tol = fiber_quadrature(*energy_kernel(beta, d, degree), d, r, H), QUAD_TOL
        note = "scipy energies to the printed L, Gauss-Jacobi fibers and c-average"
        at["L"] = degree
    elif name == "harmonic count via hardmax (S6)":
        x = harmonic_bound(d, r, H).enclosure[0]
        want = max(0.0, x - math.sqrt(2 * x) * mp_delta(beta, d))
        tol, note = 1e-9, "x - sqrt(2x) delta, delta by mpmath, x the hardmax count"
    elif name == "fiber via hardmax":
        f_sign = fiber_quadrature(arcsine_kernel, 1.0, d, r, H)
        want = max(0.0, f_sign - mp_delta(beta, d))
        tol, note = QUAD_TOL, "F(sign) by quadrature of the arcsine kernel, minus mpmath delta"
    else:
        raise ValueError(f"part {name!r} has no independent computation here")
    return Evidence(lo, want, "==", "identity", at, tolerance=tol, note=note)


@claim(
    "targets.soft_printed_parts",
    "Every part bounds lower prints for soft-nearest (harmonic count, S6, fiber, fiber via "
    "hardmax) equals an independent computation where it is printed: H >= 2, H r < d and "
    "H r >= d, beta = 4 and 1000",
    "lemma",
    depends_on=("thm2.harmonic_bound",),  # x of step S6; every other side is computed here
    statement="each printed part = its defining formula, evaluated independently",
    ref=f"{REF}#which-claim-confronts-which-part",
    mark="ours",
)
def soft_printed_parts_claim(ctx: CheckContext) -> list[Evidence]:
    from workbench.core.bounds.profiles.profile_fiber import profile_lower_bound
    from workbench.core.profiles import tanh_profile

    out = []
    for beta, d, r, H in ctx.pick(QUICK, FULL):
        for part in profile_lower_bound(tanh_profile(beta), d, r, H).parts:
            if ctx.scale == "quick" and (beta, d, part.name) == (1000.0, 16, "harmonic count"):
                continue  # mpmath's energies take 0.8 s; (1000, 8, 2, 4) confronts this part
            degree = None if part.truncation is None else part.truncation.degrees_summed
            out.append(part_evidence(part.name, part.lower, degree, beta, d, r, H))
    return out
