"""Import layering (docs/architecture.md): arrows point down only.

``core`` < ``native`` < ``models`` < ``constructions`` < ``verifiers`` < ``workbench`` top level
(``proofs``, ``commands``, ``cli``, ``strategies``). A module may import its own layer and the
layers below; ``models`` may import both ``core`` and ``native``; ``native`` imports ``core``
helpers and torch only. Every ``import`` statement counts, including those inside functions.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("workbench",)  # every module lives under workbench/ (docs/architecture.md)
RANK = {"core": 0, "native": 1, "models": 2, "constructions": 3, "verifiers": 4, "top": 5}


def layer_of(module: str) -> str | None:
    """The layer of a dotted module name of the project, or None for third-party modules."""
    parts = module.split(".")
    if parts[0] != "workbench":
        return None
    if len(parts) > 1 and parts[1] in ("core", "native", "models", "constructions", "verifiers"):
        return parts[1]
    return "top"


def _module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    if parts[0] != "workbench":
        parts.insert(0, "workbench")
    return ".".join(parts)


def _package_files(root: Path, pkg: str) -> list[Path]:
    """The package's own files."""
    return list((root / pkg).rglob("*.py"))


def _imports(path: Path, module: str) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def layer_violations(root: Path) -> list[str]:
    """Every import in the project's packages under ``root`` that points up a layer."""
    out: dict[tuple[Path, int], str] = {}
    for pkg in PACKAGES:
        for path in sorted(_package_files(root, pkg)):
            module = _module_name(root, path)
            here = layer_of(module)
            assert here is not None
            for line, target in _imports(path, module):
                there = layer_of(target)
                if there is not None and RANK[there] > RANK[here]:
                    rel = path.relative_to(root)
                    out.setdefault((rel, line), f"{rel}:{line}: {here} imports {target} ({there})")
    return sorted(out.values())


def test_no_upward_imports() -> None:
    assert layer_violations(ROOT) == []


def test_every_package_module_has_a_layer() -> None:
    for pkg in PACKAGES:
        for path in _package_files(ROOT, pkg):
            assert layer_of(_module_name(ROOT, path)) in RANK


def _copy(tmp_path: Path) -> Path:
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, tmp_path / pkg, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_planted_upward_import_is_caught(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    target = root / "workbench" / "core" / "sphere.py"
    target.write_text(target.read_text()
                      + "\n\ndef _f():\n    from workbench.verifiers import estimate\n")
    models = root / "workbench" / "models" / "scores.py"
    models.write_text(models.read_text() + "\nfrom workbench.constructions import full_rank\n")
    native = root / "workbench" / "native" / "build.py"
    native.write_text(native.read_text() + "\nfrom ..models import attention\n")
    found = layer_violations(root)
    assert len(found) == 3, found
    assert any("core imports workbench.verifiers" in f for f in found)
    assert any("models imports workbench.constructions" in f for f in found)
    assert any("native imports workbench.models" in f for f in found)


def test_sideways_and_downward_imports_are_allowed(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    models = root / "workbench" / "models" / "scores.py"
    models.write_text(models.read_text() + "\nfrom workbench.native import build\n"
                      "from workbench.core import sphere\n")
    assert layer_violations(root) == []


def claim_module_imports(root: Path) -> list[str]:
    """Imports of one claim module by another (``workbench/proofs/paper``): claim modules hold
    claims, and what they share lives in ``workbench/proofs/support``. A package's
    ``__init__.py`` may import its own modules (that registers them)."""
    out = []
    paper = root / "workbench" / "proofs" / "paper"
    for path in sorted(paper.rglob("*.py")):
        module = _module_name(root, path)
        for line, target in _imports(path, module):
            if not target.startswith("workbench.proofs.paper."):
                continue
            if path.name == "__init__.py" and target.startswith(module + "."):
                continue
            out.append(f"{path.relative_to(root)}:{line}: imports {target}")
    return sorted(set(out))


def test_no_claim_module_imports_another() -> None:
    assert claim_module_imports(ROOT) == []


def test_a_planted_import_between_claim_modules_is_caught(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    target = root / "workbench" / "proofs" / "paper" / "thm5.py"
    target.write_text(target.read_text()
                      + "\nfrom workbench.proofs.paper.fact1 import ERROR_RANGE\n")
    assert any("thm5.py" in f and "fact1" in f for f in claim_module_imports(root))


LOWER = ("core", "native", "models", "constructions", "verifiers")


def room_sign(root: Path, layer: str) -> set[str]:
    """The layers a package's ``__init__`` docstring says it imports (its ``Layering:`` line)."""
    import re

    doc = ast.get_docstring(ast.parse((root / "workbench" / layer / "__init__.py").read_text()))
    line = next(s for s in (doc or "").splitlines() if s.startswith("Layering:"))
    return set(re.findall(r"workbench\.(\w+)", line))


def imported_layers(root: Path, layer: str) -> set[str]:
    """The other layers the modules of one layer package import."""
    found = set()
    for path in (root / "workbench" / layer).rglob("*.py"):
        for _, target in _imports(path, _module_name(root, path)):
            there = layer_of(target)
            if there is not None and there != layer:
                found.add(there)
    return found


def test_room_signs_say_what_each_layer_imports() -> None:
    for layer in LOWER:
        assert room_sign(ROOT, layer) == imported_layers(ROOT, layer), layer


def test_a_wrong_room_sign_is_caught(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    init = root / "workbench" / "constructions" / "__init__.py"
    init.write_text(init.read_text().replace(
        "workbench.core, workbench.models.", "workbench.core."))
    assert room_sign(root, "constructions") != imported_layers(root, "constructions")


def test_every_module_has_one_path() -> None:
    """No link inside the package; the top-level ``constructions`` and ``verifiers`` are links
    into it (docs/architecture.md, Folders and import names)."""
    assert [p for p in (ROOT / "workbench").rglob("*") if p.is_symlink()] == []
    for name in ("constructions", "verifiers"):
        link = ROOT / name
        assert link.is_symlink() and link.resolve() == (ROOT / "workbench" / name).resolve()


FAMILIES = ("core/bounds/harmonic_count", "core/bounds/fiber_bound", "core/bounds/profiles",
            "core/bounds/sequence_length", "core/bounds/numerics", "plugins")


def _resolve(root: Path, target: str) -> str | None:
    """The project package holding the module an import names (its longest existing prefix)."""
    parts = target.split(".")
    for n in range(len(parts), 1, -1):
        base = root.joinpath(*parts[:n])
        if (base / "__init__.py").exists():
            return ".".join(parts[:n])
        if base.with_suffix(".py").exists():
            return ".".join(parts[: n - 1])
    return None


def family_sign(root: Path, family: str) -> set[str]:
    """The packages a family package's ``__init__`` docstring says its modules import (its
    ``Layering:`` line): each entry allows that package's own modules, not its sub-packages."""
    import re

    doc = ast.get_docstring(ast.parse((root / "workbench" / family / "__init__.py").read_text()))
    lines = (doc or "").split("Layering:", 1)[1]
    return set(re.findall(r"workbench(?:\.\w+)*", lines.split(".\n")[0] + "."))


def imported_packages(root: Path, family: str) -> set[str]:
    """The project packages, other than the family itself, that its modules import from."""
    own = "workbench." + family.replace("/", ".")
    found = set()
    for path in (root / "workbench" / family).rglob("*.py"):
        for _, target in _imports(path, _module_name(root, path)):
            pkg = _resolve(root, target) if target.startswith("workbench") else None
            if pkg is not None and pkg != own:
                found.add(pkg)
    return found


def test_family_signs_say_what_each_family_imports() -> None:
    for family in FAMILIES:
        assert family_sign(ROOT, family) == imported_packages(ROOT, family), family


def test_a_family_importing_outside_its_sign_is_caught(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    numerics = root / "workbench" / "core" / "bounds" / "numerics" / "truncation.py"
    numerics.write_text(numerics.read_text()
                        + "\n\ndef _f():\n"
                        "    from workbench.core.bounds.fiber_bound import fiber\n")
    assert family_sign(root, "core/bounds/numerics") != imported_packages(
        root, "core/bounds/numerics")


def test_the_bounds_room_has_few_loose_modules() -> None:
    loose = [p for p in (ROOT / "workbench" / "core" / "bounds").glob("*.py")]
    assert len(loose) <= 8, sorted(p.name for p in loose)
