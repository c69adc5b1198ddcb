"""The CLI's answer to bad input, judged by the contract (README, "Command line"): exit 2, one
stderr line naming the flag, no traceback, nothing on stdout (with ``--json``: the one error
object), nothing written, torch not imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def problems(r: dict[str, Any], flag: str, as_json: bool = False) -> list[str]:
    """What is wrong with one answer to bad input, by the contract (empty when it holds): with
    ``as_json``, stdout must be the one error object naming the flag, else empty."""
    err = r["err"]
    lines = err.strip().splitlines()
    out = []
    if r["rc"] != 2:
        out.append(f"exit {r['rc']}, not 2")
    if len(lines) != 1 or not err.endswith("\n"):
        out.append(f"{len(lines)} stderr lines, not 1")
    elif not lines[0].startswith("error: ") or flag not in lines[0]:
        out.append(f"the line does not name {flag}")
    if "Traceback" in err or len(err) > 400:
        out.append("a traceback or an uncut echo")
    if as_json:
        out += json_error_problems(r["out"], flag, r["rc"])
    elif r["out"]:
        out.append("output on stdout")
    if r.get("written") or r.get("fixtures_changed"):
        out.append(f"wrote {r.get('written') or 'into the fixtures'}")
    if r.get("torch"):
        out.append("imported torch")
    return out


def json_error_problems(stdout: str, flag: str, rc: object) -> list[str]:
    """What is wrong with ``--json``'s answer on an error path: one JSON object on stdout,
    ``{"error", "exit_code", "parameter"}``, with the exit code and naming ``flag``."""
    try:
        obj = json.loads(stdout)
    except ValueError:
        return [f"stdout is not one JSON object: {stdout[:80]!r}"]
    if not isinstance(obj, dict) or set(obj) != {"error", "exit_code", "parameter"}:
        return [f"stdout is not the error object: {stdout[:80]!r}"]
    out = []
    if obj["exit_code"] != rc:
        out.append(f"the error object says exit {obj['exit_code']}, not {rc}")
    if flag not in obj["error"] or str(obj["parameter"]) not in flag + " " + obj["error"]:
        out.append(f"the error object does not name {flag}")
    return out


def run_cases(runner: str, fixtures: Path, work: Path,
              cases: list[tuple[int, list[str]]]) -> dict[int, dict[str, Any]]:
    """Each case's result (by its index), from as few fresh child processes running ``runner``
    (``python -c runner FIXTURES WORK``, the cases as JSON on stdin, one JSON line a result) as
    the cases allow: a child that dies leaves the cases after its last line to the next. HOME and
    XDG_DATA_HOME point into ``fixtures``."""
    env = {**os.environ, "XDG_DATA_HOME": str(fixtures / "data"),
           "HOME": str(fixtures / "home")}
    results: dict[int, dict[str, Any]] = {}
    todo = list(cases)
    while todo:
        proc = subprocess.run([sys.executable, "-c", runner, str(fixtures), str(work)],
                              input=json.dumps(todo), capture_output=True, text=True, env=env,
                              timeout=600)
        got = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        if not got:
            raise AssertionError(f"the case runner failed: {proc.stderr[-2000:]}")
        results.update((r["i"], r) for r in got)
        todo = todo[len(got):]
    return results
