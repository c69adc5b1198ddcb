"""Constructions (docs/paper.md §2-§5): over random (d, H, N, seed), each construction's measured
error lies within its claim, and the majority-vote transformer equals an independent
majority-vote interpreter."""

from __future__ import annotations

import math
from itertools import combinations

import pytest
import torch
from hypothesis import assume, example, given
from hypothesis import strategies as st
from scipy import integrate, special
from scipy.stats import binom

from tests.properties.property_helpers import F64, RF_DIMS, fewer
from workbench import strategies as S
from workbench.constructions import biased as bz
from workbench.constructions import full_rank as fr
from workbench.constructions import majority_vote as mv
from workbench.constructions import random_features as rf
from workbench.core.sphere import sample_instances
from workbench.core.targets import nearest_neighbour

pytestmark = pytest.mark.properties

Z = 5.0  # two-sided normal quantile of the Monte Carlo checks (false alarm ~ 6e-7 per check)


def _errors(model, X: torch.Tensor, y: torch.Tensor, target=nearest_neighbour) -> torch.Tensor:
    with torch.no_grad():
        out = model(X, y)
    out = out[0] if out.ndim == 3 else out
    return (out.to(F64) - target(X, y)).square().sum(-1)


def _mean_se(v: torch.Tensor) -> tuple[float, float]:
    return float(v.mean()), float(v.std() / math.sqrt(v.numel()))


@given(S.attention_configs(max_d=8, max_n=5, orthonormal=True), st.floats(0.0, 60.0), S.seeds(),
       st.sampled_from(["orthonormal", "iid"]))
@example(S.AttentionConfig(2, 2, 1, 2), 0.0, 0, "orthonormal")
@example(S.AttentionConfig(5, 5, 1, 1), 10.0, 0, "iid")
@example(S.AttentionConfig(3, 3, 1, 3), 60.0, 0, "orthonormal")  # N = d
def test_full_rank_error_is_within_its_claim(cfg, beta, seed, points) -> None:
    model, claim = fr.full_rank(cfg.d, beta, cfg.N, points, claim_samples=2000, generator=seed)
    X, y = sample_instances(3000, cfg.N, cfg.d, points=points, generator=seed + 1)
    m, se = _mean_se(_errors(model, X, y))
    assert m - Z * se <= claim.hi + 1e-12


@fewer(2)
@given(RF_DIMS, S.heads(24), S.seeds(), st.sampled_from(["independent", "tied", "cosine_uniform"]))
@example(2, 1, 0, "tied")
def test_random_features_error_equals_its_exact_claim(d, H, seed, law) -> None:
    model, claim = rf.random_features(d, H, law=law, generator=seed)
    X, y = sample_instances(4000, 2, d, points="orthonormal", generator=seed + 1)
    m, se = _mean_se(_errors(model, X, y))
    assert abs(m - claim.value) <= Z * se + 1e-9


def _vote_queries(model: mv.VotingTransformer) -> torch.Tensor:
    first = model.layers[0]
    d = model.layout.d
    Q = first.Wq if hasattr(first, "Wq") else first.score.Q
    return Q[0, :, 0, :d].detach()


def _interpret_votes(q: torch.Tensor, X: torch.Tensor, y: torch.Tensor, H: int) -> torch.Tensor:
    """Round robin of majority votes with integer tallies; head h of pair (i, j) votes for i iff
    ``<q,y><q,x_i> >= <q,y><q,x_j>``; a tied tally goes to i; the Condorcet winner (else key 0)."""
    B, N, _ = X.shape
    out = torch.empty(B, X.shape[2], dtype=F64)
    pairs = list(combinations(range(N), 2))
    for b in range(B):
        wins = [0] * N
        for p, (i, j) in enumerate(pairs):
            tally = 0
            for qh in q[p * H:(p + 1) * H]:
                a = float(qh @ y[b])
                tally += 1 if a * float(qh @ X[b, i]) >= a * float(qh @ X[b, j]) else -1
            wins[i if tally >= 0 else j] += 1
        win = [k for k in range(N) if wins[k] == N - 1]
        out[b] = X[b, win[0] if win else 0]
    return out


@fewer(2)
@given(S.dims(max_d=8), S.heads(12), S.seeds(), st.sampled_from(["generalized", "standard"]))
@example(2, 2, 0, "generalized")  # even H: tied tallies
@example(3, 1, 1, "standard")
def test_majority_vote_equals_the_interpreter(d, H, seed, style) -> None:
    model, _ = mv.majority_vote(d, H, 2, copy_style=style, generator=seed)
    X, y = sample_instances(64, 2, d, points="orthonormal", generator=seed + 1)
    with torch.no_grad():
        got = model(X, y)[0]
    assert torch.equal(got, _interpret_votes(_vote_queries(model), X, y, H))


@fewer(3)
@given(st.integers(3, 6), st.integers(3, 5), S.heads(4), S.seeds())
@example(3, 3, 2, 0)
def test_tournament_equals_the_interpreter(d, N, H, seed) -> None:
    assume(N <= d)
    model, _ = mv.majority_vote(d, H, N, points="iid", generator=seed, claim_samples=100)
    X, y = sample_instances(32, N, d, generator=seed + 1)
    with torch.no_grad():
        got = model(X, y)[0]
    assert torch.equal(got, _interpret_votes(_vote_queries(model), X, y, H))


@fewer(3)
@given(S.dims(max_d=8), S.heads(33), S.seeds())
@example(2, 1, 0)
@example(5, 2, 0)
def test_majority_vote_error_matches_its_ensemble_claim(d, H, seed) -> None:
    """The claim is the error averaged over head draws: average 12 independent models."""
    per_model = []
    claim = None
    for k in range(12):
        model, claim = mv.majority_vote(d, H, 2, generator=seed + k)
        X, y = sample_instances(1500, 2, d, points="orthonormal", generator=seed + 100 + k)
        per_model.append(float(_errors(model, X, y).mean()))
    assert claim is not None
    v = torch.tensor(per_model, dtype=F64)
    m, se = _mean_se(v)
    assert abs(m - claim.value) <= 6 * se + 0.01


def _ensemble_error_in_t(d: int, H: int) -> float:
    """``2 E[P(Bin(H,p) < H/2) + P(= H/2)/2]``, ``p = 1/2 + arcsin|t|/pi``, integrated in ``t``
    itself under its density ``(1-t^2)^((d-3)/2) / B(1/2, (d-1)/2)`` (not in the angle, as the
    library does), with scipy's binomial law."""
    c = (d - 3) / 2

    def wrong(t: float) -> float:
        p = 0.5 + math.asin(min(t, 1.0)) / math.pi
        k = math.ceil(H / 2) - 1
        below = binom.cdf(k, H, p) if k >= 0 else 0.0
        tie = binom.pmf(H // 2, H, p) if H % 2 == 0 else 0.0
        return below + tie / 2

    s = min(0.5, 10 / math.sqrt(H))
    head = integrate.quad(lambda t: wrong(t) * (1 - t * t) ** c, 0, s, limit=200,
                          epsabs=0, epsrel=1e-11)[0]
    tail = integrate.quad(lambda t: wrong(t) * (1 + t) ** c, s, 1, weight="alg", wvar=(0, c),
                          limit=200, epsabs=0, epsrel=1e-11)[0]
    return 2 * 2 * (head + tail) / special.beta(0.5, (d - 1) / 2)


@given(S.dims(max_d=64), S.heads(2000))
@example(2, 1)
@example(64, 2000)
def test_ensemble_error_matches_quadrature_in_t_and_hoeffding(d, H) -> None:
    e = mv.ensemble_error(d, H)
    assert 0 <= e <= 1 + 1e-12
    assert e == pytest.approx(_ensemble_error_in_t(d, H), rel=1e-6, abs=1e-12)
    assert e <= mv.hoeffding_bound(d, H) + 1e-9
    H_odd = H | 1
    assert mv.ensemble_error(d, H_odd + 2) <= mv.ensemble_error(d, H_odd) + 1e-12


@fewer(2)
@given(st.integers(2, 3), st.integers(2, 3), S.seeds(),
       st.sampled_from(["alternating", "ones", "random_signs"]))
@example(2, 2, 0, "alternating")
def test_biased_hardmax_construction_equals_its_target(d, N, seed, coefficients) -> None:
    assume(N <= d)
    model, claim, family = bz.biased(d, N, coefficients=coefficients, generator=seed)
    assert claim.value == 0.0
    X, y = sample_instances(64, N, d, points="orthonormal", queries="gaussian", generator=seed)
    with torch.no_grad():
        got = model(X, y)[0]
    assert torch.allclose(got, family.target(X, y), atol=1e-12)


@fewer(2)
@given(st.integers(2, 3), st.integers(2, 3), S.seeds(), st.floats(1.0, 400.0),
       st.sampled_from(["alternating", "ones", "random_signs"]))
@example(2, 2, 0, 1.0, "alternating")
@example(3, 3, 0, 400.0, "ones")  # N = d
def test_biased_softmax_error_is_within_its_pointwise_claim(d, N, seed, beta, coefficients) -> None:
    """Per sample, ``||A - f*||^2 <= (sum_j |c_j| 2 min(1, (N-1) e^{-beta gap_j}))^2``; the
    claim is the mean of that, so the measured mean lies below its CI's upper end too."""
    assume(N <= d)
    model, claim, family = bz.biased(d, N, normalizer="softmax", beta=beta,
                                     coefficients=coefficients, generator=seed,
                                     claim_samples=2000)
    X, y = sample_instances(500, N, d, points="orthonormal", queries="gaussian",
                            generator=seed + 1)
    err = _errors(model, X, y, family.target)
    assert (err <= bz.soft_bound_values(family, X, y, beta) * (1 + 1e-9) + 1e-12).all()
    m, se = _mean_se(err)
    assert m - Z * se <= claim.hi + 1e-12
