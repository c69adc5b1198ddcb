"""Confidence intervals and multiplicity corrections: the one home of the workbench's statistics
(docs/derivations/intervals.md).

Every statistical verdict of the workbench is decided beyond an :class:`Estimate` from here
(``workbench.core.verdict.decide``), so each interval is named (``Estimate.method``) and carried
into the evidence:

- ``normal``: the CLT interval ``mean +- z s / sqrt(n)``. Asymptotic only; kept where the values
  have no a-priori range (trained models) and the mean is not a rare event.
- ``student_t``: the t interval over ``k`` independent replicates (e.g. per-seed errors):
  :func:`student_t`.
- ``bernstein``: the empirical Bernstein bound of Maurer and Pontil (2009, Thm 4) for values in a
  known range ``[a, b]``; valid for every ``n``.
- ``chernoff``: the Chernoff-Hoeffding KL bound ``n kl(m, mu) <= log(2/delta)`` for values in
  ``[a, b]`` (Hoeffding 1963, Thm 1). Valid for every ``n`` and tight for rare events: its lower
  end is never negative and its upper end is about ``(k + log(1/delta)) / n`` when only ``k``
  samples carry the mass.
- ``bounded``: the intersection of ``bernstein`` and ``chernoff`` at ``delta/2`` each (a union
  bound), the default for bounded values.
- ``clopper_pearson``: the exact binomial interval for 0/1 values.

Every interval lies within the a-priori range of the values when one is known: a mean lies where
its values lie, so cutting an interval to that range never lowers its coverage. A range may be a
half-line (``NONNEGATIVE``, the range of every error ``E||f - A||^2``): it gives no finite-sample
interval of its own, but the ``normal`` and ``student_t`` intervals are cut to it, so an error's
interval never reaches below 0.

Levels, not quantiles, are the currency: :func:`z_value` turns a two-sided level into the normal
quantile, :func:`level_of` goes back, and :func:`bonferroni_level` gives the per-interval level
that makes ``m`` intervals hold jointly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from workbench.core.validation import check_choice, check_float, check_int

INTERVALS: tuple[str, ...] = (
    "normal", "student_t", "bernstein", "chernoff", "bounded", "clopper_pearson", "bootstrap"
)
MEAN_INTERVALS: tuple[str, ...] = ("normal", "bernstein", "chernoff", "bounded", "clopper_pearson")
BOUNDED_INTERVALS: tuple[str, ...] = ("bernstein", "chernoff", "bounded", "clopper_pearson")
NONNEGATIVE: tuple[float, float] = (0.0, math.inf)  # the range of an error E||f - A||^2


@dataclass(frozen=True)
class Estimate:
    """A mean with a two-sided interval ``[lo, hi]`` at ``level``, from ``n`` values whose
    sample standard deviation is ``std``; ``method`` names the interval (``INTERVALS``)."""

    mean: float
    lo: float
    hi: float
    level: float
    n: int
    std: float
    method: str

    @property
    def half_width(self) -> float:
        return (self.hi - self.lo) / 2

    @property
    def stderr(self) -> float:
        """``std / sqrt(n)``: the standard error of the mean."""
        return self.std / math.sqrt(self.n) if self.n > 0 else math.inf

    def covers(self, value: float) -> bool:
        """Whether ``value`` lies in the interval."""
        return self.lo <= value <= self.hi

    def below(self, bound: float) -> bool:
        """Whether the whole interval lies strictly below ``bound`` (a lower bound is
        contradicted)."""
        return self.hi < bound

    def within(self, bounds: tuple[float, float] | None) -> Estimate:
        """This estimate with its interval cut to ``bounds``, the a-priori range of the values
        (``None``: unchanged). The mean lies in that range, so the coverage is unchanged."""
        if bounds is None:
            return self
        lo, hi = max(self.lo, bounds[0]), min(self.hi, bounds[1])
        return Estimate(self.mean, lo, hi, self.level, self.n, self.std, self.method)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def z_value(level: float) -> float:
    """Two-sided normal quantile of an interval at ``level`` (``z_value(0.95) = 1.96``)."""
    from scipy.special import ndtri
    level = check_float("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    return float(ndtri(0.5 + level / 2))  # scipy's norm.ppf, without its per-call dispatch


def level_of(z: float) -> float:
    """The two-sided level of a normal interval ``mean +- z se`` (the inverse of ``z_value``)."""
    from scipy.special import ndtr
    z = check_float("z", z, lo=0.0, lo_open=True)
    return 2 * float(ndtr(z)) - 1


def bonferroni_level(m: int, family: float = 0.999) -> float:
    """Per-interval level so that ``m`` intervals hold jointly with probability >= ``family``."""
    m = check_int("m", m, lo=1)
    family = check_float("family", family, 0.0, 1.0, lo_open=True, hi_open=True)
    return 1.0 - (1.0 - family) / m


def student_t(values: Sequence[float], level: float = 0.99,
              bounds: tuple[float, float] | None = None) -> Estimate:
    """Student-t interval for the mean of ``k`` independent replicates (e.g. per-seed errors),
    cut to ``bounds``, the replicates' a-priori range (``NONNEGATIVE`` for errors).

    One replicate gives no interval: ``lo``, ``hi`` and ``std`` are NaN (never ``holds``).
    """
    from scipy.stats import t as t_dist
    k = len(values)
    if k < 1:
        raise ValueError("values must hold at least one value")
    level = check_float("level", level, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    mean = sum(values) / k
    if k == 1:
        nan = float("nan")
        return Estimate(mean, nan, nan, level, 1, nan, "student_t")
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (k - 1))
    half = float(t_dist.ppf(0.5 + level / 2, k - 1)) * std / math.sqrt(k)
    return Estimate(mean, mean - half, mean + half, level, k, std, "student_t").within(bounds)


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
    from scipy import optimize
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
) -> Estimate:
    """Interval for a mean from its sample ``mean``, unbiased ``var`` and ``n``.

    ``bounds = (a, b)`` is the a-priori range of every value, required finite by every method
    except ``normal``, whose interval is cut to it (a half-line such as ``NONNEGATIVE`` too;
    ``clopper_pearson`` expects 0/1 values: ``var`` is then unused).
    """
    from scipy.stats import beta as beta_dist
    n = check_int("n", n, lo=1)
    level = check_float("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    method = check_choice("method", method, MEAN_INTERVALS)
    delta = 1 - level
    std = math.sqrt(max(var, 0.0))
    if method == "normal":
        z = z_value(level)
        half = z * math.sqrt(max(var, 0.0) / n) if n > 1 else math.inf
        return Estimate(mean, mean - half, mean + half, level, n, std, method).within(bounds)
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
    return Estimate(mean, a + R * lo01, a + R * hi01, level, n, std, method)
