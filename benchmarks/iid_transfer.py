"""Benchmark: how close the certified N = 2 bound is on i.i.d. keys (docs/derivations/
iid_transfer.md, "Evidence against models"). For each (d, r) the one-head i.i.d. Bayes model
(``M = I``, ``psi = E[s | W x1, W x2, y]``; ``workbench.proofs.support.iid_pairs``) is measured on
fresh i.i.d. samples, with a bounded-loss interval (per-sample loss in [0, 4]) and a CLT one,
against ``certified_lower_bound(d, r, 1)``. Seeded: the same arguments give the same numbers.
Writes ``benchmarks/results/iid_transfer.json``.

    python benchmarks/iid_transfer.py [--samples 200000] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from workbench.core.bounds.certified import certified_lower_bound
from workbench.core.montecarlo import sample_mean
from workbench.core.sphere import make_generator, sample_instances
from workbench.proofs.support.iid_pairs import bayes_head_errors

ROOT = Path(__file__).resolve().parents[1]
CASES = ((3, 1), (4, 1), (5, 2), (6, 2), (8, 1), (12, 2), (16, 1))
LEVEL = 0.999


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    for k, (d, r) in enumerate(CASES):
        t0 = time.perf_counter()
        X, y = sample_instances(args.samples, 2, d, points="iid",
                                generator=make_generator(args.seed + k))
        err = bayes_head_errors(d, r, X, y)
        bounded = sample_mean(err, LEVEL, "bounded", (0.0, 4.0))
        normal = sample_mean(err, LEVEL, "normal")
        cb = certified_lower_bound(d, r, 1)
        rows.append({"d": d, "r": r, "H": 1, "samples": args.samples, "error": bounded.mean,
                     "bounded_ci": [bounded.lo, bounded.hi], "normal_ci": [normal.lo, normal.hi],
                     "level": LEVEL, "certified": cb.value, "source": cb.source,
                     "ratio": bounded.mean / cb.value,
                     "resolved_above": bounded.lo >= cb.enclosure[1],
                     "seconds": time.perf_counter() - t0})
        print(f"d={d} r={r}: iid Bayes head {bounded.mean:.4f} [{bounded.lo:.4f}, "
              f"{bounded.hi:.4f}] vs certified {cb.value:.4f} (x{rows[-1]['ratio']:.4f})")
    out = ROOT / "benchmarks" / "results" / "iid_transfer.json"
    out.write_text(json.dumps({"seed": args.seed, "cases": rows}, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
