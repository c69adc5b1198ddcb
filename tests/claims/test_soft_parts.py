"""Every printed part of the soft-nearest bound against an independent computation
(``targets.soft_printed_parts``): the claim holds at quick scale, and each planted fault of a
few percent in one printed part turns it violated: the fiber part 3 % and 1 % high at H >= 2,
step S6's correction with sqrt(1.9 x) for sqrt(2 x), Lemma P5's share 0.95 ||psi - sign||, the
harmonic count 3 % high at H >= 2."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.claims.conftest import run_claim
from workbench.testing import edited, plant

CID = "targets.soft_printed_parts"


def test_soft_printed_parts_hold_at_quick_scale() -> None:
    verdict, ev = run_claim(CID)
    assert verdict == "holds", [(e.params, e.value, e.bound) for e in ev if e.verdict != "holds"]
    parts = {e.params["part"] for e in ev}
    assert parts == {"harmonic count", "fiber", "harmonic count via hardmax (S6)",
                     "fiber via hardmax"}


def _fiber_high(k: float) -> Any:
    def wrap(f: Any) -> Any:
        def wrapped(profile: Any, d: int, r: int, H: int, vc: str, L: int) -> Any:
            p = f(profile, d, r, H, vc, L)
            return p if H < 2 else replace(p, enclosure=(k * p.lower, k * p.enclosure[1]))
        return wrapped
    return wrap


def _series_high(f: Any) -> Any:
    def wrapped(profile: Any, d: int, r: int, H: int, L: int, vc: str) -> Any:
        e, lo, hi = f(profile, d, r, H, L, vc)
        return (e, lo, hi) if H < 2 else (e, 1.03 * lo, 1.03 * hi)
    return wrapped


FAULTS = {
    "fiber 3 % high at H >= 2": (
        "workbench.core.bounds.profiles.profile_fiber:direct_fiber_part", _fiber_high(1.03)),
    "fiber 1 % high at H >= 2": (
        "workbench.core.bounds.profiles.profile_fiber:direct_fiber_part", _fiber_high(1.01)),
    "S6 correction sqrt(1.9 x)": (
        "workbench.core.bounds.profiles.soft_limit:s6_enclosure",
        edited("lo = lo_x - (2 * lo_x).sqrt() * delta", "lo = lo_x - (1.9 * lo_x).sqrt() * delta")),
    "P5 share 0.95": (
        "workbench.core.bounds.profiles.profile_fiber:hardmax_fiber_part",
        lambda f: lambda d, r, H, vc, dist: f(d, r, H, vc, (0.95 * dist[0], 0.95 * dist[1]))),
    "harmonic count 3 % high at H >= 2": (
        "workbench.core.bounds.profiles.profile_harmonic:_series", _series_high),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_few_percent_in_one_printed_part_is_violated(fault: str) -> None:
    target, wrap = FAULTS[fault]
    with plant(target, wrap):
        verdict, _ = run_claim(CID)
    assert verdict == "violated"
