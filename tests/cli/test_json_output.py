"""``--json`` means a JSON object on stdout for every form of ``graph``: the graph, the dot text
under ``dot``, or the ``path`` of the file written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    capsys.readouterr()
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_graph_json_is_json_in_every_format(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    graph = _json(capsys, "graph", "--json")
    n = len(graph["nodes"])
    dot = _json(capsys, "graph", "--format", "dot", "--json")
    assert dot["format"] == "dot" and dot["path"] is None and dot["claims"] == n
    assert dot["dot"].lstrip().startswith("digraph")
    out = tmp_path / "g.dot"
    written = _json(capsys, "graph", "--format", "dot", "--out", str(out), "--json")
    assert written["path"] == str(out) and out.read_text() == dot["dot"]
    png = tmp_path / "g.png"
    drawn = _json(capsys, "graph", "--format", "png", "--out", str(png), "--json")
    assert drawn["path"] == str(png) and drawn["claims"] == n
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
