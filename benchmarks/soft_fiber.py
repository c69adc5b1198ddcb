"""Benchmark: the fiber bound for the soft-nearest profile (docs/derivations/soft_targets.md,
step F, Lemmas P1-P5).

1. The soft sandwich's points (d in {8, 16}, r = 1, H in {1, 2, 4, 8, 16}, beta in {1, 4, 16}):
   the profile's certified bound (``profile_lower_bound``: harmonic count, fiber, fiber via
   hardmax) against the best trained error stored in benchmarks/results/soft_sandwich.json
   (best = its ratio x its bound), old (harmonic count) and new ratios best / bound.
2. Speed of the fiber parts alone (``profile_fiber_parts``: the profile's energies, the exact
   kernel table, the Ky Fan average; the harmonic count is not timed here) at beta up to 1e4 and
   d up to 64, from nothing in this process (caches cleared). The load average is recorded.

Writes benchmarks/results/soft_fiber.json.

    python benchmarks/soft_fiber.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.core.bounds.profiles import profile_energy as pe  # noqa: E402
from workbench.core.bounds.profiles import profile_fiber_kernel as pk  # noqa: E402
from workbench.core.bounds.profiles.profile_fiber import (  # noqa: E402
    profile_fiber_parts,
    profile_lower_bound,
)
from workbench.core.profiles import tanh_profile  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
OUT = RESULTS / "soft_fiber.json"


def sandwich() -> list[dict]:  # type: ignore[type-arg]
    """New bound against the stored witnesses of the soft sandwich."""
    stored = json.loads((RESULTS / "soft_sandwich.json").read_text())["points"]
    rows = []
    for p in stored:
        if p["beta"] == "inf" or p["ratio"] is None:
            continue
        best = p["ratio"] * p["bound"]
        bv = profile_lower_bound(tanh_profile(float(p["beta"])), p["d"], p["r"], p["heads"])
        rows.append({"d": p["d"], "r": p["r"], "heads": p["heads"], "beta": p["beta"],
                     "best": best, "old_bound": p["bound"], "new_bound": bv.value,
                     "source": bv.source, "rigorous": bv.rigorous,
                     "old_ratio": p["ratio"], "new_ratio": best / bv.value,
                     "below_bound": best < bv.value})
        print(rows[-1], flush=True)
    return rows


def speed() -> list[dict]:  # type: ignore[type-arg]
    rows = []
    for d in (8, 16, 32, 64):
        for beta in (1.0, 16.0, 100.0, 1000.0, 10000.0):
            for H in (1, max(1, d // 4)):
                pe.clear_cache()
                pk._built.cache_clear()
                t = time.perf_counter()
                parts = profile_fiber_parts(tanh_profile(beta), d, 1, H)
                sec = time.perf_counter() - t
                best = max(parts, key=lambda q: q.lower)
                rows.append({"d": d, "r": 1, "heads": H, "beta": beta, "seconds": sec,
                             "parts": [q.name for q in parts], "value": best.lower,
                             "source": best.name, "rigorous": best.rigorous})
                print(rows[-1], flush=True)
    return rows


def main() -> None:
    load = os.getloadavg()[0]
    sand = sandwich()
    fast = speed()
    groups: dict[str, list[float]] = {}
    for r in sand:
        groups.setdefault(r["beta"], []).append(r["new_ratio"])
    out = {
        "load_average": load,
        "sandwich": sand,
        "median_new_ratio": {b: statistics.median(v) for b, v in groups.items()},
        "max_new_ratio": max(r["new_ratio"] for r in sand),
        "any_witness_below": any(r["below_bound"] for r in sand),
        "speed": fast,
        "max_seconds": max(r["seconds"] for r in fast),
        "max_seconds_beta_le_1e4": max(r["seconds"] for r in fast if r["beta"] <= 1e4),
    }
    OUT.write_text(json.dumps(out, indent=1))
    print(json.dumps({k: v for k, v in out.items() if k not in ("sandwich", "speed")}))


if __name__ == "__main__":
    main()
