"""Fact 1: one full-rank softmax head approximates nearest neighbour to any accuracy.

The head has ``W_K^T W_Q = beta I`` and ``W_O^T W_V = I``, so ``A(X, y) = X softmax(beta X^T y)``.
Claimed error (docs/paper.md §3, derived in docs/derivations/constructions.md §1): pointwise
``||A - f||^2 <= 4 min(1, (N-1)^2 exp(-2 beta gap))`` with ``gap`` the top-1 minus top-2 inner
product, hence ``err <= 4 E[min(1, (N-1)^2 exp(-2 beta gap))]``. For ``N = 2`` the expectation is a
(nested) quadrature; for ``N > 2`` a Monte Carlo mean with a CI.
``beta_for`` returns a temperature whose rigorous upper bound on the error,
``error_upper_bound(beta)``, is ``<= eps``.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np
import torch
from scipy import integrate, special

from workbench.constructions._montecarlo import ClaimedError
from workbench.core.montecarlo import estimate_mean
from workbench.core.sphere import Generator, PointLaw, check_point_law, sample_instances
from workbench.core.validation import (
    check_dim,
    check_float,
    check_int,
    check_points,
    check_temperature,
)
from workbench.models.attention import MultiHeadAttention

STATEMENT = "Fact 1: err <= 4 E[min(1, (N-1)^2 exp(-2 beta gap))]"


def full_rank_model(d: int, beta: float, dtype: torch.dtype = torch.float64) -> MultiHeadAttention:
    """The Fact 1 head: ``Wq = beta I``, ``Wk = Wv = Wo = I`` (one model, one head, rank d)."""
    d = check_dim(d)
    beta = check_temperature(beta)
    eye = torch.eye(d, dtype=dtype).reshape(1, 1, d, d)
    return MultiHeadAttention.from_weights(beta * eye, eye, eye, eye, normalizer="softmax")


def pointwise_bound(X: torch.Tensor, y: torch.Tensor, beta: float) -> torch.Tensor:
    """``4 min(1, (N-1)^2 exp(-2 beta gap))`` per sample; ``X`` ``(B, N, d)``, ``y`` ``(B, d)``."""
    beta = check_temperature(beta)
    N = X.shape[1]
    if N == 1:
        return torch.zeros(X.shape[0], dtype=X.dtype)
    s = torch.einsum("bnd,bd->bn", X, y).topk(2, dim=-1).values
    gap = s[:, 0] - s[:, 1]
    return 4 * torch.clamp((N - 1) ** 2 * torch.exp(-2 * beta * gap), max=1.0)


# --- the law of t = <y, u> for uniform y, fixed unit u: t^2 ~ Beta(1/2, (d-1)/2) -------------


def _p_abs_t_below(a: np.ndarray, d: int) -> np.ndarray:
    """``P(|t| < a)`` exactly (regularised incomplete beta)."""
    a = np.clip(np.asarray(a, dtype=np.float64), 0.0, 1.0)
    return special.betainc(0.5, (d - 1) / 2, a * a)


def _p_c_above(tau: np.ndarray, d: int) -> np.ndarray:
    """``P(c > tau)`` for ``c`` with the same law as ``t``."""
    tau = np.clip(np.asarray(tau, dtype=np.float64), -1.0, 1.0)
    return 0.5 * (1 - np.sign(tau) * special.betainc(0.5, (d - 1) / 2, tau * tau))


def _mean_exp_abs_t(a: float, d: int) -> float:
    """``E exp(-a |t|)`` by adaptive quadrature in ``phi`` (``|t| = cos phi``)."""
    half = math.pi / 2

    def f(phi: float) -> float:
        return math.exp(-a * math.cos(phi)) * math.sin(phi) ** (d - 2)

    cut = max(0.0, half - 40.0 / a) if a > 0 else 0.0
    num = integrate.quad(f, 0.0, cut, epsabs=0, epsrel=1e-11, limit=200)[0] if cut > 0 else 0.0
    num += integrate.quad(f, cut, half, epsabs=0, epsrel=1e-11, limit=200)[0]
    norm = (
        math.exp(0.5 * math.log(math.pi) + special.gammaln((d - 1) / 2) - special.gammaln(d / 2))
        / 2
    )
    return num / norm


def claimed_bound_quadrature(d: int, beta: float, points: str) -> float:
    """``4 E[exp(-2 beta gap)]`` for ``N = 2`` by quadrature (the ``min`` is inactive at N = 2).

    ``orthonormal``: ``gap = sqrt2 |t|``. ``iid``: ``gap = rho |t|`` with ``rho = sqrt(2 - 2c)``
    independent of ``t`` (the direction of ``x1 - x2`` is uniform and independent of its norm).
    """
    d = check_dim(d)
    beta = check_temperature(beta)
    points = check_point_law(points, 2, d)
    if points == "orthonormal":
        return 4 * _mean_exp_abs_t(2 * math.sqrt(2) * beta, d)

    def outer(phi: float) -> float:  # c = cos(phi), rho = 2 sin(phi/2)
        return _mean_exp_abs_t(4 * beta * math.sin(phi / 2), d) * math.sin(phi) ** (d - 2)

    num = integrate.quad(outer, 0.0, math.pi, epsabs=0, epsrel=1e-9, limit=200)[0]
    norm = math.exp(0.5 * math.log(math.pi) + special.gammaln((d - 1) / 2) - special.gammaln(d / 2))
    return 4 * num / norm


def claimed_bound_mc(
    d: int, N: int, beta: float, points: str, samples: int = 200_000, generator: Generator = 0
) -> ClaimedError:
    """``4 E[min(1, (N-1)^2 exp(-2 beta gap))]`` by Monte Carlo, with a CI."""

    def draw(m: int, gen: torch.Generator | None) -> torch.Tensor:
        X, y = sample_instances(m, N, d, points=cast(PointLaw, points), generator=gen)
        return pointwise_bound(X, y, beta)

    est = estimate_mean(draw, samples=samples, batch=8192, level=0.99, generator=generator,
                        bounds=(0.0, 4.0))[0]
    return ClaimedError.from_estimate(est, "<=", STATEMENT, beta=beta)


# --- a temperature with a rigorous error upper bound ------------------------------------


def _pair_tail(g: np.ndarray, d: int, points: str) -> np.ndarray:
    """Upper bound on ``P(|<y, x_i - x_j>| < g)`` for one pair of keys."""
    if points == "orthonormal":
        return _p_abs_t_below(g / math.sqrt(2), d)
    # iid: |<y, x_i - x_j>| = rho |t|; bin rho on a grid and use the left end of each bin
    r = np.geomspace(1e-7, 2.0, 400)
    F = _p_c_above(1 - r * r / 2, d)  # P(rho < r)
    F[-1] = 1.0
    mass = np.diff(F)
    p = _p_abs_t_below(g[:, None] / r[None, :-1], d)
    return np.minimum(1.0, F[0] + p @ mass)


def error_upper_bound(beta: float, d: int, N: int, points: str = "orthonormal") -> float:
    """Fact 1's rigorous upper bound on the head's error at temperature beta:
    ``U(beta) >= 4 E[min(1, (N-1)^2 exp(-2 beta gap))]``.

    ``E min(1, A e^{-2 beta G}) = int_0^1 P(G < log(A/u) / (2 beta)) du`` with ``A = (N-1)^2``;
    ``P(G < g) <= C(N,2) P_pair(g)`` (union bound over pairs); the integrand is non-increasing
    in ``u``, so a left Riemann sum bounds the integral from above.
    """
    d, N = check_dim(d), check_points(N)
    beta = check_temperature(beta)
    points = check_point_law(points, N, d)
    if N == 1:
        return 0.0
    if beta == 0:
        return 4.0
    A = float((N - 1) ** 2)
    u = np.concatenate(([0.0], np.geomspace(1e-40, 1.0, 1500)))
    g = np.log(A / u[1:-1]) / (2 * beta)
    h = np.minimum(1.0, N * (N - 1) / 2 * _pair_tail(g, d, points))
    h = np.concatenate(([1.0], h))  # h(0) = 1
    return float(4 * np.sum(h * np.diff(u)))


def beta_for(eps: float, d: int, N: int = 2, points: str = "orthonormal") -> float:
    """A temperature with ``error_upper_bound(beta) <= eps`` (Fact 1, explicit temperature).

    Found by bisection in ``log beta`` on the upper bound; the returned ``beta`` satisfies
    the bound (checked). ``N = 1`` or ``eps >= 4`` returns ``0.0``.
    """
    eps = check_float("eps", eps, lo=0.0, lo_open=True)
    d, N = check_dim(d), check_points(N)
    points = check_point_law(points, N, d)
    if N == 1 or eps >= 4:
        return 0.0
    hi = 1.0
    while error_upper_bound(hi, d, N, points) > eps:
        hi *= 2
        if hi > 1e30:
            raise ValueError(f"eps must be larger: no beta below 1e30 has an error upper bound "
                             f"<= eps (got {eps})")
    lo = hi / 2
    for _ in range(16):  # hi/lo <= 2^(2^-16): 1e-5 relative
        mid = math.sqrt(lo * hi)
        if error_upper_bound(mid, d, N, points) <= eps:
            hi = mid
        else:
            lo = mid
    assert error_upper_bound(hi, d, N, points) <= eps
    return hi


def full_rank(
    d: int,
    beta: float,
    N: int = 2,
    points: str = "orthonormal",
    claim_samples: int = 200_000,
    generator: Generator = 0,
) -> tuple[MultiHeadAttention, ClaimedError]:
    """Fact 1: the head ``X softmax(beta X^T y)`` and its claimed error bound.

    The claim is exact (``N = 1``: zero), by quadrature (``N = 2``), or for ``N > 2`` the rigorous
    ``error_upper_bound`` (union bound over key pairs). A plain Monte Carlo estimate of the bound's
    expectation is attached as ``extra`` for reference only: at large beta the expectation is
    carried by rare small gaps, and its normal CI can fail to cover the truth.
    """
    d, N = check_dim(d), check_points(N)
    beta = check_temperature(beta)
    points = check_point_law(points, N, d)
    claim_samples = check_int("claim_samples", claim_samples, lo=2)
    model = full_rank_model(d, beta)
    if N == 1:
        claim = ClaimedError.exact(0.0, "<=", "exact", STATEMENT, beta=beta)
    elif N == 2:
        v = claimed_bound_quadrature(d, beta, points)
        claim = ClaimedError.exact(v, "<=", "quadrature", STATEMENT, beta=beta)
    else:
        mc = claimed_bound_mc(d, N, beta, points, claim_samples, generator)
        claim = ClaimedError.exact(
            error_upper_bound(beta, d, N, points), "<=", "certified", STATEMENT, beta=beta,
            monte_carlo_estimate=mc.value, monte_carlo_ci=(mc.lo, mc.hi),
        )
    return model, claim
