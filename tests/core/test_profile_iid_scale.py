"""The i.i.d. bound for any profile target (docs/derivations/soft_targets.md, step T, "Any
profile"): checked against the independent quadratures of ``targets.profile_iid_mixture`` (at
a second point, and under a planted fault), the premise (a profile target on keys at
<x1, x2> = t has the profile psi(sqrt(1 - t) .)) against the target itself, and its refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from workbench.core.bounds.profiles import profile_iid_scale as pis
from workbench.core.bounds.profiles.profile_iid import soft_iid_bound
from workbench.core.profiles import psi_target, tanh_profile
from workbench.proofs.paper.profile_iid import bin_mixture, largest_distance, mixture, soft_sign

PROFILE = soft_sign(4.0)  # the worked plug-in's smooth sign, from its sympy form
TARGET = psi_target("soft-sign", PROFILE.psi)


@pytest.mark.parametrize(("k", "d", "r", "H"), [(4.0, 6, 1, 2), (4.0, 8, 1, 1)])
def test_the_bound_lies_below_the_mixture_and_close(k: float, d: int, r: int, H: int) -> None:
    bv = pis.profile_iid_bound(soft_sign(k), d, r, H)
    quad = mixture(k, d, r, H)
    assert bv.rigorous
    assert bv.value <= quad * (1 + 1e-3)
    assert bv.value >= 0.99 * quad  # measured 0.997-0.998 (chords and their curvature)


def test_the_scale_gap_encloses_the_largest_distance_and_is_close() -> None:
    d, c_lo, c_hi = 6, 0.5, 0.52
    c_ref = (c_lo + c_hi) / 2
    gap, proved = pis.scale_gap(PROFILE, c_lo, c_hi, c_ref, d)
    true = largest_distance(4.0, d, c_lo, c_hi, c_ref)
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
    f = TARGET.fn(X, y)
    t = (X[:, 0] * X[:, 1]).sum(-1)
    diff = X[:, 0] - X[:, 1]
    w_hat = diff / diff.norm(dim=-1, keepdim=True)
    s = (w_hat * y).sum(-1)
    p = torch.as_tensor(PROFILE.psi((torch.sqrt(1 - t) * s).numpy()))
    want = (X[:, 0] + X[:, 1]) / 2 + p[:, None] * diff / 2
    assert torch.allclose(f, want, atol=1e-6)
    assert not torch.allclose(f, (X[:, 0] + X[:, 1]) / 2
                              + torch.as_tensor(PROFILE.psi(s.numpy()))[:, None] * diff / 2,
                              atol=1e-3)


def test_each_bin_lies_below_its_mixture_and_close() -> None:
    for lo, hi, lower in pis.profile_iid_bins(PROFILE, 6, 1, 2, bins=3):
        quad = bin_mixture(4.0, 6, 1, 2, lo, hi)
        assert 0.85 * quad <= lower <= quad * (1 + 1e-3), (lo, hi, lower, quad)


def test_the_profile_taken_without_the_key_gap_leaves_the_last_bin(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted fault: the D_2 profile psi on every pair of keys (scale 1, not sqrt(1 - t)).
    Over all keys it is *lower* than the mixture; the bin of largest t sees it."""
    orig = pis.scaled_profile
    monkeypatch.setattr(pis, "scaled_profile", lambda p, c: orig(p, 1.0))
    lo, hi, lower = pis.profile_iid_bins(PROFILE, 6, 1, 2, bins=3)[-1]
    assert lower > 1.1 * bin_mixture(4.0, 6, 1, 2, lo, hi)


def test_a_profile_beyond_one_on_the_wider_range_is_refused() -> None:
    cube_root = psi_target("cbrt", lambda t: np.cbrt(np.asarray(t, dtype=float)))
    with pytest.raises(ValueError, match="--points iid"):
        pis.profile_iid_bound(cube_root.profile_at(), 6, 1, 2)


def test_a_profile_without_an_exact_form_is_an_estimate() -> None:
    numeric = psi_target("tanh-numeric", np.tanh)
    bv = pis.profile_iid_bound(numeric.profile_at(), 6, 1, 2)
    assert not bv.rigorous and bv.value > 0
