"""Theorem 5: majority voting against a reference interpreter, its exact ensemble error, the
fitted exponent, the N >= 3 tournament, and rewrites."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
import torch

from tests.constructions.construction_cases import CASES, many_cases, random_rotation
from workbench.constructions._montecarlo import model_error
from workbench.constructions.majority_vote import (
    ensemble_error,
    fit_exponents,
    hoeffding_bound,
    majority_vote,
    tournament_size,
)
from workbench.core.intervals import student_t
from workbench.core.targets import nearest_neighbour
from workbench.models.attention import MultiHeadAttention


def _votes_q(model) -> np.ndarray:
    d = model.layout.d
    first = model.layers[0]
    if isinstance(first, MultiHeadAttention):
        return first.Wq[0, :, 0, :d].detach().numpy()
    return first.score.Q[0, :, 0, :d].detach().numpy()


def _reference_two(q: np.ndarray, X: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """Majority of sign(<q,y><q,x_1 - x_2>) by looping; a tie goes to x_1."""
    Xn, yn = X.numpy(), y.numpy()
    out = np.empty((Xn.shape[0], Xn.shape[2]))
    for b in range(Xn.shape[0]):
        tally = 0
        for qh in q:
            s1, s2 = (qh @ yn[b]) * (qh @ Xn[b, 0]), (qh @ yn[b]) * (qh @ Xn[b, 1])
            tally += 1 if s1 >= s2 else -1
        out[b] = Xn[b, 0] if tally >= 0 else Xn[b, 1]
    return out


def _reference_tournament(q: np.ndarray, H: int, X: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """Round robin of pairwise majorities; the Condorcet winner (else key 0) is returned."""
    Xn, yn = X.numpy(), y.numpy()
    N = Xn.shape[1]
    pairs = list(combinations(range(N), 2))
    out = np.empty((Xn.shape[0], Xn.shape[2]))
    for b in range(Xn.shape[0]):
        wins = np.zeros(N, dtype=int)
        for p, (i, j) in enumerate(pairs):
            tally = 0
            for qh in q[p * H : (p + 1) * H]:
                si, sj = (qh @ yn[b]) * (qh @ Xn[b, i]), (qh @ yn[b]) * (qh @ Xn[b, j])
                tally += 1 if si >= sj else -1
            wins[i if tally >= 0 else j] += 1
        winners = np.flatnonzero(wins == N - 1)
        out[b] = Xn[b, winners[0] if len(winners) else 0]
    return out


@pytest.mark.parametrize("case", [c for c in CASES if c.N == 2], ids=lambda c: c.name)
@pytest.mark.parametrize("H", [1, 4, 9])
def test_two_keys_match_reference_on_cases(case, H):
    model, _ = majority_vote(case.d, H, generator=H)
    out = model(case.X, case.y)[0].detach().numpy()
    np.testing.assert_allclose(out, _reference_two(_votes_q(model), case.X, case.y), atol=1e-12)


@pytest.mark.parametrize("case", [c for c in CASES if c.N == 1], ids=lambda c: c.name)
def test_single_key_is_exact(case):
    model, claim = majority_vote(case.d, 5, N=1)
    assert claim.value == 0.0
    torch.testing.assert_close(model(case.X, case.y)[0], case.X[:, 0], atol=1e-12, rtol=0)


@pytest.mark.parametrize("d,H,ortho", [(2, 7, True), (6, 16, True), (5, 11, False)])
def test_two_keys_match_reference_on_random_inputs(d, H, ortho):
    model, _ = majority_vote(d, H, generator=d)
    X, y = many_cases(2, d, 300, seed=d + H, orthonormal=ortho)
    out = model(X, y)[0].detach().numpy()
    np.testing.assert_allclose(out, _reference_two(_votes_q(model), X, y), atol=1e-12)


@pytest.mark.parametrize("points", ["orthonormal", "iid"])
def test_ensemble_error_matches_pooled_monte_carlo(points):
    d, H = 4, 15
    errs = []
    for s in range(16):
        model, claim = majority_vote(d, H, points=points, generator=s)
        errs.append(
            model_error(model, nearest_neighbour, d, 2, 1000, points, generator=1000 + s).mean
        )
    est = student_t(errs)
    assert est.lo <= claim.value <= est.hi, (claim.value, est)


def test_ensemble_error_identities():
    for d in (2, 5, 12):
        # a tie broken at random makes 2k voters exactly as good as 2k - 1
        assert ensemble_error(d, 10) == pytest.approx(ensemble_error(d, 9), abs=1e-10)
        # one voter: err = 2 E[1 - p] = 1 - (2/pi) E arcsin|t|, d = 2: E arcsin|t| = pi/4
        for H in (1, 3, 25, 201):
            assert ensemble_error(d, H) <= hoeffding_bound(d, H) + 1e-12
        errs = [ensemble_error(d, H) for H in (1, 3, 9, 27, 81)]
        assert all(b < a for a, b in zip(errs, errs[1:]))
    assert ensemble_error(2, 1) == pytest.approx(0.5, abs=1e-10)


@pytest.mark.parametrize("d", [3, 4, 16, 64])
def test_large_H_matches_the_gaussian_asymptotic(d):
    """err ~ sqrt(2 pi) f_d(0) / sqrt(H), f_d(0) = Gamma(d/2) / (sqrt(pi) Gamma((d-1)/2))."""
    f0 = math.exp(math.lgamma(d / 2) - math.lgamma((d - 1) / 2)) / math.sqrt(math.pi)
    H = 40001
    assert ensemble_error(d, H) * math.sqrt(H) / (math.sqrt(2 * math.pi) * f0) == pytest.approx(
        1.0, abs=0.03
    )


def test_fitted_exponent_matches_sqrt_d_over_H():
    fit = fit_exponents([4, 8, 16, 32], [256, 1024, 4096, 16384], max_error=0.3)
    assert fit["alpha_H"] == pytest.approx(-0.5, abs=0.05)
    assert fit["gamma_d"] == pytest.approx(0.5, abs=0.1)


def test_rewrites_give_the_same_output():
    d, H = 5, 9
    X, y = many_cases(2, d, 300, seed=4, orthonormal=False)
    model, _ = majority_vote(d, H, generator=3)
    base = model(X, y)[0]
    std, _ = majority_vote(d, H, copy_style="standard", generator=3)  # d rank-1 copy heads
    torch.testing.assert_close(std(X, y)[0], base, atol=1e-12, rtol=0)
    torch.testing.assert_close(model(X[:, [1, 0]], y)[0], base, atol=1e-12, rtol=0)
    R = random_rotation(d, 2)
    v = model.layers[0]
    D = model.layout.D
    Rbig = torch.eye(D, dtype=torch.float64)
    Rbig[:d, :d] = R
    rot_votes = MultiHeadAttention.from_weights(
        v.Wq @ Rbig.T, v.Wk @ Rbig.T, v.Wv, v.Wo, normalizer="hardmax"
    )
    dup_votes = MultiHeadAttention.from_weights(  # every voter twice, half the weight each
        torch.cat([v.Wq, v.Wq], 1),
        torch.cat([v.Wk, v.Wk], 1),
        torch.cat([v.Wv, v.Wv], 1),
        torch.cat([v.Wo, v.Wo], 1) / 2,
        normalizer="hardmax",
    )
    with torch.no_grad():
        model.layers[0] = rot_votes
        rot = model(X @ R.T, y @ R.T)[0]
        model.layers[0] = dup_votes
        dup = model(X, y)[0]
    torch.testing.assert_close(rot, base @ R.T, atol=1e-12, rtol=0)
    torch.testing.assert_close(dup, base, atol=1e-12, rtol=0)


@pytest.mark.parametrize("N,d,H", [(3, 4, 5), (4, 6, 3)])
def test_tournament_matches_reference_and_claim(N, d, H):
    model, claim = majority_vote(d, H, N=N, points="iid", generator=N, claim_samples=8000)
    assert model.size() == tournament_size(N, H)
    X, y = many_cases(N, d, 80, seed=N * d, orthonormal=False)
    out = model(X, y)[0].detach().numpy()
    np.testing.assert_allclose(out, _reference_tournament(_votes_q(model), H, X, y), atol=1e-12)
    errs = [
        model_error(m, nearest_neighbour, d, N, 600, "iid", generator=s).mean
        for s, m in (
            (s, majority_vote(d, H, N=N, points="iid", generator=s, claim_samples=2)[0])
            for s in range(8)
        )
    ]
    assert student_t(errs).lo <= claim.hi


def test_tournament_grows_with_N():
    sizes = [tournament_size(N, 64)["heads_total"] for N in (2, 3, 4, 8, 16)]
    assert all(b > a for a, b in zip(sizes, sizes[1:]))


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="N must"):
        majority_vote(3, 4, N=5)
    with pytest.raises(ValueError, match="copy_style"):
        majority_vote(3, 4, copy_style="fancy")
    with pytest.raises(ValueError, match="H must"):
        majority_vote(3, 0)
