"""The fixed-point enclosures of eta_l^2 behind the harmonic count
(workbench.core.bounds.harmonic_count.exact_energy; docs/derivations/lower_bound.md, "Arithmetic"):
each holds
the 50-digit closed form of eta_l (docs/derivations/harmonics.md, Lemma H1), for odd and even d
(where pi enters), and is a few units wide."""

from __future__ import annotations

import mpmath
import pytest

from workbench.core.bounds.harmonic_count.exact_energy import (
    _pi_squared,
    ceil_div,
    eta2_enclosures,
    to_float,
)
from workbench.core.harmonics import sign_coefficient_mp
from workbench.testing import mapped, plant


@pytest.mark.parametrize("d,L", [(2, 201), (3, 201), (4, 301), (5, 41), (12, 819), (64, 301),
                                 (1001, 99)])
def test_enclosures_hold_the_closed_form(d: int, L: int) -> None:
    bits = 128
    lo, hi = eta2_enclosures(d, L, bits)
    assert len(lo) == len(hi) == (L + 1) // 2
    with mpmath.workdps(50):
        for i, l in enumerate(range(1, L + 1, 2)):
            exact = sign_coefficient_mp(d, l, dps=50) ** 2 * 2**bits
            assert lo[i] <= exact <= hi[i], (d, l)
            assert hi[i] - lo[i] <= 2 * i + 4  # one unit per step, outward


def test_enclosure_check_fails_on_a_wrong_ratio() -> None:
    eta2_enclosures.cache_clear()
    try:
        with plant("workbench.core.bounds.harmonic_count.exact_energy:eta2_ratio",
                   mapped(lambda nd: (nd[0] * 1_000_001, nd[1] * 1_000_000))):
            with pytest.raises(AssertionError):
                test_enclosures_hold_the_closed_form(5, 41)
    finally:
        eta2_enclosures.cache_clear()


def test_enclosure_check_fails_on_a_rounded_pi() -> None:
    """pi^2 read at double precision only (the error the enclosures must not make)."""
    three = (mpmath.mpf(mpmath.pi) ** 2)
    rounded = mpmath.mpf(float(three)).man_exp
    from fractions import Fraction

    pi2 = Fraction(rounded[0]) * Fraction(2) ** rounded[1]
    eta2_enclosures.cache_clear()
    try:
        with plant("workbench.core.bounds.harmonic_count.exact_energy:_pi_squared",
                   mapped(lambda _: (pi2, pi2))):
            with pytest.raises(AssertionError):
                test_enclosures_hold_the_closed_form(4, 301)
    finally:
        eta2_enclosures.cache_clear()


@pytest.mark.parametrize("bits", [1, 53, 128, 600])
def test_pi_squared_is_enclosed_tightly(bits: int) -> None:
    """Machin's formula in integers against 300-digit mpmath pi."""
    lo, hi = _pi_squared(bits)
    with mpmath.workdps(300):
        p2 = mpmath.pi**2
        lo_m = mpmath.mpf(lo.numerator) / lo.denominator
        hi_m = mpmath.mpf(hi.numerator) / hi.denominator
        assert lo_m < p2 < hi_m and hi_m - lo_m < mpmath.mpf(2) ** -(bits + 32)


def test_pi_check_fails_on_a_series_off_by_more_than_its_bound() -> None:
    with plant("workbench.core.bounds.harmonic_count.exact_energy:_atan_inv",
               mapped(lambda se: (se[0] + 3 * se[1], se[1]))):
        with pytest.raises(AssertionError):
            test_pi_squared_is_enclosed_tightly(128)


def test_integer_helpers() -> None:
    assert [ceil_div(a, 3) for a in (-4, -3, -1, 0, 1, 3, 4)] == [-1, -1, 0, 0, 1, 1, 2]
    assert to_float(3, 2) == 0.75 and to_float((1 << 200) + 1, 200) == 1.0
