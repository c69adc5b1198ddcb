"""Benchmark: the cost of the paper's sweeps at paper scale (docs/sweeps.md, "Paper scale").

Trains one paper-scale group of ``fig2`` (d = 64, N = 16, FFN 2048, batch 256; ``--models`` of
its runs, ``--layers`` L) on ``--device`` and records model-steps per second. The step rate comes
from two runs of ``--steps`` and ``--steps // 4`` steps (their difference drops the set-up and
evaluation), with ``torch.cuda.synchronize`` before every clock read on a GPU.

It then projects the wall time of every paper preset (``fig2``, ``vary_n``, ``vary_d``,
``positional``, ``icl_regression``: their ``paper`` grids from
``workbench/verifiers/presets.py``) on this
device and on n devices of a Ray cluster (one group per device):

- a run's cost is its forward-and-backward multiply-adds per step (``train_flops``: projections,
  scores, mixing, output, FFN, readout; backward = 2 x forward), calibrated by the measured
  group (FLOP/s actually reached), times its steps; held-out evaluation is left out (under
  0.1 % of a run's steps);
- on n devices the groups are placed longest first on the least loaded device (LPT), so the
  wall time is that of the busiest device, never below the longest group;
  ``..._groups_split_to_runs`` places single runs instead (a group split by runs gives the same
  numbers, since batched training equals one at a time), at the same rate per model-step, which
  is optimistic for small groups.

The rate is the measured group's: smaller groups on a GPU reach less, so the projection is a
lower bound there. Writes ``benchmarks/results/paper_scale.json`` (the key names the device).

    python benchmarks/paper_scale.py --device cpu --steps 8 --models 2
    python benchmarks/paper_scale.py --device cuda --steps 300
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.verifiers import presets, sweep  # noqa: E402
from workbench.verifiers.train import train  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "paper_scale.json"
PAPER_PRESETS = ("fig2", "vary_n", "vary_d", "positional", "icl_regression")
CLUSTER_SIZES = (1, 2, 4, 8, 16, 32)


def train_flops(run: presets.Run) -> float:
    """Floating-point operations of one training step of ``run``'s model (forward x 3)."""
    spec, task, B = run.spec, run.task, run.config.batch
    o = spec.options
    T = task.N if task.name == "farthest" else task.N + 1  # tokens per sample
    pos = int(o.get("pos_dims", 0)) if o.get("positional") == "concat" else 0
    width = int(o.get("width", task.d)) + pos
    P, f, tok = spec.rank * spec.heads, int(o.get("ffn_width", 2048)), B * T
    layer = 2 * tok * width * 3 * P + 2 * 2 * B * T * T * P + 2 * tok * P * width \
        + 2 * 2 * tok * width * f
    d_in = task.d + 1 if spec.arch == "regression" else 0
    io = 2 * tok * d_in * width + 2 * tok * width * (1 if spec.arch == "regression" else task.d)
    return 3.0 * (spec.layers * layer + io)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(runs: list[presets.Run], steps: int, device: str) -> float:
    """Seconds to train ``runs`` as one group for ``steps`` steps on ``device`` (synchronised)."""
    cfg = replace(runs[0].config, steps=steps, eval_samples=0, device=device)
    _sync(device)
    t0 = time.perf_counter()
    train([r.spec for r in runs], runs[0].task, cfg)
    _sync(device)
    return time.perf_counter() - t0


def measure(device: str, steps: int, models: int, layers: int) -> dict[str, Any]:
    """Model-steps per second of ``models`` runs of the paper ``fig2`` group (L = ``layers``,
    c = 1) on ``device``, and the FLOP rate that makes."""
    grid = [r for r in presets.plan("fig2", "paper")
            if r.label_dict()["L"] == layers and r.label_dict()["c"] == 1]
    group = grid[:: max(1, len(grid) // models)][:models]  # spread over the ranks
    short = max(1, steps // 4)
    timed(group, 2, device)  # warm-up: kernels, allocator, lazy builds
    dt = timed(group, steps, device) - timed(group, short, device)
    rate = len(group) * (steps - short) / max(dt, 1e-9)
    flops = sum(train_flops(r) for r in group) / len(group)
    return {"group": {"preset": "fig2", "d": 64, "N": 16, "ffn_width": 2048, "batch": 256,
                      "L": layers, "c": 1, "models": len(group),
                      "ranks": sorted({r.spec.rank for r in group})},
            "steps": steps, "steps_subtracted": short, "seconds_difference": round(dt, 3),
            "model_steps_per_s": rate, "train_gflop_per_model_step": flops / 1e9,
            "gflop_per_s": rate * flops / 1e9}


def _lpt(times: list[float], n: int) -> float:
    """Wall time of ``times`` placed longest first on the least loaded of ``n`` devices."""
    loads = [0.0] * n
    for t in sorted(times, reverse=True):
        heapq.heapreplace(loads, loads[0] + t)
    return max(loads)


def project(flop_rate: float) -> dict[str, Any]:
    """Projected hours of each paper preset on one device and on clusters of n devices."""
    out: dict[str, Any] = {}
    for name in PAPER_PRESETS:
        runs = presets.plan(name, "paper")
        groups = sweep.group_runs(sweep.keyed(runs, "projection"))
        times = [sum(train_flops(r) * r.config.steps for _, r in g) / flop_rate for g in groups]
        per_run = [train_flops(r) * r.config.steps / flop_rate for r in runs]
        out[name] = {"runs": len(runs), "groups": len(groups),
                     "model_steps": sum(r.config.steps for r in runs),
                     "hours_one_device": round(sum(times) / 3600, 3),
                     "longest_group_hours": round(max(times) / 3600, 3),
                     "hours_on_n_devices": {str(n): round(_lpt(times, n) / 3600, 3)
                                            for n in CLUSTER_SIZES},
                     "hours_on_n_devices_groups_split_to_runs": {
                         str(n): round(_lpt(per_run, n) / 3600, 3) for n in CLUSTER_SIZES}}
    out["all_presets_hours_one_device"] = round(
        sum(v["hours_one_device"] for v in out.values()), 3)
    return out


def environment(device: str) -> dict[str, Any]:
    env: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__,
                           "cpus": os.cpu_count(), "threads": torch.get_num_threads(),
                           "load_avg": os.getloadavg(), "device": device,
                           "tf32_matmul": torch.backends.cuda.matmul.allow_tf32}
    if device.startswith("cuda"):
        env["gpu"] = torch.cuda.get_device_name(0)
    return env


def run(device: str, steps: int, models: int, layers: int) -> dict[str, Any]:
    m = measure(device, steps, models, layers)
    return {"env": environment(device), "measured": m,
            "projection": project(m["gflop_per_s"] * 1e9)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", type=int, default=None, help="default 300 on a GPU, 8 on CPU")
    ap.add_argument("--models", type=int, default=None,
                    help="runs in the group (default: all 35 on a GPU, 2 on CPU)")
    ap.add_argument("--layers", type=int, choices=[1, 3, 5], default=1)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    gpu = a.device.startswith("cuda")
    if a.threads:
        torch.set_num_threads(a.threads)
    steps = a.steps or (300 if gpu else 8)
    models = a.models or (35 if gpu else 2)
    if steps < 2 or models < 1:
        ap.error("--steps must be >= 2 and --models >= 1")
    res = run(a.device, steps, models, a.layers)
    out = Path(a.out)
    data = json.loads(out.read_text()) if out.exists() else {}
    data[res["env"].get("gpu", a.device)] = res
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(data, indent=2) + "\n")
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
