"""Benchmark: minor page faults per batched training step, with and without the glibc settings
of ``workbench.verifiers.allocator`` (each side in a fresh interpreter, counted by the kernel).

Fault counts depend on the machine's memory pressure, so this is a measurement, not a test
(the test suite checks only that the settings are applied and can be switched off). Writes
``benchmarks/results/allocator_faults.json``.

    python benchmarks/allocator_faults.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = """
import resource, torch
torch.set_num_threads(1)
from workbench.verifiers.tasks import Task
from workbench.verifiers.train import ModelSpec, TrainConfig, _Group, keep_freed_memory
keep_freed_memory()
task = Task("farthest", d=16, N=8)
specs = [ModelSpec("encoder", r, 16 // r, seed=i, options={"ffn_width": 64})
         for i, r in enumerate([1, 2, 4, 16] * 4)]
cfg = TrainConfig(steps=20, batch=256, eval_samples=0)
group = _Group(list(enumerate(specs)), task, cfg)
for t in range(8):  # the heap settles in the first few steps
    group.step(t, task, cfg)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for t in range(8, 20):
    group.step(t, task, cfg)
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 12)
"""


def faults_per_step(tune: bool) -> float:
    env = {**os.environ, "WORKBENCH_MALLOC_TUNE": "1" if tune else "0",
           "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                         text=True, check=True, timeout=600)
    return float(out.stdout.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rows = [{"tuned": faults_per_step(True), "untuned": faults_per_step(False)}
            for _ in range(args.repeats)]
    result = {
        "benchmark": "allocator_faults",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                    "libc": "-".join(platform.libc_ver())},
        "point": "d=16, N=8, K=16 encoders, batch 256, 1 thread; faults per step over steps 8-19",
        "repeats": rows,
        "median_tuned": statistics.median(r["tuned"] for r in rows),
        "median_untuned": statistics.median(r["untuned"] for r in rows),
    }
    out = ROOT / "benchmarks" / "results" / "allocator_faults.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
