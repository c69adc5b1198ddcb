"""The fixed-point enclosures of eta_l^2 behind the harmonic count
(workbench.core.bounds.exact_energy; docs/derivations/lower_bound.md, "Arithmetic"): each holds
the 50-digit closed form of eta_l (docs/derivations/harmonics.md, Lemma H1), for odd and even d
(where pi enters), and is a few units wide."""

from __future__ import annotations

import mpmath
import pytest

from workbench.core.bounds.exact_energy import ceil_div, eta2_enclosures, to_float
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
        with plant("workbench.core.bounds.exact_energy:eta2_ratio",
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
        with plant("workbench.core.bounds.exact_energy:_pi_squared",
                   mapped(lambda _: (pi2, pi2))):
            with pytest.raises(AssertionError):
                test_enclosures_hold_the_closed_form(4, 301)
    finally:
        eta2_enclosures.cache_clear()


def test_integer_helpers() -> None:
    assert [ceil_div(a, 3) for a in (-4, -3, -1, 0, 1, 3, 4)] == [-1, -1, 0, 0, 1, 1, 2]
    assert to_float(3, 2) == 0.75 and to_float((1 << 200) + 1, 200) == 1.0
