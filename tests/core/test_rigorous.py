"""Ball arithmetic (workbench/core/rigorous.py): outward rounding never narrows an enclosure, and
an integral's ball contains the exact value."""

from __future__ import annotations

from fractions import Fraction

import pytest

from workbench.core import rigorous as R


@pytest.mark.parametrize("num,den", [(1, 3), (-2, 7), (10**20 + 1, 3), (1, 10**30), (0, 1)])
def test_outward_rounding_contains_the_exact_number(num: int, den: int) -> None:
    with R.precision(200):
        lo, hi = R.to_interval(R.arb(num) / den)
    exact = Fraction(num, den)
    assert Fraction(lo) <= exact <= Fraction(hi)
    assert hi - lo <= 4 * abs(hi) * 2.0**-52 + 2.0**-1070


def test_a_narrowing_conversion_is_caught() -> None:
    """Round-to-nearest loses the lower side of 1/10 (its nearest float is above it); the
    outward end does not."""
    with R.precision(200):
        x = R.arb(1) / 10
        assert Fraction(float(x.lower())) > Fraction(1, 10)  # what plain float() would give
        assert Fraction(R.lower_float(x)) < Fraction(1, 10)


def test_integral_encloses_its_closed_form() -> None:
    with R.precision(128):
        val = R.integrate(lambda x, _: x**5 - 3 * x, 0, 2)  # 64/6 - 6 = 14/3
    lo, hi = R.to_interval(val)
    assert Fraction(lo) <= Fraction(14, 3) <= Fraction(hi)
    assert R.relative_width(lo, hi) < 1e-15


def test_an_unbounded_integrand_is_refused() -> None:
    def pole(x, analytic):  # 1/x on [-1, 1]: no finite enclosure
        return 1 / x

    with R.precision(64), pytest.raises(ArithmeticError, match="no finite enclosure"):
        R.integrate(pole, -1, 1)
