"""Census of the CLI's answers to bad input: every case of ``tests/cli/test_bad_inputs.py``,
``test_integer_flags.py`` (every integer flag, refused values and ``--json``) and
``test_bad_files.py`` (every kind of file, damaged), run against the workbench found at
``--code`` (default: this checkout), judged by ``tests/cli/bad_input_contract.problems``.

A case *fails* when the exit code is not 2 (a value accepted: the case ran past
``CASE_SECONDS`` or finished), or a traceback or no line is printed; it is
*partial* when it exits 2 with one line but misses another part of the contract (the line does
not name the flag, output on stdout or a missing ``--json`` error object, a file written, torch
imported where it need not be). Writes ``benchmarks/results/bad_input_census.json`` (or
``--out``). Run on the code before a change with ``--code OLD_CHECKOUT`` to compare: the cases
always come from this checkout's tests.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.cli import test_bad_files, test_bad_inputs, test_integer_flags  # noqa: E402
from tests.cli.bad_input_contract import problems  # noqa: E402

FAILS = ("exit", "stderr lines", "a traceback")
SUITES = ("bad_inputs", "integer_flags", "bad_files")
CASE_SECONDS = 30  # a batch of refusals takes seconds; past this, a case is running


def _run(code: Path, fixtures: Path, cases: list[list[str]], order: list[int],
         deadline: float) -> dict[int, dict[str, Any]]:
    """Each case's answer, taken in ``order`` until ``deadline`` (``time.time()``)."""
    work = Path(tempfile.mkdtemp(dir=fixtures.parent))
    env = {**os.environ, "PYTHONPATH": str(code), "XDG_DATA_HOME": str(fixtures / "data"),
           "HOME": str(fixtures / "home"), "OMP_NUM_THREADS": "1"}
    todo, out = [(i, cases[i]) for i in order], {}
    while todo and time.time() < deadline:
        try:
            proc = subprocess.run([sys.executable, "-c", test_bad_inputs._RUNNER, str(fixtures),
                                   str(work)], input=json.dumps(todo), capture_output=True,
                                  text=True, env=env, timeout=CASE_SECONDS, cwd=work)
            stdout, why = proc.stdout, proc.stderr[-300:]
        except subprocess.TimeoutExpired as e:  # a case accepted its value and went to work
            raw = e.stdout or b""
            stdout = raw.decode() if isinstance(raw, bytes) else raw
            why = f"ran past {CASE_SECONDS} s: the value was accepted"
        got = [json.loads(ln) for ln in stdout.splitlines() if ln.startswith("{")]
        out.update((r["i"], r) for r in got)
        todo = todo[len(got):]
        if todo and (not got or not got[-1]["torch"]):  # the next case crashed or hung
            out[todo[0][0]] = {"rc": "no answer", "out": "", "err": why}
            todo = todo[1:]
    return out


def census(code: Path, only: list[str] | None = None,
           seconds: float = float("inf")) -> dict[str, Any]:
    suites = {
        "bad_inputs": [(a, f, "--json" in a, False) for a, f in test_bad_inputs.CASES],
        "integer_flags": [(a, f, "--json" in a, a[0] == "construct")
                          for a, f in test_integer_flags.CASES],
        "bad_files": [(a, f, "--json" in a, True) for a, f, _ in test_bad_files.CASES],
    }
    suites = {k: v for k, v in suites.items() if not only or k in only}
    report: dict[str, Any] = {"code": str(code)}
    with tempfile.TemporaryDirectory() as tmp:
        fixtures = Path(tmp) / "fixtures"
        fixtures.mkdir()
        test_bad_inputs._make_fixtures(fixtures)
        test_bad_files._fixtures_into(fixtures)
        for name, cases in suites.items():
            # a huge value and one below the range of every flag first: they come five to a flag
            order = sorted(range(len(cases)), key=lambda i: (i % 5 != 2, i % 5 != 0, i))
            res = _run(code, fixtures, [a for a, _, _, _ in cases], order,
                       time.time() + seconds)
            fail, partial, examples = 0, 0, []
            for i, (args, flag, js, torch_ok) in enumerate(cases):
                if i not in res:  # past the time given
                    continue
                found = [p for p in problems(res[i], flag, js)
                         if not (torch_ok and p == "imported torch")]
                if not found:
                    continue
                if any(p.startswith(FAILS) for p in found):
                    fail += 1
                else:
                    partial += 1
                if len(examples) < 12:
                    examples.append({"args": " ".join(args)[:120], "problems": found,
                                     "stderr": res[i]["err"][-200:]})
            report[name] = {"cases": len(cases), "run": len(res), "fail": fail,
                            "partial": partial,
                            "examples": examples}
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", type=Path, default=ROOT)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/bad_input_census.json")
    ap.add_argument("--suite", action="append", choices=SUITES,
                    help="Only these suites (repeatable; default: all).")
    ap.add_argument("--seconds", type=float, default=float("inf"),
                    help="Stop each suite after this long (cases left are counted as not run).")
    a = ap.parse_args()
    report = census(a.code.resolve(), a.suite, a.seconds)
    a.out.write_text(json.dumps(report, indent=2) + "\n")
    for k, v in report.items():
        if isinstance(v, dict):
            print(f"{k}: {v['cases']} cases, {v['run']} run, {v['fail']} fail, "
                  f"{v['partial']} partial")


if __name__ == "__main__":
    main()
