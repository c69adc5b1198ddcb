"""One test per step of docs/derivations/soft_targets.md (S0-S4, F, T): each checks the step's
statement numerically, and each sees the realistic fault named in its docstring."""

from __future__ import annotations

import math

import numpy as np
import torch

from workbench.constructions.full_rank import full_rank_model
from workbench.core.bounds.profiles.profile_energy import profile_energies
from workbench.core.harmonics import legendre_d, normalized_gegenbauer, sign_coefficients
from workbench.core.profiles import tanh_profile
from workbench.core.quadrature import gauss_legendre
from workbench.core.sphere import sample_instances, uniform_sphere
from workbench.core.targets import profile_target


def _mean_ci(x: np.ndarray, z: float = 3.29) -> tuple[float, float]:
    m, s = float(x.mean()), float(x.std(ddof=1)) / math.sqrt(len(x))
    return m - z * s, m + z * s


def test_s0_soft_head_is_its_profile() -> None:
    """The full-rank head is (u + tanh(beta <y,w>/sqrt2) w)/sqrt2; beta/sqrt2 -> beta/2 is seen."""
    X, y = sample_instances(2000, 2, 7, "orthonormal", generator=3)
    with torch.no_grad():
        A = full_rank_model(7, 5.0)(X, y)
    assert float((A - profile_target(X, y, tanh_profile(5.0).psi)).abs().max()) < 1e-12
    wrong = profile_target(X, y, lambda t: np.tanh(5.0 * t / 2))
    assert float((A - wrong).abs().max()) > 1e-2


def _eq2_model(d: int, H: int, gen: torch.Generator):  # type: ignore[no-untyped-def]
    W = torch.randn(H, 2, d, generator=gen, dtype=torch.float64)
    M = torch.randn(H, d, d, generator=gen, dtype=torch.float64)

    def phi(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:  # (B, H, 2), rows sum to 1
        s = torch.einsum("hrd,bnd,bd->bhn", W, X, y) + torch.einsum("hrd,bnd->bhn", W, X) ** 2
        return torch.softmax(s, dim=-1)

    return M, phi


def test_s1_projection_identity() -> None:
    """sqrt2 <w, f - A> = psi - G for a random Eq. 2 model; sign in place of psi fails."""
    d, H = 6, 3
    gen = torch.Generator().manual_seed(1)
    X, y = sample_instances(3000, 2, d, "orthonormal", generator=gen)
    M, phi = _eq2_model(d, H, gen)
    p = phi(X, y)
    A = torch.einsum("hed,bhd->be", M, torch.einsum("bhn,bnd->bhd", p, X))
    u, w = (X[:, 0] + X[:, 1]) / math.sqrt(2), (X[:, 0] - X[:, 1]) / math.sqrt(2)
    psi_fn = tanh_profile(4.0).psi
    f = profile_target(X, y, psi_fn)
    psi = torch.as_tensor(psi_fn(torch.einsum("bd,bd->b", y, w).numpy()))
    psi_h = p[..., 0] - p[..., 1]
    G = (torch.einsum("bd,hde,be->bh", w, M, u) + psi_h * torch.einsum("bd,hde,be->bh", w, M, w)
         ).sum(-1)
    lhs = math.sqrt(2) * torch.einsum("bd,bd->b", w, f - A)
    assert float((lhs - (psi - G)).abs().max()) < 1e-10
    assert bool(((f - A).pow(2).sum(-1) >= (psi - G).pow(2) / 2 - 1e-12).all())
    sign = torch.sign(torch.einsum("bd,bd->b", y, w))
    assert float((lhs - (sign - G)).abs().max()) > 0.1


def _coefficients(psi, d: int, L: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    """E[psi(t) sqrt(N) P_l(t)] for l = 0..L over all of [-1, 1] (no oddness used)."""
    x, w = gauss_legendre(400)
    wt = w * (1 - x * x) ** ((d - 3) / 2)
    wt = wt / wt.sum()
    return normalized_gegenbauer(d, L, x) @ (wt * psi(x))


def test_s2_even_degrees_vanish() -> None:
    """Odd psi has no even degree; the non-odd tanh(t) + t^2/4 has one at l = 2."""
    c = _coefficients(lambda t: np.tanh(3 * t), 5, 8)
    assert np.abs(c[0::2]).max() < 1e-15
    bad = _coefficients(lambda t: np.tanh(3 * t) + t * t / 4, 5, 8)
    assert abs(bad[2]) > 1e-2


def test_s4_isotropy_for_a_soft_target() -> None:
    """E_y ||P_S psi_y||^2 = sum_l eta_l^2 dim(S cap H_l)/N(d,l) for S spanned by zonal harmonics
    of degrees 1 and 3 at random points (Monte Carlo over y, 99.9 %); eta_3 for eta_1 is seen."""
    d, beta = 5, 4.0
    e = profile_energies(tanh_profile(beta), d, 3)
    eta1, eta3 = math.sqrt(e.lo[0]), math.sqrt(e.lo[1])
    gen = torch.Generator().manual_seed(2)
    a1 = uniform_sphere(2, d=d, generator=gen, dtype=torch.float64).numpy()
    a3 = uniform_sphere(3, d=d, generator=gen, dtype=torch.float64).numpy()
    y = uniform_sphere(40_000, d=d, generator=gen, dtype=torch.float64).numpy()

    def block(a: np.ndarray, l: int, eta: float) -> np.ndarray:
        gram = legendre_d(d, l, a @ a.T)[l]  # <Zbar_{l,a}, Zbar_{l,b}> = P_l(<a, b>)
        c = eta * legendre_d(d, l, y @ a.T)[l]  # <psi_y, Zbar_{l,a}> = eta_l P_l(<y, a>)
        return np.einsum("bi,ij,bj->b", c, np.linalg.inv(gram), c)

    sample = block(a1, 1, eta1) + block(a3, 3, eta3)  # degrees are orthogonal
    from workbench.core.harmonics import dim_harmonics

    want = eta1**2 * 2 / d + eta3**2 * 3 / dim_harmonics(d, 3)
    lo, hi = _mean_ci(sample)
    assert lo <= want <= hi
    swapped = eta3**2 * 2 / d + eta1**2 * 3 / dim_harmonics(d, 3)
    assert not lo <= swapped <= hi


def test_f_kernel_is_the_energy_series() -> None:
    """k_sign(x) = sum_l eta_l^2 P_l(x) = (2/pi) arcsin x; for psi_4, E_y psi psi' (Monte Carlo)
    equals the series; the series with eta_l in place of eta_l^2 is seen."""
    d, L = 6, 2001
    eta = sign_coefficients(d, L)
    tail = 1 - float((eta**2).sum())
    for x in (0.3, -0.5):
        series = float((eta**2) @ legendre_d(d, L, np.array(x)))
        assert abs(series - 2 / math.pi * math.asin(x)) <= tail + 1e-12
    e = profile_energies(tanh_profile(4.0), d, 41)
    gen = torch.Generator().manual_seed(5)
    y = uniform_sphere(200_000, d=d, generator=gen, dtype=torch.float64).numpy()
    psi = tanh_profile(4.0).psi
    for x in (0.2, 0.7):
        a = np.eye(d)[0]
        b = x * np.eye(d)[0] + math.sqrt(1 - x * x) * np.eye(d)[1]
        lo, hi = _mean_ci(psi(y @ a) * psi(y @ b))
        P = legendre_d(d, 41, np.array(x))[1::2].ravel()
        assert lo <= float(np.array(e.lo) @ P) <= hi
        assert not lo <= float(np.sqrt(e.lo) @ P) <= hi


def test_t_iid_soft_target_has_effective_temperature() -> None:
    """On i.i.d. keys p1 - p2 = tanh(beta sqrt(1-t) <y, w_hat>/sqrt2), not at temperature beta."""
    beta, d = 6.0, 5
    X, y = sample_instances(3000, 2, d, "iid", generator=4)
    p = torch.softmax(beta * torch.einsum("bnd,bd->bn", X, y), dim=-1)
    t = torch.einsum("bd,bd->b", X[:, 0], X[:, 1])
    w = (X[:, 0] - X[:, 1]) / math.sqrt(2)
    w_hat = w / w.norm(dim=-1, keepdim=True)
    s = torch.einsum("bd,bd->b", y, w_hat)
    assert float(((p[:, 0] - p[:, 1]) - torch.tanh(beta * (1 - t).sqrt() * s / math.sqrt(2)))
                 .abs().max()) < 1e-12
    assert float(((p[:, 0] - p[:, 1]) - torch.tanh(beta * s / math.sqrt(2))).abs().max()) > 1e-2
