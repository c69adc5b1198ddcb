"""The fiber bound (docs/derivations/fiber_bound.md): the spectrum of one fiber against brute-force
generalized eigenvalues on a discretised fiber, the bound against the exact one-head error, its
range and its monotonicity in the number of heads, and the sympy integrals against the library."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.properties.property_helpers import fewer
from workbench.core.bounds.fiber_bound import fiber as fbm
from workbench.core.symbolic.fiber import evaluate_eigenvalue
from workbench.proofs.paper.thm2.fiber import brute_force_spectrum

pytestmark = pytest.mark.properties

C = st.floats(0.0, 0.999, allow_nan=False)
C_POS = st.floats(0.001, 0.999, allow_nan=False)  # at c = 0 the vector value is a sup, not a max


@st.composite
def _fibers(draw: st.DrawFn) -> tuple[int, int, float]:
    """(d, r*, c) with a fiber of dimension m = d - r* in {1, 2} (brute force is exact there)."""
    m = draw(st.sampled_from([1, 2]))
    r_star = draw(st.integers(1, 3))
    return r_star + m, r_star, draw(C_POS)


@given(_fibers())
@example((3, 1, 0.001))  # the head sees almost nothing of w: the vector value dominates
@example((3, 2, 0.5))  # the two-point fiber
@fewer(5)
def test_spectrum_is_the_brute_force_generalized_spectrum(case: tuple[int, int, float]) -> None:
    d, r_star, c = case
    brute = brute_force_spectrum(d, r_star, c)
    lemma = np.sort([v for v, k in fbm.fiber_spectrum(d - r_star, c) for _ in range(k)])[::-1]
    k = len(lemma)
    assert np.allclose(brute[:k], lemma, atol=2e-5), (brute[:k], lemma)
    assert np.abs(brute[k:]).max(initial=0.0) < 2e-5


@st.composite
def _one_head(draw: st.DrawFn) -> tuple[int, int]:
    d = draw(st.integers(3, 24))
    return d, draw(st.integers(1, d - 1))


@given(_one_head())
@example((3, 1))
@example((16, 14))  # tight: the bound equals the witness to 1e-9
@fewer(2)
def test_bound_lies_below_the_exact_one_head_error(case: tuple[int, int]) -> None:
    d, r = case
    b = fbm.fiber_bound(d, r, 1)
    err, (lo, _) = fbm.one_head_error(d, r)
    assert 0.0 <= b.enclosure[0] <= b.value <= b.enclosure[1] <= 0.5
    assert b.enclosure[0] <= lo + 1e-12, (b, err)


@st.composite
def _heads(draw: st.DrawFn) -> tuple[int, int, int]:
    d = draw(st.integers(3, 32))
    r = draw(st.integers(1, max(1, d // 3)))
    return d, r, draw(st.integers(1, max(1, (d - 1) // r)))


@given(_heads())
@example((8, 1, 2))
@example((32, 1, 16))
@fewer(2)
def test_bound_is_non_increasing_in_heads_and_weaker_for_query_values(
    case: tuple[int, int, int],
) -> None:
    d, r, H = case
    b = fbm.fiber_bound(d, r, H).value
    assert fbm.fiber_bound(d, r, H + 1).value <= b + 1e-12
    assert fbm.fiber_bound(d, r, H, "query-dependent-values").value <= b + 1e-12


@given(st.integers(2, 12), C)
@example(2, 0.0)
@fewer(5)
def test_sympy_integrals_equal_the_library(m: int, c: float) -> None:
    lam = fbm.fiber_eigenvalues(m, c)
    for k in range(3):
        assert abs(evaluate_eigenvalue(k, m, c) - lam[k]) < 1e-10
