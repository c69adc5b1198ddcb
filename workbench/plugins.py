"""Bounds, constructions and presets: first-class objects, one type and one registry each
(docs/extending.md). Claims have theirs in ``workbench.proofs.registry``.

Every command takes these objects by name. A name is a registered one (``certified``,
``random-features``, ``fig2``), or ``module:attr`` naming a ``Bound``, ``Construction`` or
``Preset`` object, or a plain function with the minimal contract:

- bound: ``f(d, rank, heads, N) -> float``, a lower (or upper) bound on the error
  ``E||f - A||^2``;
- construction: ``f(d, rank, heads, N, seed, **params) -> (model, claimed)``, where ``model(X
  (b, N, d), y (b, d)) -> (b, d)`` (a plain ``torch.nn.Module`` qualifies) and ``claimed`` is the
  error it claims: a number (an upper bound the model must reach), an ``Estimate``, or a
  ``workbench.constructions.ClaimedError``;
- preset: a ``workbench.verifiers.presets.Preset`` (a sweep design).

Packages register theirs under the entry-point groups ``workbench.bounds``,
``workbench.constructions`` and ``workbench.presets``: each entry point names an object (or a
plain function, registered under the entry point's name), or a module that registers its
objects when imported. An entry point that fails to load is reported by name in
``LOAD_ERRORS`` and the rest still loads. The built-in objects register through the same
functions. Nothing here imports torch until an object is used.
"""

from __future__ import annotations

import importlib
import inspect
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from importlib.metadata import entry_points
from typing import Any, TypeVar

KINDS = ("bound", "construction", "preset")
SIDES = ("lower", "upper")
STATUSES = ("certified", "conjectured")
LAWS = ("orthonormal", "iid", "any")
LOAD_ERRORS: dict[str, str] = {}  # "group:entry point" -> why it could not be loaded
T = TypeVar("T")

DomainFn = Callable[[int, int, int, int], "str | None"]


@dataclass(frozen=True)
class Bound:
    """A bound on the error ``E||f - A||^2`` of a model class, as a function of
    ``(d, rank, heads, N)``.

    ``side`` says which side it bounds, ``status`` whether it is proved (``certified``) or
    ``conjectured``, ``rigorous`` whether its ``enclosure`` is a proved one (a plug-in's
    conjecture or a quadrature is not); ``target``, ``law`` (of the keys), ``value_class``
    (the models it covers) and ``N`` (the sequence lengths it covers; ``None``: every N) say
    where it applies, and ``domain(d, rank, heads, N)`` may name any further point it does not
    cover. ``enclosure`` returns an interval around the value where one exists (proved only
    where ``rigorous``); ``encoding`` is the id of its sympy encoding
    (``workbench.core.symbolic``). ``spec`` is how a command names it again (the registered
    name, or ``module:attr``), so that a replay re-imports the same bound.
    """

    name: str
    fn: Callable[[int, int, int, int], float]
    side: str = "lower"
    status: str = "certified"
    target: str = "nearest"
    law: str = "orthonormal"
    value_class: str = "eq2"
    N: tuple[int, ...] | None = (2,)
    domain: DomainFn | None = None
    enclosure: Callable[[int, int, int, int], tuple[float, float]] | None = None
    rigorous: bool = False
    encoding: str | None = None
    description: str = ""
    ref: str = ""
    source: str = "workbench"
    spec: str = ""

    def __post_init__(self) -> None:
        _check_name("bound", self.name)
        if self.side not in SIDES:
            raise ValueError(f"side must be one of {SIDES} (got {self.side!r})")
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES} (got {self.status!r})")
        if self.law not in LAWS:
            raise ValueError(f"law must be one of {LAWS} (got {self.law!r})")

    def outside(self, d: int, rank: int, heads: int, N: int) -> str | None:
        """Why ``(d, rank, heads, N)`` is outside what the bound covers, or ``None``."""
        if not (d >= 2 and 1 <= rank <= d and heads >= 1 and N >= 1):
            return f"needs d >= 2, rank in 1..d, heads >= 1, N >= 1 (got {(d, rank, heads, N)})"
        if self.N is not None and N not in self.N:
            return f"covers N in {list(self.N)} only (got N = {N})"
        return self.domain(d, rank, heads, N) if self.domain is not None else None

    def __call__(self, d: int, rank: int, heads: int, N: int = 2) -> float:
        why = self.outside(d, rank, heads, N)
        if why is not None:
            raise ValueError(f"bound {self.name!r} {why}")
        return float(self.fn(d, rank, heads, N))

    def interval(self, d: int, rank: int, heads: int, N: int = 2) -> tuple[float, float]:
        """The enclosure where the bound has one, else the value twice."""
        if self.enclosure is None:
            v = self(d, rank, heads, N)
            return v, v
        lo, hi = self.enclosure(d, rank, heads, N)
        return float(lo), float(hi)

    def describe(self) -> dict[str, Any]:
        n = "every N" if self.N is None else ", ".join(str(k) for k in self.N)
        return {"name": self.name, "side": self.side, "status": self.status,
                "rigorous": self.rigorous, "target": self.target, "law": self.law,
                "value_class": self.value_class,
                "N": n, "encoding": self.encoding, "source": self.source,
                "description": self.description, "spec": self.spec or self.name}


@dataclass(frozen=True)
class Construction:
    """Explicit weights with the error they claim: ``fn(d, rank, heads, N, seed, **params)``
    returns ``(model, claimed)`` (see the module note), or ``(model, claimed, target)`` when the
    target is not ``target``'s named function. ``params`` holds the defaults of the extra
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
    description: str = ""
    ref: str = ""
    source: str = "workbench"
    spec: str = ""

    def __post_init__(self) -> None:
        _check_name("construction", self.name)
        if self.law not in LAWS[:2]:
            raise ValueError(f"law must be one of {LAWS[:2]} (got {self.law!r})")
        if self.memory is not None and not callable(self.memory):
            raise TypeError(f"memory must be a function (got {type(self.memory).__name__})")

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "params": dict(self.params), "target": self.target,
                "law": self.law, "queries": self.queries, "ensemble": self.ensemble,
                "defaults": dict(self.defaults), "memory_estimate": self.memory is not None,
                "source": self.source, "description": self.description,
                "spec": self.spec or self.name}


# ------------------------------------------------------------------------------ registries
_REGISTRY: dict[str, dict[str, Any]] = {k: {} for k in KINDS}
_GROUPS = {"bound": "workbench.bounds", "construction": "workbench.constructions",
           "preset": "workbench.presets"}
_loaded: set[str] = set()


def _check_name(kind: str, name: str) -> None:
    if not isinstance(name, str) or not name or ":" in name or name != name.strip():
        raise ValueError(f"a {kind} name must be a non-empty string without ':' (got {name!r})")


def _preset_type() -> type[Any]:
    from workbench.verifiers.presets import Preset

    return Preset


def _type_of(kind: str) -> type[Any]:
    return {"bound": Bound, "construction": Construction}.get(kind) or _preset_type()


def register(kind: str, obj: T, *, replace_existing: bool = False) -> T:
    """Add ``obj`` (a ``Bound``, ``Construction`` or ``Preset``) to the registry of ``kind``.
    A second object under a registered name is an error unless ``replace_existing``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} (got {kind!r})")
    if not isinstance(obj, _type_of(kind)):
        raise TypeError(f"a {kind} must be a {_type_of(kind).__name__} (got {type(obj).__name__})")
    name = obj.name  # type: ignore[attr-defined]
    have = _REGISTRY[kind].get(name)
    if have is not None and have is not obj and not replace_existing:
        raise ValueError(f"{kind} {name!r} is registered twice "
                         f"(by {getattr(have, 'source', '?')} and {getattr(obj, 'source', '?')})")
    _REGISTRY[kind][name] = obj
    return obj


def register_bound(name: str | None = None, **meta: Any) -> Callable[[Callable[..., float]], Bound]:
    """Decorator: register a plain ``f(d, rank, heads, N) -> float`` as a ``Bound`` (``meta`` are
    ``Bound`` fields: ``side``, ``status``, ``law``, ``value_class``, ``N``, ...)."""

    def deco(fn: Callable[..., float]) -> Bound:
        return register("bound", Bound(name or fn.__name__, fn, **_with_source(fn, meta)))

    return deco


def register_construction(
    name: str | None = None, **meta: Any
) -> Callable[[Callable[..., tuple[Any, Any]]], Construction]:
    """Decorator: register ``f(d, rank, heads, N, seed, **params) -> (model, claimed)``; its
    keyword parameters with defaults become ``params`` unless given."""

    def deco(fn: Callable[..., tuple[Any, Any]]) -> Construction:
        meta.setdefault("params", _extra_params(fn))
        return register("construction", Construction(name or fn.__name__.replace("_", "-"), fn,
                                                     **_with_source(fn, meta)))

    return deco


def _with_source(fn: Callable[..., Any], meta: dict[str, Any]) -> dict[str, Any]:
    mod = getattr(fn, "__module__", "") or ""
    meta.setdefault("source", mod.split(".")[0] if mod else "unknown")
    meta.setdefault("description", (inspect.getdoc(fn) or "").split("\n")[0])
    return meta


def _extra_params(fn: Callable[..., Any]) -> dict[str, Any]:
    sig = inspect.signature(fn)
    fixed = {"d", "rank", "heads", "N", "seed"}
    return {k: p.default for k, p in sig.parameters.items()
            if k not in fixed and p.default is not inspect.Parameter.empty}


def _load(kind: str) -> None:
    """The built-ins, then the entry points of ``kind``'s group (once per process)."""
    if kind in _loaded:
        return
    _loaded.add(kind)
    importlib.import_module("workbench.builtin_plugins").register_builtins(kind)
    for ep in entry_points(group=_GROUPS[kind]):
        key = f"{_GROUPS[kind]}:{ep.name}"
        try:
            obj = ep.load()
            if not inspect.ismodule(obj):
                _adopt(kind, obj, ep.name, ep.value, (ep.dist.name if ep.dist else "unknown"))
            LOAD_ERRORS.pop(key, None)
        except Exception as e:  # a broken package must not stop the others
            why = traceback.format_exception_only(type(e), e)[-1].strip()
            LOAD_ERRORS[key] = f"entry point {ep.name!r} ({ep.value}) failed to load: {why}"


def _adopt(kind: str, obj: Any, name: str, spec: str, source: str) -> Any:
    """Register an entry point's ``obj``: an object of the kind's type as it is, a plain
    function wrapped with the minimal contract under the entry point's ``name``. Either is named
    again by its registered name (a replay resolves it through the registry, which re-imports
    the package), so no ``spec`` is set; ``spec`` (the entry point's value) only names it in
    errors."""
    typ = _type_of(kind)
    if isinstance(obj, typ):
        return register(kind, obj)
    if kind == "preset" or not callable(obj):
        raise TypeError(f"{spec} must be a {typ.__name__}" + ("" if kind == "preset" else
                        " or a function") + f" (got {type(obj).__name__})")
    if kind == "bound":
        return register(kind, Bound(name, obj, source=source,
                                    status="conjectured", law="any", value_class="unspecified",
                                    N=None, description=(inspect.getdoc(obj) or "").split("\n")[0]))
    return register(kind, Construction(name, obj, params=_extra_params(obj), source=source,
                                       description=(inspect.getdoc(obj) or "").split("\n")[0]))


def available(kind: str) -> dict[str, Any]:
    """Every registered object of ``kind`` (built-ins and installed packages), by name."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} (got {kind!r})")
    _load(kind)
    return dict(_REGISTRY[kind])


def get(kind: str, name: str) -> Any:
    """The object of ``kind`` called ``name``: a registered name, or ``module:attr``.

    A ``module:attr`` that names a plain function is wrapped with the minimal contract (for a
    bound: status ``conjectured``, law and class unspecified, every N; the object keeps
    ``module:attr`` as its ``spec``). A built-in name is answered before the installed
    packages are loaded (they may import torch). Unknown names raise ``ValueError`` listing the
    known ones.
    """
    if ":" in name:
        mod_name, _, attr = name.partition(":")
        try:
            obj: Any = importlib.import_module(mod_name)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"{kind} {name!r} cannot be imported: {e}") from None
        typ = _type_of(kind)
        if isinstance(obj, typ):
            return obj if kind == "preset" or obj.spec else replace(obj, spec=name)
        if kind == "preset" or not callable(obj):
            raise ValueError(f"{kind} {name!r} must name a {typ.__name__}"
                             + ("" if kind == "preset" else " or a function"))
        if kind == "bound":
            return Bound(attr, obj, spec=name, source=mod_name.split(".")[0],
                         status="conjectured", law="any", value_class="unspecified", N=None)
        return Construction(attr.replace("_", "-"), obj, params=_extra_params(obj), spec=name,
                            source=mod_name.split(".")[0])
    if kind not in _loaded and name not in _REGISTRY[kind]:  # a built-in name needs no package
        importlib.import_module("workbench.builtin_plugins").register_builtins(kind)
    if name in _REGISTRY[kind]:
        return _REGISTRY[kind][name]
    known = available(kind)
    if name not in known:
        raise ValueError(f"{kind} must be one of {sorted(known)} or "
                         f"module:{'attr' if kind == 'preset' else 'function'} (got {name!r})")
    return known[name]


def get_bound(name: str) -> Bound:
    return get("bound", name)  # type: ignore[no-any-return]


def get_construction(name: str) -> Construction:
    return get("construction", name)  # type: ignore[no-any-return]


def get_preset(name: str) -> Any:
    return get("preset", name)
