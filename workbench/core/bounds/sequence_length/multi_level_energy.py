"""The energies of the multi-level bound M_N (docs/derivations/long_contexts_evaluation.md,
"Level energies" and "Degree 1").

- :func:`cumulative_energy_lower`: a proved lower bound on ``A_k = E[E[t | F_k]^2]``, the energy
  held by the levels up to k. On the level-k fiber ``E[t | F_k] = sign(c) 1[a > M_k]
  F_{N-k,d-k}(a/tau)``, where ``a`` (the larger of two independent N(0,1) scores), ``M_k`` (the
  largest of ``k - 2``) and ``tau ~ chi_{d-k}`` are independent, and ``tau`` times a uniform
  point of ``S^{d-k-1}`` is standard Gaussian, so ``E_tau F_{N-k,d-k}(a/tau) = Phi(a)^{N-k}``.
  Jensen in tau: ``A_k >= E[Phi(a)^{k-2} Phi(a)^{2(N-k)}] = int 2 phi Phi^{2N-k-1} =
  2/(2N - k)``, an exact rational (equality at k = N: ``E t^2 = 2/N``).
- :func:`degree_one_estimate`: ``Gamma_1`` of one level's increment, a Monte Carlo mean over the
  scalars of ``gamma_1^2`` with the inner integral over ``c`` done by Gauss-Legendre (split at
  the jumps), and its one-sided empirical Bernstein limit (Maurer-Pontil) with the a-priori range
  ``[0, n (E|c|)^2]``. A statistical number, never certified.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import special

from workbench.core.bounds.sequence_length.multi_level_law import (
    level_fiber_dim,
    max_coordinate_law,
)
from workbench.core.validation import check_float, check_int

__all__ = ["DegreeOneEstimate", "cumulative_energy_lower", "degree_one_estimate",
           "degree_one_range"]

_NODES = 48  # Gauss-Legendre nodes for the inner integral over c (each side of a jump)


def cumulative_energy_lower(d: int, N: int, k: int) -> Fraction:
    """``2/(2N - k) <= A_k = E[E[t | F_k]^2]`` (module docstring; exact at k = N)."""
    d = check_int("d", d, lo=3)
    N = check_int("N", N, lo=2, hi=d)
    k = check_int("k", k, lo=2, hi=N)
    return Fraction(2, 2 * N - k)


def _mean_abs_c(n: int) -> float:
    """``E|c|`` for c the first coordinate of a uniform point of ``S^{n-1}``."""
    return math.exp(special.gammaln(n / 2) - special.gammaln((n + 1) / 2)) / math.sqrt(math.pi)


def degree_one_range(n: int) -> float:
    """The a-priori range ``[0, n (E|c|)^2]`` of ``gamma_1^2`` for a function ``sign(c) phi``
    with ``|phi| <= 1`` on ``S^{n-1}``."""
    return n * _mean_abs_c(n) ** 2


@dataclass(frozen=True)
class DegreeOneEstimate:
    """``Gamma_1`` of one increment: the sample mean, the sample variance, the samples and the
    a-priori range of each sample."""

    mean: float
    var: float
    samples: int
    range: float

    def upper(self, delta: float) -> float:
        """The one-sided empirical Bernstein limit (Maurer-Pontil): ``Gamma_1 <= upper`` with
        probability at least ``1 - delta``."""
        delta = check_float("delta", delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        m, L = self.samples, math.log(2 / delta)
        return (self.mean + math.sqrt(2 * self.var * L / m)
                + 7 * self.range * L / (3 * (m - 1)))


def _side_integral(n: int, K: int, D: int, c0: np.ndarray, g_u: np.ndarray, rho: np.ndarray,
                   extra: np.ndarray | None) -> np.ndarray:
    """``2 int_{max(c0,0)}^1 c F_{K,D}(a/tau) p_n(c) dc`` per sample (``tau^2 = rho^2 (1 - c^2)
    + extra``)."""
    u, w = np.polynomial.legendre.leggauss(_NODES)
    lo = np.clip(c0, 0.0, 1.0)[:, None]
    half = (1.0 - lo) / 2
    c = lo + half * (u[None, :] + 1)
    a = (g_u[:, None] + rho[:, None] * c) / math.sqrt(2)
    tau2 = rho[:, None] ** 2 * (1 - c * c) + (0.0 if extra is None else extra[:, None])
    with np.errstate(divide="ignore"):  # tau = 0 only at c = 1, a node of weight 0
        theta = a / np.sqrt(tau2)
    dens = (1 - c * c) ** ((n - 3) / 2) / special.beta(0.5, (n - 1) / 2)
    vals = c * np.asarray(max_coordinate_law(K, D, theta)) * dens
    return 2 * (half * w[None, :] * vals).sum(axis=1)


def degree_one_estimate(d: int, N: int, k: int, k_prev: int | None, samples: int,
                        seed: int) -> DegreeOneEstimate:
    """Monte Carlo of ``Gamma_1`` for the increment ``E[t|F_k] - E[t|F_{k_prev}]`` (``k_prev =
    None``: the first level, ``E[t|F_k]`` itself) on the level-k fiber ``S^{n_k - 1}``: per
    sample the scalars ``(g_u, M_{k_prev}, g_{k_prev+1..k}, rho_k)`` are drawn and ``gamma_1 =
    sqrt(n) E_c[c Delta(c)]`` is integrated in c."""
    d = check_int("d", d, lo=5)
    N = check_int("N", N, lo=3, hi=d)
    k = check_int("k", k, lo=2, hi=min(N, d - 2))
    if k_prev is not None:
        k_prev = check_int("k_prev", k_prev, lo=2, hi=k - 1)
    samples = check_int("samples", samples, lo=2)
    rng = np.random.default_rng(seed)
    n = level_fiber_dim(d, k)
    g_u = rng.standard_normal(samples)
    rho = np.sqrt(rng.chisquare(n, samples))
    low = 2 if k_prev is None else k_prev
    coarse = (special.ndtri(rng.random(samples) ** (1.0 / (low - 2))) if low > 2
              else np.full(samples, -np.inf))
    between = rng.standard_normal((samples, k - low))
    m_k = np.maximum(coarse, between.max(axis=1)) if k > low else coarse
    r2 = math.sqrt(2)
    with np.errstate(invalid="ignore"):
        c_k = (r2 * m_k - g_u) / rho
        fine = _side_integral(n, N - k, d - k, c_k, g_u, rho, None)
        if k_prev is None:
            coarse_part = np.zeros(samples)
        else:
            c_p = (r2 * coarse - g_u) / rho
            coarse_part = _side_integral(n, N - k_prev, d - k_prev, c_p, g_u, rho,
                                         (between ** 2).sum(axis=1))
    y = n * (fine - coarse_part) ** 2
    return DegreeOneEstimate(float(y.mean()), float(y.var(ddof=1)), samples,
                             degree_one_range(n))
