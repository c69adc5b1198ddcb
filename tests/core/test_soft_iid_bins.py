"""The i.i.d. soft bound in bins of t (docs/derivations/soft_targets.md, step T, "In bins of
t"): each bin's proved number lies below an independent quadrature of
``E[(1 - t) B(psi_{beta sqrt(1-t)}) | t in bin]`` and close to it, and the bins' mass-weighted
sum is the mixture bound."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from workbench.core.bounds.profiles import profile_iid
from workbench.core.bounds.profiles.profile_fiber import profile_lower_bound
from workbench.core.profiles import tanh_profile


def _density(d: int, t: float) -> float:
    return (1 - t * t) ** ((d - 3) / 2)


def _bin_mean(beta: float, d: int, r: int, H: int, lo: float, hi: float) -> float:
    """``E[(1-t) B | t in [lo, hi]]`` by 8-node Gauss-Legendre in t (B at the exact effective
    temperature at every node) over the mass by scipy's quad."""
    x, w = np.polynomial.legendre.leggauss(8)
    t = (hi - lo) / 2 * x + (hi + lo) / 2
    vals = [(1 - s) * profile_lower_bound(tanh_profile(beta * math.sqrt(1 - s)), d, r, H).value
            * _density(d, s) for s in t]
    num = (hi - lo) / 2 * float(np.dot(w, vals))
    mass = integrate.quad(lambda s: _density(d, s), lo, hi)[0]
    return num / mass


@pytest.mark.parametrize(("beta", "d", "r", "H"), [(4.0, 6, 1, 2), (2.0, 6, 1, 1)])
def test_each_bin_lies_below_its_quadrature_and_close(beta: float, d: int, r: int,
                                                      H: int) -> None:
    bins = profile_iid.soft_iid_bins(beta, d, r, H, bins=3)
    assert len(bins) == 3
    assert all(abs(a[1] - b[0]) < 1e-12 for a, b in zip(bins, bins[1:]))  # consecutive
    for lo, hi, lower in bins:
        quad = _bin_mean(beta, d, r, H, lo, hi)
        assert lower <= quad * (1 + 1e-3), (lo, hi, lower, quad)
        assert lower >= 0.97 * quad, (lo, hi, lower, quad)  # the chord cells: within 3 %


def test_bins_reassemble_the_mixture_bound() -> None:
    beta, d, r, H = 4.0, 6, 1, 2
    bins = profile_iid.soft_iid_bins(beta, d, r, H, bins=4)
    masses = [integrate.quad(lambda s: _density(d, s), lo, hi)[0] for lo, hi, _ in bins]
    total = integrate.quad(lambda s: _density(d, s), -1, 1)[0]
    whole = sum(m * b[2] for m, b in zip(masses, bins)) / total
    assert whole == pytest.approx(profile_iid.soft_iid_bound(beta, d, r, H).value, rel=2e-3)


def test_a_bin_bound_with_the_key_gap_dropped_leaves_the_quadrature(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted fault (effective temperature beta, not beta sqrt(1 - t)) raises the bound
    of the bin of largest t above the true conditional mean."""
    beta, d, r, H = 2.0, 6, 1, 1
    lo, hi, _ = profile_iid.soft_iid_bins(beta, d, r, H, bins=3)[-1]
    quad = _bin_mean(beta, d, r, H, lo, hi)
    orig = profile_iid.effective_temperature
    monkeypatch.setattr(profile_iid, "effective_temperature", lambda b, t: orig(b, 0 * t))
    assert profile_iid.soft_iid_bins(beta, d, r, H, bins=3)[-1][2] > 1.1 * quad


@pytest.mark.parametrize(("bins", "word"), [(0, "bins"), (49, "bins")])
def test_bad_bins_name_the_parameter(bins: int, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        profile_iid.soft_iid_bins(4.0, 6, 1, 2, bins=bins)


@pytest.mark.parametrize(("share", "ok"), [(profile_iid.TRUNCATION_SHARE, True), (1.0, False)])
def test_the_truncation_share_costs_little(monkeypatch: pytest.MonkeyPatch, share: float,
                                           ok: bool) -> None:
    """Lemma T1 (v): a grid point's series stops where its tail is below a tenth of its
    Lipschitz drop. More degrees only raise the bound (Lemma P4), and the share costs at most
    2e-3 of it at (8, 1, 4), beta = 16; a share 10 times larger (the planted fault) costs
    more."""
    beta, d, r, H = 16.0, 8, 1, 4
    monkeypatch.setattr(profile_iid, "TRUNCATION_SHARE", 0.0)
    full = profile_iid.soft_iid_bound(beta, d, r, H).value
    monkeypatch.setattr(profile_iid, "TRUNCATION_SHARE", share)
    cut = profile_iid.soft_iid_bound(beta, d, r, H).value
    assert cut <= full
    assert (full - cut <= 2e-3 * full) is ok, (full, cut)
