"""Benchmark: the fiber bound's rigorous enclosure (docs/derivations/fiber_bound.md, "Rigorous
evaluation") over a grid of d <= 64, key-ranks, heads and both value classes: its relative width
(the goal: <= 1e-9), the time to compute it from nothing in this process (caches cleared; the
shipped d <= 4 table is looked up, as the library does), and how far the float pre-check lies
from it. Times are those of a shared machine: the load average is recorded beside them.

Writes benchmarks/results/fiber_enclosure.json.

    python benchmarks/fiber_enclosure.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.core import rigorous as rig  # noqa: E402
from workbench.core.bounds.fiber_bound import fiber as fb  # noqa: E402
from workbench.core.bounds.fiber_bound import fiber_enclosure as fe  # noqa: E402
from workbench.core.bounds.fiber_bound import fiber_series as fs  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "fiber_enclosure.json"


def grid() -> list[tuple[int, int, int]]:
    """``(d, r, H)`` with ``H r < d``: every H at d <= 8, a spread of them above."""
    pts = []
    for d in (3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 32, 48, 64):
        for r in sorted({1, 2, 3, d // 4, d // 2}):
            if r < 1 or r >= d:
                continue
            hs = range(1, (d - 1) // r + 1)
            if d > 8:
                hs = sorted({1, 2, 3, max(1, (d - 1) // (2 * r)), (d - 1) // r} & set(hs))
            pts += [(d, r, h) for h in hs]
    return pts


def main() -> None:
    rows = []
    load = os.getloadavg()
    for d, r, H in grid():
        for cls in ("eq2", "query-dependent-values"):
            fe.captured_enclosure.cache_clear()
            fs.fiber_series.cache_clear()
            t0 = time.perf_counter()
            b = fb.fiber_bound(d, r, H, cls)
            secs = time.perf_counter() - t0
            est = fb.fiber_estimate(d, r, H, cls).value
            lo, hi = b.enclosure
            rows.append({"d": d, "r": r, "H": H, "class": cls, "enclosure": [lo, hi],
                         "relative_width": rig.relative_width(lo, hi), "seconds": round(secs, 4),
                         "float_outside_by": max(0.0, lo - est, est - hi)})
    widths = [x["relative_width"] for x in rows if x["enclosure"][1] > 0]
    secs = [x["seconds"] for x in rows]
    summary = {"points": len(rows), "max_relative_width": max(widths),
               "median_relative_width": statistics.median(widths),
               "max_seconds": max(secs), "median_seconds": statistics.median(secs),
               "slowest": max(rows, key=lambda x: x["seconds"]),
               "widest": max(rows, key=lambda x: x["relative_width"]),
               "max_float_outside_by": max(x["float_outside_by"] for x in rows),
               "load_average_at_start": load, "load_average_at_end": os.getloadavg(),
               "cpus": os.cpu_count()}
    OUT.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
