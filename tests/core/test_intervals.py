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


def test_a_half_line_range_cuts_the_clt_and_t_intervals_and_nothing_else() -> None:
    """``NONNEGATIVE`` (the range of an error): the normal and Student-t intervals of a mean near
    0 stop at 0 (their upper ends unchanged); the streamed estimator takes it as ``normal``; a
    distribution-free method needs a finite range."""
    import torch

    from workbench.core.intervals import NONNEGATIVE, mean_interval, student_t
    from workbench.core.montecarlo import estimate_mean, sample_mean

    raw = mean_interval(0.01, 0.04, 50, 0.99, "normal")
    cut = mean_interval(0.01, 0.04, 50, 0.99, "normal", NONNEGATIVE)
    assert raw.lo < 0 and cut.lo == 0.0 and cut.hi == raw.hi and cut.mean == raw.mean
    t_raw, t_cut = student_t([0.0, 0.0, 0.05], 0.99), student_t([0.0, 0.0, 0.05], 0.99,
                                                                NONNEGATIVE)
    assert t_raw.lo < 0 and t_cut.lo == 0.0 and t_cut.hi == t_raw.hi
    values = (torch.arange(400) % 100 == 0).double()  # a rare event: mean 0.01
    (est,) = estimate_mean(lambda b, g: values[:b], samples=400, batch=400, level=0.999,
                           bounds=NONNEGATIVE)
    assert est.method == "normal" and est.lo == 0.0 and math.isfinite(est.hi)
    assert sample_mean(values, 0.999, bounds=NONNEGATIVE).lo == 0.0
    with pytest.raises(ValueError, match="bounds"):
        sample_mean(values, 0.999, "bounded", NONNEGATIVE)
    with pytest.raises(ValueError, match="bounds"):
        estimate_mean(lambda b, g: -values[:b], samples=400, batch=400, bounds=NONNEGATIVE)
