"""The fiber bound for a profile (docs/derivations/soft_targets.md, step F, Lemmas P1-P5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.special import eval_gegenbauer

from workbench.core import rigorous as rig
from workbench.core.bounds.fiber_bound.fiber import fiber_bound
from workbench.core.bounds.profiles.profile_fiber import (
    direct_fiber_part,
    distance_to_sign,
    hardmax_fiber_part,
    profile_fiber_parts,
    profile_lower_bound,
)
from workbench.core.bounds.profiles.profile_fiber_kernel import ProfileFiber, kernel_table
from workbench.core.profiles import Profile, sign_profile, tanh_profile


def _P(d: int, l: int, x: float) -> float:
    a = (d - 2) / 2
    return float(eval_gegenbauer(l, a, x) / eval_gegenbauer(l, a, 1.0))


def _quad_eigenvalue(d: int, m: int, l: int, j: int, c: float) -> float:
    """``a_j(c) int P_l(c + (1-c) t) P_j(t) dmu_m`` by scipy quadrature (m = 1: two points)."""
    Pj = [lambda t: 1.0, lambda t: t, lambda t: (m * t * t - 1) / (m - 1)][j]
    if m == 1:
        lam = 0.5 * (Pj(1.0) + _P(d, l, 2 * c - 1) * Pj(-1.0))
    else:
        a = (m - 3) / 2  # the weight (1-t)^a (1+t)^a, handled by QUADPACK's 'alg' rule
        num = integrate.quad(lambda t: _P(d, l, c + (1 - c) * t) * Pj(t), -1, 1, weight="alg",
                             wvar=(a, a), limit=200, epsabs=1e-14)[0]
        lam = num / integrate.quad(lambda t: 1.0, -1, 1, weight="alg", wvar=(a, a))[0]
    factor = [1.0, c + (1 - c) / m, 2 * (1 - c) / (m + 2)][j]
    return factor * lam


@pytest.mark.parametrize("d,m", [(8, 5), (8, 2), (6, 1), (16, 3)])
def test_kernel_table_against_quadrature(d: int, m: int) -> None:
    L = 21
    table = kernel_table(d, m, L)
    for c in (0.05, 0.3, 0.8):
        phi = math.asin(math.sqrt(c))
        cos = np.cos(2 * np.arange(L + 2) * phi)
        for j, V in enumerate(table):
            for row, l in enumerate(range(1, L + 1, 2)):
                if l not in (1, 7, 21):
                    continue
                got = sum(float(V[row, n]) * cos[n] for n in range(L + 2))
                assert got == pytest.approx(_quad_eigenvalue(d, m, l, j, c), abs=1e-11)
                assert got >= -1e-15  # Lemma P2: a PSD kernel's eigenvalue


def test_a_wrong_degree_is_seen_by_the_table_check() -> None:
    """The comparison above has power: degree 7's row against degree 9's quadrature."""
    V = kernel_table(8, 5, 21)[0]
    phi = math.asin(math.sqrt(0.3))
    got = sum(float(V[3, n]) * math.cos(2 * n * phi) for n in range(23))  # l = 7
    assert abs(got - _quad_eigenvalue(8, 5, 9, 0, 0.3)) > 1e-4


def test_cells_enclose_the_values() -> None:
    """Lemma P3: the cell balls hold the end values and 50 inner points (tanh, beta = 16)."""
    from workbench.core.bounds.profiles.profile_energy import profile_energies

    e = profile_energies(tanh_profile(16.0), 8, 41)
    with rig.precision(128):
        eta = [rig.ball((lo + hi) / 2, (hi - lo) / 2) for lo, hi in zip(e.lo, e.hi)]
        fib = ProfileFiber(8, 3, eta, 41)
        for lo, hi in ((0.0, 0.1), (0.4, 0.45), (1.2, 1.5)):
            cell = fib.values(lo, hi)
            for x in np.linspace(lo, hi, 50):
                pt = fib._point(float(x))
                assert all(cell[j].lower() <= pt[j].lower() and pt[j].upper() <= cell[j].upper()
                           for j in range(3))


def test_sign_is_the_hardmax_fiber_bound_bit_for_bit() -> None:
    for vc in ("eq2", "query-dependent-values"):
        (part,) = profile_fiber_parts(sign_profile(), 8, 1, 2, vc)
        assert part.enclosure == fiber_bound(8, 1, 2, vc).enclosure
        (part,) = profile_fiber_parts(sign_profile(flip=True), 8, 1, 2, vc)
        assert part.enclosure == fiber_bound(8, 1, 2, vc).enclosure


def test_sign_through_the_kernel_path_is_below_and_near_the_hardmax_bound() -> None:
    """Lemma P4 with sign's energies: F_L <= F(sign) <= F_L + tail (the arcsine path)."""
    hard = fiber_bound(8, 1, 4).enclosure
    p = direct_fiber_part(sign_profile(), 8, 1, 4, "eq2", 61)
    assert p.truncation is not None
    assert p.enclosure[1] <= hard[0] <= p.enclosure[0] + p.truncation.tail


def test_truncation_only_lowers_the_bound() -> None:
    """Lemma P4: F_L is non-decreasing in L and F_L + tail_L bounds every later F_L'."""
    parts = [direct_fiber_part(tanh_profile(8.0), 8, 1, 2, "eq2", L) for L in (3, 7, 15, 31)]
    for a, b in zip(parts, parts[1:]):
        assert a.enclosure[0] <= b.enclosure[1]
        assert a.truncation is not None and b.enclosure[0] <= a.enclosure[1] + a.truncation.tail


def test_lemma_p5_distance_to_hardmax() -> None:
    """|F(psi_beta) - F(sign)| <= ||psi_beta - sign|| at beta = 16, 64, both classes."""
    for beta in (16.0, 64.0):
        dist = distance_to_sign(tanh_profile(beta), 8)
        for vc in ("eq2", "query-dependent-values"):
            soft = direct_fiber_part(tanh_profile(beta), 8, 1, 2, vc, 61)
            hard = fiber_bound(8, 1, 2, vc).enclosure
            assert soft.truncation is not None
            gap = max(hard[1] - soft.enclosure[0], soft.enclosure[1] + soft.truncation.tail
                      - hard[0])
            assert gap <= dist[1]
            via = hardmax_fiber_part(8, 1, 2, vc, dist)
            assert via.enclosure[0] <= soft.enclosure[1] + soft.truncation.tail


def test_distance_to_sign_against_numpy() -> None:
    from scipy.special import roots_jacobi

    t, w = roots_jacobi(2000, 2.5, 2.5)
    w = w / w.sum()
    want = math.sqrt(float(np.sum(w * (np.sign(t) - np.tanh(4 * t / math.sqrt(2))) ** 2)))
    lo, hi = distance_to_sign(tanh_profile(4.0), 8)
    assert lo <= hi and want == pytest.approx(lo, rel=1e-5)  # numpy: the jump of sign at 0
    assert abs(distance_to_sign(tanh_profile(4.2), 8)[0] - want) > 1e-3  # beta 5 % off: seen


def test_the_bound_value_takes_the_largest_part_and_labels_rigour() -> None:
    bv = profile_lower_bound(tanh_profile(4.0), 8, 1, 4)
    assert bv.source == "fiber" and bv.rigorous and bv.value == bv.part("fiber").lower
    assert bv.value > bv.part("harmonic count").lower
    numpy_only = Profile("tanh numpy", lambda t: np.tanh(4 * np.asarray(t) / math.sqrt(2)))
    est = profile_lower_bound(numpy_only, 8, 1, 4)
    assert not est.rigorous and est.certified == 0.0
    assert all(not p.rigorous for p in est.parts)
    assert est.value == pytest.approx(bv.value, abs=1e-6)


def test_bad_input_names_the_parameter() -> None:
    with pytest.raises(ValueError, match="value_class"):
        profile_fiber_parts(tanh_profile(4.0), 8, 1, 2, "nope")
    with pytest.raises(ValueError, match="H|heads"):
        profile_lower_bound(tanh_profile(4.0), 8, 1, 0)
