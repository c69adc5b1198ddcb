"""Theorem 3 (upper side): full-rank biased attention vs the brute-force linear combination of
biased nearest neighbours, with Gaussian queries."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.constructions.construction_cases import CASES, brute_biased, random_rotation
from workbench.constructions._montecarlo import model_error
from workbench.constructions.biased import biased, biased_model, soft_bound_values, theorem3_family


def _gaussian_instances(N: int, d: int, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, N, d))
    X /= np.linalg.norm(X, axis=-1, keepdims=True)
    return torch.tensor(X), torch.tensor(rng.standard_normal((n, d)))


@pytest.mark.parametrize("d", [2, 3, 5])
def test_family_has_2d2_plus_1_terms_and_model_is_full_rank(d):
    fam = theorem3_family(d)
    assert fam.terms == 2 * d * d + 1
    model, claim, fam2 = biased(d)
    assert model.heads == 2 * d * d + 1 and model.rank == d
    assert claim.value == 0.0 and claim.relation == "=="


@pytest.mark.parametrize(
    "d,N,coeffs", [(2, 2, "alternating"), (3, 3, "random_signs"), (4, 2, "ones")]
)
def test_hardmax_equals_reference_on_random_inputs(d, N, coeffs):
    model, _, fam = biased(d, N, coefficients=coeffs, generator=1)
    X, y = _gaussian_instances(N, d, 400, seed=d)
    ref = brute_biased(X, y, fam.biases.numpy(), fam.coeffs.numpy())
    np.testing.assert_allclose(model(X, y)[0].detach().numpy(), ref, atol=1e-10)
    np.testing.assert_allclose(fam.target(X, y).numpy(), ref, atol=1e-10)


@pytest.mark.parametrize("case", [c for c in CASES if c.N == 2 and not c.tie], ids=lambda c: c.name)
def test_hardmax_equals_reference_on_cases(case):
    model, _, fam = biased(case.d, 2)
    for scale in (0.5, 1.0, 3.0):  # Gaussian queries have any norm
        y = case.y * scale
        ref = brute_biased(case.X, y, fam.biases.numpy(), fam.coeffs.numpy())
        np.testing.assert_allclose(model(case.X, y)[0].detach().numpy(), ref, atol=1e-10)


def test_square_wave_reading():
    """For N = 2 the alternating family is a function of s = <x_1 - x_2, y> only."""
    d = 3
    fam = theorem3_family(d)
    X, y = _gaussian_instances(2, d, 200, seed=5)
    s = torch.einsum("bd,bd->b", X[:, 0] - X[:, 1], y)
    tau = fam.biases[:, 1]
    count = ((tau[None, :] < s[:, None]).double() * fam.coeffs[None, :]).sum(-1)
    expected = X[:, 1] * fam.coeffs.sum() + (X[:, 0] - X[:, 1]) * count[:, None]
    torch.testing.assert_close(fam.target(X, y), expected, atol=1e-10, rtol=0)


@pytest.mark.parametrize("beta", [30.0, 300.0])
def test_softmax_error_within_claim(beta):
    d = 3
    model, claim, fam = biased(d, normalizer="softmax", beta=beta, claim_samples=10_000)
    err = model_error(
        lambda X, y: model(X, y), fam.target, d, 2, 6000, "orthonormal", "gaussian", generator=2
    )
    assert err.lo <= claim.hi
    X, y = _gaussian_instances(2, d, 500, seed=3)
    pointwise = ((model(X, y)[0] - fam.target(X, y)) ** 2).sum(-1)
    assert torch.all(pointwise <= soft_bound_values(fam, X, y, beta) + 1e-10)


def test_rewrites_give_the_same_output():
    d = 3
    model, _, fam = biased(d, 2)
    X, y = _gaussian_instances(2, d, 300, seed=7)
    base = model(X, y)[0]
    R = random_rotation(d, 3)
    torch.testing.assert_close(model(X @ R.T, y @ R.T)[0], base @ R.T, atol=1e-10, rtol=0)
    swapped = type(fam)(d, fam.biases[:, [1, 0]].clone(), fam.coeffs)
    torch.testing.assert_close(biased_model(swapped)(X[:, [1, 0]], y)[0], base, atol=1e-10, rtol=0)
    split = type(fam)(
        d, torch.cat([fam.biases, fam.biases]), torch.cat([fam.coeffs, fam.coeffs]) / 2
    )
    torch.testing.assert_close(biased_model(split)(X, y)[0], base, atol=1e-10, rtol=0)


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="N must"):
        biased(3, 1)
    with pytest.raises(ValueError, match="coefficients"):
        biased(3, coefficients="zeros")
    with pytest.raises(ValueError, match="spacing"):
        theorem3_family(3, spacing=0.0)
    with pytest.raises(ValueError, match="normalizer"):
        biased(3, normalizer="sparsemax")
