"""Fact 1's claims (``workbench/proofs/paper/fact1.py``) hold at quick scale, and each fails on a
planted fault in the construction they check."""

from __future__ import annotations

import pytest

from tests.claims.conftest import ENCODINGS, assert_module_holds, form_changed, run_claim
from workbench.core.symbolic import symbols as sym
from workbench.proofs.claim import combine
from workbench.proofs.registry import builtin_claims
from workbench.testing import arg_scaled, edited, plant, scaled

HEAD = "workbench.constructions.full_rank:full_rank_model"



def test_fact1_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.fact1")


def test_kinds_and_dependencies() -> None:
    claims = builtin_claims()
    assert claims["fact1.beta_for"].kind == "fact" and claims["fact1.hard_limit"].kind == "fact"
    assert claims["fact1.beta_for"].depends_on == ("fact1.pointwise_bound",)


def test_beta_for_evidence_is_statistical_where_sampling_is_involved(quick_results) -> None:
    ev = quick_results["fact1.beta_for"].evidence
    assert ev and all(e.ci is not None for e in ev if e.method == "monte_carlo")


def test_head_temperature_five_percent_off_is_violated() -> None:
    """The head built with ``1.05 beta`` no longer equals ``X softmax(beta X^T y)``."""
    with plant(HEAD, arg_scaled(1, "beta", 1.05)):
        assert run_claim("fact1.soft_representation")[0] == "violated"


def test_head_temperature_halved_breaks_the_pointwise_bound() -> None:
    """At ``beta / 2`` the error is about ``2 exp(-beta gap)``, above ``4 exp(-2 beta gap)`` once
    ``beta gap > log 2``."""
    with plant(HEAD, arg_scaled(1, "beta", 0.5)):
        assert run_claim("fact1.pointwise_bound")[0] == "violated"


def test_value_map_five_percent_off_is_violated_by_the_hard_limit() -> None:
    """``W_O^T W_V = 1.05 I``: the error tends to ``0.05^2 = 2.5e-3`` instead of 0, above
    ``eps = 1e-3``."""
    with plant(HEAD, edited("beta * eye, eye, eye, eye", "beta * eye, eye, 1.05 * eye, eye")):
        ev = run_claim("fact1.hard_limit")[1]
    assert combine(ev, "fact") == "violated"
    assert {e.params["eps"] for e in ev if e.verdict == "violated"} == {1e-3}


def test_temperature_three_times_too_small_is_violated() -> None:
    with plant("workbench.constructions.full_rank:beta_for", scaled(1 / 3)):
        ev = run_claim("fact1.beta_for")[1]
    assert combine(ev, "fact") == "violated"
    bad = {(e.params["N"], e.method) for e in ev if e.verdict == "violated"}
    assert (3, "monte_carlo") in bad  # the Monte Carlo bound expectation notices it too


@pytest.mark.parametrize("factor,caught", [(2, {(2, "exact")}),
                                           (3, {(2, "exact"), (3, "monte_carlo")})])
def test_too_small_error_upper_bound_is_violated(factor, caught) -> None:
    """Fact 1's error upper bound ``factor`` times too small makes beta_for consistent with it,
    and too small. N = 2 sees a factor 2 (exact quadrature); N = 3 only a factor 3: its union
    bound is about twice the Monte Carlo expectation, so a factor 2 stays inside the slack."""
    with plant("workbench.constructions.full_rank:error_upper_bound", scaled(1 / factor)):
        ev = run_claim("fact1.beta_for")[1]
    bad = {(e.params["N"], e.method) for e in ev if e.verdict == "violated"}
    assert combine(ev, "fact") == "violated" and caught <= bad


@pytest.mark.parametrize("factor", [0.5, 0.97, 1.03])
def test_construction_pointwise_bound_off_is_violated(factor) -> None:
    """The construction's ``pointwise_bound`` (the integrand of its claimed error) is compared
    sample by sample with the bound derived in the claim: a factor of 2 or 3 % either way is
    violated."""
    with plant("workbench.constructions.full_rank:pointwise_bound", scaled(factor)):
        verdict, ev = run_claim("fact1.pointwise_bound")
    assert verdict == "violated"
    assert any(e.verdict == "violated" and "construction's pointwise_bound" in e.note for e in ev)


@pytest.mark.parametrize("form", ["factor 2", "exponent -beta gap", "(N - 1)"])
def test_pointwise_encoding_of_another_form_is_violated(form) -> None:
    """The bound is read from the encoding ``fact1.pointwise_error``: a factor 2 in place of 4,
    ``exp(-beta gap)`` in place of ``exp(-2 beta gap)`` or ``(N - 1)`` in place of ``(N - 1)^2``
    turns the claim violated."""
    change = {"factor 2": lambda rhs: rhs / 2,
              "exponent -beta gap": lambda rhs: rhs.subs(sym.beta, sym.beta / 2),
              "(N - 1)": lambda rhs: rhs.subs((sym.N - 1) ** 2, sym.N - 1)}[form]
    with plant(ENCODINGS, form_changed("fact1.pointwise_error", change)):
        assert run_claim("fact1.pointwise_bound")[0] == "violated"


@pytest.mark.parametrize("factor", [0.97, 1.03])
def test_claimed_quadrature_three_percent_off_is_violated(factor) -> None:
    """The construction's claimed error (N = 2) against the independent quadrature in t."""
    with plant("workbench.constructions.full_rank:claimed_bound_quadrature", scaled(factor)):
        verdict, ev = run_claim("fact1.beta_for")
    assert verdict == "violated"
    assert any(e.verdict == "violated" and "independent quadrature" in e.note for e in ev)
