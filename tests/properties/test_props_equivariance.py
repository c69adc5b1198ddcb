"""Equivariance and invariance (docs/paper.md §1, §3): the nearest-neighbour target and a
full-rank head commute with rotations and with permutations of the keys; a rank-r head commutes
with a rotation only when its subspaces rotate too; random-feature heads are invariant in law."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import stats

from tests.properties.property_helpers import F64, RF_DIMS, fewer
from workbench import strategies as S
from workbench.constructions.full_rank import full_rank_model
from workbench.constructions.random_features import sample_heads
from workbench.constructions.rank_one import exact_error, solve_heads
from workbench.core import targets
from workbench.core.sphere import sample_instances
from workbench.models.attention import GeneralizedAttention

pytestmark = pytest.mark.properties


def _rot(X: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
    return X @ R.T


def _with_rotation(cfgs: st.SearchStrategy) -> st.SearchStrategy:
    """``(config, R)`` with ``R`` a Haar rotation of the config's dimension."""
    return cfgs.flatmap(lambda c: st.tuples(st.just(c), S.rotations(c.d)))


def _swap(d: int) -> torch.Tensor:
    """A reflection swapping the first two axes (an awkward, exactly representable R)."""
    P = torch.eye(d, dtype=F64)
    P[[0, 1]] = P[[1, 0]]
    return P


@given(_with_rotation(S.attention_configs(max_d=9, max_n=9)), S.seeds())
@example((S.AttentionConfig(2, 1, 1, 1), _swap(2)), 0)
@example((S.AttentionConfig(3, 2, 1, 3), _swap(3)), 1)
def test_nearest_neighbour_is_rotation_equivariant(cfg_R, seed) -> None:
    cfg, R = cfg_R
    X, y = sample_instances(16, cfg.N, cfg.d, generator=seed)
    got = targets.nearest_neighbour(_rot(X, R), _rot(y, R))
    assert torch.allclose(got, _rot(targets.nearest_neighbour(X, y), R), atol=1e-12)


@given(_with_rotation(S.attention_configs(max_d=9, max_n=9)), S.seeds(), S.temperatures(300.0))
@example((S.AttentionConfig(2, 2, 1, 2), _swap(2)), 3, 300.0)
def test_full_rank_head_is_rotation_equivariant(cfg_R, seed, beta) -> None:
    cfg, R = cfg_R
    X, y = sample_instances(16, cfg.N, cfg.d, generator=seed)
    head = full_rank_model(cfg.d, beta)
    with torch.no_grad():
        got = head(_rot(X, R), _rot(y, R))[0]
        want = _rot(head(X, y)[0], R)
    assert torch.allclose(got, want, atol=1e-10)


@given(S.attention_configs(max_d=8, max_n=9), S.seeds(), st.randoms(use_true_random=False))
@example(S.AttentionConfig(5, 5, 1, 1), 0, None)  # type: ignore[arg-type]
def test_nearest_neighbour_is_permutation_equivariant(cfg, seed, rnd) -> None:
    X, y = sample_instances(16, cfg.N, cfg.d, generator=seed)
    perm = list(range(cfg.N))
    if rnd is not None:
        rnd.shuffle(perm)
    assert torch.equal(targets.nearest_neighbour(X[:, perm], y), targets.nearest_neighbour(X, y))


@given(S.attention_configs(max_d=8, max_n=9), S.seeds(), S.temperatures(300.0), st.randoms())
def test_full_rank_head_is_permutation_equivariant(cfg, seed, beta, rnd) -> None:
    X, y = sample_instances(16, cfg.N, cfg.d, generator=seed)
    perm = list(range(cfg.N))
    rnd.shuffle(perm)
    head = full_rank_model(cfg.d, beta)
    with torch.no_grad():
        assert torch.allclose(head(X[:, perm], y), head(X, y), atol=1e-12)


def _rotated_layer(layer: GeneralizedAttention, R: torch.Tensor) -> GeneralizedAttention:
    """``W_h -> W_h R^T``, ``Q_h -> Q_h R^T``, ``M_h -> R M_h R^T``: the rotated subspaces."""
    out = GeneralizedAttention(layer.d, layer.rank, layer.heads, normalizer=layer.normalizer,
                               dtype=F64)
    with torch.no_grad():
        out.W.copy_(layer.W @ R.T)
        out.score.Q.copy_(layer.score.Q @ R.T)
        out.M.copy_(R @ layer.M @ R.T)
    return out


@given(_with_rotation(S.attention_configs(max_d=8, max_heads=4, max_n=6)), S.seeds(), st.data())
def test_rank_r_head_is_equivariant_when_its_subspaces_rotate(cfg_R, seed, data) -> None:
    cfg, R = cfg_R
    layer = data.draw(S.attention_models(cfg, dtype=F64))
    X, y = sample_instances(8, cfg.N, cfg.d, generator=seed)
    moved = _rotated_layer(layer, R)
    with torch.no_grad():
        got = moved(_rot(X, R), _rot(y, R))[0]
        want = _rot(layer(X, y)[0], R)
        assert torch.allclose(got, want, atol=1e-10)
        # ... and not when only the data rotate (a generic R does not commute with M_h)
        fixed = layer(_rot(X, R), _rot(y, R))[0]
        assert not torch.allclose(fixed, want, atol=1e-6)


@given(
    S.dims(max_d=12).flatmap(lambda d: st.tuples(st.just(d), S.sphere_points(d, 1, dtype=F64))),
    st.sampled_from(["independent", "tied", "cosine_uniform"]),
    S.seeds(),
)
@example((2, torch.tensor([[0.0, 1.0]], dtype=F64)), "cosine_uniform", 0)
def test_random_feature_heads_are_rotation_invariant_in_law(d_u, law, seed) -> None:
    """Each head's query and key, read along any fixed direction u, follow the law of <u, w> for w
    uniform on the sphere: (1 + t)/2 ~ Beta((d-1)/2, (d-1)/2) (a KS test at level 1e-6)."""
    d, u = d_u[0], d_u[1][0]
    Q, K = sample_heads(20000, d, law, generator=seed)
    a = (d - 1) / 2
    for M in (Q, K):
        t = (M @ u).numpy()
        assert stats.kstest((1 + t) / 2, stats.beta(a, a).cdf).pvalue > 1e-6
    if law == "cosine_uniform":
        c = (Q * K).sum(-1).numpy()
        assert stats.kstest(c, stats.uniform(-1, 2).cdf).pvalue > 1e-6


@fewer(2)
@given(RF_DIMS.flatmap(lambda d: S.rotations(d)), S.heads(12), S.seeds())
def test_random_feature_error_is_rotation_invariant(R, H, seed) -> None:
    d = R.shape[0]
    Q, K = sample_heads(H, d, generator=seed)
    a = solve_heads(Q, K).a
    assert math.isclose(exact_error(Q @ R.T, K @ R.T, a), exact_error(Q, K, a), abs_tol=1e-10)
