"""Names the built-in modules declare, read from their source without importing them.

Importing the claim modules or the presets imports torch (seconds); reading which names they
declare takes milliseconds, so ``check --only`` and ``sweep PRESET`` answer a name that cannot
exist before any of it is imported. A name that is declared, or that an installed package may
provide (an entry point), is left for the registry to resolve.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from importlib.metadata import entry_points
from pathlib import Path


def _sources(package: str) -> list[Path]:
    spec = importlib.util.find_spec(package)
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return sorted(p for loc in spec.submodule_search_locations for p in Path(loc).rglob("*.py"))
    return [Path(spec.origin)] if spec.origin else []


def _first_string_args(package: str, callee: str) -> frozenset[str]:
    """The first arguments of every call to ``callee`` in ``package``'s source that are string
    literals, or a parameter of the enclosing function whose default is one."""
    out: set[str] = set()
    for path in _sources(package):
        tree = ast.parse(path.read_text(), str(path))
        scopes: list[tuple[ast.AST, dict[str, str]]] = [(tree, {})]
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef):
                a = fn.args
                pos = a.args[len(a.args) - len(a.defaults):]
                scopes.append((fn, {p.arg: d.value for p, d in zip(pos, a.defaults)
                                    if isinstance(d, ast.Constant) and isinstance(d.value, str)}))
        for scope, defaults in scopes:
            for node in ast.walk(scope):
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                f, arg = node.func, node.args[0]
                name = f.id if isinstance(f, ast.Name) else \
                    f.attr if isinstance(f, ast.Attribute) else None
                if name != callee:
                    continue
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    out.add(arg.value)
                elif isinstance(arg, ast.Name) and arg.id in defaults:
                    out.add(defaults[arg.id])
    return frozenset(out)


@functools.cache
def builtin_claim_ids() -> frozenset[str]:
    """The ids the built-in claim modules register (``@claim("id", ...)``)."""
    return _first_string_args("workbench.proofs.paper", "claim")


@functools.cache
def builtin_preset_names() -> frozenset[str]:
    """The names of the built-in presets (``Preset("name", ...)``)."""
    return _first_string_args("workbench.verifiers.presets", "Preset")


def has_entry_points(group: str) -> bool:
    """Whether an installed package registers anything in the entry-point group ``group`` (as
    ``workbench.plugins`` sees the installed packages, for the plug-in groups)."""
    from workbench import plugins

    if group in plugins._GROUPS.values():
        return any(True for _ in plugins.entry_points(group=group))
    return any(True for _ in entry_points(group=group))


def selects(ids: frozenset[str], name: str) -> bool:
    """Whether ``name`` selects one of ``ids``: the id itself, or a prefix (``thm2``) of one
    (the rule of ``workbench.proofs.registry.select``)."""
    return any(c == name or c.startswith(name.rstrip(".") + ".") for c in ids)
