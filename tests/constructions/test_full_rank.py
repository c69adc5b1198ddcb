"""Fact 1: the full-rank head against the brute-force nearest neighbour and its claimed bound."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tests.constructions.construction_cases import (
    CASES,
    brute_nearest,
    many_cases,
    nearest_set,
    random_rotation,
)
from workbench.constructions._montecarlo import model_error
from workbench.constructions.full_rank import (
    beta_for,
    claimed_bound_mc,
    claimed_bound_quadrature,
    error_upper_bound,
    full_rank,
    full_rank_model,
    pointwise_bound,
)
from workbench.core.targets import nearest_neighbour
from workbench.models.attention import MultiHeadAttention


def _softmax_reference(X: torch.Tensor, y: torch.Tensor, beta: float) -> np.ndarray:
    s = beta * np.einsum("bnd,bd->bn", X.numpy(), y.numpy())
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bn,bnd->bd", p, X.numpy())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("beta", [0.0, 1.0, 50.0, 1e4])
def test_cases_within_pointwise_bound(case, beta):
    out = full_rank_model(case.d, beta)(case.X, case.y)[0].detach()
    np.testing.assert_allclose(out.numpy(), _softmax_reference(case.X, case.y, beta), atol=1e-12)
    bound = float(pointwise_bound(case.X, case.y, beta)[0])
    errs = [float(((out[0] - case.X[0, i]) ** 2).sum()) for i in nearest_set(case.X, case.y)[0]]
    assert min(errs) <= bound + 1e-12
    if case.N == 1:
        assert errs[0] < 1e-24


@pytest.mark.parametrize("N,d,ortho", [(2, 2, True), (3, 5, True), (5, 4, False), (16, 8, False)])
def test_random_inputs_within_pointwise_bound(N, d, ortho):
    X, y = many_cases(N, d, 2000, seed=N + d, orthonormal=ortho)
    beta = 20.0
    out = full_rank_model(d, beta)(X, y)[0].detach().numpy()
    err = ((out - brute_nearest(X, y)) ** 2).sum(-1)
    assert np.all(err <= pointwise_bound(X, y, beta).numpy() + 1e-12)


@pytest.mark.parametrize("points", ["orthonormal", "iid"])
@pytest.mark.parametrize("d,beta", [(2, 5.0), (6, 30.0)])
def test_quadrature_claim_matches_monte_carlo_and_bounds_error(points, d, beta):
    model, claim = full_rank(d, beta, 2, points)
    mc = claimed_bound_mc(d, 2, beta, points, samples=60_000, generator=7)
    assert mc.lo <= claim.value <= mc.hi
    err = model_error(
        lambda X, y: model(X, y), nearest_neighbour, d, 2, 40_000, points, generator=8
    )
    assert err.lo <= claim.hi
    assert err.mean < claim.value  # the 4(1-p)^2 bound is loose by >= 2x on N = 2


def test_many_keys_claim_is_certified_and_holds():
    model, claim = full_rank(6, 10.0, N=5, points="iid", claim_samples=40_000, generator=1)
    assert claim.method == "certified" and claim.lo == claim.hi
    # the rigorous bound is an upper bound on the expectation the Monte Carlo estimate targets
    assert claim.extra["monte_carlo_ci"][0] <= claim.value
    err = model_error(lambda X, y: model(X, y), nearest_neighbour, 6, 5, 20_000, "iid", generator=2)
    assert err.lo <= claim.hi


@pytest.mark.parametrize("d", [2, 8])
def test_beta_for_reaches_1e_3_on_D2(d):
    beta = beta_for(1e-3, d, 2, "orthonormal")
    assert math.isfinite(beta) and beta > 0
    assert error_upper_bound(beta, d, 2, "orthonormal") <= 1e-3
    assert claimed_bound_quadrature(d, beta, "orthonormal") <= 1e-3
    model = full_rank_model(d, beta)
    err = model_error(lambda X, y: model(X, y), nearest_neighbour, d, 2, 100_000, generator=11)
    assert err.hi < 1e-3


@pytest.mark.parametrize("N,d,points", [(2, 3, "iid"), (4, 6, "orthonormal"), (3, 4, "iid")])
def test_error_upper_bound_dominates_the_expectation(N, d, points):
    beta = 8.0
    mc = claimed_bound_mc(d, N, beta, points, samples=40_000, generator=3)
    assert error_upper_bound(beta, d, N, points) >= mc.lo


@pytest.mark.parametrize("N,d,points", [(3, 5, "orthonormal"), (2, 3, "iid")])
def test_beta_for_is_monotone_in_eps(N, d, points):
    b1, b2 = beta_for(1e-1, d, N, points), beta_for(1e-2, d, N, points)
    assert b2 > b1 > 0


def test_beta_for_trivial_cases():
    assert beta_for(1e-3, 5, 1) == 0.0
    assert beta_for(4.0, 5, 3) == 0.0


def test_rewrites_give_the_same_output():
    d, beta = 5, 7.0
    X, y = many_cases(4, d, 300, seed=5, orthonormal=False)
    base = full_rank_model(d, beta)(X, y)[0].detach()
    # duplicated head with split values
    eye = torch.eye(d, dtype=torch.float64).reshape(1, 1, d, d)
    two = MultiHeadAttention.from_weights(
        torch.cat([beta * eye] * 2, 1),
        torch.cat([eye] * 2, 1),
        torch.cat([eye] * 2, 1),
        torch.cat([eye / 2] * 2, 1),
    )
    torch.testing.assert_close(two(X, y)[0].detach(), base, atol=1e-12, rtol=0)
    # Eq. 2 form
    gen = full_rank_model(d, beta).to_generalized()
    torch.testing.assert_close(gen(X, y)[0].detach(), base, atol=1e-12, rtol=0)
    # rotated frame
    R = random_rotation(d, 0)
    rot = full_rank_model(d, beta)(X @ R.T, y @ R.T)[0].detach()
    torch.testing.assert_close(rot, base @ R.T, atol=1e-12, rtol=0)
    # permuted keys
    perm = full_rank_model(d, beta)(X[:, [2, 0, 3, 1]], y)[0].detach()
    torch.testing.assert_close(perm, base, atol=1e-12, rtol=0)


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="beta"):
        full_rank(4, -1.0)
    with pytest.raises(ValueError, match="N must"):
        full_rank(3, 1.0, N=4, points="orthonormal")
    with pytest.raises(ValueError, match="eps"):
        beta_for(0.0, 4)
    with pytest.raises(ValueError, match="points"):
        beta_for(0.1, 4, 2, "gaussian")
    with pytest.raises(ValueError, match="d must"):
        full_rank(1, 1.0)
