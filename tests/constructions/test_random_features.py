"""Random features (docs/paper.md §4): exact kernel error vs Monte Carlo, monotonicity, lower bound,
reference interpreter, and needlessly complicated rewrites."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tests.constructions.construction_cases import CASES, many_cases, random_rotation
from workbench.constructions._kernel_solve import BlockedKernel, dense_kernel, kernel_matvec
from workbench.constructions._montecarlo import model_error
from workbench.constructions.random_features import random_features, sample_heads
from workbench.constructions.rank_one import (
    exact_error,
    rank_one_model,
    solve_heads,
    target_agreement,
)
from workbench.core.bounds.certified import certified_lower_bound
from workbench.core.head_kernels import agreement_kernel
from workbench.core.targets import nearest_neighbour


def _reference(Q, K, a, X, y) -> np.ndarray:
    """sum_h a_h x_{argmax_j <q_h,y><k_h,x_j>} by looping (ties: lowest index)."""
    Qn, Kn, an, Xn, yn = Q.numpy(), K.numpy(), a.numpy(), X.numpy(), y.numpy()
    out = np.zeros((Xn.shape[0], Xn.shape[2]))
    for b in range(Xn.shape[0]):
        for h in range(Qn.shape[0]):
            scores = [(Qn[h] @ yn[b]) * (Kn[h] @ Xn[b, j]) for j in range(Xn.shape[1])]
            out[b] += an[h] * Xn[b, int(np.argmax(scores))]
    return out


@pytest.mark.parametrize("d", [2, 3, 8])
@pytest.mark.parametrize("H", [1, 4, 64])
def test_exact_kernel_error_equals_monte_carlo(d, H):
    model, claim = random_features(d, H, generator=100 + d * H)
    err = model_error(lambda X, y: model(X, y), nearest_neighbour, d, 2, 20_000, generator=d + H)
    assert err.lo <= claim.value <= err.hi, (claim.value, err)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_model_matches_reference_interpreter(case):
    Q, K = sample_heads(7, case.d, "independent", generator=3)
    a = torch.linspace(-1.0, 2.0, 7, dtype=torch.float64)
    out = rank_one_model(Q, K, a)(case.X, case.y)[0].detach().numpy()
    np.testing.assert_allclose(out, _reference(Q, K, a, case.X, case.y), atol=1e-12)


def test_model_matches_reference_on_random_inputs():
    Q, K = sample_heads(16, 5, "cosine_uniform", generator=4)
    a = solve_heads(Q, K).a
    X, y = many_cases(3, 5, 200, seed=9, orthonormal=False)
    out = rank_one_model(Q, K, a)(X, y)[0].detach().numpy()
    np.testing.assert_allclose(out, _reference(Q, K, a, X, y), atol=1e-12)


def test_error_decreases_in_H_in_d2():
    Q, K = sample_heads(256, 2, "cosine_uniform", generator=5)
    errs = [solve_heads(Q[:H], K[:H]).error for H in (1, 2, 4, 8, 16, 32, 64, 128, 256)]
    assert all(b <= a + 1e-10 for a, b in zip(errs, errs[1:])), errs  # nested heads: exact
    assert errs[-1] < errs[4] < errs[0]
    fresh = [
        np.mean([random_features(2, H, generator=s, build_model=False)[1].value for s in range(4)])
        for H in (1, 8, 64, 256)
    ]
    assert all(b < a for a, b in zip(fresh, fresh[1:])), fresh


@pytest.mark.parametrize("d", [8, 16])
@pytest.mark.parametrize("H", [1, 16, 256])
def test_never_below_certified_lower_bound(d, H):
    lb = certified_lower_bound(d, 1, H)  # the larger of the harmonic count and the fiber bound
    for law in ("cosine_uniform", "tied", "independent"):
        _, claim = random_features(d, H, law, generator=H, build_model=False)
        assert claim.value >= lb.value - 1e-12
        assert 0.0 <= claim.value <= 1.0


def test_rewrite_duplicated_heads_with_split_weights():
    Q, K = sample_heads(12, 4, generator=6)
    sol = solve_heads(Q, K)
    Q2, K2, a2 = torch.cat([Q, Q]), torch.cat([K, K]), torch.cat([sol.a / 3, 2 * sol.a / 3])
    assert exact_error(Q2, K2, a2) == pytest.approx(sol.error, abs=1e-12)
    X, y = many_cases(2, 4, 500, seed=1, orthonormal=True)
    torch.testing.assert_close(
        rank_one_model(Q2, K2, a2)(X, y), rank_one_model(Q, K, sol.a)(X, y), atol=1e-12, rtol=0
    )
    # the solver meets the singular C of duplicated heads and must find the same optimum
    assert solve_heads(Q2, K2, "cholesky").error == pytest.approx(sol.error, abs=1e-8)
    assert solve_heads(Q2, K2, "cg").error == pytest.approx(sol.error, abs=1e-8)


def test_rewrite_rotated_frame_and_permutations():
    d = 5
    Q, K = sample_heads(20, d, generator=7)
    sol = solve_heads(Q, K)
    R = random_rotation(d, 1)
    rot = solve_heads(Q @ R.T, K @ R.T)
    assert rot.error == pytest.approx(sol.error, abs=1e-10)
    X, y = many_cases(2, d, 400, seed=2, orthonormal=True)
    out = rank_one_model(Q, K, sol.a)(X, y)[0]
    out_rot = rank_one_model(Q @ R.T, K @ R.T, sol.a)(X @ R.T, y @ R.T)[0]
    torch.testing.assert_close(out_rot, out @ R.T, atol=1e-12, rtol=0)
    out_swap = rank_one_model(Q, K, sol.a)(X[:, [1, 0]], y)[0]
    torch.testing.assert_close(out_swap, out, atol=1e-12, rtol=0)
    p = torch.randperm(20, generator=torch.Generator().manual_seed(0))
    assert exact_error(Q[p], K[p], sol.a[p]) == pytest.approx(sol.error, abs=1e-12)
    # flipping both q and k leaves every vote, hence the optimum, unchanged
    flip = solve_heads(torch.cat([Q[:10], -Q[10:]]), torch.cat([K[:10], -K[10:]]))
    assert flip.error == pytest.approx(sol.error, abs=1e-10)


def test_solvers_and_blocked_kernel_agree_with_core_kernel():
    Q, K = sample_heads(150, 6, "independent", generator=8)
    C = agreement_kernel(Q, K)
    torch.testing.assert_close(dense_kernel(Q, K), C, atol=1e-7, rtol=0)
    v = torch.randn(150, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(kernel_matvec(Q, K, v, block=37), C @ v, atol=1e-6, rtol=0)
    op = BlockedKernel(Q, K, block=32, cache_mb=0.02)  # partly cached
    torch.testing.assert_close(op.matvec(v), C @ v, atol=1e-4, rtol=0)
    ch, cg = solve_heads(Q, K, "cholesky"), solve_heads(Q, K, "cg")
    assert cg.error == pytest.approx(ch.error, abs=1e-9)
    b = target_agreement(Q, K)
    assert ch.error == pytest.approx(1 - float(b @ torch.linalg.solve(C, b)), abs=1e-9)


def test_head_laws():
    n = 4000
    Q, K = sample_heads(n, 6, "tied", generator=1)
    assert torch.equal(Q, K)
    Q, K = sample_heads(n, 6, "cosine_uniform", generator=2)
    c = (Q * K).sum(-1)
    torch.testing.assert_close(Q.norm(dim=-1), torch.ones(n, dtype=torch.float64))
    torch.testing.assert_close(K.norm(dim=-1), torch.ones(n, dtype=torch.float64))
    for lo, hi in ((-1.0, -0.5), (-0.5, 0.0), (0.0, 0.5), (0.5, 1.0)):  # uniform: 1/4 each
        frac = float(((c >= lo) & (c < hi)).double().mean())
        assert abs(frac - 0.25) < 4 * math.sqrt(0.25 * 0.75 / n)
    Q, K = sample_heads(n, 6, "independent", generator=3)
    c = (Q * K).sum(-1)
    assert abs(float(c.mean())) < 4 / math.sqrt(6 * n)
    assert abs(float((c * c).mean()) - 1 / 6) < 0.02


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="law"):
        random_features(4, 4, law="gaussian")
    with pytest.raises(ValueError, match="solver"):
        random_features(4, 4, solver="lu")
    with pytest.raises(ValueError, match="H must"):
        random_features(4, 0)
