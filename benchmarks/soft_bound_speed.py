"""Benchmark: the soft (profile) bound under the one truncation rule: its harmonic count
(docs/derivations/soft_targets.md, steps S5-S6; docs/derivations/lower_bound.md, Lemma 6) and
the whole certified bound ``bounds lower --target soft-nearest`` prints (``profile_lower_bound``:
the harmonic count, the fiber parts of step F and S6). Each is timed from cold caches (every
cache of ``workbench.core.bounds`` is cleared before each beta and d, as in a fresh process),
with the truncation reached and whether it is settled,
and the accuracy goals: beta = 1e6 at (16, 1, 16) against hardmax, and (8, 1, 4) at
beta = 4 against its full series. Times are those of a shared 2-core machine: the load average
is recorded beside them.

Writes benchmarks/results/soft_bound_speed.json.

    python benchmarks/soft_bound_speed.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound  # noqa: E402
from workbench.core.bounds.profiles import profile_energy  # noqa: E402
from workbench.core.bounds.profiles.profile_fiber import profile_lower_bound  # noqa: E402
from workbench.core.bounds.profiles.profile_harmonic import profile_bound  # noqa: E402
from workbench.core.profiles import tanh_profile  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "soft_bound_speed.json"
BETAS = (1.0, 4.0, 16.0, 64.0, 256.0, 1000.0, 1e4)
DIMS = (4, 8, 16, 32, 64)
HEADS = (1, 16, 256)


def _clear_caches() -> None:
    """Every functools cache of the bound modules (what a fresh process starts without)."""
    profile_energy.clear_cache()
    for name, mod in list(sys.modules.items()):
        if name.startswith("workbench.core.bounds"):
            for obj in list(vars(mod).values()):
                if callable(getattr(obj, "cache_clear", None)):
                    obj.cache_clear()


def main() -> None:
    harmonic_bound(8, 1, 1)  # import flint and the exact tables' code once
    profile_bound(tanh_profile(2.0), 6, 1, 1)
    rows = []
    for beta in BETAS:
        for d in DIMS:
            _clear_caches()
            for H in HEADS:
                t0 = time.perf_counter()
                b = profile_bound(tanh_profile(beta), d, 1, H)
                dt = time.perf_counter() - t0
                t1 = time.perf_counter()
                full = profile_lower_bound(tanh_profile(beta), d, 1, H)
                dt_full = dt + time.perf_counter() - t1  # the harmonic count, then the rest
                tr = b.truncation
                rows.append({"beta": beta, "d": d, "r": 1, "H": H, "seconds": dt,
                             "certified_seconds": dt_full, "certified": full.value,
                             "certified_source": full.source,
                             "lower_bound": b.enclosure[0], "source": b.bound_value.source,
                             "degrees_summed": b.degrees_summed, "tail": b.tail,
                             "settled": bool(tr is not None and tr.settled)})
                print(f"beta={beta:g} d={d} H={H}: {b.enclosure[0]:.6g} ({rows[-1]['source']}, "
                      f"L={b.degrees_summed}, settled={rows[-1]['settled']}) {dt:.3f}s",
                      flush=True)
    hard = harmonic_bound(16, 1, 16).enclosure[0]
    soft = profile_bound(tanh_profile(1e6), 16, 1, 16)
    small = profile_bound(tanh_profile(4.0), 8, 1, 4)
    times = [r["seconds"] for r in rows]
    data = {
        "rows": rows,
        "summary": {"max_seconds": max(times), "median_seconds": statistics.median(times),
                    "certified_max_seconds": max(r["certified_seconds"] for r in rows),
                    "certified_median_seconds": statistics.median(
                        r["certified_seconds"] for r in rows),
                    "certified_over_1s": [r for r in rows if r["certified_seconds"] >= 1.0],
                    "over_1s": [r for r in rows if r["seconds"] >= 1.0],
                    "unsettled": sum(not r["settled"] for r in rows), "points": len(rows)},
        "accuracy": {"beta_1e6_16_1_16": {"soft": soft.enclosure[0], "hardmax": hard,
                                          "gap": hard - soft.enclosure[0],
                                          "s6_part": soft.bound_value.part(
                                              "harmonic count via hardmax (S6)").enclosure[0]},
                     "beta_4_8_1_4": {"soft": small.enclosure[0],
                                      "truncated_before": 0.0081373}},
        "load_average": os.getloadavg(),
    }
    OUT.write_text(json.dumps(data, indent=1))
    print(json.dumps(data["summary"], indent=1, default=str)[:2000])
    print(json.dumps(data["accuracy"], indent=1))


if __name__ == "__main__":
    main()
