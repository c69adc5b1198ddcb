"""No import circles between the modules of ``workbench`` (docs/architecture.md, "No import
circles"): every import counts, at module level or inside a function, and so does
``importlib.import_module("a.literal.name")``. A circle is reported as the modules on it."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_layering import ROOT, _copy, _module_name


def _imported_names(path: Path, module: str) -> set[str]:
    """Every dotted name a module imports: ``import a.b`` gives ``a.b``, ``from a import b``
    gives ``a.b`` (a module or an attribute of ``a``), and ``importlib.import_module("a.b")``
    with a literal name gives ``a.b``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            out |= {f"{base}.{alias.name}" for alias in node.names}
        elif (isinstance(node, ast.Call) and node.args
              and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.add(node.args[0].value)
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the project's modules it imports: each imported name's longest prefix that is
    a module (``from a import f`` is an arrow to ``a``, ``from a import b`` to ``a.b`` when
    ``b`` is a module)."""
    mods = {_module_name(root, p): p for p in (root / "workbench").rglob("*.py")}

    def module(name: str) -> str:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        graph[name] = {module(t) for t in _imported_names(path, name)} - {"", name}
    return graph


def import_circles(root: Path) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    graph = import_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(circles)


def test_no_import_circles() -> None:
    assert import_circles(ROOT) == []


def test_a_planted_circle_inside_a_function_is_caught(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    workers = root / "workbench" / "proofs" / "workers.py"
    workers.write_text(workers.read_text()
                       + "\n\ndef _f():\n    from workbench.proofs.runner import judged\n")
    assert ["workbench.proofs.runner", "workbench.proofs.workers"] in import_circles(root)


def test_a_planted_circle_through_import_module_is_caught(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    plugins = root / "workbench" / "plugins" / "__init__.py"
    planted = '\n\ndef _f():\n    importlib.import_module("workbench.plugins.builtin")\n'
    plugins.write_text(plugins.read_text() + planted)
    assert ["workbench.plugins", "workbench.plugins.builtin"] in import_circles(root)


def test_a_planted_circle_through_a_package_is_caught(tmp_path: Path) -> None:
    """``from workbench.core.bounds.fiber_bound import fiber`` is an arrow to the module
    ``fiber``."""
    root = _copy(tmp_path)
    kinks = root / "workbench" / "core" / "bounds" / "fiber_bound" / "fiber_kinks.py"
    kinks.write_text(kinks.read_text() + "\nfrom workbench.core.bounds.fiber_bound import fiber\n")
    assert ["workbench.core.bounds.fiber_bound.fiber",
            "workbench.core.bounds.fiber_bound.fiber_kinks"] in (
        import_circles(root))
