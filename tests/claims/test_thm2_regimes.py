"""Theorem 2's two regimes (``workbench/proofs/paper/thm2/regimes.py``): the regressors come from
the sympy encodings, the claims hold at quick scale and on the stated law, and each is violated
when ``heads_needed`` follows a law with a planted slip (a square root, a dropped rank, an
exponent, an off-by-one) or the encoding's law is not the paper's stated one (``1/eps ->
1/eps^2``, which the harmonic count's data alone cannot refute, among them)."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import pytest
import sympy as sp
from sympy.parsing.sympy_parser import (
    implicit_multiplication_application,
    parse_expr,
    standard_transformations,
)

from tests.claims.conftest import ENCODINGS, assert_module_holds, form_changed, run_claim
from workbench.core.symbolic import symbols as sym
from workbench.core.symbolic.bounds import c_2b as C_2B
from workbench.core.symbolic.bounds import c_2d as C_2D
from workbench.core.symbolic.bounds import get_bound
from workbench.core.symbolic.regimes import regressor_values, stated_form_match
from workbench.testing import plant, replaced

HEADS = "workbench.core.bounds.harmonic_count.harmonic:heads_needed"


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


def _power_instead_of_exp(rhs):  # type: ignore[no-untyped-def]
    # exp(c x) written as the power x^c: c_2c (d - r log(d/r))^c_2d
    (inner,) = rhs.atoms(sp.exp)
    return rhs.subs(inner, (sym.d - sym.r * sp.log(sym.d / sym.r)) ** C_2D)


@pytest.mark.parametrize(("bound_id", "slip"), [
    ("thm2.high_dimensional", lambda rhs: rhs.subs(sym.eps, sym.eps**2)),  # data cannot refute
    ("thm2.high_dimensional", lambda rhs: rhs.subs(sym.eps, sym.eps**4)),
    ("thm2.high_dimensional", lambda rhs: rhs.subs(sym.r, 1)),  # base d/r -> d
    ("thm2.high_dimensional", lambda rhs: rhs.subs(sym.eps, -sym.eps)),  # exponent's sign
    ("thm2.high_accuracy", _power_instead_of_exp),
    ("thm2.high_accuracy", lambda rhs: rhs.subs(C_2D, -C_2D)),  # exponent's sign
])
def test_an_encoding_slip_of_form_is_violated_by_the_stated_form(bound_id, slip) -> None:
    """The encoding's law is checked against the paper's stated law before any fit: a slip of
    form is violated there, even one the harmonic count's data cannot refute (``eps^2``: the
    fitted ``p`` is about 1.8 with an interval about (1.2, 3.5), docs/derivations/regimes.md)."""
    cid = {"thm2.high_dimensional": "thm2.regime_high_dimensional",
           "thm2.high_accuracy": "thm2.regime_high_accuracy"}[bound_id]
    with plant(ENCODINGS, form_changed(bound_id, slip)):
        verdict, ev = run_claim(cid)
    assert verdict == "violated"
    assert len(ev) == 2 and all(e.method == "exact" for e in ev)  # no fit ran


def test_the_stated_form_check_passes_a_change_of_constants_only() -> None:
    """Up to the unknown constants: a factor 2 in the exponent is not a change of law."""
    with plant(ENCODINGS, form_changed("thm2.high_dimensional", lambda rhs: rhs**2)):
        m = stated_form_match("thm2.high_dimensional")
    assert m.matches and m.factor == 2 * C_2B


def _omegas(section: str) -> list[sp.Expr]:
    rules = (*standard_transformations, implicit_multiplication_application)
    names = {"d": sym.d, "r": sym.r, "eps": sym.eps}
    return [parse_expr(f.replace("^", "**"), local_dict=names, transformations=rules)
            for f in re.findall(r"`Omega\((.+?)\)`", section)]


def test_docs_paper_quotes_the_stated_forms() -> None:
    """docs/paper.md's Theorem 2 quotes the same laws that ``Bound.stated_form`` holds."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "paper.md").read_text()
    section = text.split("### Theorem 2: rank separation")[1].split("###")[0]
    stated = [get_bound(b).stated_law for b in ("thm2.high_dimensional", "thm2.high_accuracy")]
    quoted = _omegas(section)
    assert len(quoted) == 2
    assert all(sp.simplify(q - s) == 0 for q, s in zip(quoted, stated))


def test_a_stated_form_is_validated() -> None:
    with pytest.raises(ValueError, match="has no stated form"):
        _ = get_bound("fact1.pointwise_error").stated_law
    bad = dataclasses.replace(get_bound("thm2.high_dimensional"), stated_form="(d/k)**(1/eps)")
    with pytest.raises(ValueError, match="unknown symbols"):
        _ = bad.stated_law
