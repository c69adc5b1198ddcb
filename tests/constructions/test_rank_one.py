"""``workbench/constructions/rank_one.py``: the solved values ``C a = b`` are optimal. No random
direction
improves the exact kernel error (``exact_error``, the dense ``C``) at the solution, for the
Cholesky and the CG path; with values planted 2 % short, some direction does."""

from __future__ import annotations

import pytest
import torch

import workbench.constructions.rank_one as rank_one
from workbench.constructions.random_features import sample_heads
from workbench.testing import mapped, plant

STEP = 1e-3  # relative to |a|: the quadratic's curvature term is t^2 v.C.v >= 0


def _best_improvement(Q: torch.Tensor, K: torch.Tensor, a: torch.Tensor, seed: int) -> float:
    """Largest decrease of the exact error over 64 random directions, both signs."""
    g = torch.Generator().manual_seed(seed)
    base = rank_one.exact_error(Q, K, a)
    t = STEP * float(a.norm())
    best = 0.0
    for _ in range(64):
        v = torch.randn(a.shape, generator=g, dtype=torch.float64)
        v /= v.norm()
        for s in (t, -t):
            best = max(best, base - rank_one.exact_error(Q, K, a + s * v))
    return best


@pytest.mark.parametrize(("d", "H", "solver"), [(5, 40, "cholesky"), (8, 300, "cg")])
def test_no_direction_improves_the_solved_values(d, H, solver) -> None:
    Q, K = sample_heads(H, d, "cosine_uniform", generator=3)
    sol = rank_one.solve_heads(Q, K, solver)
    assert sol.error == pytest.approx(rank_one.exact_error(Q, K, sol.a), abs=1e-10)
    # float64 rounding of 1 - 2 a.b + a.C.a is about 1e-15 |a|^2
    assert _best_improvement(Q, K, sol.a, seed=d) <= 1e-12 * (1 + float(sol.a @ sol.a))


def test_values_two_percent_short_are_improvable() -> None:
    Q, K = sample_heads(40, 5, "cosine_uniform", generator=3)

    def short(res):  # type: ignore[no-untyped-def]
        return type(res)(res.a * 0.98, res.error, res.method, res.iterations,
                         res.relative_residual, res.jitter, res.seconds)

    with plant("workbench.constructions.rank_one:solve_value_weights", mapped(short)):
        sol = rank_one.solve_heads(Q, K)
    assert _best_improvement(Q, K, sol.a, seed=5) > 1e-7
