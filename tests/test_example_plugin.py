"""The worked plug-in package (examples/structured_heads) uses only the public API
(docs/extending.md): no name that starts with ``_`` and no module outside the listed ones."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "examples" / "structured_heads" / "structured_heads"


def public_modules() -> set[str]:
    """The modules docs/extending.md lists as public (its table 'The public API')."""
    text = (ROOT / "docs" / "extending.md").read_text()
    table = text.split("## The public API", 1)[1].split("##", 1)[0]
    out: set[str] = set()
    for row in table.splitlines():
        cell = row.split("|")[1] if row.startswith("|") else ""
        base = ""
        for name in re.findall(r"`([\w.]+)`", cell):
            if name.startswith("workbench"):
                base = name
                out.add(name)
            elif name.startswith(".") and base:
                out.add(base.rsplit(".", 1)[0] + name)
    return out


def imports(path: Path) -> list[tuple[str, list[str]]]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
    return found


def test_the_example_package_imports_only_public_workbench_names() -> None:
    public = public_modules()
    assert {"workbench.plugins", "workbench.constructions.rank_one",
            "workbench.core.bounds.certified"} <= public
    bad = []
    for path in sorted(PACKAGE.glob("*.py")):
        for module, names in imports(path):
            if not module.startswith("workbench"):
                continue
            if module not in public:
                bad.append(f"{path.name}: module {module}")
            bad += [f"{path.name}: {module}.{n}" for n in names if n.startswith("_")]
    assert not bad, bad


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    fake = tmp_path / "x.py"
    fake.write_text("from workbench.constructions._kernel_solve import dense_kernel\n"
                    "from workbench.plugins import _load\n")
    found = imports(fake)
    assert ("workbench.constructions._kernel_solve", ["dense_kernel"]) in found
    assert "workbench.constructions._kernel_solve" not in public_modules()
    assert any(n.startswith("_") for _, names in found for n in names)
