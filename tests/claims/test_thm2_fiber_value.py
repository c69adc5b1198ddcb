"""The fiber bound's value at H >= 2 and both value classes (``thm2.fiber_value``): the claim
holds at quick scale, and each planted fault turns it violated: the bound 5 % too strong at
H >= 2 only (H = 1 exact), the query-dependent class given the Eq. 2 number, the float
eigenvalues 1 % off their rigorous enclosures."""

from __future__ import annotations

import dataclasses

from tests.claims.conftest import run_claim
from workbench.core.bounds import EQ2, QUERY_VALUES
from workbench.testing import plant, scaled


def test_fiber_value_holds_at_quick_scale() -> None:
    verdict, ev = run_claim("thm2.fiber_value")
    assert verdict == "holds", [(e.params, e.verdict) for e in ev if e.verdict != "holds"]


def _stronger_at_two_heads(f):  # type: ignore[no-untyped-def]
    def faulty(d, r, H, value_class=EQ2):  # type: ignore[no-untyped-def]
        b = f(d, r, H, value_class)
        return dataclasses.replace(b, value=1.05 * b.value) if H >= 2 else b

    return faulty


def _query_class_given_eq2(f):  # type: ignore[no-untyped-def]
    return lambda d, r, H, value_class=EQ2: f(d, r, H, EQ2)


def test_a_bound_five_percent_too_strong_at_two_heads_only_is_violated() -> None:
    with plant("workbench.core.bounds.fiber_bound.fiber:fiber_bound", _stronger_at_two_heads):
        verdict, ev = run_claim("thm2.fiber_value")
    assert verdict == "violated"
    assert all(e.params["H"] >= 2 for e in ev if e.verdict == "violated")


def test_the_query_class_given_the_eq2_number_is_violated() -> None:
    with plant("workbench.core.bounds.fiber_bound.fiber:fiber_bound", _query_class_given_eq2):
        verdict, ev = run_claim("thm2.fiber_value")
    bad = [e.params for e in ev if e.verdict == "violated"]
    assert verdict == "violated" and bad and all(p["class"] == QUERY_VALUES for p in bad)


def test_float_eigenvalues_off_their_enclosures_are_violated() -> None:
    with plant("workbench.core.bounds.fiber_bound.fiber:_eigen", scaled(1.01)):
        verdict, ev = run_claim("thm2.fiber_value")
    assert verdict == "violated"
    assert any(e.method == "identity" and e.verdict == "violated" for e in ev)


def _traceless_short(f):  # type: ignore[no-untyped-def]
    def init(self, d, r_star):  # type: ignore[no-untyped-def]
        f(self, d, r_star)
        self.mult[2] -= 1  # m(m+1)/2 - 2 traceless values in the rigorous enclosure only

    return init


def test_a_fault_in_the_rigorous_enclosure_is_violated() -> None:
    """The enclosure's own code (Lemmas R2-R4) with one traceless value short: the float
    estimate, which shares no code with it, falls outside."""
    from workbench.core.bounds.fiber_bound import fiber_enclosure as fe

    fe.captured_enclosure.cache_clear()
    try:
        with plant("workbench.core.bounds.fiber_bound.fiber_enclosure:_Fiber.__init__",
                   _traceless_short):
            verdict, ev = run_claim("thm2.fiber_value")
    finally:
        fe.captured_enclosure.cache_clear()
    assert verdict == "violated"
    assert any(e.note.startswith("float quadrature estimate") and e.verdict == "violated"
               for e in ev)
