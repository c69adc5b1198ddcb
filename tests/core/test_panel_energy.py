"""The energies and distances of profiles by proved panel quadrature
(docs/derivations/soft_targets.md, Lemma Q): every ball overlaps the independent adaptive
``acb.integral`` enclosure, for tanh over the temperatures the i.i.d. mixture visits (up to sqrt2
10^4) and d from 3 to 64, and for the worked plug-in's smooth sign at two widths and scales; a
weight 1e-9 off is seen; the analyticity bounds (tanh's closed form, a profile's arb form on a
box) hold at points of each box; and the i.i.d. cells' weight ``E[(1 - t); cell]`` and midpoint
reference are checked against scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from workbench.core import rigorous as rig
from workbench.core.bounds.numerics import gegenbauer_ball as gb
from workbench.core.bounds.numerics.panel_quadrature import finest_level, panels
from workbench.core.bounds.profiles import panel_energy as te
from workbench.core.bounds.profiles import profile_energy as pe
from workbench.core.bounds.profiles import profile_fiber as pf
from workbench.core.bounds.profiles.profile_fiber import profile_distance
from workbench.core.bounds.profiles.profile_form import exact_form
from workbench.core.bounds.profiles.profile_iid import weighted_mass
from workbench.core.bounds.profiles.profile_iid_scale import scaled_profile
from workbench.core.profiles import ZERO_PROFILE, Profile, sign_profile, tanh_profile
from workbench.proofs.paper.profile_iid import soft_sign


def _adaptive(b: float | Profile, d: int, l: int) -> object:
    p = tanh_profile(b) if isinstance(b, float) else b
    key = (p.key, d, l, "arb")
    gb.CACHE.pop(key, None)
    with rig.precision(128):
        got = pe._eta_ball(p, exact_form(p), d, l)
    gb.CACHE.pop(key, None)
    return got


@pytest.mark.parametrize(("b", "d", "L"), [(0.7, 3, 9), (5.6, 8, 21), (90.0, 8, 113),
                                           (1414.0, 8, 95), (14142.0, 16, 61), (64.0, 64, 79)])
def test_panel_energies_contain_the_adaptive_integrals(b: float, d: int, L: int) -> None:
    got = te.panel_etas(tanh_profile(b), d, [0, *range(1, L + 1, 2)])
    assert sorted(got) == [0, *range(1, L + 1, 2)]  # every degree within FAST_TOL
    for l in (0, 1, 3, L // 2 | 1, L):
        ref = _adaptive(b, d, l)
        assert got[l].overlaps(ref), (l, got[l], ref)
        assert float(got[l].rad()) < 1e-12


def test_a_weight_off_by_1e9_is_seen() -> None:
    b, d = 5.6, 8
    level = finest_level(b)
    sins, base = te._nodes(d, level)
    key, state = ("panel nodes", d, level, 128), ("panel state", tanh_profile(b).key, d, level)
    try:
        with rig.precision(128):
            gb.CACHE[key] = (sins, [w * (1 + rig.arb(1e-9)) for w in base])
        gb.CACHE.pop(state, None)
        got = te.panel_etas(tanh_profile(b), d, [1])[1]
        assert not got.overlaps(_adaptive(b, d, 1))
    finally:
        gb.CACHE.pop(key, None)
        gb.CACHE.pop(state, None)


@pytest.mark.parametrize("b", [1.0, 60.0, 127.0, 2000.0, 14142.0])
def test_tanh_bound_holds_inside_every_box(b: float) -> None:
    """At the corners and midpoints of each box with a finite bound, |tanh(b sin th/sqrt2)|
    (numpy, complex) is below it."""
    for level in (8, 12, 17):
        for box in (box for p in panels(128, level) for box in p.boxes):
            g = te.tanh_bound(b, box)
            if math.isinf(g):
                continue
            xs = np.linspace(float(box.x_lo.mid()), float(box.x_hi.mid()), 5)
            ys = np.linspace(-float(box.y_max.mid()), float(box.y_max.mid()), 5)
            th = xs[:, None] + 1j * ys[None, :]
            vals = np.abs(np.tanh(b * np.sin(th) / math.sqrt(2)))
            assert vals.max() <= g * (1 + 1e-9), (box.rho, g, vals.max())


@pytest.mark.parametrize(("b1", "b2", "d"), [(64.0, 63.35364287914383, 64), (10.0, 0.0, 8),
                                             (1414.0, 1300.0, 16), (30.0, 29.999, 8)])
def test_panel_distances_are_the_adaptive_integrals(b1: float, b2: float, d: int) -> None:
    """``||psi_b1 - psi_b2||`` (``b2 = 0``: the zero profile) from the node values against the
    adaptive arb integral of the same distance; the nearby pairs have node values equal to 1
    up to their radii (a square of such a ball was once nan)."""
    a, b = tanh_profile(b1), ZERO_PROFILE if b2 == 0 else tanh_profile(b2)
    got = pf._panel_distance(a, b, d)
    want = pf._distance(a, b, d)
    assert got is not None and math.isfinite(got[1]) and got[1] - got[0] < 1e-12
    assert got[0] <= want[1] and want[0] <= got[1], (got, want)


@pytest.mark.parametrize("d", [3, 8, 33])
def test_weighted_mass_is_the_integral_of_one_minus_t(d: int) -> None:
    lo, hi = -0.7, 0.4
    norm = integrate.quad(lambda th: math.cos(th) ** (d - 2), -math.pi / 2, math.pi / 2)[0]
    want = integrate.quad(lambda th: (1 - math.sin(th)) * math.cos(th) ** (d - 2), lo, hi,
                          epsabs=1e-14)[0] / norm
    assert abs(float(weighted_mass(d, lo, hi).mid()) - want) < 1e-12


def test_the_midpoint_reference_bounds_every_temperature_of_the_cell() -> None:
    """``||psi_b - psi_mid|| <= max(||psi_b' - psi_mid||, ||psi_mid - psi_b''||)`` for b in
    ``[b'', b']`` (tanh grows with b), the gap the cell rule uses."""
    d, lo, hi = 8, 3.0, 5.0
    mid = (lo + hi) / 2
    gap = max(profile_distance(tanh_profile(hi), tanh_profile(mid), d)[1],
              profile_distance(tanh_profile(mid), tanh_profile(lo), d)[1])
    for b in np.linspace(lo, hi, 9):
        assert profile_distance(tanh_profile(float(b)), tanh_profile(mid), d)[0] <= gap
    assert gap < 0.6 * profile_distance(tanh_profile(hi), tanh_profile(lo), d)[0]


@pytest.mark.parametrize(("b", "d"), [(8.0, 8), (90.0, 16), (1e4, 64)])
def test_the_panel_gap_to_sign_is_step_s6s_integral(b: float, d: int) -> None:
    """``||psi_b - sign||^2`` from the node values against step S6's adaptive integral with
    its cut-off (soft_limit, the panels switched off)."""
    from workbench.core.bounds.profiles import soft_limit

    got = te.panel_gap_sq(tanh_profile(b), sign_profile(), d)
    assert got is not None and float(got.rad()) < 1e-15
    soft_limit.distance_to_sign.cache_clear()
    old, te.PANEL_BETA = te.PANEL_BETA, math.inf
    try:
        lo, hi = soft_limit.distance_to_sign(b, d)
    finally:
        te.PANEL_BETA = old
        soft_limit.distance_to_sign.cache_clear()
    assert got.overlaps(rig.arb(lo).union(rig.arb(hi)))


@pytest.mark.parametrize(("k", "scale", "d", "L"), [(4.0, 1.0, 6, 31), (16.0, 1.3, 8, 63),
                                                    (16.0, 0.4, 64, 47)])
def test_plug_in_energies_contain_the_adaptive_integrals(k: float, scale: float, d: int,
                                                         L: int) -> None:
    """The worked plug-in's smooth sign ``t/sqrt(1/k^2 + t^2)`` (branch points at ``+-i/k``:
    its arb form's box bound carries the analyticity) at an i.i.d. cell's scale."""
    p = scaled_profile(soft_sign(k), scale)
    got = te.panel_etas(p, d, [0, *range(1, L + 1, 2)])
    assert sorted(got) == [0, *range(1, L + 1, 2)]
    for l in (0, 1, 5, L):
        ref = _adaptive(p, d, l)
        assert got[l].overlaps(ref), (l, got[l], ref)
        assert float(got[l].rad()) < 1e-12


@pytest.mark.parametrize("k", [4.0, 16.0])
def test_a_form_bound_holds_inside_every_box(k: float) -> None:
    """At the corners and midpoints of each box with a finite bound, ``|psi(sin th)|`` (numpy,
    complex, principal sqrt) is below it; near the branch points the bound is infinite."""
    form = exact_form(soft_sign(k))
    infinite = 0
    for level in te.LEVELS:
        for box in (box for p in panels(128, level) for box in p.boxes):
            g = te._form_bound(form, box)
            if math.isinf(g):
                infinite += 1
                continue
            xs = np.linspace(float(box.x_lo.mid()), float(box.x_hi.mid()), 5)
            ys = np.linspace(-float(box.y_max.mid()), float(box.y_max.mid()), 5)
            z = np.sin(xs[:, None] + 1j * ys[None, :])
            vals = np.abs(z / np.sqrt(1 / k**2 + z * z))
            assert vals.max() <= g * (1 + 1e-9), (box.rho, g, vals.max())
    assert infinite > 0  # the large ellipses of the first panels reach i/k


@pytest.mark.parametrize(("a", "b", "d"), [
    (soft_sign(4.0), ZERO_PROFILE, 6), (soft_sign(16.0), sign_profile(), 8),
    (scaled_profile(soft_sign(4.0), 0.9), scaled_profile(soft_sign(4.0), 0.95), 16)])
def test_plug_in_distances_are_the_adaptive_integrals(a: Profile, b: Profile, d: int) -> None:
    got = pf._panel_distance(a, b, d)
    want = pf._distance(a, b, d)
    assert got is not None and got[1] - got[0] < 1e-12
    assert got[0] <= want[1] and want[0] <= got[1], (got, want)
