"""Bounds, constructions, presets and targets: first-class objects, one type and one registry each
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
- preset: a ``workbench.verifiers.presets.Preset`` (a sweep design);
- target: a ``workbench.core.profiles.Target``, or a profile ``psi(t: ndarray) -> ndarray``, odd
  with ``|psi| <= 1`` (checked at sample points), the N = 2 target ``(u + psi(<y,w>) w)/sqrt2``.

Packages register theirs under the entry-point groups ``workbench.bounds``,
``workbench.constructions``, ``workbench.presets`` and ``workbench.targets``: each entry point
names an object (or a plain function, registered under the entry point's name), or a module
that registers its
objects when imported. An entry point that fails to load is reported by name in
``LOAD_ERRORS`` and the rest still loads. The built-in objects register through the same
functions, from above: this module imports none of them. ``workbench.builtin_plugins`` hands
them over with :func:`add_builtins` when the package ``workbench`` is imported, so ``available``
and ``get`` see them in any program. Nothing here imports torch until an object is used.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from workbench.core.profiles import Target, psi_target
from workbench.core.validation import INT64_MAX, check_layer, check_points

# A kind of object: its name here, its entry-point group in ``_GROUPS``, its type in
# ``_type_of`` and its built-ins in ``workbench.builtin_plugins.register_builtins``.
KINDS = ("bound", "construction", "preset", "target")
SIDES = ("lower", "upper")
STATUSES = ("proved", "conjectured")  # "certified" is read as "proved" (its old spelling)
LAWS = ("orthonormal", "iid", "any")
LOAD_ERRORS: dict[str, str] = {}  # "group:entry point" -> why it could not be loaded
T = TypeVar("T")

DomainFn = Callable[[int, int, int, int], "str | None"]


@dataclass(frozen=True)
class Bound:
    """A bound on the error ``E||f - A||^2`` of a model class, as a function of
    ``(d, rank, heads, N)``.

    ``side`` says which side it bounds, ``status`` whether it is ``proved`` (a theorem; the old
    spelling ``certified`` is read as ``proved``) or ``conjectured``, ``rigorous`` whether its
    ``enclosure`` is a proved one (a plug-in's conjecture or a quadrature is not: only a rigorous
    number is called certified); ``target``, ``law`` (of the keys), ``value_class``
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
    status: str = "proved"
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
        if self.status == "certified":  # the old spelling: a proved bound is certified only
            object.__setattr__(self, "status", "proved")  # where its number is rigorous
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES} (got {self.status!r})")
        if self.law not in LAWS:
            raise ValueError(f"law must be one of {LAWS} (got {self.law!r})")

    def outside(self, d: int, rank: int, heads: int, N: int) -> str | None:
        """Why ``(d, rank, heads, N)`` is outside what the bound covers, or ``None``: the one
        check of a bound's arguments (commands call it at the edge and trust them after). A
        reason about one argument starts with its name (``rank must be ...``), so a command
        can name its flag; ``domain``'s reasons may do the same."""
        try:
            check_layer(d, rank, heads, ("d", "rank", "heads"))
            check_points(N, "N")
        except ValueError as e:
            return str(e)
        if self.N is not None and N not in self.N:
            return f"N must lie in {list(self.N)}, the N it covers (got {N})"
        return self.domain(d, rank, heads, N) if self.domain is not None else None

    def __call__(self, d: int, rank: int, heads: int, N: int = 2) -> float:
        why = self.outside(d, rank, heads, N)
        if why is not None:
            raise ValueError(f"bound {self.name!r} {why}")
        if self.source == "workbench":
            return float(self.fn(d, rank, heads, N))
        who = ("bound", self.spec or self.name)
        return _number(who, call_user(who, self.fn, d, rank, heads, N), (d, rank, heads, N))

    def interval(self, d: int, rank: int, heads: int, N: int = 2) -> tuple[float, float]:
        """The enclosure where the bound has one, else the value twice."""
        if self.enclosure is None:
            v = self(d, rank, heads, N)
            return v, v
        if self.source == "workbench":
            lo, hi = self.enclosure(d, rank, heads, N)
            return float(lo), float(hi)
        who, at = ("bound", self.spec or self.name), (d, rank, heads, N)
        ends = call_user(who, self.enclosure, d, rank, heads, N)
        if not (isinstance(ends, tuple | list) and len(ends) == 2):
            raise PluginFailed(who, f"returned {type(ends).__name__} from its enclosure at "
                               f"{at}, not a pair (lo, hi)")
        return _number(who, ends[0], at), _number(who, ends[1], at)

    def describe(self) -> dict[str, Any]:
        """The bound's fields as JSON: ``N`` is the list of the N it covers, ``null`` for
        every N (``N_text`` says which)."""
        n = "every N" if self.N is None else ", ".join(str(k) for k in self.N)
        return {"name": self.name, "side": self.side, "status": self.status,
                "rigorous": self.rigorous, "target": self.target, "law": self.law,
                "value_class": self.value_class,
                "N": None if self.N is None else list(self.N), "N_text": n,
                "encoding": self.encoding, "source": self.source,
                "description": self.description, "spec": self.spec or self.name}


# INT64_MAX (core.validation): an integer parameter's range when none is declared


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
    ranges: Mapping[str, ParamRange] = field(default_factory=dict)
    description: str = ""
    ref: str = ""
    source: str = "workbench"
    spec: str = ""

    def __post_init__(self) -> None:
        _check_name("construction", self.name)
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


# ------------------------------------------------------------------- calling a user's object
class PluginFailed(ValueError):
    """A user's object (``kind``, ``name``) failed when called: it raised, called ``sys.exit``,
    or returned what its contract does not allow (a bound's nan). ``str()`` is one line saying
    what happened, for the command to put after the flag and the object's name."""

    def __init__(self, who: tuple[str, str], why: str) -> None:
        super().__init__(why)
        self.kind, self.name = who


SIGNATURES = {"bound": "(d, rank, heads, N)", "construction": "(d, rank, heads, N, seed)"}


def failure(e: BaseException) -> str:
    """``e`` on one line: ``ZeroDivisionError: division by zero``, ``SystemExit(0)``."""
    if isinstance(e, SystemExit):
        return f"SystemExit({e.code!r})"
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def call_user(who: tuple[str, str], fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` for the user's object ``who`` (kind, name): any exception,
    ``SystemExit`` included, is a :class:`PluginFailed` naming the arguments (a
    KeyboardInterrupt still interrupts)."""
    try:
        return fn(*args, **kwargs)
    except PluginFailed:
        raise
    except (Exception, SystemExit) as e:
        raise PluginFailed(who, f"failed at {tuple(args[:4])}: {failure(e)}") from None


def _number(who: tuple[str, str], v: Any, at: tuple[int, ...]) -> float:
    """A bound's value as a finite float; anything else is a :class:`PluginFailed`."""
    try:
        x = float(v)
    except (TypeError, ValueError, OverflowError):
        raise PluginFailed(who, f"returned {type(v).__name__} at {at}, not a number") from None
    if not math.isfinite(x):
        raise PluginFailed(who, f"returned {x} at {at}, not a finite number")
    return x


def _takes(kind: str, name: str, fn: Callable[..., Any], params: Mapping[str, Any]) -> None:
    """A plain function named as a ``kind`` must accept its contract's arguments."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: its call will tell
        return
    n = 4 if kind == "bound" else 5
    try:
        sig.bind(*range(n), **params)
    except TypeError:
        raise ValueError(f"{kind} {name!r} must be a function of {SIGNATURES[kind]} (its "
                         f"signature is {sig})") from None


# ------------------------------------------------------------------------------ registries
_REGISTRY: dict[str, dict[str, Any]] = {k: {} for k in KINDS}
_GROUPS = {"bound": "workbench.bounds", "construction": "workbench.constructions",
           "preset": "workbench.presets", "target": "workbench.targets"}
_loaded: set[str] = set()
_BUILTINS: list[Callable[[str], None]] = []  # each registers the built-in objects of a kind


def add_builtins(register_kind: Callable[[str], None]) -> None:
    """Give the registry a source of built-in objects: ``register_kind(kind)`` registers those
    of ``kind`` (lazily, the first time a kind is asked for). The workbench's own,
    ``workbench.builtin_plugins.register_builtins``, is added by the package's ``__init__``."""
    if register_kind not in _BUILTINS:
        _BUILTINS.append(register_kind)


def _register_builtins(kind: str) -> None:
    for register_kind in _BUILTINS:
        register_kind(kind)


def entry_points(group: str) -> Any:
    """The installed entry points of ``group`` (``importlib.metadata``, imported when first
    needed: importing the package registers the built-ins, and must stay cheap)."""
    from importlib.metadata import entry_points as installed

    return installed(group=group)


def _check_kind(kind: str) -> None:
    """Kind names are singular (``"preset"``, not ``"presets"``); a plural is refused saying so."""
    if kind not in KINDS:
        hint = (f"; kind names are singular: {kind[:-1]!r}" if isinstance(kind, str)
                and kind.endswith("s") and kind[:-1] in KINDS else "")
        raise ValueError(f"kind must be one of {KINDS} (got {kind!r}{hint})")


def _check_name(kind: str, name: str) -> None:
    if not isinstance(name, str) or not name or ":" in name or name != name.strip():
        raise ValueError(f"a {kind} name must be a non-empty string without ':' (got {name!r})")


def _preset_type() -> type[Any]:
    from workbench.verifiers.presets import Preset

    return Preset


def _type_of(kind: str) -> type[Any]:
    return {"bound": Bound, "construction": Construction, "target": Target}.get(kind) \
        or _preset_type()


def register(kind: str, obj: T, *, replace_existing: bool = False) -> T:
    """Add ``obj`` (a ``Bound``, ``Construction`` or ``Preset``) to the registry of ``kind``.
    A second object under a registered name is an error unless ``replace_existing``."""
    _check_kind(kind)
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
    _register_builtins(kind)
    for ep in entry_points(group=_GROUPS[kind]):
        key = f"{_GROUPS[kind]}:{ep.name}"
        try:
            obj = ep.load()
            if not inspect.ismodule(obj):
                _adopt(kind, obj, ep.name, ep.value, (ep.dist.name if ep.dist else "unknown"))
            LOAD_ERRORS.pop(key, None)
        except Exception as e:  # a broken package must not stop the others
            import traceback

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
    if kind == "target":
        return register(kind, psi_target(name, obj, spec=name, source=source))
    if kind == "bound":
        return register(kind, Bound(name, obj, source=source,
                                    status="conjectured", law="any", value_class="unspecified",
                                    N=None, description=(inspect.getdoc(obj) or "").split("\n")[0]))
    return register(kind, Construction(name, obj, params=_extra_params(obj), source=source,
                                       description=(inspect.getdoc(obj) or "").split("\n")[0]))


def available(kind: str) -> dict[str, Any]:
    """Every registered object of ``kind`` (built-ins and installed packages), by name."""
    _check_kind(kind)
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
    _check_kind(kind)
    if ":" in name:
        mod_name, _, attr = name.partition(":")
        try:
            obj: Any = importlib.import_module(mod_name)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"{kind} {name!r} cannot be imported: {e}") from None
        except (Exception, SystemExit) as e:  # the module itself fails: syntax, a raise, exit
            raise ValueError(f"{kind} {name!r} cannot be imported: {failure(e)}") from None
        typ = _type_of(kind)
        if isinstance(obj, typ):
            return obj if kind == "preset" or obj.spec else replace(obj, spec=name)
        if kind == "preset" or not callable(obj):
            raise ValueError(f"{kind} {name!r} must name a {typ.__name__}"
                             + ("" if kind == "preset" else " or a function")
                             + f" (it names {type(obj).__name__} {_shown(obj)})")
        if kind == "target":
            return psi_target(attr, obj, spec=name, source=mod_name.split(".")[0])
        _takes(kind, name, obj, _extra_params(obj) if kind == "construction" else {})
        if kind == "bound":
            return Bound(attr, obj, spec=name, source=mod_name.split(".")[0],
                         status="conjectured", law="any", value_class="unspecified", N=None)
        return Construction(attr.replace("_", "-"), obj, params=_extra_params(obj), spec=name,
                            source=mod_name.split(".")[0])
    if kind not in _loaded and name not in _REGISTRY[kind]:  # a built-in name needs no package
        _register_builtins(kind)
    if name in _REGISTRY[kind]:
        return _REGISTRY[kind][name]
    known = available(kind)
    if name not in known:
        raise ValueError(f"{kind} must be one of {sorted(known)} or "
                         f"module:{'attr' if kind == 'preset' else 'function'} (got {name!r})")
    return known[name]


def _shown(obj: Any) -> str:
    text = repr(obj)
    return text if len(text) <= 40 else text[:37] + "..."


def get_bound(name: str) -> Bound:
    return get("bound", name)  # type: ignore[no-any-return]


def get_construction(name: str) -> Construction:
    return get("construction", name)  # type: ignore[no-any-return]


def get_preset(name: str) -> Any:
    return get("preset", name)
