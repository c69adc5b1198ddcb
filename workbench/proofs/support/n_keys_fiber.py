"""Independent computations for the bound beyond two keys (docs/derivations/
beyond_two_keys.md): draws of D_N with the fiber's coordinates, the target read off the
keys, the U-statistic of ``Gamma_l`` over two fiber draws, and ``Gamma_l`` by float tensor
quadrature of kappa's three-variable representation (no closed form of the density, no arb).
Shared by the claims of ``workbench.proofs.paper.beyond_two_keys`` and the tests."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.core.harmonics import dim_harmonics, legendre_d

__all__ = ["FiberDraws", "fiber_coordinates", "fiber_draws", "gamma_float",
           "independent_energies", "nearest_t", "u_statistic"]


@dataclass(frozen=True)
class FiberDraws:
    """Keys ``X`` (B, N, d) of D_N built from a frame: ``u = e_1``, ``x_j = e_j`` (j = 3..N),
    E spanned by the last ``n`` frame vectors ``basis`` (B, n, d), ``w = basis^T xi``."""

    X: np.ndarray
    y: np.ndarray
    u: np.ndarray
    w: np.ndarray
    basis: np.ndarray


def fiber_draws(batch: int, d: int, N: int, rng: np.random.Generator,
                xi: np.ndarray | None = None, frame: np.ndarray | None = None,
                y: np.ndarray | None = None) -> FiberDraws:
    """D_N draws through the conditioning of step 4: a Haar frame, then w uniform on S(E).
    Passing ``frame`` and ``y`` again with a fresh ``xi`` gives a second fiber draw with the
    same ``R = (u, x_3..x_N)`` and query."""
    n = d - N + 1
    if frame is None:
        q, rr = np.linalg.qr(rng.standard_normal((batch, d, d)))
        frame = q * np.sign(np.diagonal(rr, axis1=1, axis2=2))[:, None, :]  # Haar
    if y is None:
        y = rng.standard_normal((batch, d))
        y /= np.linalg.norm(y, axis=1, keepdims=True)
    if xi is None:
        xi = rng.standard_normal((batch, n))
        xi /= np.linalg.norm(xi, axis=1, keepdims=True)
    cols = np.swapaxes(frame, 1, 2)  # (B, d, d): row i is the frame's i-th vector
    u, others, basis = cols[:, 0], cols[:, 1:N - 1], cols[:, N - 1:]
    w = np.einsum("bk,bkd->bd", xi, basis)
    x1, x2 = (u + w) / math.sqrt(2), (u - w) / math.sqrt(2)
    X = np.concatenate([x1[:, None], x2[:, None], others], axis=1)
    return FiberDraws(X, y, u, w, basis)


def nearest_t(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``t = 1[i* = 1] - 1[i* = 2]``, read off the nearest key."""
    i = np.einsum("bnd,bd->bn", X, y).argmax(axis=1)
    return (i == 0).astype(float) - (i == 1).astype(float)


def fiber_coordinates(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step 3-5's coordinates read off keys ``X`` (B, N, d) and queries ``y`` (B, d) of D_N:
    ``w = (x_1 - x_2)/sqrt2``, ``c = <P_E y, w>/|P_E y|`` and
    ``kappa = (sqrt2 max_{j>2} <y, x_j> - <y, u>)/|P_E y|`` (``u = (x_1 + x_2)/sqrt2``, E the
    complement of ``u, x_3..x_N``); returned as ``(w, c, kappa)``."""
    u = (X[:, 0] + X[:, 1]) / math.sqrt(2)
    w = (X[:, 0] - X[:, 1]) / math.sqrt(2)
    fixed = np.concatenate([u[:, None], X[:, 2:]], axis=1)
    pe_y = y - np.einsum("bk,bkd->bd", np.einsum("bkd,bd->bk", fixed, y), fixed)
    norm = np.linalg.norm(pe_y, axis=1)
    c = np.einsum("bd,bd->b", pe_y, w) / norm
    kappa = (math.sqrt(2) * np.einsum("bkd,bd->bk", X[:, 2:], y).max(1)
             - np.einsum("bd,bd->b", u, y)) / norm
    return w, c, kappa


def u_statistic(batch: int, d: int, N: int, l: int, rng: np.random.Generator) -> np.ndarray:
    """Per-draw values of ``t(w) t(w') N(n,l) P_l(<w, w'>)`` with w, w' two independent fiber
    draws given ``(R, y)``: mean ``E gamma_l(kappa)^2 = Gamma_l`` (addition theorem)."""
    n = d - N + 1
    a = fiber_draws(batch, d, N, rng)
    frame = np.swapaxes(np.concatenate([a.u[:, None], a.X[:, 2:], a.basis], axis=1), 1, 2)
    b = fiber_draws(batch, d, N, rng, frame=frame, y=a.y)
    kern = dim_harmonics(n, l) * legendre_d(n, l, np.einsum("bd,bd->b", a.w, b.w))[l]
    return nearest_t(a.X, a.y) * nearest_t(b.X, b.y) * kern


def gamma_float(n: int, l: int, k: np.ndarray) -> np.ndarray:
    """``gamma_l(k)`` in float64 (scipy's Gegenbauer polynomials; the closed form of step
    10)."""
    from scipy import special
    lam = (n - 2) / 2
    kp = np.clip(k, 0.0, 1.0)
    integral = (1 - kp**2) ** (lam + 0.5) * 2 * lam * special.eval_gegenbauer(
        l - 1, lam + 1, kp) / (l * (l + 2 * lam))
    c1 = special.eval_gegenbauer(l, lam, 1.0)
    return 2 * math.sqrt(dim_harmonics(n, l)) / (special.beta(0.5, lam + 0.5) * c1) * integral


def independent_energies(d: int, N: int, L: int, grid: int = 240) -> np.ndarray:
    """``Gamma_l`` (odd l <= L) by float tensor quadrature of the density of kappa straight
    from its definition, ``f(k) = E_{M} int r phi(sqrt2 M - k r) p_n(r) dr`` (M the maximum of
    N - 2 Gaussians, density ``m phi Phi^{m-1}``; ``p_n`` the chi_n density), plus the atom
    ``P(kappa <= 0) gamma_l(0)^2`` by the same quadrature. Trapezoid rules in x and r (their
    integrands decay like Gaussians), Gauss-Legendre in k."""
    from scipy import special
    n, m = d - N + 1, N - 2
    x = np.linspace(-9.0, 9.0, 4 * grid + 1)
    wx = np.full_like(x, x[1] - x[0])
    dens_m = m * special.ndtr(x) ** (m - 1) * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    r = np.linspace(0.0, math.sqrt(n) + 12.0, 4 * grid + 1)
    wr = np.full_like(r, r[1] - r[0])
    log_pn = ((n - 1) * np.log(np.maximum(r, 1e-300)) - r * r / 2
              - (n / 2 - 1) * math.log(2) - special.gammaln(n / 2))
    pn = np.where(r > 0, np.exp(log_pn), 0.0)
    kn, kw = special.roots_legendre(grid)
    kn, kw = (kn + 1) / 2, kw / 2
    s = math.sqrt(2) * x
    f = np.empty_like(kn)
    for i, k in enumerate(kn):
        phi = np.exp(-(s[:, None] - k * r[None, :]) ** 2 / 2) / math.sqrt(2 * math.pi)
        f[i] = (dens_m * wx) @ phi @ (r * pn * wr)
    atom = float((dens_m * wx) @ special.ndtr(-s))  # P(g_u >= sqrt2 M)
    out = []
    for l in range(1, L + 1, 2):
        q = gamma_float(n, l, kn) ** 2
        out.append(float(kw @ (q * f)) + atom * float(gamma_float(n, l, np.zeros(1))[0] ** 2))
    return np.array(out)
