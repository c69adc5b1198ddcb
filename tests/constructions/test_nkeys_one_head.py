"""The one-head Bayes witness on D_N (workbench/constructions/nkeys_one_head.py): at N = 2 its
Bayes error equals the exact one-head formula (an independent computation: the harmonic
series); beyond N = 2 the witness's measured error lies above the estimated Bayes error; a
wrong dimension of the unseen block is seen."""

from __future__ import annotations

import pytest

from workbench.constructions.nkeys_one_head import (
    bayes_error_estimate,
    check_nkeys,
    nkeys_one_head_losses,
)
from workbench.constructions.optimized import bernstein_ci, one_head_exact_error
from workbench.testing import arg_mapped, plant


def _agrees(d: int, r: int, n: int) -> bool:
    est, se = bayes_error_estimate(d, r, 2, n, seed=11)
    lo, hi = one_head_exact_error(d, r)
    return lo - 4 * se <= est <= hi + 4 * se


def test_two_keys_reduce_to_the_exact_one_head_error() -> None:
    assert _agrees(6, 1, 12_800)


def test_a_wrong_unseen_dimension_is_seen() -> None:
    with plant("workbench.constructions.nkeys_one_head:inner_draws",
               arg_mapped(0, "m", lambda m: m + 1)):
        assert not _agrees(6, 1, 12_800)


def test_witness_lies_above_the_bayes_error_beyond_two_keys() -> None:
    loss = nkeys_one_head_losses(8, 1, 3, 6_000, seed=3)
    lo, hi = bernstein_ci(loss, 2.0)
    est, se = bayes_error_estimate(8, 1, 3, 6_000, seed=4)
    assert hi >= est - 4 * se and 0.5 < est < 1 - 1 / 3


def test_bad_arguments_name_the_parameter() -> None:
    with pytest.raises(ValueError, match="^N must lie in 2..d - r"):
        check_nkeys(6, 2, 5)
    with pytest.raises(ValueError, match="^N must"):
        check_nkeys(6, 1, 1)
