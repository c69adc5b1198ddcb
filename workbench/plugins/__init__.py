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
functions, from above: this module imports none of them. ``workbench.plugins.builtin`` hands
them over with :func:`add_builtins` when the package ``workbench`` is imported, so ``available``
and ``get`` see them in any program. Nothing here imports torch until an object is used.

The package: the registry (here), the ``Bound`` type (:mod:`.bound`), the ``Construction`` type
(:mod:`.construction`), what every plug-in shares (:mod:`.contract`) and the built-in objects
(:mod:`.builtin`).

Layering: workbench.core, workbench.core.bounds, workbench.core.bounds.harmonic_count,
workbench.core.bounds.fiber_bound, workbench.core.bounds.sequence_length, workbench.constructions,
workbench.verifiers, workbench.proofs, workbench.proofs.support.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from workbench.core.profiles import Target, psi_target
from workbench.plugins.bound import SIDES, STATUSES, Bound, DomainFn
from workbench.plugins.construction import INT64_MAX, Construction, ParamRange
from workbench.plugins.contract import (
    LAWS,
    SIGNATURES,
    PluginFailed,
    T,
    call_user,
    failure,
)
from workbench.plugins.contract import takes as _takes

__all__ = ["INT64_MAX", "KINDS", "LAWS", "LOAD_ERRORS", "SIDES", "SIGNATURES", "STATUSES",
           "Bound", "Construction", "DomainFn", "ParamRange", "PluginFailed", "add_builtins",
           "available", "call_user", "entry_points", "failure", "get", "get_bound",
           "get_construction", "get_preset", "register", "register_bound",
           "register_construction"]

# A kind of object: its name here, its entry-point group in ``_GROUPS``, its type in
# ``_type_of`` and its built-ins in ``workbench.plugins.builtin.register_builtins``.
KINDS = ("bound", "construction", "preset", "target")
LOAD_ERRORS: dict[str, str] = {}  # "group:entry point" -> why it could not be loaded

# ------------------------------------------------------------------------------ registries
_REGISTRY: dict[str, dict[str, Any]] = {k: {} for k in KINDS}
_GROUPS = {"bound": "workbench.bounds", "construction": "workbench.constructions",
           "preset": "workbench.presets", "target": "workbench.targets"}
_loaded: set[str] = set()
_BUILTINS: list[Callable[[str], None]] = []  # each registers the built-in objects of a kind


def add_builtins(register_kind: Callable[[str], None]) -> None:
    """Give the registry a source of built-in objects: ``register_kind(kind)`` registers those
    of ``kind`` (lazily, the first time a kind is asked for). The workbench's own,
    ``workbench.plugins.builtin.register_builtins``, is added by the package's ``__init__``."""
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
