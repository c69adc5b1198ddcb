"""``--json`` means a JSON object on stdout for every form of ``graph``: the graph, the dot text
under ``dot``, or the ``path`` of the file written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.run_cli import json_answer
from workbench.cli import main


def test_graph_json_is_json_in_every_format(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    graph = json_answer(capsys, "graph", "--json")
    n = len(graph["nodes"])
    dot = json_answer(capsys, "graph", "--format", "dot", "--json")
    assert dot["format"] == "dot" and dot["path"] is None and dot["claims"] == n
    assert dot["dot"].lstrip().startswith("digraph")
    out = tmp_path / "g.dot"
    written = json_answer(capsys, "graph", "--format", "dot", "--out", str(out), "--json")
    assert written["path"] == str(out) and out.read_text() == dot["dot"]
    png = tmp_path / "g.png"
    drawn = json_answer(capsys, "graph", "--format", "png", "--out", str(png), "--json")
    assert drawn["path"] == str(png) and drawn["claims"] == n
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _interrupted(*args: object) -> None:
    raise KeyboardInterrupt


def test_json_is_the_error_object_on_a_signal_and_the_payload_alone_on_exit_1(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A signal ends a command before its payload: the error object, with 130. A command that
    prints its payload and then exits 1 prints nothing more on stdout."""
    from workbench.commands._common import CheckFailed, emit, fail, new_run
    from workbench.testing import plant, replaced

    capsys.readouterr()
    with plant("workbench.commands.harmonics:log10_dim", replaced(_interrupted)):
        rc = main(["harmonics", "dim", "--d", "5", "--degree", "1", "--json"])
    obj = json.loads(capsys.readouterr().out)
    assert rc == 130 and obj == {"error": obj["error"], "exit_code": 130, "parameter": None}
    assert "SIGINT" in obj["error"]
    new_run()
    emit({"verdict": "violated"}, True, str)
    fail(CheckFailed("a claim was violated").format_message(), 1, True)
    assert json.loads(capsys.readouterr().out) == {"verdict": "violated"}
