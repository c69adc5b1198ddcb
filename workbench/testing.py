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
:func:`arg_scaled` (an argument off), :func:`replaced` (another object in its place) and
:func:`edited` (the function's own source with one piece of text changed: a sign, a degree, a
dropped term). Plant inside the test (or in a fresh process), never at import time.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import sys
import textwrap
from collections.abc import Callable, Iterator
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


def _swap(owner: Any, attr: str, old: Any, new: Any) -> list[tuple[dict[str, Any], str]]:
    """Put ``new`` where ``old`` is: on ``owner`` and, for module-level objects, in every loaded
    module's namespace that binds the same object. Returns the namespaces changed."""
    setattr(owner, attr, new)
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


@contextlib.contextmanager
def plant(target: str, wrap: Wrap) -> Iterator[Any]:
    """Replace ``target`` by ``wrap(original)`` everywhere it is bound, for the ``with`` block;
    yields the faulty object."""
    owner, attr, orig = resolve(target)
    new = wrap(orig)
    changed = _swap(owner, attr, orig, new)
    try:
        yield new
    finally:
        setattr(owner, attr, orig)
        for ns, k in changed:
            if ns.get(k) is new:
                ns[k] = orig


def plant_for_process(target: str, wrap: Wrap) -> Any:
    """:func:`plant` without restoring: for a process that runs one mutant and exits."""
    owner, attr, orig = resolve(target)
    new = wrap(orig)
    _swap(owner, attr, orig, new)
    return new


def scaled(factor: float) -> Wrap:
    """A function whose result is ``factor`` times the original's."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        def faulty(*a: Any, **k: Any) -> Any:
            return f(*a, **k) * factor

        return faulty

    return wrap


def arg_scaled(index: int, name: str, factor: float) -> Wrap:
    """A function called with positional argument ``index`` (or keyword ``name``) scaled by
    ``factor``."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        def faulty(*a: Any, **k: Any) -> Any:
            if name in k:
                k[name] = k[name] * factor
            elif len(a) > index:
                a = (*a[:index], a[index] * factor, *a[index + 1:])
            return f(*a, **k)

        return faulty

    return wrap


def replaced(new: Any) -> Wrap:
    """``new`` in place of the original, whatever it was (a constant, a function, a class)."""
    return lambda _orig: new


def edited(old: str, new: str) -> Wrap:
    """The function recompiled from its own source (decorators included) with the text ``old``,
    which must occur exactly once, replaced by ``new``. It runs in a copy of its module's
    namespace, so the rest of the module is untouched."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        fn = inspect.unwrap(f)
        module = sys.modules[fn.__module__]
        src = inspect.getsource(module)
        tree = ast.parse(src)
        nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                 and n.name == fn.__name__ and n in tree.body]
        if len(nodes) != 1:
            raise ValueError(f"{fn.__module__}.{fn.__name__} must be a module-level function")
        node = nodes[0]
        lines = src.splitlines()
        start = min([node.lineno] + [dec.lineno for dec in node.decorator_list]) - 1
        body = textwrap.dedent("\n".join(lines[start:node.end_lineno]))
        if body.count(old) != 1:
            raise ValueError(f"{fn.__name__}: the text to edit must occur once "
                             f"(found {body.count(old)} times): {old!r}")
        ns = dict(vars(module))
        exec(compile(body.replace(old, new), f"<fault in {fn.__module__}.{fn.__name__}>", "exec"),
             ns)
        return ns[fn.__name__]

    return wrap
