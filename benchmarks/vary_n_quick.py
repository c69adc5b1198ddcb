"""Benchmark: the quick ``vary_n`` sweep (docs/sweeps.md, "The error against N at quick scale")
on this machine. Writes ``benchmarks/results/vary_n_quick.json``.

Runs ``workbench sweep vary_n --scale quick --jobs J --threads 1`` into a fresh store and
records its wall seconds, the CPU seconds of the command and its workers, the load average
before and after (a busy shared machine stretches the wall time, not the CPU time), the best seed
of every (rank, N) with its held-out interval, and both findings as orderings with intervals
(``workbench.verifiers.orderings``).

    python benchmarks/vary_n_quick.py [--jobs 2] [--out benchmarks/results/vary_n_quick.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "vary_n_quick.json"))
    a = ap.parse_args()
    from workbench.verifiers.orderings import vary_n_orderings
    from workbench.verifiers.store import Store
    from workbench.verifiers.sweep import best_of_seeds

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "vary_n.sqlite"
        load_before = os.getloadavg()
        t0 = time.perf_counter()
        cmd = [sys.executable, "-m", "workbench.cli", "sweep", "vary_n", "--scale", "quick",
               "--jobs", str(a.jobs), "--threads", "1", "--db", str(db), "--json"]
        subprocess.run(cmd, check=True, capture_output=True)
        wall = time.perf_counter() - t0
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        with Store(db, readonly=True) as st:
            rows = st.rows()
    best = [{"r": b["labels"]["r"], "N": b["labels"]["N"], "seed": b["seed"],
             "heldout": b["heldout"], "ci": [b["heldout_lo"], b["heldout_hi"]],
             "worst_seed": b["worst"], "seeds": b["seeds"]}
            for b in sorted(best_of_seeds(rows), key=lambda b: (b["labels"]["r"],
                                                                b["labels"]["N"]))]
    findings = [{"finding": o.finding, "note": o.note, "difference": o.difference,
                 "ci": list(o.ci), "ci_level_each": o.level, "verdict": o.verdict}
                for o in vary_n_orderings(rows)]
    out = {"command": " ".join(cmd[2:]), "jobs": a.jobs, "wall_s": wall,
           "cpu_s": ru.ru_utime + ru.ru_stime, "load_before": load_before,
           "load_after": os.getloadavg(), "cores": os.cpu_count(),
           "machine": platform.platform(), "best_of_seeds": best, "findings": findings}
    Path(a.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: out[k] for k in ("wall_s", "cpu_s", "load_before", "load_after")}))
    for f in findings:
        print(f"{f['finding']}: {f['note']}: {f['difference']:+.4f} "
              f"[{f['ci'][0]:+.4f}, {f['ci'][1]:+.4f}] {f['verdict']}")


if __name__ == "__main__":
    main()
