"""One vocabulary across commands: ``--scale quick|full`` (``paper`` an alias of ``full`` in
``sweep``, ``--budget`` the old spelling in ``bounds sandwich``), plurals that agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.run_cli import json_answer
from workbench.commands._common import plural


def test_sweep_full_and_paper_are_one_scale(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "s.sqlite")
    full = json_answer(capsys, "sweep", "fig2", "--scale", "full", "--dry-run", "--db", db,
                       "--json")
    paper = json_answer(capsys, "sweep", "fig2", "--scale", "paper", "--dry-run", "--db", db,
                        "--json")
    quick = json_answer(capsys, "sweep", "fig2", "--dry-run", "--db", db, "--json")
    assert full["scale"] == paper["scale"] == "full" and full["planned"] == paper["planned"]
    assert full["planned"] > quick["planned"]


def test_sandwich_budget_is_the_old_spelling_of_scale(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bounds", "sandwich", "--d", "4", "--rank", "1", "--heads", "1", "--json"]
    new = json_answer(capsys, *args, "--scale", "quick")
    old = json_answer(capsys, *args, "--budget", "quick")
    drop = ("seconds", "candidates")
    assert {k: v for k, v in new.items() if k not in drop} == \
        {k: v for k, v in old.items() if k not in drop}


@pytest.mark.parametrize("n,word,want", [(0, "claim", "0 claims"), (1, "claim", "1 claim"),
                                         (2, "head", "2 heads"),
                                         (1, "dependency", "1 dependency"),
                                         (3, "dependency", "3 dependencies")])
def test_plurals_agree(n: int, word: str, want: str) -> None:
    many = "dependencies" if word == "dependency" else None
    assert plural(n, word, many) == want
