"""Kernels of rank-1 hardmax heads on D_2 (docs/paper.md §3; workbench/core/head_kernels.py):
C and b are valid probabilities, C is positive semidefinite, the Gegenbauer series of b matches
its closed form, and the optimal values give an error in [0, 1] that no other values beat."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from tests.properties.property_helpers import F64, RF_DIMS
from workbench import strategies as S
from workbench.constructions import rank_one
from workbench.constructions.random_features import sample_heads
from workbench.constructions.rank_one import target_agreement
from workbench.core import head_kernels as hk

pytestmark = pytest.mark.properties

COSINES = st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=20)


@given(RF_DIMS, COSINES)
@example(2, [-1.0, 0.0, 1.0])
@example(3, [1e-300, -1e-300])
def test_b_is_a_probability_odd_about_one_half_and_non_decreasing(d: int, cs: list) -> None:
    c = torch.tensor(sorted(cs), dtype=F64)
    b = hk.head_target_agreement(d, c)
    assert ((b >= 0) & (b <= 1)).all()
    assert torch.allclose(hk.head_target_agreement(d, -c), 1 - b, atol=1e-14)
    assert (b.diff() >= -1e-14).all()
    assert hk.head_target_agreement(d, 0.0).item() == pytest.approx(0.5, abs=1e-15)


@given(RF_DIMS, S.heads(24), S.seeds(), st.sampled_from(["independent", "tied", "cosine_uniform"]))
@example(2, 1, 0, "tied")
def test_C_is_an_agreement_probability_matrix_and_psd(d: int, H: int, seed: int, law: str) -> None:
    Q, K = sample_heads(H, d, law, generator=seed)
    C = hk.agreement_kernel(Q, K)
    assert ((C >= 0) & (C <= 1)).all() and torch.equal(C, C.T)
    assert torch.equal(C.diagonal(), torch.ones(H, dtype=F64))
    assert torch.linalg.eigvalsh(C).min() >= -1e-10


@given(RF_DIMS, COSINES)
@example(2, [1.0, -1.0, 0.5])
def test_series_for_b_matches_its_closed_form(d: int, cs: list) -> None:
    """The series converges like ``L^-(d/2+1)`` at ``c = +-1`` (faster inside)."""
    c = torch.tensor(cs, dtype=F64)
    L = 401
    tol = 10 * L ** -(d / 2 + 1) + 1e-13
    got = hk.head_target_agreement_series(d, c, L)
    assert torch.allclose(got, hk.head_target_agreement(d, c), atol=tol, rtol=0)


@given(RF_DIMS, S.heads(16), S.seeds(), st.lists(st.floats(-1, 1), min_size=16, max_size=16))
@example(2, 1, 0, [0.0] * 16)
def test_optimal_values_give_an_error_in_0_1_that_no_other_values_beat(d, H, seed, dz) -> None:
    Q, K = sample_heads(H, d, generator=seed)
    C, b = hk.agreement_kernel(Q, K), target_agreement(Q, K)
    a = rank_one.solve_heads(Q, K).a
    best = hk.kernel_error(a, b, C)
    assert -1e-12 <= best <= 1.0 + 1e-12
    # C a = b, own solve (SVD: torch's default gelsy depends on the allocator's state)
    independent = torch.linalg.lstsq(C, b.unsqueeze(1), driver="gelsd").solution[:, 0]
    assert best <= hk.kernel_error(independent, b, C) + 1e-9
    other = a + 0.1 * torch.tensor(dz[:H], dtype=F64)
    assert hk.kernel_error(other, b, C) >= best - 1e-10
