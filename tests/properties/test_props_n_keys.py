"""The bound beyond two keys (docs/derivations/beyond_two_keys.md) as a function of
(d, r, H, N): at most the error of uniform attention 1 - 1/N, zero once the heads' rank reaches
the fiber (r >= d - N, full rank included), non-increasing in H and r. Each property's
planted fault is in test_props_power.py."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from workbench.core.bounds.sequence_length.n_keys import n_keys_bound

pytestmark = pytest.mark.properties


@st.composite
def points(draw: st.DrawFn) -> tuple[int, int, int, int]:
    """``(d, r, H, N)``: d in 6..14, N in 3..4 (the elementary densities: milliseconds a
    point), r in 1..d with the edges favoured, H log-uniform up to 2^12."""
    d = draw(st.integers(6, 14))
    N = draw(st.integers(3, 4))
    r = draw(st.one_of(st.sampled_from([1, d - N - 1, d - N, d]), st.integers(1, d)))
    H = draw(st.one_of(st.just(1), st.integers(0, 12).map(lambda k: 1 << k)))
    return d, max(1, r), H, N


@given(points())
@example((16, 1, 1, 4))
@example((7, 1, 1, 5))  # the nested density of N >= 5
def test_bound_is_at_most_uniform_attention(p: tuple[int, int, int, int]) -> None:
    d, r, H, N = p
    lo, hi = n_keys_bound(d, r, H, N).enclosure
    assert 0.0 <= lo <= hi <= 1 - 1 / N


@given(points())
@example((10, 6, 1, 4))
def test_bound_is_zero_once_the_rank_reaches_the_fiber(p: tuple[int, int, int, int]) -> None:
    d, r, H, N = p
    if r >= d - N:
        assert n_keys_bound(d, r, H, N).enclosure == (0.0, 0.0)
    if r <= d - N - 1 and H == 1:
        assert n_keys_bound(d, r, H, N).value > 0.0  # the first degree at least loses energy


@given(points(), st.integers(1, 1 << 10))
@example((12, 1, 1, 4), 7)
def test_bound_is_non_increasing_in_heads(p: tuple[int, int, int, int], more: int) -> None:
    d, r, H, N = p
    assert n_keys_bound(d, r, H + more, N).value <= n_keys_bound(d, r, H, N).value


@given(points())
@example((12, 1, 2, 4))
def test_bound_is_non_increasing_in_rank(p: tuple[int, int, int, int]) -> None:
    d, r, H, N = p
    if r < d:
        assert n_keys_bound(d, r + 1, H, N).value <= n_keys_bound(d, r, H, N).value
