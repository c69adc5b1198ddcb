"""``Claim`` and ``Evidence``: the unit of the workbench (docs/architecture.md, Claims).

A piece of evidence compares a measured ``value`` (with its interval ``ci``) with a ``bound``
(a number, or an interval ``bound_ci`` when the bound was estimated too) through a
``relation``. Its verdict is ``workbench.core.verdict.decide``, the one verdict rule: beyond both
intervals, widened by the stated tolerance, else ``inconclusive``. An equality with a
statistical interval must state the ``resolution`` it is meant to resolve.

The common shapes have constructors: :meth:`Evidence.identity` (a residual that must vanish up
to a tolerance) and :meth:`Evidence.estimate` (an ``Estimate`` against a bound, or against
another ``Estimate``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from workbench.core.intervals import INTERVALS as STATISTICAL_INTERVALS
from workbench.core.intervals import Estimate
from workbench.core.verdict import RELATIONS, decide, percent

METHODS: tuple[str, ...] = ("exact", "interval", "identity", "monte_carlo", "trained", "solved")
KINDS: tuple[str, ...] = ("fact", "lemma", "theorem", "remark", "conjecture", "experiment")
VERDICTS: tuple[str, ...] = (
    "holds", "violated", "inconclusive", "unsupported", "skipped", "error",  # error: it raised
)
MARKS: tuple[str, ...] = ("paper", "ours", "reading")  # docs/paper.md: how sure we are
INTERVALS: tuple[str, ...] = (
    *STATISTICAL_INTERVALS,  # workbench.core.intervals
    "hoeffding",  # Hoeffding, values in a known range
    "enclosure",  # rigorous interval arithmetic
    "quadrature",  # deterministic quadrature: the gap between two orders, padded (not rigorous)
    "ols",  # least-squares misfit interval of a deterministic fit
)
T = TypeVar("T")


@dataclass
class Evidence:
    """One comparison of a measurement with a bound.

    ``relation`` states what the claim asserts: ``value <= bound``, ``value >= bound`` or
    ``value == bound``. ``ci`` is the confidence interval of ``value`` (``None`` for exact
    values) at ``ci_level`` (1 for a rigorous enclosure); ``bound_ci`` and ``bound_ci_level`` the
    same for the bound, when it was estimated. ``tolerance`` absorbs floating-point error of
    deterministic computations. ``interval`` names how ``ci`` was obtained (one of
    ``INTERVALS``); ``resolution`` is what an ``==`` claim with a statistical CI must resolve.
    ``label`` names the value when its method alone would mislead (``"difference of errors"``).
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
    bound_ci: tuple[float, float] | None = None
    bound_ci_level: float | None = None
    label: str = ""

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS} (got {self.relation!r})")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS} (got {self.method!r})")
        for name in ("ci", "bound_ci"):
            iv = getattr(self, name)
            if iv is not None:
                lo, hi = float(iv[0]), float(iv[1])
                if not lo <= hi:
                    raise ValueError(f"{name} must satisfy lo <= hi (got {iv})")
                setattr(self, name, (lo, hi))
        if not self.tolerance >= 0:
            raise ValueError(f"tolerance must be >= 0 (got {self.tolerance})")
        if self.interval is not None and self.interval not in INTERVALS:
            raise ValueError(f"interval must be one of {INTERVALS} (got {self.interval!r})")
        if self.resolution is not None and not self.resolution > 0:
            raise ValueError(f"resolution must be > 0 (got {self.resolution})")

    @classmethod
    def identity(
        cls, residual: float, params: dict[str, Any] | None = None, tolerance: float = 0.0,
        note: str = "",
    ) -> Evidence:
        """A residual of an identity that must vanish: ``residual <= tolerance``."""
        return cls(float(residual), 0.0, "<=", "identity", dict(params or {}),
                   tolerance=tolerance, note=note)

    @classmethod
    def estimate(
        cls,
        est: Estimate,
        relation: str,
        bound: float | Estimate,
        method: str = "monte_carlo",
        params: dict[str, Any] | None = None,
        *,
        resolution: float | None = None,
        tolerance: float = 0.0,
        note: str = "",
        label: str = "",
    ) -> Evidence:
        """An estimate against a bound. A bound that is itself an ``Estimate`` keeps its
        interval, so two uncertain quantities are compared beyond both intervals."""
        ev = cls(est.mean, 0.0, relation, method, dict(params or {}), ci=(est.lo, est.hi),
                 ci_level=est.level, tolerance=tolerance, note=note, interval=est.method,
                 resolution=resolution, label=label)
        if isinstance(bound, Estimate):
            ev.bound, ev.bound_ci, ev.bound_ci_level = bound.mean, (bound.lo, bound.hi), bound.level
        else:
            ev.bound = float(bound)
        return ev

    @property
    def verdict(self) -> str:
        """``holds``, ``violated`` or ``inconclusive``: ``workbench.core.verdict.decide``."""
        lo, hi = self.ci if self.ci is not None else (self.value, self.value)
        bound = self.bound_ci if self.bound_ci is not None else float(self.bound)
        statistical = (self.ci is not None and _statistical(self.ci_level)) or (
            self.bound_ci is not None and _statistical(self.bound_ci_level))
        return decide(lo, hi, self.relation, bound, self.tolerance, self.resolution,
                      statistical=statistical)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = self.verdict
        return d

    def describe(self) -> str:
        """One line for people: ``trained 0.224 >= bound 0.102 (x2.2)``, or what was violated."""
        return describe_evidence(self.to_dict())


def _statistical(level: float | None) -> bool:
    """An interval of unstated level, or of level below 1, is statistical (not rigorous)."""
    return level is None or level < 1


_VALUE_LABEL = {"monte_carlo": "measured", "identity": "residual"}
_SYMBOL = {"<=": "≤", ">=": "≥", "==": "="}
_STRICT = {"<=": "<", ">=": ">"}
_WORST_FIRST = {"violated": 0, "inconclusive": 1, "unsupported": 2, "skipped": 3, "holds": 4}


def _g(x: Any) -> str:
    return "nan" if x is None else f"{float(x):.4g}"


def key_evidence(evidence: list[dict[str, Any]], statement: str = "") -> dict[str, Any] | None:
    """The one key-row rule of ``check``, its store and ``report``: the row closest to failing
    (worst verdict first, then the smallest ratio margin, then the first), as ``{"index",
    "text"}`` with ``text`` from :func:`evidence_row` (``statement``: the claim's); None when
    there is no evidence."""
    if not evidence:
        return None

    def rank(i: int) -> tuple[int, float, int]:
        e = evidence[i]
        rel, (v, b) = e["relation"], _stated_bound(e["value"], e["bound"], e["relation"])[:2]
        ratio = math.inf
        if rel != "==" and _finite(v) and _finite(b) and v > 0 and b > 0:
            ratio = v / b if rel == ">=" else b / v
        return (_WORST_FIRST.get(e["verdict"], 1), ratio, i)

    k = min(range(len(evidence)), key=rank)
    return {"index": k, "text": evidence_row(evidence[k], statement)}


def measured_what(e: dict[str, Any], statement: str = "") -> str:
    """What a row measured and against what, in words: its ``note`` (the evidence's own
    description), else ``statement``, the claim's statement or title (what every row of the
    claim checks, at the row's parameters), else its ``label``; empty only when the row and its
    claim say nothing."""
    if e.get("note"):
        return str(e["note"])
    if statement:
        return f"checks {statement}"
    return str(e.get("label") or "")


def _param_text(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list | tuple | dict) and len(repr(v)) > 40:
        return f"[{len(v)} values]"
    return str(v)


def evidence_row(e: dict[str, Any], statement: str = "") -> str:
    """One row as ``check`` and ``report`` print it, explaining itself: the comparison and its
    margin (:func:`describe_evidence`), what was measured against what (:func:`measured_what`)
    and the parameters it was measured at."""
    what = measured_what(e, statement)
    params = ", ".join(f"{k}={_param_text(v)}" for k, v in (e.get("params") or {}).items())
    return describe_evidence(e) + (f" — {what}" if what else "") + (
        f" ({params})" if params else "")


def _finite(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _stated_bound(v: Any, b: Any, rel: str) -> tuple[Any, Any, str]:
    """``(value, bound, symbol)`` as the claim states it: the relation as written, except that
    ``>= math.ulp(0.0)`` (``<= -math.ulp(0.0)``), the one way to write ``> 0`` (``< 0``), reads
    so. A bound that merely lies one ulp past a shorter number (``0.1 + 0.31``) keeps its
    relation."""
    if rel in _STRICT and _finite(b) and b != 0:
        if math.nextafter(float(b), -math.inf if rel == ">=" else math.inf) == 0:
            return v, 0.0, _STRICT[rel]
    return v, b, _SYMBOL[rel]


def describe_evidence(e: dict[str, Any]) -> str:
    """Render an ``Evidence.to_dict()`` (or a JSON copy of one) as one sentence, with the margin.

    ``holds``: ``measured 0.0188 [0.0172, 0.0204] ≤ bound 0.1 (×5.3)``; a strict bound reads
    ``> 0``. ``violated``: says what the claim asserts and how the measurement contradicts it
    beyond its interval. The value is named by ``label`` when the row has one.
    """
    label = e.get("label") or _VALUE_LABEL.get(e["method"], e["method"])
    ci = e.get("ci")
    lvl = e.get("ci_level")
    ci_s = f" [{_g(ci[0])}, {_g(ci[1])}]" if ci else ""
    if ci and lvl:
        kind = "quadrature" if e.get("interval") == "quadrature" else "enclosure"
        ci_s += f" ({percent(float(lvl))} CI)" if float(lvl) < 1 else f" ({kind})"
    rel = e["relation"]
    v, b, sym = _stated_bound(e["value"], e["bound"], rel)
    bci = e.get("bound_ci")
    b_s = _g(b) + (f" [{_g(bci[0])}, {_g(bci[1])}]" if bci else "")  # an estimated bound
    verdict = e.get("verdict", "")
    tol = float(e.get("tolerance") or 0.0)
    tol_s = f", tolerance {tol:.1g}" if tol else ""
    if verdict == "violated":
        if rel == "==":
            return f"VIOLATED: the claim needs value = {b_s}; {label} {_g(v)}{ci_s} excludes it"
        side = "above" if rel == "<=" else "below"
        return (f"VIOLATED: the claim needs value {sym} {b_s}; {label} {_g(v)}{ci_s} lies "
                f"entirely {side} it{tol_s}")
    if verdict == "inconclusive":
        return (f"inconclusive: {label} {_g(v)}{ci_s} vs claimed {sym} {b_s}: the interval "
                f"straddles the bound{tol_s}")
    what = "" if e["method"] == "identity" or b == 0 else "bound "
    margin = _margin(v, b, rel)
    if margin == _WITHIN:
        margin, tol_s = f" (within tolerance {tol:.1g})", ""
    return f"{label} {_g(v)}{ci_s} {sym} {what}{b_s}{margin}{tol_s}"


_WITHIN = " (within the tolerance)"


def _margin(v: Any, b: Any, rel: str) -> str:
    """The margin as a ratio (``×5.3``), or as a difference where a ratio means nothing (a
    zero bound: the value itself is the margin, so none is printed)."""
    try:
        v, b = float(v), float(b)
    except (TypeError, ValueError):
        return ""
    if rel == "==" or not (math.isfinite(v) and math.isfinite(b)):
        return ""
    big, small = (v, b) if rel == ">=" else (b, v)
    if big < small:
        return _WITHIN
    if b == 0:
        return ""
    if small > 0 and math.isfinite(big / small) and big / small >= 1.01:
        return f" (×{big / small:.3g})"
    return f" (margin {big - small:.2g})" if big != small else ""


@dataclass(frozen=True)
class CheckContext:
    """What a check may depend on: the scale, the seed and the torch device."""

    scale: str = "quick"
    seed: int = 0
    device: str = "cpu"

    @property
    def quick(self) -> bool:
        return self.scale == "quick"

    def pick(self, quick: T, full: T) -> T:
        """``quick`` at quick scale, ``full`` otherwise: one place for every size a check picks."""
        return quick if self.quick else full


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
    ref: str = ""  # an anchor in docs/, "paper.md#theorem-2-rank-separation" (provenance)
    mark: str = ""  # how sure we are of the statement: one of MARKS
    module: str = ""  # the module that registered it (built-in: workbench.proofs.paper...)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS} (got {self.kind!r})")
        if self.mark and self.mark not in MARKS:
            raise ValueError(f"mark must be one of {MARKS} (got {self.mark!r})")


REGISTRY: dict[str, Claim] = {}  # every registered claim by id (workbench.proofs.registry.claim)


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
