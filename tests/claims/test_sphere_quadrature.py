"""``workbench/proofs/support/sphere_quadrature.py``: means over ``|t|``, ``t = <y, u>``, against
closed forms (d = 3: t is uniform on [-1, 1]; any d: E t^2 = 1/d, E 1 = 1)."""

from __future__ import annotations

import math

import mpmath
import pytest

from workbench.proofs.support.sphere_quadrature import abs_t_mean


@pytest.mark.parametrize("a", [0.5, 30.0, 3000.0])
def test_d3_exponential_mean_is_the_uniform_closed_form(a) -> None:
    got = abs_t_mean(lambda t: mpmath.exp(-a * t), 3, (1 / a, 10 / a))
    assert got == pytest.approx((1 - math.exp(-a)) / a, rel=1e-12)


@pytest.mark.parametrize("d", [2, 5, 64])
def test_second_moment_is_one_over_d(d) -> None:
    assert abs_t_mean(lambda t: t * t, d) == pytest.approx(1 / d, rel=1e-12)
    assert abs_t_mean(lambda t: mpmath.mpf(1), d) == pytest.approx(1.0, rel=1e-12)
