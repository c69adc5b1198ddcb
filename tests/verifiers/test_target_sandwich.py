"""The target sandwich and TargetTask (workbench/verifiers/target_sandwich.py, tasks.py)."""

from __future__ import annotations

import math

import pytest
import torch

from workbench.core.bounds.profiles.profile_harmonic import profile_bound
from workbench.core.profiles import tanh_profile
from workbench.core.targets import soft_nearest_neighbour
from workbench.verifiers.target_sandwich import target_sandwich
from workbench.verifiers.tasks import TargetTask


def _task(d: int, beta: float, N: int = 2) -> TargetTask:
    return TargetTask("nearest", d=d, N=N, points="orthonormal", target="soft-nearest",
                      target_params=(("beta", beta),),
                      fn=lambda X, y: soft_nearest_neighbour(X, y, beta))


def test_target_task_labels_by_its_map_and_records_no_function() -> None:
    t = _task(6, 4.0)
    (X, y), f = t.sample(500, torch.Generator().manual_seed(0))
    assert torch.allclose(f, soft_nearest_neighbour(X.double(), y.double(), 4.0).float(),
                          atol=1e-6)
    assert t.to_dict()["target"] == "soft-nearest" and "fn" not in t.to_dict()
    with pytest.raises(ValueError, match="map"):
        TargetTask("nearest", d=6, N=2, points="orthonormal")


def test_midpoint_witness_is_exact_against_monte_carlo() -> None:
    """E||(x1+x2)/2 - f||^2 = E psi^2 / 2 (Monte Carlo, 99.9 %); E psi^2 in place of half fails."""
    d, beta = 6, 4.0
    s = target_sandwich(_task(d, beta), tanh_profile(beta), 1, 2,
                        profile_bound(tanh_profile(beta), d, 1, 2).enclosure[0], True, seeds=0)
    mid = s.candidates[0]
    (X, y), f = _task(d, beta).sample(200_000, torch.Generator().manual_seed(1))
    err = ((X[:, 0] + X[:, 1]) / 2 - f).double().pow(2).sum(-1)
    m, h = float(err.mean()), 3.29 * float(err.std()) / math.sqrt(len(err))
    assert m - h <= mid.error <= m + h
    assert not m - h <= 2 * mid.error <= m + h
    assert mid.method == "midpoint" and s.best.error <= mid.error and not s.violated
    assert s.ratio == s.best.error / s.bound


def test_target_sandwich_needs_d2() -> None:
    with pytest.raises(ValueError, match="N = 2 on D_2"):
        target_sandwich(_task(6, 4.0, N=3), tanh_profile(4.0), 1, 1, 0.1, True, seeds=0)
