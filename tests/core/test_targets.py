"""Targets agree with brute force on random inputs (docs/paper.md §2, §6)."""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from workbench.core.sphere import sample_instances, uniform_sphere
from workbench.core.targets import (
    biased_nearest_neighbour,
    farthest_point_sequence,
    linear_regression_data,
    nearest_neighbour,
    soft_biased_nearest_neighbour,
    soft_nearest_neighbour,
)
from workbench.strategies import attention_configs, seeds, temperatures


def _brute_nn(X, y, bias=None):
    out = []
    for b in range(X.shape[0]):
        # nearest by Euclidean distance, written independently of the inner-product form
        dists = [
            sum((X[b, i, k].item() - y[b, k].item()) ** 2 for k in range(X.shape[2]))
            - 2 * (0.0 if bias is None else bias[i].item())
            for i in range(X.shape[1])
        ]
        out.append(X[b, min(range(len(dists)), key=dists.__getitem__)])
    return torch.stack(out)


def _brute_soft(X, y, beta, bias=None):
    out = []
    for b in range(X.shape[0]):
        s = [
            beta * (float(X[b, i] @ y[b]) + (0.0 if bias is None else float(bias[i])))
            for i in range(X.shape[1])
        ]
        m = max(s)
        w = [math.exp(v - m) for v in s]
        out.append(sum(wi / sum(w) * X[b, i] for i, wi in enumerate(w)))
    return torch.stack(out)


@given(attention_configs(max_d=8, max_n=8), seeds())
def test_nearest_neighbour_matches_brute_force(cfg, seed):
    X, y = sample_instances(6, cfg.N, cfg.d, generator=seed)
    assert torch.equal(nearest_neighbour(X, y), _brute_nn(X, y))


@given(attention_configs(max_d=6, max_n=6), seeds(), temperatures(50.0))
def test_soft_nearest_neighbour_matches_brute_force(cfg, seed, beta):
    X, y = sample_instances(4, cfg.N, cfg.d, generator=seed)
    assert torch.allclose(soft_nearest_neighbour(X, y, beta), _brute_soft(X, y, beta), atol=1e-12)


def test_soft_tends_to_hard_and_beta_zero_is_mean():
    X, y = sample_instances(2000, 5, 8, generator=1)
    hard = nearest_neighbour(X, y)
    errs = [
        float((soft_nearest_neighbour(X, y, b) - hard).pow(2).sum(-1).mean())
        for b in (1.0, 10.0, 100.0, 1000.0, 10000.0)
    ]
    assert all(a > b for a, b in zip(errs, errs[1:]))
    assert errs[-1] < 1e-2
    assert torch.allclose(soft_nearest_neighbour(X, y, 0.0), X.mean(1), atol=1e-15)


@given(st.integers(1, 6), st.integers(2, 6), seeds(), temperatures(30.0))
def test_biased_targets_match_brute_force(N, d, seed, beta):
    X, y = sample_instances(5, N, d, generator=seed)
    bias = uniform_sphere(1, d=N + 1, generator=seed + 1)[0, :N] if N > 0 else None
    assert torch.equal(biased_nearest_neighbour(X, y, bias), _brute_nn(X, y, bias))
    assert torch.allclose(
        soft_biased_nearest_neighbour(X, y, bias, beta), _brute_soft(X, y, beta, bias), atol=1e-12
    )


def test_zero_bias_is_plain_nearest_neighbour_and_large_bias_wins():
    X, y = sample_instances(100, 4, 5, generator=2)
    assert torch.equal(
        biased_nearest_neighbour(X, y, torch.zeros(4, dtype=X.dtype)), nearest_neighbour(X, y)
    )
    big = torch.tensor([0.0, 0.0, 5.0, 0.0], dtype=X.dtype)  # |<x,y>| <= 1 < 5
    assert torch.equal(biased_nearest_neighbour(X, y, big), X[:, 2])


def test_per_example_bias_shape():
    X, y = sample_instances(3, 2, 4, generator=4)
    bias = torch.tensor([[5.0, 0.0], [0.0, 5.0], [5.0, 0.0]], dtype=X.dtype)
    out = biased_nearest_neighbour(X, y, bias)
    assert torch.equal(out, torch.stack([X[0, 0], X[1, 1], X[2, 0]]))


@given(st.integers(1, 7), st.integers(2, 6), seeds())
def test_farthest_point_sequence_matches_brute_force(N, d, seed):
    X, _ = sample_instances(3, N, d, generator=seed)
    got = farthest_point_sequence(X)
    for b in range(3):
        for i in range(N):
            far = max(range(N), key=lambda j: float((X[b, j] - X[b, i]).norm()))
            assert torch.equal(got[b, i], X[b, far])
    # it is the nearest neighbour of -x_i
    for i in range(N):
        assert torch.equal(got[:, i], nearest_neighbour(X, -X[:, i]))


def test_linear_regression_data():
    xs, ys, w = linear_regression_data(4000, 5, 7, generator=0, dtype=torch.float64)
    assert xs.shape == (4000, 8, 5) and ys.shape == (4000, 8) and w.shape == (4000, 5)
    for b in range(3):
        for k in range(8):
            assert (
                abs(float(ys[b, k]) - sum(float(xs[b, k, j] * w[b, j]) for j in range(5))) < 1e-12
            )
    n = w.numel()
    assert abs(float(w.mean())) < 5 / math.sqrt(n) and abs(float(w.var()) - 1) < 5 * math.sqrt(
        2 / n
    )
    assert abs(float(xs.var()) - 1) < 5 * math.sqrt(2 / xs.numel())


def test_ties_break_towards_lowest_index():
    X = torch.tensor([[[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]], dtype=torch.float64)
    y = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    assert torch.equal(nearest_neighbour(X, y), X[:, 0])


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda X, y: nearest_neighbour(X[0], y), "X"),
        (lambda X, y: nearest_neighbour(X, y[:, :3]), "y"),
        (lambda X, y: nearest_neighbour(X, y[:2]), "y"),
        (lambda X, y: soft_nearest_neighbour(X, y, -1.0), "beta"),
        (lambda X, y: soft_nearest_neighbour(X, y, float("inf")), "beta"),
        (lambda X, y: soft_nearest_neighbour(X, y, float("nan")), "beta"),
        (lambda X, y: biased_nearest_neighbour(X, y, torch.zeros(5, dtype=X.dtype)), "bias"),
        (
            lambda X, y: biased_nearest_neighbour(
                X, y, torch.tensor([0.0, math.inf, 0.0], dtype=X.dtype)
            ),
            "bias",
        ),
        (lambda X, y: farthest_point_sequence(y), "X"),
        (lambda X, y: nearest_neighbour(X[:, :0], y), "N"),
        (lambda X, y: linear_regression_data(2, 0, 3), "n_dims"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    X, y = sample_instances(4, 3, 4, generator=0)
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call(X, y)
