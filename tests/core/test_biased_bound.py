"""Theorem 3's lower side (``workbench/core/bounds/biased.py``,
docs/derivations/biased_lower_bound.md): the step target's coefficients against Parseval, and the
bound's behaviour in the rank and the number of heads."""

from __future__ import annotations

import numpy as np

from workbench.core.bounds.biased import biased_lower_bound, degree_energies, step_coefficients


def _target(d: int) -> tuple[np.ndarray, np.ndarray]:
    j = np.arange(-(d**2), d**2 + 1)
    return 4.0 * j / d**2, np.where(j % 2 == 0, 1.0, -1.0)


def test_step_coefficients_sum_to_the_energy() -> None:
    # Parseval: sum_l eta_l(rho)^2 -> E_c S(sqrt2 rho c)^2 = 1 for a +-1 step (slowly)
    tau, c = _target(5)
    eta = step_coefficients(5, np.array([2.0]), tau, c, 1500)[:, 0]
    assert 0.97 < float((eta**2).sum()) <= 1.0 + 1e-9


def test_bound_is_zero_at_full_rank_and_decreases_in_heads() -> None:
    tau, c = _target(5)
    E = degree_energies(5, tau, c, max_degree=150, samples=200)
    vals = [biased_lower_bound(E, 1, H).value for H in (1, 16, 256, 4096)]
    assert all(a >= b for a, b in zip(vals, vals[1:])) and vals[0] > vals[-1]
    assert biased_lower_bound(E, 4, 1).value == 0.0
