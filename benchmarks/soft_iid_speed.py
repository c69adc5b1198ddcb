"""Benchmark: the soft-nearest bound on i.i.d. keys (``bounds lower --target soft-nearest
--points iid``; docs/derivations/soft_targets.md, Lemma T1 with the panel energies of Lemma Q),
timed from cold caches (as in a fresh process) over beta in {1, 4, 16, 64, 1000, 1e4},
d in {8, 16, 64}, r = 1 and H in {1, d/2}; and the same bound for the worked plug-in's smooth sign
``t/sqrt(1/k^2 + t^2)`` (``--points iid --target structured_heads:soft-sign``: the scale mixture,
Lemma Q for any profile) at k in {4, 16}, d in {8, 64}; both with Lemma T1's chords. Times are
those of a shared 2-core machine: the load average is recorded beside them (at the start and
at the end).

Writes benchmarks/results/soft_iid_speed.json.

    python benchmarks/soft_iid_speed.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.soft_bound_speed import _clear_caches as _clear_functools  # noqa: E402
from workbench.core.bounds.profiles import profile_iid_scale  # noqa: E402
from workbench.core.bounds.profiles.profile_iid import CELLS, soft_iid_bound  # noqa: E402
from workbench.core.bounds.profiles.profile_iid_scale import profile_iid_bound  # noqa: E402
from workbench.proofs.paper.profile_iid import soft_sign  # noqa: E402

BETAS = (1.0, 4.0, 16.0, 64.0, 1000.0, 1e4)


def _clear_caches() -> None:
    """What a fresh process starts without: the functools caches and the scale route's
    derivative forms (sympy's derivatives of a profile)."""
    _clear_functools()
    profile_iid_scale._FORMS.clear()
DIMS = (8, 16, 64)


def main() -> None:
    load_start = os.getloadavg()
    rows = []
    for d in DIMS:
        for beta in BETAS:
            for H in (1, d // 2):
                _clear_caches()
                t0 = time.perf_counter()
                value = soft_iid_bound(beta, d, 1, H).value
                secs = time.perf_counter() - t0
                rows.append({"beta": beta, "d": d, "r": 1, "H": H, "value": value,
                             "seconds": round(secs, 3)})
                print(f"beta={beta:g} d={d} H={H}: {value:.6g} in {secs:.2f} s", flush=True)
    plug_in = []
    for k in (4.0, 16.0):
        for d in (8, 64):
            for H in (1, d // 2):
                _clear_caches()
                t0 = time.perf_counter()
                value = profile_iid_bound(soft_sign(k), d, 1, H).value
                secs = time.perf_counter() - t0
                plug_in.append({"k": k, "d": d, "r": 1, "H": H, "value": value,
                                "seconds": round(secs, 3)})
                print(f"soft-sign k={k:g} d={d} H={H}: {value:.6g} in {secs:.2f} s", flush=True)
    times = [r["seconds"] for r in rows]
    out = {"cells": CELLS, "points": rows, "max_seconds": max(times),
           "median_seconds": statistics.median(times),
           "under_one_second": sum(t < 1 for t in times), "of": len(times),
           "plug_in": plug_in, "plug_in_max_seconds": max(r["seconds"] for r in plug_in),
           "load_average": os.getloadavg(), "load_average_at_start": load_start}
    path = Path(__file__).resolve().parent / "results" / "soft_iid_speed.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"max {out['max_seconds']} s, median {out['median_seconds']} s, "
          f"{out['under_one_second']}/{out['of']} under 1 s -> {path}")


if __name__ == "__main__":
    main()
