"""The fiber's Funk-Hecke eigenvalues as rigorous enclosures (docs/derivations/fiber_bound.md,
"Evaluation", Lemma R1): the float path lies in them, they are narrow, a planted fault in the
float path falls outside, and bad input is rejected."""

from __future__ import annotations

import math

import pytest

from workbench.core.bounds.fiber_bound.fiber import fiber_eigenvalues
from workbench.core.bounds.fiber_bound.fiber_rigorous import eigenvalue_enclosure
from workbench.testing import plant, scaled

# 31 points over m <= 63 (d <= 64), c >= 0.3 (nearer c = 0, and at c <= 0.3 with m >= 45, arb's
# integral is slow; see the derivation)
POINTS = [(m, c) for m in (1, 2, 3, 5, 8, 13, 20, 40) for c in (0.3, 0.6, 0.9)] + [
    (2, 0.45), (7, 0.75), (30, 0.35), (50, 0.5), (63, 0.6), (63, 0.9), (10, 0.5)
]
FLOAT_TOL = 3e-14  # the float path's own error (400-node Gauss-Legendre against mpmath: 2.1e-14)


def _outside(m: int, c: float) -> list[float]:
    """How far each float eigenvalue lies outside its rigorous enclosure (0 if inside)."""
    out = []
    for (lo, hi), x in zip(eigenvalue_enclosure(m, c), fiber_eigenvalues(m, c)):
        out.append(max(0.0, lo - x, x - hi))
    return out


def test_float_eigenvalues_lie_in_the_rigorous_enclosures() -> None:
    worst = max(max(_outside(m, c)) for m, c in POINTS)
    assert worst <= FLOAT_TOL


def test_enclosures_are_narrow() -> None:
    for m, c in POINTS[::4]:
        for lo, hi in eigenvalue_enclosure(m, c):
            assert hi - lo <= 1e-15 * max(1.0, abs(hi))


def test_a_planted_fault_in_the_float_eigenvalues_falls_outside() -> None:
    with plant("workbench.core.bounds.fiber_bound.fiber:_eigen", scaled(1.01)):
        assert max(max(_outside(m, c)) for m, c in [(3, 0.5), (20, 0.3)]) > 1e-4


def test_closed_forms_at_the_ends() -> None:
    # c = 1: the kernel is the constant 1; m = 1: lambda_0 = 2 phi / pi with c = sin^2 phi
    (l0, l1, l2) = eigenvalue_enclosure(5, 1.0)
    assert l0[0] <= 1.0 <= l0[1] and l1[0] <= 0.0 <= l1[1] and l2[0] <= 0.0 <= l2[1]
    lo, hi = eigenvalue_enclosure(1, 0.25)[0]
    assert lo <= 2 * math.asin(0.5) / math.pi <= hi and hi - lo < 1e-15


@pytest.mark.parametrize("m, c", [(0, 0.5), (3, -0.1), (3, 1.5), (3, float("nan"))])
def test_bad_input(m: int, c: float) -> None:
    with pytest.raises(ValueError):
        eigenvalue_enclosure(m, c)
