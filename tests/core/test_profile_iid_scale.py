"""The i.i.d. bound for any profile target (docs/derivations/soft_targets.md, step T, "Any
profile"): checked against an independent mixture quadrature, the scale-gap enclosure against
a dense numeric maximum, and the premise (a profile target on keys at <x1, x2> = t has the
profile psi(sqrt(1 - t) .)) against the target itself."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
from scipy.special import roots_jacobi

from workbench.core.bounds import profile_iid_scale as pis
from workbench.core.bounds.profile_fiber import profile_lower_bound
from workbench.core.bounds.profile_iid import soft_iid_bound
from workbench.core.profiles import Profile, psi_target, tanh_profile


def _soft_sign(t: np.ndarray, k: float = 4.0) -> np.ndarray:
    t = np.asarray(t, dtype=float)
    return t / np.sqrt(1.0 / k**2 + t * t)


def _soft_sign_sympy(t: Any, k: float = 4.0) -> Any:
    import sympy as sp

    return t / sp.sqrt(1 / sp.Float(k) ** 2 + t**2)


_soft_sign.sympy = _soft_sign_sympy  # type: ignore[attr-defined]
TARGET = psi_target("soft-sign", _soft_sign)


def _at_scale(k: float, c: float) -> Profile:
    """psi_k(c .) written out directly (not through ``scaled_profile``)."""
    import sympy as sp

    return Profile(f"soft-sign k={k} c={c}", lambda t: _soft_sign(c * np.asarray(t), k),
                   sympy=lambda t: (c * t) / sp.sqrt(1 / sp.Float(k) ** 2 + (c * t) ** 2),
                   key=("test-soft-sign", k, c))


def _mixture(k: float, d: int, r: int, H: int, nodes: int = 12) -> float:
    t, w = roots_jacobi(nodes, (d - 3) / 2, (d - 3) / 2)
    w = w / w.sum()
    return float(sum(wi * (1 - ti) * profile_lower_bound(_at_scale(k, math.sqrt(1 - ti)), d, r,
                                                          H).value for ti, wi in zip(t, w)))


@pytest.mark.parametrize(("k", "d", "r", "H"), [(4.0, 6, 1, 2), (4.0, 8, 1, 1)])
def test_the_bound_lies_below_the_mixture_and_close(k: float, d: int, r: int, H: int) -> None:
    bv = pis.profile_iid_bound(TARGET.profile_at({"k": k}), d, r, H)
    quad = _mixture(k, d, r, H)
    assert bv.rigorous
    assert bv.value <= quad * (1 + 1e-3)
    assert bv.value >= 0.93 * quad  # measured 0.96 (cells and the scale gap)


def test_the_scale_gap_encloses_the_largest_distance_and_is_close() -> None:
    prof = TARGET.profile_at({"k": 4.0})
    d, c_lo, c_hi = 6, 0.5, 0.52
    c_ref = (c_lo + c_hi) / 2
    gap, proved = pis.scale_gap(prof, c_lo, c_hi, c_ref, d)
    x, w = np.polynomial.legendre.leggauss(400)
    s = (x + 1) / 2  # s in [0, 1], density of s = <y, w> on S^{d-1} times 2 (psi odd)
    rho = math.exp(math.lgamma(d / 2) - math.lgamma((d - 1) / 2)) / math.sqrt(math.pi)
    wt = w / 2 * 2 * rho * (1 - s * s) ** ((d - 3) / 2)
    true = max(math.sqrt(float(wt @ (_soft_sign(c * s) - _soft_sign(c_ref * s)) ** 2))
               for c in np.linspace(c_lo, c_hi, 41))
    assert proved
    assert true <= gap <= 1.5 * true


def test_a_tanh_profile_takes_soft_nearest_route() -> None:
    assert pis.profile_iid_bound(tanh_profile(4.0), 6, 1, 2).value == \
        soft_iid_bound(4.0, 6, 1, 2).value


def test_a_profile_target_on_iid_keys_has_the_scaled_profile() -> None:
    """The premise of iid_scales: f = (x1+x2)/2 + psi(sqrt(1-t) <y, w_hat>) (x1-x2)/2."""
    from workbench.core.sphere import make_generator, sample_instances

    X, y = sample_instances(500, 2, 7, points="iid", generator=make_generator(3))
    X, y = X.double(), y.double()
    f = TARGET.fn(X, y, k=4.0)
    t = (X[:, 0] * X[:, 1]).sum(-1)
    diff = X[:, 0] - X[:, 1]
    w_hat = diff / diff.norm(dim=-1, keepdim=True)
    s = (w_hat * y).sum(-1)
    p = torch.as_tensor(_soft_sign((torch.sqrt(1 - t) * s).numpy()))
    want = (X[:, 0] + X[:, 1]) / 2 + p[:, None] * diff / 2
    assert torch.allclose(f, want, atol=1e-6)
    assert not torch.allclose(f, (X[:, 0] + X[:, 1]) / 2
                              + torch.as_tensor(_soft_sign(s.numpy()))[:, None] * diff / 2,
                              atol=1e-3)


def _bin_mixture(k: float, d: int, r: int, H: int, lo: float, hi: float) -> float:
    """``E[(1-t) B(psi(sqrt(1-t) .)) | t in [lo, hi]]`` by 8-node Gauss-Legendre in t."""
    from scipy import integrate

    x, w = np.polynomial.legendre.leggauss(8)
    t = (hi - lo) / 2 * x + (hi + lo) / 2
    dens = (1 - t * t) ** ((d - 3) / 2)
    vals = [(1 - ti) * profile_lower_bound(_at_scale(k, math.sqrt(1 - ti)), d, r, H).value
            for ti in t]
    mass = integrate.quad(lambda u: (1 - u * u) ** ((d - 3) / 2), lo, hi)[0]
    return (hi - lo) / 2 * float(np.dot(w, dens * np.array(vals))) / mass


def test_each_bin_lies_below_its_mixture_and_close() -> None:
    for lo, hi, lower in pis.profile_iid_bins(TARGET.profile_at({"k": 4.0}), 6, 1, 2, bins=3):
        quad = _bin_mixture(4.0, 6, 1, 2, lo, hi)
        assert 0.85 * quad <= lower <= quad * (1 + 1e-3), (lo, hi, lower, quad)


def test_the_profile_taken_without_the_key_gap_leaves_the_last_bin(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted fault: the D_2 profile psi on every pair of keys (scale 1, not sqrt(1 - t)).
    Over all keys it is *lower* than the mixture; the bin of largest t sees it."""
    orig = pis.scaled_profile
    monkeypatch.setattr(pis, "scaled_profile", lambda p, c: orig(p, 1.0))
    lo, hi, lower = pis.profile_iid_bins(TARGET.profile_at({"k": 4.0}), 6, 1, 2, bins=3)[-1]
    assert lower > 1.1 * _bin_mixture(4.0, 6, 1, 2, lo, hi)


def test_a_profile_beyond_one_on_the_wider_range_is_refused() -> None:
    cube_root = psi_target("cbrt", lambda t: np.cbrt(np.asarray(t, dtype=float)))
    with pytest.raises(ValueError, match="--points iid"):
        pis.profile_iid_bound(cube_root.profile_at(), 6, 1, 2)


def test_a_profile_without_an_exact_form_is_an_estimate() -> None:
    numeric = psi_target("tanh-numeric", np.tanh)
    bv = pis.profile_iid_bound(numeric.profile_at(), 6, 1, 2)
    assert not bv.rigorous and bv.value > 0
