"""Confidence intervals for Monte Carlo means (docs/derivations/intervals.md).

Every statistical verdict of the workbench is decided beyond one of these intervals, so each is
named (``Interval.method``) and carried into the evidence:

- ``normal``: the CLT interval ``mean +- z s / sqrt(n)``. Asymptotic only; kept where the values
  have no a-priori range (trained models) and the mean is not a rare event.
- ``bernstein``: the empirical Bernstein bound of Maurer and Pontil (2009, Thm 4) for values in a
  known range ``[a, b]``; valid for every ``n``.
- ``chernoff``: the Chernoff-Hoeffding KL bound ``n kl(m, mu) <= log(2/delta)`` for values in
  ``[a, b]`` (Hoeffding 1963, Thm 1). Valid for every ``n`` and tight for rare events: its lower
  end is never negative and its upper end is about ``(k + log(1/delta)) / n`` when only ``k``
  samples carry the mass.
- ``bounded``: the intersection of ``bernstein`` and ``chernoff`` at ``delta/2`` each (a union
  bound), the default for bounded values.
- ``clopper_pearson``: the exact binomial interval for 0/1 values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import optimize
from scipy.stats import beta as beta_dist
from scipy.stats import norm

from workbench.core.validation import check_choice, check_float, check_int

INTERVALS: tuple[str, ...] = ("normal", "bernstein", "chernoff", "bounded", "clopper_pearson")


@dataclass(frozen=True)
class Interval:
    """A two-sided interval ``[lo, hi]`` for a mean, at ``level``, by ``method``."""

    mean: float
    lo: float
    hi: float
    level: float
    method: str

    @property
    def half_width(self) -> float:
        return (self.hi - self.lo) / 2


def _kl(p: float, q: float) -> float:
    """Bernoulli KL divergence ``kl(p || q)`` with ``0 log 0 = 0``."""
    out = 0.0
    if p > 0:
        out += p * math.log(p / q)
    if p < 1:
        out += (1 - p) * math.log((1 - p) / (1 - q))
    return out


def chernoff_interval(m: float, n: int, delta: float) -> tuple[float, float]:
    """``{mu in [0, 1] : n kl(m, mu) <= log(2/delta)}`` for a mean ``m`` of ``[0, 1]`` values."""
    c = math.log(2 / delta) / n
    m = min(1.0, max(0.0, m))
    lo = 0.0 if m <= 0 or _kl(m, 0.0 + 1e-300) <= c else optimize.brentq(
        lambda q: _kl(m, q) - c, 1e-300, m, xtol=1e-300, rtol=1e-12
    )
    hi = 1.0 if m >= 1 or _kl(m, 1 - 1e-16) <= c else optimize.brentq(
        lambda q: _kl(m, q) - c, m, 1 - 1e-16, xtol=1e-300, rtol=1e-12
    )
    return float(lo), float(hi)


def bernstein_half_width(var: float, n: int, delta: float) -> float:
    """Maurer-Pontil half-width for ``[0, 1]`` values, two-sided at total ``delta``."""
    if n < 2:
        return math.inf
    L = math.log(4 / delta)
    return math.sqrt(2 * max(var, 0.0) * L / n) + 7 * L / (3 * (n - 1))


def mean_interval(
    mean: float,
    var: float,
    n: int,
    level: float,
    method: str = "bounded",
    bounds: tuple[float, float] | None = None,
) -> Interval:
    """Interval for a mean from its sample ``mean``, unbiased ``var`` and ``n``.

    ``bounds = (a, b)`` is the a-priori range of every value, required by every method except
    ``normal`` (``clopper_pearson`` expects 0/1 values: ``var`` is then unused).
    """
    n = check_int("n", n, lo=1)
    level = check_float("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    method = check_choice("method", method, INTERVALS)
    delta = 1 - level
    if method == "normal":
        z = float(norm.ppf(0.5 + level / 2))
        half = z * math.sqrt(max(var, 0.0) / n) if n > 1 else math.inf
        return Interval(mean, mean - half, mean + half, level, method)
    if bounds is None:
        raise ValueError(f"bounds must be given (a, b) for the {method!r} interval (got None)")
    a, b = float(bounds[0]), float(bounds[1])
    if not (math.isfinite(a) and math.isfinite(b) and a < b):
        raise ValueError(f"bounds must be finite with a < b (got {bounds})")
    R = b - a
    m01 = (mean - a) / R
    if not -1e-12 <= m01 <= 1 + 1e-12:
        raise ValueError(f"bounds {bounds} must contain the sample mean (got {mean})")
    if method == "clopper_pearson":
        k = round(m01 * n)
        lo01 = 0.0 if k == 0 else float(beta_dist.ppf(delta / 2, k, n - k + 1))
        hi01 = 1.0 if k == n else float(beta_dist.ppf(1 - delta / 2, k + 1, n - k))
    else:
        split = 2 if method == "bounded" else 1
        lo01, hi01 = 0.0, 1.0
        if method in ("bernstein", "bounded"):
            h = bernstein_half_width(var / R**2, n, delta / split)
            lo01, hi01 = max(lo01, m01 - h), min(hi01, m01 + h)
        if method in ("chernoff", "bounded"):
            c_lo, c_hi = chernoff_interval(m01, n, delta / split)
            lo01, hi01 = max(lo01, c_lo), min(hi01, c_hi)
    lo01, hi01 = min(lo01, m01), max(hi01, m01)  # the interval always contains the mean
    return Interval(mean, a + R * lo01, a + R * hi01, level, method)
