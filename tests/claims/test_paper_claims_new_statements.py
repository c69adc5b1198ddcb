"""Power of the claims for statements that had none: Theorem 2's two regimes. Each is run on the
real code where that is fast, and on a realistic planted fault, which must make it
``violated``."""

from __future__ import annotations

import math
from functools import cache

import pytest

from workbench.core.bounds.harmonic import heads_needed
from workbench.core.symbolic.regimes import regressor_values
from workbench.proofs.claim import CheckContext, combine
from workbench.proofs.paper.thm2 import regimes

QUICK = CheckContext(scale="quick", seed=0)


def _law(a: float, c: float, p: float):
    """A heads_needed following log H = a + c log(d/r) eps^-p exactly."""
    return lambda d, r, e: max(1, round(math.exp(a + c * math.log(d / r) * e**-p)))


# ------------------------------------------------------------------ Theorem 2 regimes
def test_regressors_come_from_the_sympy_encodings() -> None:
    x = regressor_values("thm2.high_dimensional", [64], [4], [0.05])
    assert x[0] == pytest.approx(math.log(16) / 0.05)
    x = regressor_values("thm2.high_accuracy", [12], [3], [0.01])
    assert x[0] == pytest.approx(12 - 3 * math.log(4))


def test_high_dimensional_holds_on_the_stated_law() -> None:
    ev = regimes.regime_high_dimensional(QUICK, heads_fn=_law(-6.0, 0.45, 1.0))
    assert combine(ev, "theorem") == "holds"
    p = ev[-1].params["p"]
    assert abs(p - 1.0) < 0.1  # the exponent fit recovers the planted law


def test_high_dimensional_violated_by_a_square_root_in_eps() -> None:
    # a slip that puts eps under a square root: H* ~ (d/r)^(c/sqrt(eps)), slower than Omega
    ev = regimes.regime_high_dimensional(QUICK, heads_fn=_law(-4.0, 1.6, 0.5))
    assert combine(ev, "theorem") == "violated"


def test_high_dimensional_violated_when_rank_drops_out() -> None:
    # H* that ignores d/r (a swapped argument: log(d/r) -> log(2)): the law explains too little
    fake = lambda d, r, e: max(1, round(math.exp(-6 + 0.45 * math.log(64 / (1 + (d + r) % 3)) / e)))  # noqa: E731
    ev = regimes.regime_high_dimensional(QUICK, heads_fn=fake)
    assert combine(ev, "theorem") == "violated"


@cache
def _true_heads(d: int, r: int, e: float) -> int:
    return heads_needed(d, r, e)


def test_high_accuracy_holds_on_the_harmonic_count_heads() -> None:
    assert combine(regimes.regime_high_accuracy(QUICK, heads_fn=_true_heads), "theorem") == "holds"


def test_high_accuracy_violated_by_rank_in_the_exponent() -> None:
    # an exponent slip H -> H^r: the slope of log H* then doubles from r = 1 to r = 2
    fake = lambda d, r, e: _true_heads(d, r, e) ** r  # noqa: E731
    assert combine(regimes.regime_high_accuracy(QUICK, heads_fn=fake), "theorem") == "violated"


def test_high_accuracy_violated_by_an_off_by_one_heads_needed() -> None:
    fake = lambda d, r, e: max(1, _true_heads(d, r, e) - 1)  # noqa: E731
    assert combine(regimes.regime_high_accuracy(QUICK, heads_fn=fake), "theorem") == "violated"
