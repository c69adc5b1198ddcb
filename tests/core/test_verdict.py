"""The one verdict rule (workbench/core/verdict.py) and the Evidence built on it."""

from __future__ import annotations

import math

import pytest

from workbench.core.intervals import Estimate, bonferroni_level, level_of, student_t, z_value
from workbench.core.verdict import decide
from workbench.proofs.claim import Evidence


@pytest.mark.parametrize("lo,hi,rel,bound,want", [
    (0.1, 0.2, "<=", 0.3, "holds"),
    (0.1, 0.4, "<=", 0.3, "inconclusive"),
    (0.35, 0.4, "<=", 0.3, "violated"),
    (0.35, 0.4, ">=", 0.3, "holds"),
    (0.25, 0.4, ">=", 0.3, "inconclusive"),
    (0.1, 0.2, ">=", 0.3, "violated"),
    (0.1, 0.2, "<=", (0.15, 0.3), "inconclusive"),  # the bound's own interval counts
    (0.1, 0.2, "<=", (0.2, 0.3), "holds"),
    (0.31, 0.4, "<=", (0.2, 0.3), "violated"),
    (0.1, 0.2, ">=", (0.21, 0.3), "violated"),
    (0.1, 0.2, ">=", (0.05, 0.1), "holds"),
])
def test_inequalities_are_decided_beyond_both_intervals(lo, hi, rel, bound, want):
    assert decide(lo, hi, rel, bound) == want


def test_an_equality_needs_a_resolution_when_its_interval_is_statistical():
    assert decide(0.44, 0.47, "==", 0.45) == "inconclusive"  # no resolution stated
    assert decide(0.44, 0.47, "==", 0.45, resolution=0.01) == "inconclusive"  # half-width .015
    assert decide(0.44, 0.47, "==", 0.45, resolution=0.02) == "holds"
    assert decide(0.44, 0.47, "==", 0.5, resolution=0.02) == "violated"
    assert decide(0.44, 0.47, "==", 0.45, statistical=False) == "holds"  # a rigorous enclosure
    # both half-widths count: 0.01 + 0.015 > 0.02
    assert decide(0.44, 0.46, "==", (0.44, 0.47), resolution=0.02) == "inconclusive"


def test_tolerance_widens_and_nan_is_never_a_verdict():
    assert decide(0.3 + 1e-13, 0.3 + 1e-13, "<=", 0.3) == "violated"
    assert decide(0.3 + 1e-13, 0.3 + 1e-13, "<=", 0.3, tolerance=1e-12) == "holds"
    assert decide(math.nan, 0.1, "<=", 0.3) == "inconclusive"
    assert decide(0.1, 0.1, "<=", math.nan) == "inconclusive"
    with pytest.raises(ValueError, match="relation"):
        decide(0.1, 0.2, "<", 0.3)
    with pytest.raises(ValueError, match="lo <= hi"):
        decide(0.2, 0.1, "<=", 0.3)


def test_evidence_uses_the_rule_and_compares_two_estimates():
    mine = Estimate(0.20, 0.19, 0.21, 0.95, 10_000, 0.5, "normal")
    rf = Estimate(0.25, 0.24, 0.26, 0.95, 10_000, 0.5, "normal")
    close = Estimate(0.205, 0.195, 0.215, 0.95, 10_000, 0.5, "normal")
    assert Evidence.estimate(mine, "<=", rf).verdict == "holds"
    assert Evidence.estimate(rf, "<=", mine).verdict == "violated"
    assert Evidence.estimate(mine, "<=", close).verdict == "inconclusive"
    assert Evidence.estimate(mine, "<=", 0.205).verdict == "inconclusive"  # a number: no interval
    ev = Evidence.estimate(mine, "==", close, resolution=0.05)
    assert ev.verdict == "holds" and ev.bound_ci == (0.195, 0.215)
    assert Evidence.identity(1e-13, {"d": 3}, tolerance=1e-12).verdict == "holds"
    assert Evidence.identity(1e-11, {"d": 3}, tolerance=1e-12).verdict == "violated"


def test_levels_and_multiplicity():
    assert z_value(0.95) == pytest.approx(1.959963984540054, rel=1e-12)
    assert level_of(z_value(0.999)) == pytest.approx(0.999, rel=1e-12)
    assert bonferroni_level(10, 0.95) == pytest.approx(0.995, rel=1e-12)
    with pytest.raises(ValueError, match="m must"):
        bonferroni_level(0)


def test_student_t_matches_scipy_and_one_replicate_gives_no_interval():
    from scipy import stats

    vals = [0.31, 0.29, 0.35, 0.30]
    est = student_t(vals, level=0.9)
    lo, hi = stats.t.interval(0.9, len(vals) - 1, loc=sum(vals) / 4, scale=stats.sem(vals))
    assert (est.lo, est.hi) == pytest.approx((lo, hi), rel=1e-12)
    one = student_t([0.3])
    assert math.isnan(one.lo) and decide(one.lo, one.hi, "<=", 1.0) == "inconclusive"
