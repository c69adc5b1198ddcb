"""Benchmark: the bound beyond two keys (docs/derivations/beyond_two_keys.md).

1. ``workbench bounds lower --d 16 --rank 1 --heads 8 --N 4`` timed in fresh processes (wall
   and CPU, imports included; median of ``--repeats``), with its relative width.
2. The bound at d = 16, r = 1, H = 8 for N = 3..8 (and a few more points), each against an
   independent Monte Carlo of B_N: D_N drawn through the frame, kappa read off the geometry,
   ``gamma_l(kappa)^2`` by scipy's Gegenbauer polynomials, the per-draw summand
   ``(N-1)/2 [sum_{l<=41} gamma_l^2 (1 - m_l) + (P(|c| > kappa) - sum gamma_l^2)(1 - m_43)]``
   (bounded in [0, 1]), Hoeffding interval at 99.9 %.
Writes benchmarks/results/n_keys.json.

    python benchmarks/n_keys.py [--repeats 5] [--draws 200000]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import betainc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.core.bounds.sequence_length.n_keys import degree_count, n_keys_bound  # noqa: E402
from workbench.core.harmonics import dim_harmonics  # noqa: E402
from workbench.proofs.support.n_keys_fiber import fiber_draws, gamma_float  # noqa: E402

CLI = ["bounds", "lower", "--d", "16", "--rank", "1", "--heads", "8", "--N", "4", "--json"]
POINTS = [(16, 1, 8, N) for N in range(3, 9)] + [(12, 2, 4, 4), (10, 1, 64, 3)]
L_MC = 41


def time_cli(repeats: int) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "workbench.cli", *CLI]
    subprocess.run(cmd, env=env, capture_output=True, check=True)  # bytecode, untimed
    walls, cpus = [], []
    out = ""
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        out = subprocess.run(cmd, env=env, capture_output=True, check=True, text=True).stdout
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    p = json.loads(out)
    lo, hi = p["enclosure"]
    return {"command": "workbench " + " ".join(CLI), "wall_s_median": statistics.median(walls),
            "cpu_s_median": statistics.median(cpus), "walls": walls,
            "lower_bound": p["lower_bound"], "enclosure": [lo, hi],
            "relative_width": (hi - lo) / hi, "load_average": os.getloadavg()}


def monte_carlo(d: int, r: int, H: int, N: int, draws: int, seed: int) -> dict[str, float]:
    n = d - N + 1
    a = fiber_draws(draws, d, N, np.random.default_rng(seed))
    pole = np.einsum("bkd,bd->bk", a.basis, a.y)
    norm = np.linalg.norm(pole, axis=1)
    kap = (math.sqrt(2) * np.einsum("bkd,bd->bk", a.X[:, 2:], a.y).max(1)
           - np.einsum("bd,bd->b", a.u, a.y)) / norm

    def loss(l: int) -> float:
        return max(0.0, 1 - H * degree_count(d, r, N, l) / dim_harmonics(n, l))

    kept = np.zeros(draws)
    energy = np.zeros(draws)
    for l in range(1, L_MC + 1, 2):
        g2 = np.where(kap < 1, gamma_float(n, l, kap) ** 2, 0.0)
        kept += g2 * loss(l)
        energy += g2
    total = np.where(kap < 1, 1 - betainc(0.5, (n - 1) / 2, np.clip(kap, 0, 1) ** 2), 0.0)
    vals = (N - 1) / 2 * (kept + np.maximum(total - energy, 0) * loss(L_MC + 2))
    half = math.sqrt(math.log(2 / 0.001) / (2 * draws))  # Hoeffding, values in [0, 1]
    m = float(vals.mean())
    return {"mean": m, "ci": [m - half, m + half], "level": 0.999, "draws": draws}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--draws", type=int, default=200_000)
    args = ap.parse_args()
    rows = []
    for i, (d, r, H, N) in enumerate(POINTS):
        t = time.perf_counter()
        bv = n_keys_bound(d, r, H, N)
        secs = time.perf_counter() - t
        mc = monte_carlo(d, r, H, N, args.draws, seed=i)
        lo, hi = bv.enclosure
        rows.append({"d": d, "r": r, "H": H, "N": N, "enclosure": [lo, hi],
                     "relative_width": (hi - lo) / hi if hi else 0.0, "seconds": secs,
                     "truncation_settled": not bv.truncation_matters,
                     "monte_carlo": mc,
                     "inside_mc_interval": mc["ci"][0] <= hi and lo <= mc["ci"][1]})
        print(rows[-1], flush=True)
    out = {"cli": time_cli(args.repeats), "points": rows}
    path = ROOT / "benchmarks" / "results" / "n_keys.json"
    path.write_text(json.dumps(out, indent=1))
    print(json.dumps(out["cli"], indent=1))


if __name__ == "__main__":
    main()
