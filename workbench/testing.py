"""Planting faults: the one mechanism the workbench's tests, its property-power suite and its
mutation harness (``benchmarks/mutation.py``) use, public so that you can show your own
properties and claims failing on a fault (docs/architecture.md, Testing).

A fault replaces one public name, ``"module:attr"`` or ``"module:Class.attr"``, by
``wrap(original)``. The name is replaced in its module and in every loaded module that holds the
same object (so ``from x import f`` call sites see the fault too), and restored on exit::

    from workbench.testing import plant, scaled

    with plant("workbench.core.harmonics:dim_harmonics", scaled(2)):
        ...  # every caller of dim_harmonics now gets twice the dimension

Wraps for the common faults: :func:`scaled` (a result a constant factor off),
:func:`arg_scaled` (an argument off), :func:`mapped` and :func:`arg_mapped` (a result or an
argument transformed otherwise: an absolute value, an off-by-one, a dropped field),
:func:`replaced` (another object in its place) and :func:`edited` (the function's own source
with one piece of text changed: a sign, a degree, a dropped term). Any other callable from the
original to the faulty object is a wrap too. Plant inside the test (or in a fresh process),
never at import time.

:func:`property_fails` runs a hypothesis ``@given`` property and says whether it fails, quickly:
it stops at the first failing example. Together they show that a property has power::

    from workbench.testing import plant, property_fails, scaled

    def test_my_property_catches_a_wrong_dimension():
        with plant("workbench.core.harmonics:dim_harmonics", scaled(2)):
            assert property_fails(test_my_property)
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import inspect
import sys
import textwrap
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

Wrap = Callable[[Any], Any]  # the original object -> the faulty one


def resolve(target: str) -> tuple[Any, str, Any]:
    """``(owner, attribute, original)`` of ``"module:attr"`` or ``"module:Class.attr"``."""
    mod_name, sep, path = target.partition(":")
    if not sep or not mod_name or not path:
        raise ValueError(f"target must be 'module:attr' or 'module:Class.attr' (got {target!r})")
    owner: Any = importlib.import_module(mod_name)
    parts = path.split(".")
    for p in parts[:-1]:
        owner = getattr(owner, p)
    if not hasattr(owner, parts[-1]):
        raise ValueError(f"target {target!r} names nothing: {parts[-1]!r} is not in {owner!r}")
    return owner, parts[-1], getattr(owner, parts[-1])


_MISSING = object()


def _swap(owner: Any, attr: str, old: Any, new: Any) -> list[tuple[dict[str, Any], str]]:
    """Put ``new`` where ``old`` is: on ``owner`` and, for module-level objects, in every loaded
    module's namespace that binds the same object. Returns the namespaces changed."""
    raw = vars(owner).get(attr)
    # a static or class method stays callable without an instance (the wrap got it unbound)
    setattr(owner, attr, staticmethod(new) if isinstance(raw, (staticmethod, classmethod))
            else new)
    if isinstance(owner, type):
        return []
    changed = []
    for mod in list(sys.modules.values()):
        ns = getattr(mod, "__dict__", None)
        if not ns or ns is getattr(owner, "__dict__", None):
            continue
        for k, v in list(ns.items()):
            if v is old:
                ns[k] = new
                changed.append((ns, k))
    return changed


def _restore(owner: Any, attr: str, raw: Any) -> None:
    """Put back ``owner``'s own binding of ``attr`` as it was (none, for an inherited one)."""
    if raw is _MISSING:
        delattr(owner, attr)
    else:
        setattr(owner, attr, raw)


@contextlib.contextmanager
def plant(target: str, wrap: Wrap) -> Iterator[Any]:
    """Replace ``target`` by ``wrap(original)`` everywhere it is bound, for the ``with`` block
    (restored also when the block raises); yields the faulty object."""
    owner, attr, orig = resolve(target)
    raw = vars(owner).get(attr, _MISSING)
    new = wrap(orig)
    changed = _swap(owner, attr, orig, new)
    try:
        yield new
    finally:
        _restore(owner, attr, raw)
        for ns, k in changed:
            if ns.get(k) is new:
                ns[k] = orig


def plant_for_process(target: str, wrap: Wrap) -> Any:
    """:func:`plant` without restoring: for a process that runs one mutant and exits."""
    owner, attr, orig = resolve(target)
    new = wrap(orig)
    _swap(owner, attr, orig, new)
    return new


def mapped(fn: Callable[[Any], Any]) -> Wrap:
    """A function whose result is ``fn`` of the original's (``fn(result)``)."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        def faulty(*a: Any, **k: Any) -> Any:
            return fn(f(*a, **k))

        return faulty

    return wrap


def scaled(factor: float) -> Wrap:
    """A function whose result is ``factor`` times the original's."""
    return mapped(lambda v: v * factor)


def arg_mapped(index: int, name: str, fn: Callable[[Any], Any]) -> Wrap:
    """A function called with positional argument ``index`` (or keyword ``name``) replaced by
    ``fn`` of it; a call that passes neither is left alone (the default stands)."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        def faulty(*a: Any, **k: Any) -> Any:
            if name in k:
                k[name] = fn(k[name])
            elif len(a) > index:
                a = (*a[:index], fn(a[index]), *a[index + 1:])
            return f(*a, **k)

        return faulty

    return wrap


def arg_scaled(index: int, name: str, factor: float) -> Wrap:
    """A function called with positional argument ``index`` (or keyword ``name``) scaled by
    ``factor``."""
    return arg_mapped(index, name, lambda v: v * factor)


def replaced(new: Any) -> Wrap:
    """``new`` in place of the original, whatever it was (a constant, a function, a class)."""
    return lambda _orig: new


_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _definition(f: Callable[..., Any]) -> tuple[ModuleType, str, _Definition]:
    """The loaded module whose source defines ``f`` at its top level, that source and the
    definition: the module ``f`` names, else one that binds ``f`` under its name (a decorator
    such as ``hypothesis.strategies.composite`` may leave neither ``__wrapped__`` nor
    ``__module__`` pointing back)."""
    fn = inspect.unwrap(f)
    name = fn.__name__
    named = sys.modules.get(fn.__module__)
    binding = [m for m in list(sys.modules.values()) if m is not named
               and (getattr(m, "__dict__", {}).get(name) is f
                    or getattr(m, "__dict__", {}).get(name) is fn)]
    for module in ([named] if named is not None else []) + binding:
        try:
            src = inspect.getsource(module)
        except (OSError, TypeError):
            continue
        nodes = [n for n in ast.parse(src).body
                 if isinstance(n, _Definition) and n.name == name]
        if len(nodes) == 1:
            return module, src, nodes[0]
    raise ValueError(f"{fn.__module__}.{name} must be a module-level function")


def edited(old: str, new: str) -> Wrap:
    """The function recompiled from its own source (decorators included) with the text ``old``,
    which must occur exactly once, replaced by ``new``. It runs in a copy of its module's
    namespace, so the rest of the module is untouched."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        module, src, node = _definition(f)
        name = node.name
        lines = src.splitlines()
        start = min([node.lineno] + [dec.lineno for dec in node.decorator_list]) - 1
        body = textwrap.dedent("\n".join(lines[start:node.end_lineno]))
        if body.count(old) != 1:
            raise ValueError(f"{name}: the text to edit must occur once "
                             f"(found {body.count(old)} times): {old!r}")
        ns = dict(vars(module))
        exec(compile(body.replace(old, new), f"<fault in {module.__name__}.{name}>", "exec"), ns)
        return ns[name]

    return wrap


class _FirstFailure(BaseException):
    """Raised out of a property's body at its first failing example. Not an ``Exception``, so
    hypothesis lets it through at once: no shrinking, no search for further failures."""


def property_fails(prop: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
    """Whether the hypothesis ``@given`` property ``prop`` fails: ``True`` at the first example
    whose check raises ``AssertionError``, ``False`` when every example passes.

    ``prop`` runs once (with ``args``, ``kwargs``, if it takes any besides its drawn ones) under
    its own settings: ``@settings(...)``, ``workbench.strategies.torch_settings`` or the loaded
    profile decide the examples (the suite's ``ci`` profile: the same ones every run). What makes
    it quick is that it stops at the first failing example, which it neither shrinks nor
    reports. Any other exception (a crash, a failed health check) propagates: a crash is not a
    failing property. Built on hypothesis's public handle ``prop.hypothesis.inner_test``, which
    is put back on return."""
    handle: Any = getattr(prop, "hypothesis", None)
    inner = getattr(handle, "inner_test", None)
    if inner is None:
        raise TypeError(f"prop must be a @given property (got {prop!r})")

    @functools.wraps(inner)  # the same function digest, so the same derandomized examples
    def stops_at_first_failure(*a: Any, **k: Any) -> Any:
        try:
            return inner(*a, **k)
        except AssertionError as err:
            raise _FirstFailure from err

    handle.inner_test = stops_at_first_failure
    try:
        prop(*args, **kwargs)
    except _FirstFailure:
        return True
    finally:
        handle.inner_test = inner
    return False
