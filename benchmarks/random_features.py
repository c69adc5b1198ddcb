"""Benchmark: exact-kernel solve and error of random rank-1 features (docs/paper.md §4).

For H in {256, ..., 16384} (float64, CPU): Cholesky up to ``--dense-limit`` heads, matrix-free CG
(blocked ``C v``, optional float32 tile cache) beyond, and CG at every H for comparison up to
``--cg-compare``. With CUDA available, also H up to 65536 on the GPU. Writes
``benchmarks/results/random_features.json``. Goal: H = 4096 under 5 s on two cores;
H = 16384 without running out of memory via the matrix-free path.

    python benchmarks/random_features.py [--d 64] [--max-heads 16384] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.constructions._kernel_solve import solve_value_weights  # noqa: E402
from workbench.constructions.random_features import sample_heads  # noqa: E402
from workbench.constructions.rank_one import target_agreement  # noqa: E402


def _one(d: int, H: int, solver: str, device: str, seed: int, cache_mb: float) -> dict:
    t0 = time.perf_counter()
    Q, K = sample_heads(H, d, "cosine_uniform", generator=seed)
    Q, K = Q.to(device), K.to(device)
    b = target_agreement(Q, K).to(device)
    sol = solve_value_weights(Q, K, b, solver, cache_mb=cache_mb)
    if device == "cuda":
        torch.cuda.synchronize()
    total = time.perf_counter() - t0
    return {
        "d": d,
        "heads": H,
        "device": device,
        "solver": sol.method,
        "error": sol.error,
        "iterations": sol.iterations,
        "relative_residual": sol.relative_residual,
        "jitter": sol.jitter,
        "solve_seconds": sol.seconds,
        "total_seconds": total,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--max-heads", type=int, default=16384)
    ap.add_argument("--dense-limit", type=int, default=4096)
    ap.add_argument("--cg-compare", type=int, default=4096)
    ap.add_argument("--cache-mb", type=float, default=1024.0)
    ap.add_argument("--gpu-max-heads", type=int, default=65536)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--out", default=str(Path(__file__).parent / "results" / "random_features.json")
    )
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rows = []
    H = 256
    while H <= args.max_heads:
        solvers = ["cholesky" if H <= args.dense_limit else "cg"]
        if H <= args.cg_compare and "cg" not in solvers:
            solvers.append("cg")
        for s in solvers:
            row = _one(args.d, H, s, "cpu", args.seed, args.cache_mb)
            rows.append(row)
            print(json.dumps(row), flush=True)
        H *= 2
    if torch.cuda.is_available():
        H = 256
        while H <= args.gpu_max_heads:
            row = _one(args.d, H, "cholesky" if H <= 32768 else "cg", "cuda", args.seed, 0.0)
            rows.append(row)
            print(json.dumps(row), flush=True)
            H *= 2
    out = {
        "benchmark": "random_features exact-kernel solve",
        "law": "cosine_uniform",
        "threads": args.threads,
        "torch": torch.__version__,
        "machine": platform.machine(),
        "cuda": torch.cuda.is_available(),
        "goal": "H=4096 < 5 s on two CPU cores; H=16384 without OOM (matrix-free CG)",
        "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
