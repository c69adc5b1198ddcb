"""Limits (docs/paper.md §2, Fact 1): the soft target tends to the hard one as beta grows, away
from ties; hardmax is the argmax one-hot; the full-rank head's error never exceeds Fact 1's
pointwise bound, at any beta."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import assume, example, given
from hypothesis import strategies as st

from tests.properties.property_helpers import F64, brute_nearest, gaps
from workbench import strategies as S
from workbench.constructions import full_rank as fr
from workbench.core import targets
from workbench.core.sphere import sample_instances
from workbench.models import attention as att

pytestmark = pytest.mark.properties


@given(S.attention_configs(max_d=8, max_n=8), S.seeds(), st.floats(1.0, 1e5))
@example(S.AttentionConfig(2, 1, 1, 2), 0, 1e5)
@example(S.AttentionConfig(5, 5, 1, 1), 0, 1.0)
def test_soft_target_tends_to_the_hard_one_away_from_ties(cfg, seed, beta) -> None:
    """``||X p - x*|| <= 2 (1 - p*) <= 2 (N-1) exp(-beta gap)`` per instance (unit keys)."""
    X, y = sample_instances(64, cfg.N, cfg.d, generator=seed)
    soft = targets.soft_nearest_neighbour(X, y, beta)
    hard = targets.nearest_neighbour(X, y)
    dist = (soft - hard).norm(dim=-1)
    bound = 2 * (cfg.N - 1) * torch.exp(-beta * gaps(X, y)).nan_to_num(0.0)
    assert (dist <= bound.clamp(max=2.0) + 1e-12).all()
    far = gaps(X, y) > 20.0 / beta  # away from ties, the soft target is within 2(N-1)e^-20
    assert (dist[far] <= 2 * cfg.N * math.exp(-20) + 1e-12).all()


@given(
    st.integers(1, 5),
    st.integers(1, 7),
    st.lists(st.integers(-2, 2), min_size=35, max_size=35),
)
@example(1, 1, [0] * 35)
@example(2, 3, [1] * 35)  # every row an exact three-way tie
def test_hardmax_is_the_argmax_one_hot(batch, N, values) -> None:
    """Small integer scores make exact ties common: the one-hot goes to the lowest index."""
    s = torch.tensor(values[: batch * N], dtype=F64).reshape(batch, N)
    p = att.normalize(s, "hardmax")
    want = torch.zeros_like(s)
    for b in range(batch):
        best = max(range(N), key=lambda i: (s[b, i].item(), -i))
        want[b, best] = 1.0
    assert torch.equal(p, want)


@given(S.attention_configs(max_d=8, max_n=8), S.seeds())
@example(S.AttentionConfig(2, 2, 1, 2), 0)
def test_hardmax_full_rank_head_is_the_nearest_neighbour(cfg, seed) -> None:
    X, y = sample_instances(32, cfg.N, cfg.d, generator=seed)
    head = fr.full_rank_model(cfg.d, 1.0)
    head.normalizer = "hardmax"
    with torch.no_grad():
        assert torch.equal(head(X, y)[0], brute_nearest(X, y))


@given(S.attention_configs(max_d=8, max_n=8), S.seeds(), S.temperatures(1e4),
       st.sampled_from(["iid", "orthonormal"]))
@example(S.AttentionConfig(2, 2, 1, 2), 0, 0.0, "orthonormal")
@example(S.AttentionConfig(3, 3, 1, 1), 0, 1e4, "iid")
@example(S.AttentionConfig(2, 2, 1, 8), 1, 1.0, "iid")
def test_full_rank_error_is_within_the_pointwise_fact1_bound(cfg, seed, beta, points) -> None:
    assume(points == "iid" or cfg.N <= cfg.d)
    X, y = sample_instances(128, cfg.N, cfg.d, points=points, generator=seed)
    with torch.no_grad():
        err = (fr.full_rank_model(cfg.d, beta)(X, y)[0] - targets.nearest_neighbour(X, y))
    assert (err.square().sum(-1) <= fr.pointwise_bound(X, y, beta) + 1e-12).all()


@given(S.dims(max_d=12), st.integers(2, 4), st.floats(0.5, 300.0), st.floats(1.01, 4.0))
@example(2, 2, 0.5, 4.0)
def test_fact1_error_upper_bound_is_non_increasing_in_beta(d, N, beta, factor) -> None:
    assume(N <= d)
    lo, hi = fr.error_upper_bound(beta * factor, d, N), fr.error_upper_bound(beta, d, N)
    assert 0 <= lo <= hi <= 4


@given(S.dims(max_d=12), st.floats(1e-3, 3.0))
@example(2, 1e-3)
@example(12, 3.0)
def test_beta_for_reaches_the_accuracy_it_promises(d, eps) -> None:
    beta = fr.beta_for(eps, d, 2)
    assert fr.error_upper_bound(beta, d, 2) <= eps
    assert fr.claimed_bound_quadrature(d, beta, "orthonormal") <= eps * (1 + 1e-9)
