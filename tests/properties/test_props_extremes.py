"""Numerical extremes: beta = 1e6 on exact ties and near-ties, d = 4096 with
degree 401, H = 1 and H = 16384, N = 1 and N = d. Each stays finite and accurate."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from tests.properties.property_helpers import F64
from workbench import strategies as S
from workbench.constructions import full_rank as fr
from workbench.constructions import majority_vote as mv
from workbench.constructions import random_features as rf
from workbench.core import harmonics as hm
from workbench.core import head_kernels as hk
from workbench.core import targets
from workbench.core.bounds.harmonic_count import harmonic as lbm
from workbench.core.sphere import sample_instances
from workbench.models.attention import GeneralizedAttention

pytestmark = pytest.mark.properties

DTYPES = st.sampled_from([torch.float32, torch.float64])
BIG_BETA = 1e6


def _finite(t: torch.Tensor) -> bool:
    return bool(torch.isfinite(t).all())


def _tol(dtype: torch.dtype) -> float:
    return 1e-5 if dtype == torch.float32 else 1e-12


# --- beta = 1e6 on ties ---------------------------------------------------------------------


@given(st.data(), S.dims(max_d=8), DTYPES)
def test_huge_beta_on_exact_ties_gives_the_midpoint(data, d: int, dtype: torch.dtype) -> None:
    """Two keys with bit-equal scores: softmax at beta = 1e6 splits evenly, no NaN or inf."""
    X, y = data.draw(S.tie_instances(d, 2, dtype=dtype))
    soft = targets.soft_nearest_neighbour(X, y, BIG_BETA)
    assert _finite(soft)
    assert torch.allclose(soft, X.mean(1), atol=_tol(dtype))
    with torch.no_grad():
        head = fr.full_rank_model(d, BIG_BETA, dtype=dtype)(X, y)[0]
    assert _finite(head) and torch.allclose(head, soft, atol=10 * _tol(dtype))


@given(st.data(), S.dims(max_d=8), st.integers(2, 6), DTYPES)
def test_huge_beta_on_near_ties_stays_finite_and_convex(data, d, N, dtype) -> None:
    X, y = data.draw(S.near_tie_instances(d, N, max_gap=1e-6, dtype=dtype))
    for out in (
        targets.soft_nearest_neighbour(X, y, BIG_BETA),
        targets.soft_biased_nearest_neighbour(X, y, torch.zeros(N, dtype=dtype), BIG_BETA),
        fr.full_rank_model(d, BIG_BETA, dtype=dtype)(X, y)[0].detach(),
    ):
        assert _finite(out)
        assert (out.norm(dim=-1) <= 1 + 10 * _tol(dtype)).all()  # a convex combination of keys
    assert _finite(fr.pointwise_bound(X.to(F64), y.to(F64), BIG_BETA))
    layer = GeneralizedAttention(d, d, 2, scale=BIG_BETA, dtype=dtype)
    with torch.no_grad():
        assert _finite(layer(X, y))


# --- d = 4096, degree 401 -------------------------------------------------------------------


def test_d4096_degree401_coefficients_are_finite_and_accurate() -> None:
    d, L = 4096, 401
    eta = hm.sign_coefficients(d, L)
    assert np.isfinite(eta).all() and (eta**2).sum() <= 1
    for l in (1, 201, 399, 401):
        assert eta[l] == pytest.approx(float(hm.sign_coefficient_mp(d, l, dps=30)), rel=1e-11)
    n = hm.dim_harmonics(d, L)
    assert n == math.comb(L + d - 1, d - 1) - math.comb(L + d - 3, d - 1)


def test_d4096_degree401_gegenbauer_is_finite_and_accurate() -> None:
    """Where ``sqrt(N(4096, 401))`` alone overflows, the normalised polynomial is O(1)."""
    d, L = 4096, 401
    t = np.array([0.0, 1e-3, 0.01, 0.03, -0.05])
    G = hm.normalized_gegenbauer(d, L, t)
    assert np.isfinite(G).all()
    for i, ti in enumerate(t):
        want = float(hm.gegenbauer_mp(d, L, ti, dps=30))
        assert G[L, i] == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_d4096_degree401_kernel_series_matches_the_closed_form() -> None:
    c = torch.tensor([-1.0, -0.3, 0.0, 0.2, 0.9, 1.0], dtype=F64)
    series = hk.head_target_agreement_series(4096, c, 401)
    assert _finite(series)
    assert torch.allclose(series, hk.head_target_agreement(4096, c), atol=1e-12)


@pytest.mark.parametrize("r", [1, 64, 4094, 4095, 4096])
def test_d4096_degree401_harmonic_bound_is_finite_in_0_half(r: int) -> None:
    lb = lbm.harmonic_bound(4096, r, 1, max_degree=401)
    assert all(math.isfinite(v) for v in (*lb.enclosure, lb.value, lb.tail))
    assert 0 <= lb.enclosure[0] <= lb.enclosure[1] <= 0.5
    if r >= 4095:  # r >= d - 1: exactly 0 (Lemma 6)
        assert lb.enclosure == (0.0, 0.0)
    if r == 1:  # degree 3 already has D_3 << N(4096, 3)
        assert lb.enclosure[0] > 0


# --- H = 1 and H = 16384 --------------------------------------------------------------------


@pytest.mark.parametrize("H", [1, 16384])
def test_extreme_head_counts_work(H: int) -> None:
    lb = lbm.harmonic_bound(12, 2, H)
    assert 0 <= lb.enclosure[0] <= 0.5
    e = mv.ensemble_error(8, H)
    assert 0 <= e <= mv.hoeffding_bound(8, H) + 1e-12
    layer = GeneralizedAttention(4, 1, H)
    X, y = sample_instances(8, 3, 4, generator=0, dtype=torch.float32)
    with torch.no_grad():
        assert _finite(layer(X, y))
    model, claim = mv.majority_vote(6, H, 2, generator=0)
    X, y = sample_instances(32, 2, 6, points="orthonormal", generator=1)
    with torch.no_grad():
        assert _finite(model(X, y))
    assert 0 <= claim.value <= 1


def test_heads_needed_at_one_and_far_beyond() -> None:
    assert lbm.heads_needed(12, 11, 0.01) == 1  # r = d - 1: the bound is 0
    H = lbm.heads_needed(12, 1, 0.05)
    assert H > 1 and lbm.harmonic_bound(12, 1, H).enclosure[0] <= 0.05


def test_random_features_with_one_head() -> None:
    _, claim = rf.random_features(8, 1, build_model=False, generator=0)
    assert lbm.harmonic_bound(8, 1, 1).enclosure[0] <= claim.value <= 1


# --- N = 1 and N = d ------------------------------------------------------------------------


@pytest.mark.parametrize("d", [2, 3, 5, 16])
def test_one_key_and_d_keys_work(d: int) -> None:
    X, y = sample_instances(16, 1, d, points="orthonormal", generator=0)
    assert torch.equal(targets.nearest_neighbour(X, y), X[:, 0])
    assert torch.allclose(targets.soft_nearest_neighbour(X, y, 3.0), X[:, 0], atol=1e-15)
    model, claim = fr.full_rank(d, 2.0, 1)
    assert claim.value == 0.0
    with torch.no_grad():
        assert torch.allclose(model(X, y)[0], X[:, 0], atol=1e-12)
    vote, vclaim = mv.majority_vote(d, 3, 1)
    with torch.no_grad():
        assert torch.equal(vote(X, y)[0], X[:, 0]) and vclaim.value == 0.0
    # N = d: D_d is a full orthonormal basis
    X, y = sample_instances(16, d, d, points="orthonormal", generator=1)
    assert torch.allclose(X @ X.transpose(1, 2), torch.eye(d, dtype=F64).expand(16, d, d),
                          atol=1e-12)
    model, claim = fr.full_rank(d, 4.0, d, claim_samples=500)
    with torch.no_grad():
        err = (model(X, y)[0] - targets.nearest_neighbour(X, y)).square().sum(-1)
    assert _finite(err) and math.isfinite(claim.value)
    assert (err <= fr.pointwise_bound(X, y, 4.0) + 1e-12).all()
