"""Benchmark: ``workbench check --scale quick --builtin`` with one worker against several.

Runs the check in a fresh process (wall clock, imports and worker start-up included) once per
``--jobs`` value, in the same run, and compares the results claim by claim: the verdicts, and
every evidence number (the value, the bound and their intervals; the seconds excepted). Each
run's verdicts and seconds per claim are kept, and for a claim whose numbers differ, its first
differing evidence row in both runs. The machine's load average is recorded
beside each time: the figures are wall-clock times, and on a busy machine they say little.
Writes benchmarks/results/check_jobs.json.

The runs share a private per-user cache (``$WORKBENCH_CACHE``, seeded with the compiled native
kernels only), so the first run has no order hint (``workbench.proofs.claim_seconds``) and the
later ones have the seconds of the runs before them: the default ``--jobs 2 1 2`` measures two
workers cold, one worker, and two workers with the hint. The numbers are compared with the
first one-worker run.

    python benchmarks/check_jobs.py [--jobs 2 1 2] [--scale quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "check_jobs.json"
NUMBERS = ("value", "bound", "ci", "bound_ci", "ci_level", "tolerance", "params", "verdict")


def private_cache() -> Path:
    """A fresh cache folder holding the user's compiled native kernels and nothing else."""
    from workbench.native.build import cache_root

    tmp = Path(tempfile.mkdtemp(prefix="check_jobs_cache_"))
    for lib in cache_root().glob("native-*.so") if cache_root().is_dir() else []:
        shutil.copy2(lib, tmp / lib.name)
    return tmp


def run_check(jobs: int, scale: str, cache: Path) -> dict[str, Any]:
    from workbench.proofs.claim_seconds import FILE

    hinted = (cache / FILE).exists()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1",
           "WORKBENCH_CACHE": str(cache)}
    args = [sys.executable, "-m", "workbench.cli", "check", "--scale", scale, "--builtin",
            "--jobs", str(jobs), "--json"]
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    payload = json.loads(proc.stdout)
    return {"jobs": jobs, "order_hint": hinted, "wall_s": round(wall, 2),
            "exit_code": proc.returncode,
            "load_avg_1min_before": load, "load_avg_1min_after": os.getloadavg()[0],
            "seconds_of_checks": payload["summary"]["seconds"], "summary": payload["summary"],
            "claims": payload["claims"]}


def brief(claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": c["id"], "verdict": c["verdict"], "seconds": c["seconds"]} for c in claims]


def first_difference(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    rows = list(zip(a["evidence"], b["evidence"]))
    i = next((i for i, (x, y) in enumerate(rows) if x != y), None)
    if i is None:
        return {"rows": [len(a["evidence"]), len(b["evidence"])], "error": [a["error"], b["error"]]}
    return {"row": i, "base": rows[i][0], "other": rows[i][1]}


def fingerprint(claims: list[dict[str, Any]]) -> dict[str, Any]:
    """What must not depend on the number of workers: each claim's verdict and numbers."""
    return {c["id"]: {"verdict": c["verdict"], "error": c["error"],
                      "evidence": [{k: e.get(k) for k in NUMBERS} for e in c["evidence"]]}
            for c in claims}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, nargs="+", default=[2, 1, 2])
    ap.add_argument("--scale", default="quick")
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    cache = private_cache()
    try:
        runs = [run_check(j, a.scale, cache) for j in a.jobs]
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    ref = next((r for r in runs if r["jobs"] == 1), runs[0])
    base = fingerprint(ref["claims"])
    for r in runs:
        if r is ref:
            continue
        other = fingerprint(r["claims"])
        r["same_order"] = [c["id"] for c in r["claims"]] == [c["id"] for c in runs[0]["claims"]]
        r["verdicts_differ"] = sorted(k for k in base if base[k]["verdict"]
                                      != other.get(k, {}).get("verdict"))
        r["numbers_differ"] = sorted(k for k in base if base[k] != other.get(k))
        r["differences"] = {k: first_difference(base[k], other[k]) for k in r["numbers_differ"]
                            if k in other}
    for r in runs:
        r["claims"] = brief(r["claims"])
    for r in runs:
        hint = "with the order hint" if r["order_hint"] else "no order hint"
        print(f"--jobs {r['jobs']} ({hint}): {r['wall_s']} s wall, "
              f"{r['seconds_of_checks']} s of checks, "
              f"exit {r['exit_code']}, load {r['load_avg_1min_before']:.2f}"
              + (f", verdicts differ: {r['verdicts_differ']}, numbers differ: "
                 f"{r['numbers_differ']}" if "numbers_differ" in r else ""))
    out = {"command": f"workbench check --scale {a.scale} --builtin --jobs N --json",
           "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
           else os.cpu_count(), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "runs": runs}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
