"""Independent evaluations of the soft bounds' ingredients, shared by the claims of
``workbench/proofs/paper/soft_targets.py``, ``soft_fiber.py`` and ``soft_parts.py``
(docs/derivations/soft_targets.md): none of them calls the library's bound code.

- scipy: the energies of ``tanh(beta t/sqrt2)`` by Gauss-Jacobi in t, the fiber values of a
  kernel by Gauss-Jacobi quadrature (Lemma F3), the Ky Fan sum by expanding multiplicities;
- mpmath: means under the law of t, the harmonic count with its counted tail (energies by
  tanh-sinh quadrature, ``math.comb`` counts), ``||psi_beta - sign||^2``.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from workbench.core.harmonics import dim_harmonics, gegenbauer_transform
from workbench.core.symbolic.targets import profile_soft


def gegenbauer_normalized(d: int, l: int, x: np.ndarray) -> np.ndarray:
    """``P_l(x)`` of dimension d, ``P_l(1) = 1`` (scipy's Gegenbauer polynomials)."""
    from scipy.special import eval_gegenbauer

    a = (d - 2) / 2
    return np.asarray(eval_gegenbauer(l, a, x) / eval_gegenbauer(l, a, 1.0))


def scipy_energies(beta: float, d: int, L: int) -> dict[int, float]:
    """``eta_l^2`` of ``tanh(beta t/sqrt2)`` for odd ``l <= L`` (Gauss-Jacobi, 400 nodes)."""
    from scipy.special import roots_jacobi

    t, w = roots_jacobi(400, (d - 3) / 2, (d - 3) / 2)
    w = w / w.sum()
    psi = np.tanh(beta * t / math.sqrt(2))
    out = {}
    for l in range(1, L + 1, 2):
        n = math.comb(l + d - 1, d - 1) - math.comb(l + d - 3, d - 1)
        out[l] = float(np.sum(w * psi * gegenbauer_normalized(d, l, t)) ** 2 * n)
    return out


def fiber_values(energies: dict[int, float], d: int, m: int, c: np.ndarray
                 ) -> tuple[np.ndarray, list[int]]:
    """The fiber values ``(n_values, len(c))`` and multiplicities (Lemma F3) of the kernel.

    The integrands ``k(c + (1-c) t) q(t)`` are polynomials in t of degree ``L + 2`` (k has
    degree ``L = max l``, q at most 2), so an n-node Gauss-Jacobi rule, exact to degree
    ``2n - 1``, is exact for them from ``n = (L + 3) / 2`` on: ``L // 2 + 4`` nodes."""
    from scipy.special import roots_jacobi

    total = sum(energies.values())
    if m == 1:
        k = sum(e * gegenbauer_normalized(d, l, 2 * c - 1) for l, e in energies.items())
        return np.stack([(total + k) / 2, (total - k) / 2]), [1, 1]
    t, w = roots_jacobi(max(energies) // 2 + 4, (m - 3) / 2, (m - 3) / 2)
    w = w / w.sum()
    x = c[:, None] + (1 - c[:, None]) * t[None, :]
    k = sum(e * gegenbauer_normalized(d, l, x) for l, e in energies.items())
    lam = [k @ w, k @ (w * t), k @ (w * (m * t * t - 1) / (m - 1))]
    vals = np.stack([lam[0], lam[1] * (c + (1 - c) / m), lam[2] * 2 * (1 - c) / (m + 2)])
    return vals, [1, m, m * (m + 1) // 2 - 1]


def top_sum(vals: np.ndarray, mult: list[int], count: int) -> np.ndarray:
    """Sum of the ``count`` largest values with multiplicity, per column."""
    rows = np.repeat(vals, mult, axis=0)
    return np.asarray(-np.sort(-rows, axis=0)[:count].sum(axis=0))


def mp_mean(f, d: int, beta: float) -> float:  # type: ignore[no-untyped-def]
    """``E f(t)`` under the law of t on S^{d-1}, for an even f, by mpmath quadrature (split at
    the transition of tanh(beta t/sqrt2))."""
    import mpmath as mp

    rho = mp.gamma(mp.mpf(d) / 2) / (mp.sqrt(mp.pi) * mp.gamma(mp.mpf(d - 1) / 2))
    pts = [0, 1 / beta, 10 / beta, 100 / beta, 1] if beta > 100 else [0, 1]
    with mp.workdps(20):
        return float(2 * rho * mp.quad(lambda t: f(t) * (1 - t * t) ** (mp.mpf(d - 3) / 2), pts))


def independent_profile_bound(beta: float, d: int, r: int, H: int, L: int,
                              energies: tuple[dict[int, float], float] | None = None
                              ) -> tuple[float, float]:
    """An enclosure of the full series ``LB`` for ``tanh(beta t/sqrt2)`` without the library's
    bound code: energies by mpmath quadrature to L, ``N`` by ``dim_harmonics``, ``D'_l`` by
    ``math.comb`` (Eq. 2); the rest of ``E psi^2`` (mpmath) counted between
    ``1 - min(1, H g)`` and 1, ``g = 3 C(L+r+3, r-1) / N(d, L+2)`` (docs/derivations/
    lower_bound.md, Lemma 6, "The counted tail"). Float quadrature: an estimate to ~1e-12.
    ``energies``: ``({l: eta_l^2}, E psi^2)`` from another quadrature, in place of mpmath's."""
    import mpmath as mp

    t = sp.Symbol("t", real=True)
    f = sp.lambdify(t, profile_soft(t, sp.Float(beta)), "mpmath")
    total = energy = 0.0
    for l in range(1, L + 1, 2):
        N = dim_harmonics(d, l)
        D = sum(math.comb(k + r - 1, r - 1) for k in (l - 2, l, l + 2) if k >= 0)
        e2 = (energies[0][l] if energies is not None
              else float(gegenbauer_transform(f, d, l, dps=20)) ** 2)
        energy += e2
        if N > H * D:
            total += e2 * (N - H * D) / N
    whole = (energies[1] if energies is not None
             else mp_mean(lambda x: mp.tanh(beta * x / mp.sqrt(2)) ** 2, d, beta))
    rest = max(0.0, whole - energy)
    g = 3 * math.comb(L + r + 3, r - 1) / dim_harmonics(d, L + 2)
    return (total + rest * max(0.0, 1 - H * g)) / 2, (total + rest) / 2


def mp_distance_to_sign(beta: float, d: int) -> float:
    """``||psi_beta - sign||^2`` (L^2 of the law of t) by mpmath quadrature, independent of
    the library's arb integral (workbench/core/bounds/profiles/soft_limit.py)."""
    import mpmath as mp

    return mp_mean(lambda x: (1 - mp.tanh(beta * x / mp.sqrt(2))) ** 2, d, beta)
