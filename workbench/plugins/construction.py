"""The type of a construction (docs/extending.md): explicit weights with the error they claim,
and the declared ranges of its numeric parameters. Registered in ``workbench.plugins``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.core.validation import INT64_MAX
from workbench.plugins.contract import LAWS, PluginFailed, call_user, check_name


@dataclass(frozen=True)
class ParamRange:
    """The values a construction's numeric parameter may take: ``lo..hi`` (either end ``None``:
    unbounded; ``lo_open``/``hi_open``: the end excluded, for a float). An integer parameter
    without a declared range lies in ``-INT64_MAX..INT64_MAX``; a float one is always finite."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False

    def check(self, name: str, value: Any, default: Any) -> Any:
        """``value`` (of the type of ``default``) in range, or ``ValueError`` naming ``name``
        and the range."""
        from workbench.core.validation import check_float, check_int

        if isinstance(default, bool) or not isinstance(default, int | float):
            return value
        if isinstance(default, int):
            return check_int(name, value, *self._int_ends())
        return check_float(name, value, self.lo, self.hi, lo_open=self.lo_open,
                           hi_open=self.hi_open)

    def _int_ends(self) -> tuple[int, int]:
        lo = -INT64_MAX if self.lo is None else int(self.lo) + (1 if self.lo_open else 0)
        hi = INT64_MAX if self.hi is None else int(self.hi) - (1 if self.hi_open else 0)
        return lo, hi

    def text(self, default: Any) -> str:
        """The range in words: ``an integer in 0..100000``, ``a finite number in (0, 1)``."""
        from workbench.core.validation import float_range_words, int_range_words

        if isinstance(default, int):
            return int_range_words(*self._int_ends())
        return float_range_words(self.lo, self.hi, lo_open=self.lo_open, hi_open=self.hi_open)


@dataclass(frozen=True)
class Construction:
    """Explicit weights with the error they claim: ``fn(d, rank, heads, N, seed, **params)`` returns
    ``(model, claimed)`` (the contract in ``workbench.plugins``), or ``(model, claimed, target)``
    when the target is not ``target``'s named function. ``params`` holds the defaults of the extra
    parameters (their types come from the defaults); ``target``, ``law`` and ``queries`` say what
    it is measured on; ``ensemble`` that the claim averages over the construction's random draw
    (so seeds are pooled, Student-t, before the verdict); ``defaults`` the ``(d, rank, heads,
    N)`` a command uses when none is given. ``memory(d, rank, heads, N, **params)``, when given,
    estimates the memory a build needs without building (a byte count, or a list of
    ``workbench.verifiers.resources.Term``): ``workbench construct`` and ``run_construction``
    refuse a size that cannot fit before any work; without it, every size is attempted."""

    name: str
    fn: Callable[..., tuple[Any, Any]]
    params: Mapping[str, Any] = field(default_factory=dict)
    target: str = "nearest"
    law: str = "orthonormal"
    queries: str = "uniform"
    ensemble: bool = False
    defaults: Mapping[str, int] = field(default_factory=lambda: {"d": 8, "rank": 1, "heads": 16,
                                                                 "N": 2})
    memory: Callable[..., Any] | None = None
    ranges: Mapping[str, ParamRange] = field(default_factory=dict)
    description: str = ""
    ref: str = ""
    source: str = "workbench"
    spec: str = ""

    def __post_init__(self) -> None:
        check_name("construction", self.name)
        unknown = sorted(set(self.ranges) - set(self.params))
        if unknown:
            raise ValueError(f"ranges must name parameters of the construction (got "
                             f"{', '.join(unknown)}; its parameters: {sorted(self.params)})")
        if self.law not in LAWS[:2]:
            raise ValueError(f"law must be one of {LAWS[:2]} (got {self.law!r})")
        if self.memory is not None and not callable(self.memory):
            raise TypeError(f"memory must be a function (got {type(self.memory).__name__})")

    def param_range(self, name: str) -> ParamRange:
        """The declared range of the parameter ``name`` (unbounded if none is declared)."""
        return self.ranges.get(name, ParamRange())

    def check_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` checked against the declared ranges (``ParamRange``), each named
        ``param NAME`` in an error; a name the construction does not take is an error."""
        out = {}
        for k, v in params.items():
            if k not in self.params:
                raise ValueError(f"param must be one of {sorted(self.params)} (got {k!r})")
            out[k] = self.param_range(k).check(f"param {k}", v, self.params[k])
        return out

    def build(self, d: int, rank: int, heads: int, N: int, seed: int,
              **params: Any) -> tuple[Any, ...]:
        """``fn(d, rank, heads, N, seed, **params)``. A user's construction that raises or
        exits, or returns anything but ``(model, claimed)`` or ``(model, claimed, target)``, is
        a :class:`PluginFailed`."""
        if self.source == "workbench":
            return self.fn(d, rank, heads, N, seed, **params)
        who = ("construction", self.spec or self.name)
        out = call_user(who, self.fn, d, rank, heads, N, seed, **params)
        if not (isinstance(out, tuple) and len(out) in (2, 3)):
            raise PluginFailed(who, f"returned {type(out).__name__} at {(d, rank, heads, N)}, "
                               "not (model, claimed) or (model, claimed, target)")
        return out

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "params": dict(self.params), "target": self.target,
                "law": self.law, "queries": self.queries, "ensemble": self.ensemble,
                "defaults": dict(self.defaults), "memory_estimate": self.memory is not None,
                "source": self.source, "description": self.description,
                "spec": self.spec or self.name}

