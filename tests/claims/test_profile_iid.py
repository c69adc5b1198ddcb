"""A profile target's bound on i.i.d. keys (``targets.profile_iid_mixture``): the claim holds at
quick scale, and each planted fault turns it violated: the profile taken at scale 1 on every
pair (no key gap), at scale 1 - t instead of sqrt(1 - t), and the scale gap halved."""

from __future__ import annotations

from typing import Any

import pytest

from tests.claims.conftest import run_claim
from workbench.testing import plant


def test_profile_iid_mixture_holds_at_quick_scale() -> None:
    verdict, ev = run_claim("targets.profile_iid_mixture")
    assert verdict == "holds", [(e.params, e.verdict) for e in ev if e.verdict != "holds"]


def _no_gap(f: Any) -> Any:
    return lambda p, c: f(p, 1.0)


def _squared(f: Any) -> Any:
    return lambda p, c: f(p, c * c)


def _half_gap(f: Any) -> Any:
    return lambda *a: (f(*a)[0] / 2, f(*a)[1])


@pytest.mark.parametrize(("target", "wrap"), [
    ("workbench.core.bounds.profiles.profile_iid_scale:scaled_profile", _no_gap),
    ("workbench.core.bounds.profiles.profile_iid_scale:scaled_profile", _squared),
    ("workbench.core.bounds.profiles.profile_iid_scale:scale_gap", _half_gap),
])
def test_a_planted_fault_is_violated(target: str, wrap: Any) -> None:
    with plant(target, wrap):
        verdict, ev = run_claim("targets.profile_iid_mixture")
    assert verdict == "violated", [(e.params, e.verdict) for e in ev]
