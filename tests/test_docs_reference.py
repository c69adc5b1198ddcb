"""docs/extending.md says truly what a plug-in author needs: the fields of ``Run``, ``Task``,
``ModelSpec`` and ``TrainConfig`` with their defaults, the architecture names, the hypothesis
profiles, and a preset example that runs as written."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest

from workbench import hypothesis_profiles
from workbench.cli import main
from workbench.verifiers.presets import Run
from workbench.verifiers.tasks import Task
from workbench.verifiers.train import ARCHS, ModelSpec, TrainConfig

ROOT = Path(__file__).resolve().parents[1]
EXTENDING = ROOT / "docs" / "extending.md"


def documented_fields(text: str, name: str) -> list[tuple[str, object]]:
    """The ``Name(field, field=default, ...)`` the docs write for a dataclass, as ``(field,
    default)`` pairs (``MISSING`` for a field without a default)."""
    m = re.search(rf"`{name}\(([^`]*)\)`", text)
    assert m, f"docs/extending.md does not show {name}(...)"
    call = ast.parse(f"f({' '.join(m.group(1).split())})", mode="eval").body
    assert isinstance(call, ast.Call)
    required = [(a.id, dataclasses.MISSING) for a in call.args if isinstance(a, ast.Name)]
    return required + [(k.arg or "", ast.literal_eval(k.value)) for k in call.keywords]


def fields(cls: type) -> list[tuple[str, object]]:
    """``(field, default)`` of a dataclass, in order."""
    out: list[tuple[str, object]] = []
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING:
            out.append((f.name, f.default_factory()))
        else:
            out.append((f.name, f.default))
    return out


@pytest.mark.parametrize("cls", [Run, Task, ModelSpec, TrainConfig])
def test_the_documented_fields_are_the_fields(cls: type) -> None:
    assert documented_fields(EXTENDING.read_text(), cls.__name__) == fields(cls)


def test_a_field_missing_from_the_docs_is_caught() -> None:
    text = EXTENDING.read_text().replace("lr=0.01, ", "")
    assert documented_fields(text, "ModelSpec") != fields(ModelSpec)
    text = EXTENDING.read_text().replace("warmup=0.05", "warmup=0.1")
    assert documented_fields(text, "TrainConfig") != fields(TrainConfig)


def test_the_architecture_names_and_profiles_are_documented() -> None:
    text = EXTENDING.read_text()
    spec = text[text.index("`ModelSpec("):text.index("`TrainConfig(")]
    assert [a for a in ARCHS if f"`{a}`" not in spec] == []
    profiles = text[text.index("**Hypothesis profiles.**"):]
    profiles = profiles[:profiles.index("\n\n")]
    assert [p for p in hypothesis_profiles.PROFILES if f"`{p}`" not in profiles] == []


def test_the_documented_preset_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The ``Preset`` example of "Using them from the command line", saved as a module on
    ``sys.path`` (as the docs say it must be) and swept by name."""
    text = EXTENDING.read_text()
    block = re.search(r"```python\n(from workbench\.verifiers\.presets import Preset.*?)```",
                      text, re.S)
    assert block, "docs/extending.md has no preset example"
    (tmp_path / "doc_presets.py").write_text(block.group(1))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        db = str(tmp_path / "runs.sqlite")
        assert main(["sweep", "doc_presets:RF_TIED", "--db", db, "--dry-run", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["planned"] > 0 and out["computed"] == 0, out
    finally:
        sys.modules.pop("doc_presets", None)
