"""Theorem 2's two regimes (``workbench/proofs/paper/thm2/regimes.py``): the regressors come from
the sympy encodings, the claims hold at quick scale and on the stated law, and each is violated
when ``heads_needed`` follows a law with a planted slip (a square root, a dropped rank, an
exponent, an off-by-one)."""

from __future__ import annotations

import math

import pytest

from tests.claims.conftest import ENCODINGS, assert_module_holds, form_changed, run_claim
from workbench.core.symbolic import symbols as sym
from workbench.core.symbolic.regimes import regressor_values
from workbench.testing import plant, replaced

HEADS = "workbench.core.bounds.harmonic:heads_needed"


def test_regimes_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.thm2.regimes")


def test_regressors_come_from_the_sympy_encodings() -> None:
    x = regressor_values("thm2.high_dimensional", [64], [4], [0.05])
    assert x[0] == pytest.approx(math.log(16) / 0.05)
    x = regressor_values("thm2.high_accuracy", [12], [3], [0.01])
    assert x[0] == pytest.approx(12 - 3 * math.log(4))


def _law(a: float, c: float, p: float):  # type: ignore[no-untyped-def]
    """A heads_needed following log H = a + c log(d/r) eps^-p exactly."""
    return replaced(lambda d, r, e: max(1, round(math.exp(a + c * math.log(d / r) * e**-p))))


def test_high_dimensional_holds_on_the_stated_law() -> None:
    with plant(HEADS, _law(-6.0, 0.45, 1.0)):
        verdict, ev = run_claim("thm2.regime_high_dimensional")
    assert verdict == "holds"
    assert abs(ev[-1].params["p"] - 1.0) < 0.1  # the exponent fit recovers the planted law


def test_high_dimensional_violated_by_a_square_root_in_eps() -> None:
    # a slip that puts eps under a square root: H* ~ (d/r)^(c/sqrt(eps)), slower than Omega
    with plant(HEADS, _law(-4.0, 1.6, 0.5)):
        assert run_claim("thm2.regime_high_dimensional")[0] == "violated"


def test_high_dimensional_violated_when_rank_drops_out() -> None:
    # H* that ignores d/r (a swapped argument: log(d/r) -> log(2)): the law explains too little
    fake = lambda d, r, e: max(1, round(math.exp(-6 + 0.45 * math.log(64 / (1 + (d + r) % 3)) / e)))  # noqa: E731
    with plant(HEADS, replaced(fake)):
        assert run_claim("thm2.regime_high_dimensional")[0] == "violated"


def _rank_in_the_exponent(f):  # type: ignore[no-untyped-def]
    return lambda d, r, e: f(d, r, e) ** r


def _one_fewer(f):  # type: ignore[no-untyped-def]
    return lambda d, r, e: max(1, f(d, r, e) - 1)


def test_high_accuracy_violated_by_rank_in_the_exponent() -> None:
    # an exponent slip H -> H^r: the slope of log H* then doubles from r = 1 to r = 2
    with plant(HEADS, _rank_in_the_exponent):
        assert run_claim("thm2.regime_high_accuracy")[0] == "violated"


def test_high_accuracy_violated_by_an_off_by_one_heads_needed() -> None:
    with plant(HEADS, _one_fewer):
        assert run_claim("thm2.regime_high_accuracy")[0] == "violated"


def test_high_dimensional_encoding_with_a_higher_eps_power_is_violated() -> None:
    """The exponent the fitted ``p`` must reach is read from the encoding: the law
    ``(d/r)^(c/eps^4)`` claims more growth in ``1/eps`` than the harmonic count has on the grid
    (``p`` about 1.8, bootstrap interval about (1.2, 3.5)) and is violated; ``eps^2`` and
    ``eps^3`` are consistent with these data (inconclusive), as a lower bound's law may be."""
    wrap = form_changed("thm2.high_dimensional", lambda rhs: rhs.subs(sym.eps, sym.eps**4))
    with plant(ENCODINGS, wrap):
        verdict, ev = run_claim("thm2.regime_high_dimensional")
    assert verdict == "violated"
    (bad,) = [e for e in ev if e.verdict == "violated"]
    assert bad.bound == 4 and "fitted exponent p" in bad.note
    wrap = form_changed("thm2.high_dimensional", lambda rhs: rhs.subs(sym.eps, sym.eps**2))
    with plant(ENCODINGS, wrap):
        assert run_claim("thm2.regime_high_dimensional")[0] == "inconclusive"
