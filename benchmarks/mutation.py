"""Mutation harness: the power of ``workbench check --scale quick``.

Runs the check once unmutated, then once per planted fault (``benchmarks/mutation_faults.py``),
each in a fresh subprocess that applies the fault at run time and calls
``workbench.cli.main(["check", "--scale", "quick", "--json"])``. A fault is killed by a claim whose
verdict differs from ``holds`` where the unmutated run said ``holds`` (``violated`` and
``inconclusive`` are told apart). With ``--pytest-marker M`` it also runs
``python -m pytest -m M -q -x`` under each fault (the plugin ``benchmarks/mutant_plugin.py``
applies the fault named by ``WORKBENCH_MUTANT``; pytest exit 5 means no test was collected).

Writes ``benchmarks/results/mutation.json``: per fault, the killing claims with their verdicts,
the seconds taken, and for survivors the reason recorded in ``SURVIVORS``; plus the kill rate.

    python benchmarks/mutation.py [--only ID ...] [--claims PREFIX ...] [--jobs N]
                                  [--pytest-marker M] [--out PATH]
    python benchmarks/mutation.py --run-one ID --out check.json   # (internal: one mutant)

``--claims`` restricts the check (baseline and mutants alike) to the claims those ids or
prefixes select (``workbench check --only``): the cheap run for faults aimed at a few claims.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.mutation_faults import BY_ID, FAULTS, apply  # noqa: E402

TIMEOUT_S = 900
PYTEST_CODES = {0: "survived", 1: "killed", 5: "no tests collected"}

# Why a fault survives: filled in from a run's results, never in advance. ``equivalent``: the
# check's outcome cannot change; ``scope``: outside what the quick check measures;
# ``owned``: a claim being strengthened in parallel should kill it.
SURVIVORS: dict[str, dict[str, str]] = {}


def run_one(fault_id: str | None, out: Path, claims: list[str] | None = None) -> int:
    """Apply ``fault_id`` (None: unmutated) and write the check's JSON to ``out`` (only the
    claims ``claims`` selects, when given)."""
    if fault_id:
        apply(fault_id)
    from workbench.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        # one process: the fault is planted here, and workers would not see it; no plug-ins
        only = [a for c in claims or () for a in ("--only", c)]  # the flag once per claim
        rc = main(["check", "--scale", "quick", "--json", "--builtin", "--jobs", "1", *only])
    text = buf.getvalue()
    start = text.find("{")
    out.write_text(text[start:] if start >= 0 else json.dumps({"error": text}))
    return rc


def _child(fault_id: str | None, tmp: Path,
           claims: list[str] | None = None) -> tuple[dict[str, Any], float, int, str]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--run-one", fault_id or "",
           "--out", str(tmp), *(["--claims", *claims] if claims else [])]
    t0 = time.perf_counter()
    # a data directory of its own: a mutated check is never recorded in the user's store
    with tempfile.TemporaryDirectory(prefix="mutation-data-") as data:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_DATA_HOME": data}
        try:
            p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                               timeout=TIMEOUT_S)
            rc, err = p.returncode, p.stderr[-2000:]
        except subprocess.TimeoutExpired:
            rc, err = -1, f"timed out after {TIMEOUT_S} s"
    secs = time.perf_counter() - t0
    try:
        data = json.loads(tmp.read_text())
    except (OSError, json.JSONDecodeError):
        data = {}
    return data, secs, rc, err


def _pytest(fault_id: str, marker: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "pytest", "-m", marker, "-q", "-x", "-p",
           "benchmarks.mutant_plugin", "-p", "no:cacheprovider"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WORKBENCH_MUTANT": fault_id}
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=TIMEOUT_S)
        rc, tail = p.returncode, p.stdout.strip().splitlines()[-1:] or [""]
    except subprocess.TimeoutExpired:
        rc, tail = -1, ["timed out"]
    return {"exit": rc, "outcome": PYTEST_CODES.get(rc, "error"), "summary": tail[0],
            "seconds": round(time.perf_counter() - t0, 2)}


def _verdicts(data: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {c["id"]: (c["verdict"], c.get("error")) for c in data.get("claims", [])}


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals, kill rate, survivors and per-layer counts of fault rows."""
    killed = sum(r["killed"] for r in rows)
    return {
        "total": len(rows),
        "killed": killed,
        "killed_with_violated": sum(bool(r["violated_by"]) for r in rows),
        "kill_rate": round(killed / len(rows), 4) if rows else None,
        "survivors": [r["id"] for r in rows if not r["killed"]],
        "by_layer": {
            layer: {"total": sum(r["layer"] == layer for r in rows),
                    "killed": sum(r["killed"] for r in rows if r["layer"] == layer)}
            for layer in sorted({r["layer"] for r in rows})
        },
    }


def annotate(path: Path, pytest_smoke: Path | None = None, merge: Path | None = None) -> None:
    """Rewrite a results file with the current ``SURVIVORS`` reasons; optionally replace rows by
    those of a later run of some faults, adding faults new since (``merge``), and add the
    pytest records of a ``--pytest-marker`` run of a few faults."""
    report = json.loads(path.read_text())
    if merge is not None:
        later = json.loads(merge.read_text())
        new = {r["id"]: {**r, "rerun_after_strengthening": True} for r in later["faults"]}
        known = {r["id"] for r in report["faults"]}
        report["faults"] = [new.get(r["id"], r) for r in report["faults"]]
        report["faults"] += [r for i, r in new.items() if i not in known]  # faults added since
        report["rerun_baseline"] = later["baseline"]
    for row in report["faults"]:
        if not row["killed"]:
            row["survivor"] = SURVIVORS.get(row["id"], {"reason": "unexplained", "class": "open"})
    report.update(summarise(report["faults"]))
    report["survivors_explained"] = sum(
        r["survivor"]["class"] != "open" for r in report["faults"] if not r["killed"])
    if any("pytest" in r for r in report["faults"]):  # killed by the check or the properties
        either = sum(r["killed"] or (r.get("pytest") or {}).get("outcome") == "killed"
                     for r in report["faults"])
        report["killed_by_check_or_properties"] = either
        report["pytest_killed"] = sum((r.get("pytest") or {}).get("outcome") == "killed"
                                      for r in report["faults"])
        report["kill_rate_check_or_properties"] = round(either / len(report["faults"]), 4)
    if pytest_smoke is not None:
        smoke = json.loads(pytest_smoke.read_text())
        report["pytest_option_run"] = {
            "marker": smoke.get("pytest_marker"),
            "faults": {r["id"]: r.get("pytest") for r in smoke["faults"]},
        }
    path.write_text(json.dumps(report, indent=1, default=str) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run-one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--only", nargs="*", default=None, help="fault ids to run (default: all)")
    ap.add_argument("--claims", nargs="*", default=None,
                    help="claim ids or prefixes the check is restricted to (default: all)")
    ap.add_argument("--jobs", type=int, default=1, help="mutants checked at once (processes)")
    ap.add_argument("--pytest-marker", default=None, help="also run pytest -m MARKER per fault")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "mutation.json"))
    ap.add_argument("--annotate", action="store_true",
                    help="only rewrite --out with the recorded survivor reasons")
    ap.add_argument("--pytest-smoke", default=None, help="with --annotate: merge the pytest "
                    "records of this results file")
    ap.add_argument("--merge", default=None, help="with --annotate: replace rows by those of "
                    "this results file")
    a = ap.parse_args(argv)
    if a.run_one is not None:
        return run_one(a.run_one or None, Path(a.out), a.claims)
    if a.annotate:
        annotate(Path(a.out), Path(a.pytest_smoke) if a.pytest_smoke else None,
                 Path(a.merge) if a.merge else None)
        return 0
    ids = a.only or [f.id for f in FAULTS]
    bad = [i for i in ids if i not in BY_ID]
    if bad:
        print(f"error: --only must name known faults (got {bad[0]!r})", file=sys.stderr)
        return 2
    out_path = Path(a.out)
    tmp = out_path.with_suffix(".run.json")
    base, base_s, base_rc, base_err = _child(None, tmp, a.claims)
    base_v = _verdicts(base)
    if not base_v:
        print(f"error: the unmutated check produced no result: {base_err}", file=sys.stderr)
        return 1
    print(f"baseline: {base.get('summary')} in {base_s:.1f} s", flush=True)
    if a.jobs < 1:
        print(f"error: --jobs must be an integer >= 1 (got {a.jobs})", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:  # each child is its own process
        results = list(pool.map(
            lambda fid: _child(fid, tmp.with_suffix(f".{fid}.json"), a.claims), ids))
    rows = []
    for fid, (data, secs, rc, err) in zip(ids, results):
        f = BY_ID[fid]
        tmp.with_suffix(f".{fid}.json").unlink(missing_ok=True)
        v = _verdicts(data)
        killers = {
            cid: {"verdict": verdict, "error": error}
            for cid, (verdict, error) in v.items()
            if cid in base_v and base_v[cid][0] == "holds" and verdict != "holds"
        }
        row: dict[str, Any] = {
            "id": fid, "target": f.target, "layer": f.layer, "kind": f.kind,
            "description": f.description, "seconds": round(secs, 2), "exit": rc,
            "killed": bool(killers) or not v,
            "killed_by": killers,
            "violated_by": sorted(c for c, k in killers.items() if k["verdict"] == "violated"),
            "crashed": None if v else err,
        }
        if a.pytest_marker:
            row["pytest"] = {"marker": a.pytest_marker, **_pytest(fid, a.pytest_marker)}
        if not row["killed"]:
            row["survivor"] = SURVIVORS.get(fid, {"reason": "unexplained", "class": "open"})
        rows.append(row)
        print(f"{fid}: {'killed' if row['killed'] else 'SURVIVED'} "
              f"({len(row['violated_by'])} violated, {len(killers)} changed) {secs:.1f} s",
              flush=True)
    report = {
        "command": "workbench check --scale quick --json (one fresh process per fault)"
                   + (f" --only {' '.join(a.claims)}" if a.claims else ""),
        "python": platform.python_version(),
        "baseline": {"summary": base.get("summary"), "seconds": round(base_s, 2),
                     "verdicts": {k: v[0] for k, v in base_v.items()}},
        "faults": rows,
        **summarise(rows),
    }
    if a.pytest_marker:
        report["pytest_marker"] = a.pytest_marker
        report["pytest_killed"] = sum(r["pytest"]["outcome"] == "killed" for r in rows)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(report, indent=1, default=str) + "\n")
    tmp.unlink(missing_ok=True)
    print(f"kill rate {report['killed']}/{len(rows)}; wrote {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
