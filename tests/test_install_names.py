"""Install names cannot collide (docs/architecture.md, Folders and import names): the layers in
``workbench/constructions/`` and ``workbench/verifiers/`` import as ``workbench.constructions`` and
``workbench.verifiers``, so a foreign top-level ``verifiers`` or ``constructions`` package (the
PyPI ``verifiers`` is a popular one) neither shadows the workbench nor is shadowed by it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _foreign(tmp_path: Path) -> Path:
    for name in ("verifiers", "constructions"):
        pkg = tmp_path / name
        pkg.mkdir()
        (pkg / "__init__.py").write_text(f"FOREIGN = {name!r}\n")
    return tmp_path


def test_foreign_packages_first_on_the_path_change_nothing(tmp_path: Path) -> None:
    path = _foreign(tmp_path)
    code = (
        "import json, sys, verifiers, constructions\n"
        "import workbench.verifiers.estimate as e, workbench.constructions.full_rank as f\n"
        "from workbench.cli import main\n"
        "print(json.dumps({'foreign': [verifiers.FOREIGN, constructions.FOREIGN],"
        " 'own': [e.__file__, f.__file__]}))\n"
        "sys.stdout.flush()\n"
        "main(['check', '--scale', 'quick', '--only', 'fact1.soft_representation', '--json'])\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), str(ROOT)])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    first, rest = out.stdout.split("\n", 1)
    names = json.loads(first)
    assert names["foreign"] == ["verifiers", "constructions"]  # they are theirs...
    assert all(Path(p).resolve().is_relative_to(ROOT) for p in names["own"])  # ...and ours ours
    report = json.loads(rest)
    assert report["summary"]["holds"] >= 1 and report["summary"]["violated"] == 0


def test_the_distribution_installs_only_the_workbench_package() -> None:
    dist = metadata.distribution("attention-rank-workbench")
    top = set((dist.read_text("top_level.txt") or "workbench").split())
    assert top == {"workbench"}, top


def test_no_module_imports_the_layers_by_their_folder_names() -> None:
    bad = []
    for folder in ("workbench", "constructions", "verifiers", "tests", "benchmarks", "examples"):
        for p in (ROOT / folder).rglob("*.py"):
            for n, line in enumerate(p.read_text().splitlines(), 1):
                s = line.strip()
                if s.startswith(("from verifiers", "import verifiers", "from constructions",
                                 "import constructions")):
                    bad.append(f"{p.relative_to(ROOT)}:{n}: {s}")
    assert not bad, bad
