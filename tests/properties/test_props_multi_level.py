"""The rigorous part of the multi-level bound (docs/derivations/long_contexts_evaluation.md) as a
function of (d, r, H, N): between 0 and the error of uniform attention 1 - 1/N, non-increasing in
H and r, the query-dependent class never above Eq. 2, and the Abel form equal to the plain sum
over levels of weights times Jensen increments (the same number computed another way)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from workbench.core.bounds.sequence_length.multi_level import (
    level_capture,
    levels,
    rigorous_value,
)
from workbench.core.bounds.sequence_length.multi_level_energy import cumulative_energy_lower

pytestmark = pytest.mark.properties


@st.composite
def points(draw: st.DrawFn) -> tuple[int, int, int, int]:
    """``(d, r, H, N)``: d in 5..40, N in 3..d, r in 1..d (small favoured), H up to 2^10."""
    d = draw(st.integers(5, 40))
    N = draw(st.integers(3, d))
    r = draw(st.one_of(st.integers(1, 3), st.integers(1, d)))
    H = draw(st.one_of(st.just(1), st.integers(0, 10).map(lambda k: 1 << k)))
    return d, r, H, N


@settings(max_examples=40, deadline=None)
@given(points())
@example((16, 1, 1, 16))
@example((64, 1, 8, 64))
def test_range_and_monotonicity(p: tuple[int, int, int, int]) -> None:
    d, r, H, N = p
    v = rigorous_value(d, r, H, N)
    assert 0 <= v <= Fraction(N - 1, N)
    assert rigorous_value(d, r, 2 * H, N) <= v
    if r < d:
        assert rigorous_value(d, r + 1, H, N) <= v
    assert rigorous_value(d, r, H, N, "query-dependent-values") <= v


@settings(max_examples=40, deadline=None)
@given(points())
def test_abel_form_equals_the_plain_sum(p: tuple[int, int, int, int]) -> None:
    """``sum_j c_j (A_j - A_{j-1})`` with the Jensen bounds, summed directly."""
    d, r, H, N = p
    ks = levels(d, r, H, N)
    weights: list[Fraction] = []
    for k in ks:
        w = max(Fraction(0), 1 - max(level_capture(d, r, H, N, k)))
        weights.append(min(w, weights[-1]) if weights else w)
    total, below = Fraction(0), Fraction(0)
    for k, w in zip(ks, weights):
        a = cumulative_energy_lower(d, N, k)
        total += w * (a - below)
        below = a
    assert rigorous_value(d, r, H, N) == Fraction(N - 1, 2) * total
