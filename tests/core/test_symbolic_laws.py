"""``workbench/core/symbolic/laws.py``: exponents and numeric right-hand sides read off the sympy
encodings, against finite differences and ``Bound.evaluate``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from workbench.core.symbolic import H, N, beta, d, eps, gap, get_bound
from workbench.core.symbolic.laws import numeric_rhs, power_exponent


def test_exponent_of_the_majority_vote_law_matches_a_finite_difference() -> None:
    law = get_bound("thm5.majority_vote_heads").solve_for("eps")
    f = sp.lambdify(sorted(law.free_symbols, key=str), law)  # (H, c_5, d)
    h1, h2 = 1e4, 1e4 * 1.001
    slope = (math.log(f(h2, 2.0, 7.0)) - math.log(f(h1, 2.0, 7.0))) / math.log(h2 / h1)
    assert power_exponent(law, H) == sp.Rational(-1, 2)
    assert slope == pytest.approx(-0.5, abs=1e-9)


def test_not_a_power_law_is_refused() -> None:
    with pytest.raises(ValueError, match="not a power law"):
        power_exponent(sp.exp(eps) * d, eps)
    with pytest.raises(ValueError, match="does not depend"):
        power_exponent(d, eps)


def test_numeric_rhs_agrees_with_evaluate() -> None:
    f = numeric_rhs("fact1.pointwise_error", (N, beta, gap))
    b = get_bound("fact1.pointwise_error")
    for n, bt, g in ((2, 1.0, 0.3), (5, 10.0, 0.01), (16, 0.5, 1.5)):
        assert float(f(n, bt, np.float64(g))) == pytest.approx(b.evaluate(N=n, beta=bt, gap=g),
                                                               rel=1e-12)
    with pytest.raises(ValueError, match="also needs"):
        numeric_rhs("fact1.pointwise_error", (N, beta))
