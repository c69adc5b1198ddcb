"""The combination layer (``thm2.combined_bound``): the claim holds at quick scale, and each
planted fault in the combination, not in either part's own code, turns it violated: the
query-dependent class given the Eq. 2 numbers, the fiber part 3 % too strong, the harmonic-count
part 5 % too strong."""

from __future__ import annotations

import dataclasses

from tests.claims.conftest import run_claim
from workbench.core.bounds import EQ2, QUERY_VALUES
from workbench.testing import plant


def test_combined_bound_holds_at_quick_scale() -> None:
    verdict, ev = run_claim("thm2.combined_bound")
    assert verdict == "holds", [(e.params, e.verdict) for e in ev if e.verdict != "holds"]
    assert {e.params["class"] for e in ev} == {EQ2, QUERY_VALUES}


def _query_class_given_eq2(f):  # type: ignore[no-untyped-def]
    return lambda d, r, H, value_class=EQ2, **kw: f(d, r, H, EQ2, **kw)


def test_the_query_class_given_the_eq2_numbers_in_the_combination_is_violated() -> None:
    with plant("workbench.core.bounds.certified:certified_lower_bound", _query_class_given_eq2):
        verdict, ev = run_claim("thm2.combined_bound")
    bad = [e.params for e in ev if e.verdict == "violated"]
    assert verdict == "violated" and bad and all(p["class"] == QUERY_VALUES for p in bad)


def _part_scaled(name: str, k: float):  # type: ignore[no-untyped-def]
    def wrap(f):  # type: ignore[no-untyped-def]
        def faulty(harmonic, fiber):  # type: ignore[no-untyped-def]
            right = f(harmonic, fiber)
            return dataclasses.replace(right, parts=tuple(
                dataclasses.replace(p, enclosure=(k * p.enclosure[0], k * p.enclosure[1]))
                if p.name == name else p for p in right.parts))

        return faulty

    return wrap


def test_a_fiber_part_three_percent_too_strong_in_the_combination_is_violated() -> None:
    with plant("workbench.core.bounds.certified:combined", _part_scaled("fiber", 1.03)):
        verdict, ev = run_claim("thm2.combined_bound")
    assert verdict == "violated"
    assert any(e.method == "monte_carlo" and e.verdict == "violated" for e in ev)


def test_a_harmonic_part_five_percent_too_strong_in_the_combination_is_violated() -> None:
    with plant("workbench.core.bounds.certified:combined", _part_scaled("harmonic count", 1.05)):
        verdict, ev = run_claim("thm2.combined_bound")
    assert verdict == "violated"
    assert any("L" in e.params and e.verdict == "violated" for e in ev)
