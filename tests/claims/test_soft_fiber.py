"""The soft profile's fiber bound against an independent Monte Carlo
(``targets.profile_fiber_value``): the claim holds at quick scale, and each planted fault turns
it violated: the kernel's eta_l 5 % high, the Ky Fan top-H replaced by top-(H+1)."""

from __future__ import annotations

from typing import Any

from tests.claims.conftest import run_claim
from workbench.testing import plant


def test_profile_fiber_value_holds_at_quick_scale() -> None:
    verdict, ev = run_claim("targets.profile_fiber_value")
    assert verdict == "holds", [(e.params, e.verdict) for e in ev if e.verdict != "holds"]


def _eta_high(f: Any) -> Any:
    return lambda e: [x * 1.05**2 for x in f(e)]


def _one_more(f: Any) -> Any:
    return lambda fib, count, tol, cap: f(fib, count + 1, tol, cap)


def test_eta_five_percent_high_is_violated() -> None:
    with plant("workbench.core.bounds.profiles.profile_fiber:_eta_balls", _eta_high):
        verdict, _ = run_claim("targets.profile_fiber_value")
    assert verdict == "violated"


def test_ky_fan_top_h_plus_one_is_violated() -> None:
    with plant("workbench.core.bounds.fiber_bound.fiber_enclosure:ky_fan_average", _one_more):
        verdict, ev = run_claim("targets.profile_fiber_value")
    assert verdict == "violated"


def test_soft_iid_mixture_holds_at_quick_scale() -> None:
    verdict, ev = run_claim("targets.soft_iid_mixture")
    assert verdict == "holds", [(e.params, e.verdict) for e in ev]


def test_effective_temperature_without_the_key_gap_is_violated() -> None:
    """The soft head's temperature taken as beta on every pair (no sqrt(1 - t))."""
    with plant("workbench.core.bounds.profiles.profile_iid:effective_temperature",
               lambda f: lambda beta, t: f(beta, 0 * t)):
        verdict, ev = run_claim("targets.soft_iid_mixture")
    assert verdict == "violated"
    # the bins of t see it: over all keys the faulty bound is lower, not higher
    assert any("t_bin" in e.params and e.verdict == "violated" for e in ev)
    assert not any("t_bin" not in e.params and e.params.get("points") == "iid"
                   and e.verdict == "violated" for e in ev)


def test_an_iid_bound_three_times_too_high_is_refuted_by_the_trained_model() -> None:

    with plant("workbench.core.bounds.profiles.profile_iid:soft_iid_bound",
               lambda f: lambda *a, **k: _times(f(*a, **k), 3.0)):
        verdict, ev = run_claim("targets.soft_iid_mixture")
    assert verdict == "violated"
    assert any(e.params.get("points") == "iid" and e.verdict == "violated" for e in ev)


def _times(bv: Any, k: float) -> Any:
    import dataclasses

    part = bv.parts[0]
    lo, hi = part.enclosure
    return dataclasses.replace(bv, parts=(dataclasses.replace(part, enclosure=(k * lo, k * hi)),))


def test_iid_cells_two_percent_high_are_violated_by_the_quadrature() -> None:
    """The lower sum lies within 1 % of the mixture's quadrature, so terms 2 % high exceed it."""
    with plant("workbench.core.bounds.profiles.profile_iid:tanh_terms",
               lambda f: lambda *a: ([(lo, hi, m, 1.02 * x) for lo, hi, m, x in f(*a)[0]],
                                     f(*a)[1])):
        verdict, ev = run_claim("targets.soft_iid_mixture")
    assert verdict == "violated"
    assert any("points" not in e.params and e.verdict == "violated" for e in ev)
