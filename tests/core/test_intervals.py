"""Intervals for bounded means (workbench/core/intervals.py; docs/derivations/intervals.md),
against independent computations."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest

from workbench.core.intervals import chernoff_interval, mean_interval


@pytest.mark.parametrize("k,n", [(0, 50), (3, 1000), (500, 1000), (1000, 1000)])
def test_clopper_pearson_matches_scipy(k: int, n: int) -> None:
    iv = mean_interval(k / n, 0.0, n, 0.99, "clopper_pearson", (0.0, 1.0))
    ref = binomtest(k, n).proportion_ci(confidence_level=0.99, method="exact")
    assert iv.lo == pytest.approx(ref.low, abs=1e-12)
    assert iv.hi == pytest.approx(ref.high, abs=1e-12)


def test_chernoff_ends_solve_the_kl_equation() -> None:
    m, n, delta = 0.01, 5000, 1e-3
    lo, hi = chernoff_interval(m, n, delta)

    def kl(p: float, q: float) -> float:
        return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))

    c = math.log(2 / delta) / n
    assert 0 < lo < m < hi < 1
    assert kl(m, lo) == pytest.approx(c, rel=1e-9) and kl(m, hi) == pytest.approx(c, rel=1e-9)


def test_scaling_to_the_range_and_rare_event_ends() -> None:
    a = mean_interval(0.25, 0.01, 10_000, 0.999, "bounded", (0.0, 1.0))
    b = mean_interval(1.0, 0.16, 10_000, 0.999, "bounded", (0.0, 4.0))  # the same, times 4
    assert b.lo == pytest.approx(4 * a.lo) and b.hi == pytest.approx(4 * a.hi)
    rare = mean_interval(4e-4, 4 * 4e-4, 30_000, 0.999, "bounded", (0.0, 4.0))
    clt = mean_interval(4e-4, 4 * 4e-4, 30_000, 0.999, "normal")
    assert rare.lo >= 0 > clt.lo and rare.hi > clt.hi


@pytest.mark.parametrize(
    "kw,name",
    [({"method": "bounded", "bounds": None}, "bounds"), ({"bounds": (1.0, 0.0)}, "bounds"),
     ({"bounds": (0.0, 0.1)}, "bounds"), ({"method": "wald"}, "method"), ({"n": 0}, "n"),
     ({"level": 1.0}, "level")],
)
def test_bad_arguments_name_the_parameter(kw: dict, name: str) -> None:
    args = {"mean": 0.5, "var": 0.1, "n": 100, "level": 0.95, "method": "bounded",
            "bounds": (0.0, 1.0)} | kw
    with pytest.raises(ValueError, match=name):
        mean_interval(**args)
