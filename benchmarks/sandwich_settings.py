"""Benchmark: best / bound beyond two keys and for soft targets (docs/derivations/
witnesses_beyond_two.md, "The sandwich at N >= 3 and for soft targets").

- ``nkeys``: d in {8, 16}, r in {1, 2}, H in {1, 2, 4, 8, 16}, N in {3, 4, 6} on ``D_N``
  (hardmax). Lower side: the registered bound ``n-keys`` (``workbench.plugins.get_bound``, with
  its ``rigorous`` flag). Upper side: the best (least interval upper end) of uniform attention
  (``1 - 1/N``, exact), the one-head Bayes witness of key-rank ``min(r, d - N)`` (measured now,
  once per ``(d, r, N)``: a one-head witness serves every H; empirical-Bernstein interval at
  99.9 %) and the record's trained witness (``workbench witness verify d,r,H,N``).
- ``soft``: soft-nearest at beta in {1, 4, 16}, d in {8, 16}, r = 1, the same H (N = 2, D_2;
  the grid of ``benchmarks/soft_sandwich.py``). Lower side: ``bounds sandwich --target``'s own
  (``workbench.commands.sandwich.target_bound``). Upper side: the midpoint and the one-head Bayes
  witness (exact) and the record's trained witness; the trained models of
  ``soft_sandwich.json`` (not saved, so not replayable) are shown beside, not counted.

Writes ``benchmarks/results/sandwich_settings.json``: every point, the median best / bound per N
and overall (nkeys), per beta and at the points with ``H r < d`` (soft). Rerun after the bounds
change; nothing is trained here.

    python benchmarks/sandwich_settings.py [--grid nkeys soft] [--samples 20000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "benchmarks" / "results" / "sandwich_settings.json"
DS = (8, 16)
RS = (1, 2)
HS = (1, 2, 4, 8, 16)
NS = (3, 4, 6)
BETAS = (1.0, 4.0, 16.0)


def _best(cands: list[dict[str, Any]]) -> dict[str, Any]:
    return min(cands, key=lambda c: c["ci"][1])


def _ratio(best: dict[str, Any], bound: float) -> float | None:
    return best["error"] / bound if bound > 0 else None


def _record_cand(e: Any, replay: str) -> dict[str, Any]:
    return {"method": f"record:{e.method}", "error": e.error, "ci": list(e.ci),
            "from": list(e.point), "replay": replay}


def nkeys_points(samples: int) -> list[dict[str, Any]]:
    from workbench.constructions.nkeys_one_head import nkeys_one_head_losses
    from workbench.constructions.optimized import bernstein_ci
    from workbench.constructions.witness_setting import Setting
    from workbench.plugins import get_bound
    from workbench.verifiers.witness_record import lookup, read_record

    bound = get_bound("n-keys")
    record = read_record()
    one_head: dict[tuple[int, int, int], dict[str, Any]] = {}
    pts = []
    for d in DS:
        for N in NS:
            for r in RS:
                r1 = min(r, d - N)
                if (d, r1, N) not in one_head:
                    t0 = time.perf_counter()
                    loss = nkeys_one_head_losses(d, r1, N, samples, 7_100_000 + d + N + r1)
                    one_head[(d, r1, N)] = {
                        "method": "one_head_bayes", "error": float(loss.mean()),
                        "ci": list(bernstein_ci(loss, 2.0)), "rank": r1, "samples": samples,
                        "seconds": time.perf_counter() - t0}
                for H in HS:
                    low = bound(d, r, H, N)
                    cands = [{"method": "uniform", "error": 1 - 1 / N,
                              "ci": [1 - 1 / N, 1 - 1 / N]}, one_head[(d, r1, N)]]
                    e = lookup(record, d, r, H, Setting(N))
                    if e is not None:
                        cands.append(_record_cand(e, f"workbench witness verify {d},{r},{H},{N}"))
                    best = _best(cands)
                    pts.append({"d": d, "r": r, "heads": H, "N": N, "bound": low,
                                "bound_name": bound.name, "bound_rigorous": bound.rigorous,
                                "best": best, "candidates": cands, "ratio": _ratio(best, low),
                                "violated": any(c["ci"][1] < low for c in cands)})
                    print(f"d={d} r={r} H={H} N={N}: bound {low:.4f} best {best['error']:.4f} "
                          f"({best['method']})", flush=True)
    return pts


def soft_points() -> list[dict[str, Any]]:
    from workbench.commands.sandwich import target_bound
    from workbench.constructions.profile_one_head import profile_one_head_error
    from workbench.constructions.witness_setting import Setting
    from workbench.core.bounds.profiles.profile_energy import profile_energies
    from workbench.core.profiles import tanh_profile
    from workbench.verifiers.witness_record import lookup, read_record

    record = read_record()
    ref_file = OUT.with_name("soft_sandwich.json")
    ref = {}
    if ref_file.exists():
        ref = {(p["d"], p["r"], p["heads"], p["beta"]): p["best"]
               for p in json.loads(ref_file.read_text())["points"]}
    pts = []
    for d in DS:
        for beta in BETAS:
            prof = tanh_profile(beta)
            lo, hi = profile_energies(prof, d, 1).total
            one = profile_one_head_error(prof, d, 1)
            for H in HS:
                b = target_bound(prof, d, 1, H)
                low = b.enclosure[0] if b.rigorous else 0.0
                cands = [{"method": "midpoint", "error": hi / 2, "ci": [lo / 2, hi / 2]},
                         {"method": "one_head_bayes", "error": one.value,
                          "ci": list(one.enclosure)}]
                e = lookup(record, d, 1, H, Setting(2, "soft-nearest", (("beta", beta),)))
                if e is not None:
                    cands.append(_record_cand(
                        e, f"workbench witness verify {d},1,{H} --target soft-nearest "
                        f"--target-param beta={beta:g}"))
                best = _best(cands)
                pts.append({"d": d, "r": 1, "heads": H, "beta": f"{beta:g}", "bound": low,
                            "bound_rigorous": b.rigorous, "best": best, "candidates": cands,
                            "ratio": _ratio(best, low), "hr_below_d": H < d,
                            "violated": any(c["ci"][1] < low for c in cands),
                            "soft_sandwich_trained": ref.get((d, 1, H, f"{beta:g}"))})
                print(f"d={d} beta={beta:g} H={H}: bound {low:.4f} best {best['error']:.4f} "
                      f"({best['method']})", flush=True)
    return pts


def _median(pts: list[dict[str, Any]]) -> dict[str, Any]:
    v = [p["ratio"] for p in pts if p["ratio"] is not None]
    return {"median_best_over_bound": statistics.median(v) if v else None, "points": len(v),
            "zero_bound": len(pts) - len(v), "max": max(v) if v else None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", nargs="*", default=["nkeys", "soft"], choices=["nkeys", "soft"])
    ap.add_argument("--samples", type=int, default=20_000,
                    help="fresh samples of each one-head Bayes witness on D_N")
    a = ap.parse_args()
    data: dict[str, Any] = json.loads(OUT.read_text()) if OUT.exists() else {}
    if "nkeys" in a.grid:
        pts = nkeys_points(a.samples)
        data["nkeys"] = {"points": pts, "median": _median(pts),
                         "by_N": {N: _median([p for p in pts if p["N"] == N]) for N in NS}}
    if "soft" in a.grid:
        pts = soft_points()
        data["soft"] = {"points": pts,
                        "by_beta": {f"{b:g}": _median([p for p in pts if p["beta"] == f"{b:g}"])
                                    for b in BETAS},
                        "hr_below_d": [{k: p[k] for k in ("d", "heads", "beta", "bound",
                                                          "ratio")} | {"best": p["best"]["error"]}
                                       for p in pts if p["hr_below_d"]]}
    OUT.write_text(json.dumps(data, indent=1, allow_nan=False) + "\n")
    for k in ("nkeys", "soft"):
        if k in data:
            print(k, json.dumps(data[k].get("median") or data[k].get("by_beta"), indent=1))
            if k == "nkeys":
                print(json.dumps(data[k]["by_N"], indent=1))


if __name__ == "__main__":
    main()
