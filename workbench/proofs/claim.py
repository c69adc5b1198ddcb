"""``Claim`` and ``Evidence``: the unit of the workbench (docs/architecture.md, Claims).

A piece of evidence compares a measured ``value`` with a ``bound`` through a ``relation``. Its
verdict is decided beyond the confidence interval: ``holds`` when the whole CI (widened by the
stated tolerance) satisfies the relation, ``violated`` when the whole CI contradicts it, and
``inconclusive`` when the CI straddles the bound.

An equality (``==``) with a statistical CI (``ci_level < 1``) must state its ``resolution``: the
smallest departure from ``bound`` it is meant to detect. When the CI's half-width exceeds the
resolution (or none is stated) the verdict is ``inconclusive``: a wide interval cannot confirm an
equality. Rigorous enclosures (``ci_level == 1``) and exact values need none.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

RELATIONS: tuple[str, ...] = ("<=", ">=", "==")
METHODS: tuple[str, ...] = ("exact", "interval", "identity", "monte_carlo", "trained", "solved")
KINDS: tuple[str, ...] = ("fact", "lemma", "theorem", "remark", "conjecture", "experiment")
VERDICTS: tuple[str, ...] = ("holds", "violated", "inconclusive", "unsupported", "skipped")
INTERVALS: tuple[str, ...] = (
    "normal",  # CLT, asymptotic
    "student_t",  # t interval over independent replicates
    "bernstein",  # empirical Bernstein, values in a known range
    "hoeffding",  # Hoeffding, values in a known range
    "chernoff",  # Chernoff-Hoeffding KL bound, values in a known range
    "bounded",  # bernstein and chernoff intersected (workbench.core.intervals)
    "clopper_pearson",  # exact binomial, 0/1 values
    "bootstrap",  # percentile bootstrap
    "enclosure",  # rigorous interval arithmetic
    "quadrature",  # deterministic quadrature: the gap between two orders, padded (not rigorous)
    "ols",  # least-squares misfit interval of a deterministic fit
)


@dataclass
class Evidence:
    """One comparison of a measurement with a bound.

    ``relation`` states what the claim asserts: ``value <= bound``, ``value >= bound`` or
    ``value == bound``. ``ci`` is the confidence interval of ``value`` (``None`` for exact
    values); ``tolerance`` absorbs floating-point error of deterministic computations.
    ``interval`` names how ``ci`` was obtained (one of ``INTERVALS``); ``resolution`` is what an
    ``==`` claim with a statistical CI must resolve (see the module note).
    """

    value: float
    bound: float
    relation: str
    method: str
    params: dict[str, Any] = field(default_factory=dict)
    ci: tuple[float, float] | None = None
    ci_level: float | None = None
    tolerance: float = 0.0
    seconds: float = 0.0
    note: str = ""
    interval: str | None = None
    resolution: float | None = None

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS} (got {self.relation!r})")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS} (got {self.method!r})")
        if self.ci is not None:
            lo, hi = float(self.ci[0]), float(self.ci[1])
            if not lo <= hi:
                raise ValueError(f"ci must satisfy lo <= hi (got {self.ci})")
            self.ci = (lo, hi)
        if not self.tolerance >= 0:
            raise ValueError(f"tolerance must be >= 0 (got {self.tolerance})")
        if self.interval is not None and self.interval not in INTERVALS:
            raise ValueError(f"interval must be one of {INTERVALS} (got {self.interval!r})")
        if self.resolution is not None and not self.resolution > 0:
            raise ValueError(f"resolution must be > 0 (got {self.resolution})")

    @property
    def verdict(self) -> str:
        """``holds``, ``violated`` or ``inconclusive``, decided beyond the CI."""
        lo, hi = self.ci if self.ci is not None else (self.value, self.value)
        b, tol = float(self.bound), self.tolerance
        if any(math.isnan(v) for v in (lo, hi, b)):
            return "inconclusive"
        if self.relation == "<=":
            return "holds" if hi <= b + tol else "violated" if lo > b + tol else "inconclusive"
        if self.relation == ">=":
            return "holds" if lo >= b - tol else "violated" if hi < b - tol else "inconclusive"
        if not lo - tol <= b <= hi + tol:
            return "violated"  # refuted beyond the interval, however wide it is
        if self.ci is not None and (self.ci_level is None or self.ci_level < 1):
            if self.resolution is None or (hi - lo) / 2 > self.resolution:
                return "inconclusive"  # too wide to confirm equality at the stated resolution
        return "holds"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = self.verdict
        return d

    def describe(self) -> str:
        """One line for people: ``trained 0.224 >= bound 0.102 (x2.2)``, or what was violated."""
        return describe_evidence(self.to_dict())


_VALUE_LABEL = {"monte_carlo": "measured", "identity": "residual"}
_SYMBOL = {"<=": "≤", ">=": "≥", "==": "="}


def _g(x: Any) -> str:
    return "nan" if x is None else f"{float(x):.4g}"


def describe_evidence(e: dict[str, Any]) -> str:
    """Render an ``Evidence.to_dict()`` (or a JSON copy of one) as one line, with the margin.

    ``holds``: ``measured 0.0188 [0.0172, 0.0204] ≤ bound 0.1 (×5.3)``. ``violated``: says what
    the claim asserts and how the measurement contradicts it beyond its interval.
    """
    label = _VALUE_LABEL.get(e["method"], e["method"])
    ci = e.get("ci")
    lvl = e.get("ci_level")
    ci_s = f" [{_g(ci[0])}, {_g(ci[1])}]" if ci else ""
    if ci and lvl:
        kind = "quadrature" if e.get("interval") == "quadrature" else "enclosure"
        ci_s += f" ({_percent(float(lvl))} CI)" if float(lvl) < 1 else f" ({kind})"
    v, b, rel = e["value"], e["bound"], e["relation"]
    sym = _SYMBOL[rel]
    verdict = e.get("verdict", "")
    tol = float(e.get("tolerance") or 0.0)
    tol_s = f", tolerance {tol:.1g}" if tol else ""
    if verdict == "violated":
        if rel == "==":
            return f"VIOLATED: the claim needs value = {_g(b)}; {label} {_g(v)}{ci_s} excludes it"
        side = "above" if rel == "<=" else "below"
        return (f"VIOLATED: the claim needs value {sym} {_g(b)}; {label} {_g(v)}{ci_s} lies "
                f"entirely {side} it{tol_s}")
    if verdict == "inconclusive":
        return (f"inconclusive: {label} {_g(v)}{ci_s} vs claimed {sym} {_g(b)}: the interval "
                f"straddles the bound{tol_s}")
    what = "" if e["method"] == "identity" else "bound "
    margin = _margin(v, b, rel)
    if margin == _WITHIN:
        margin, tol_s = f" (within tolerance {tol:.1g})", ""
    return f"{label} {_g(v)}{ci_s} {sym} {what}{_g(b)}{margin}{tol_s}"


_WITHIN = " (within the tolerance)"


def _percent(level: float) -> str:
    """``95%``, ``99.9%``, ``99.998%``: enough decimals to tell the level from 100 %."""
    decimals = max(0, math.ceil(-math.log10(1 - level)) - 2) if level < 1 else 0
    return f"{level * 100:.{decimals}f}%"


def _margin(v: Any, b: Any, rel: str) -> str:
    try:
        v, b = float(v), float(b)
    except (TypeError, ValueError):
        return ""
    if rel == "==" or not (math.isfinite(v) and math.isfinite(b)):
        return ""
    big, small = (v, b) if rel == ">=" else (b, v)
    if big < small:
        return _WITHIN
    if small > 0 and big / small >= 1.01:
        return f" (×{big / small:.3g})"
    return f" (margin {big - small:.2g})" if big != small else ""


@dataclass(frozen=True)
class CheckContext:
    """What a check may depend on: the scale, the seed and the torch device."""

    scale: str = "quick"
    seed: int = 0
    device: str = "cpu"


CheckFn = Callable[[CheckContext], list[Evidence]]


@dataclass
class Claim:
    """A statement of the paper (or a lemma of ours) with the checks that test it."""

    id: str
    title: str
    kind: str
    check: CheckFn
    depends_on: tuple[str, ...] = ()
    statement: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS} (got {self.kind!r})")


def combine(evidence: list[Evidence], kind: str) -> str:
    """A claim's verdict from its evidence. A conjecture is never ``holds``: at best evidence."""
    if not evidence:
        return "inconclusive"
    verdicts = {e.verdict for e in evidence}
    if "violated" in verdicts:
        return "violated"
    if verdicts == {"holds"}:
        return "inconclusive" if kind == "conjecture" else "holds"
    return "inconclusive"
