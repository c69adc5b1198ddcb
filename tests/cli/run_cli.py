"""One CLI call inside a test, its answer read back (shared by the CLI tests)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from workbench.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """``workbench ARGS`` in-process: the exit code, stdout (parsed when it is a JSON object,
    else the text) and stderr."""
    capsys.readouterr()
    rc = main(list(args))
    cap = capsys.readouterr()
    out = json.loads(cap.out) if cap.out.strip().startswith("{") else cap.out
    return rc, out, cap.err


def json_answer(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    """``workbench ARGS`` in-process, which must exit 0: its JSON object on stdout."""
    capsys.readouterr()
    assert main(list(args)) == 0
    answer: dict[str, Any] = json.loads(capsys.readouterr().out)
    return answer
