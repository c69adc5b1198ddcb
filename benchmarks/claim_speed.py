"""Benchmark: the seconds of single claims of ``workbench check --scale quick`` (issue 46).

Each claim runs alone (``--only ID --jobs 1 --builtin --json``) in a fresh process with a
private data directory, ``--repeats`` times; kept per run: the claim's own seconds (the check's
timer, imports excluded), the process's wall clock, the verdict, and the load average beside
it (on a busy machine the seconds say little: compare runs of the same minute). Writes
``benchmarks/results/claim_speed.json``.

    python benchmarks/claim_speed.py [--ids ID ...] [--repeats 3] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_IDS = ("targets.profile_fiber_value", "thm2.combined_bound", "thm2.fiber_value",
               "thm2.sandwich")


def run_claim(claim_id: str) -> dict[str, Any]:
    """One fresh process checking ``claim_id`` alone: its seconds, wall clock and verdict."""
    cmd = [sys.executable, "-m", "workbench.cli", "check", "--scale", "quick", "--only",
           claim_id, "--jobs", "1", "--builtin", "--json"]
    with tempfile.TemporaryDirectory(prefix="claim-speed-") as data:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_DATA_HOME": data,
               "OMP_NUM_THREADS": "1"}
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        wall = time.perf_counter() - t0
    text = p.stdout[p.stdout.find("{"):]
    claims = {c["id"]: c for c in json.loads(text)["claims"]} if text else {}
    c = claims.get(claim_id, {})
    return {"seconds": c.get("seconds"), "verdict": c.get("verdict", f"exit {p.returncode}"),
            "wall_s": round(wall, 3), "load_1min": load}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ids", nargs="+", default=list(DEFAULT_IDS), metavar="ID")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" /
                    "claim_speed.json")
    a = ap.parse_args(argv)
    if not 1 <= a.repeats <= 20:
        print(f"error: --repeats must be in 1..20 (got {a.repeats})", file=sys.stderr)
        return 2
    rows = {cid: [run_claim(cid) for _ in range(a.repeats)] for cid in a.ids}
    for cid, runs in rows.items():
        secs = [r["seconds"] for r in runs if r["seconds"] is not None]
        print(f"{cid:34s} {min(secs) if secs else float('nan'):7.3f} s (min of {len(secs)}), "
              f"verdicts {sorted({r['verdict'] for r in runs})}")
    a.out.write_text(json.dumps({"machine": platform.platform(), "cpus": os.cpu_count(),
                                 "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                 "claims": rows}, indent=1) + "\n")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
