"""Benchmark: the quick ``fig2`` grid through the local backend (grouped, batched) against one
model at a time. Writes ``benchmarks/results/sweep.json``.

- grouped: ``workbench sweep fig2 --scale quick`` into a fresh store (every run of the grid);
  wall time, groups, model-steps per second. Goal: the whole grid in <= 10 minutes on 2 cores.
- one at a time: ``workbench.verifiers.train.train([spec])`` per run, on ``--alone`` runs of the
  grid (seed 0 of every configuration by default), throughput extrapolated to the whole grid.
- ``--jobs N``: the grouped sweep computes N groups at once, each in a worker process with
  ``--threads`` threads (the sweep's ``--jobs``), written under ``quick_fig2_jobsN``; one at a
  time stays one process. Its ``speedup`` is what a user of all N cores sees; the per-core
  figure is ``speedup_cpu`` (CPU seconds include the joined workers') and ``quick_fig2``'s.
- Both record wall and CPU seconds: ``speedup`` is the ratio of wall-clock model-steps per
  second, ``speedup_cpu`` that of model-steps per CPU second, which a busy machine (other
  processes on the cores) disturbs much less; on a quiet machine with ``--threads 1`` they agree.
- ``--group-sizes 1,4,12,24,48``: how the gain of grouping grows with the group. Every group of
  the grid (one per (L, c)) trains K models of its configurations (fresh seeds) for
  ``--scan-steps`` steps, best of two runs; K = 1 is the mean over its configurations. Per
  group and K: ms per model-step, and the fit ``t(K) = X / K + Y`` through K = 1 and the largest
  K (X: the step's shared cost, Y: each model's own), whose limit ``t(1) / Y`` bounds the ratio
  any group size can reach; ``grid`` is the whole grid's ratio at each K and
  ``grid_ratio_limit`` its limit. Written under ``quick_fig2_group_sizes``.
- With ``--scale paper --device cuda --paper-steps S``: the paper grid's groups run for S steps
  each on the GPU, and the fraction of the full paper grid (its real step count) per GPU-hour is
  extrapolated from the measured model-steps per second of every group.

    python benchmarks/sweep.py [--threads 1] [--jobs 1] [--alone seed0|all|none]
    python benchmarks/sweep.py --scale paper --device cuda --paper-steps 200
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.verifiers import presets, sweep  # noqa: E402
from workbench.verifiers.store import Store  # noqa: E402
from workbench.verifiers.tasks import Task  # noqa: E402
from workbench.verifiers.train import ModelSpec, TrainConfig, train  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "sweep.json"


def _cpu_s() -> float:
    """CPU seconds of this process and of its finished (joined) worker processes."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def grouped(threads: int, jobs: int) -> dict:
    runs = presets.plan("fig2", "quick")
    with tempfile.TemporaryDirectory() as tmp, Store(os.path.join(tmp, "s.sqlite")) as st:
        t0, c0 = time.perf_counter(), _cpu_s()
        rep = sweep.run_sweep("fig2", "quick", st, threads=threads, jobs=jobs,
                              progress=lambda m: print(m, flush=True))
        wall, cpu = time.perf_counter() - t0, _cpu_s() - c0
        best = sweep.best_of_seeds(st.rows())
    steps = sum(r.config.steps for r in runs)
    return {"runs": len(runs), "groups": rep.groups, "jobs": jobs, "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2), "model_steps_per_s": round(steps / wall, 1),
            "model_steps_per_cpu_s": round(steps / cpu, 1),
            "best_of_seeds": sorted(([b["labels"], round(b["heldout"], 4)] for b in best),
                                    key=lambda x: sorted(x[0].items()))}


def alone(threads: int, which: str) -> dict:
    torch.set_num_threads(threads)
    runs = presets.plan("fig2", "quick")
    sel = runs if which == "all" else [r for r in runs if r.seed == 0]
    t0, c0 = time.perf_counter(), _cpu_s()
    for i, r in enumerate(sel):
        t = time.perf_counter()
        train([r.spec], r.task, r.config)
        print(f"alone {i + 1}/{len(sel)} {r.label_dict()} {time.perf_counter() - t:.1f}s",
              flush=True)
    wall, cpu = time.perf_counter() - t0, _cpu_s() - c0
    rate = sum(r.config.steps for r in sel) / wall
    return {"runs_measured": len(sel), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "model_steps_per_s": round(rate, 1),
            "model_steps_per_cpu_s": round(sum(r.config.steps for r in sel) / cpu, 1),
            "grid_wall_s_extrapolated": round(sum(r.config.steps for r in runs) / rate, 1)}


def group_sizes(sizes: list[int], steps: int) -> dict:
    """ms per model-step of every group of the quick grid at each group size (see module doc)."""
    runs = presets.plan("fig2", "quick")
    out: dict = {"steps": steps, "groups": [], "grid": {}}
    per_k: dict[int, float] = dict.fromkeys(sizes, 0.0)
    for g in sweep.group_runs(sweep.keyed(runs, "bench")):
        rs = [r for _, r in g]
        cfg = replace(rs[0].config, steps=steps, eval_samples=0)
        configs = [r.spec for r in rs if r.seed == 0]
        ms: dict[int, float] = {}
        for K in sizes:
            if K == 1:
                times = [min(_timed([s], rs[0].task, cfg) for _ in range(2)) for s in configs]
                ms[K] = sum(times) / len(times) * 1e3 / steps
            else:
                specs = [replace(configs[i % len(configs)], seed=1000 + i) for i in range(K)]
                ms[K] = min(_timed(specs, rs[0].task, cfg) for _ in range(2)) * 1e3 / steps / K
            per_k[K] += ms[K] * len(rs)
            print(rs[0].label_dict(), "K", K, f"{ms[K]:.3f} ms per model-step", flush=True)
        big = max(sizes)
        X = (ms[1] - ms[big]) / (1 - 1 / big)
        Y = ms[1] - X
        out["groups"].append({"labels": {k: v for k, v in rs[0].label_dict().items() if k != "r"},
                              "runs": len(rs),
                              "ms_per_model_step": {str(k): round(v, 3) for k, v in ms.items()},
                              "shared_ms_X": round(X, 3), "own_ms_Y": round(Y, 3),
                              "ratio_limit": round(ms[1] / Y, 2)})
    out["grid"] = {str(k): round(per_k[1] / v, 2) for k, v in per_k.items()}
    out["grid_ratio_limit"] = round(per_k[1] / sum(g["runs"] * g["own_ms_Y"]
                                                   for g in out["groups"]), 2)
    return out


def _timed(specs: list[ModelSpec], task: Task, cfg: TrainConfig) -> float:
    t0 = time.perf_counter()
    train(specs, task, cfg)
    return time.perf_counter() - t0


def paper_gpu(steps: int, device: str, preset: str = "fig2") -> dict:
    """Every group of the paper grid for ``steps`` steps; fraction of the grid per hour."""
    runs = presets.plan(preset, "paper")
    groups = sweep.group_runs(sweep.keyed(runs, "bench"))
    total_s, rows = 0.0, []
    for g in groups:
        rs = [r for _, r in g]
        cfg = replace(rs[0].config, steps=steps, eval_samples=0, device=device)
        t0 = time.perf_counter()
        train([r.spec for r in rs], rs[0].task, cfg)
        if device == "cuda":
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        full = dt / steps * rs[0].config.steps  # the group at its real step count
        total_s += full
        rows.append({"labels": rs[0].label_dict() | {"models": len(rs)}, "s_per_step":
                     round(dt / steps, 5)})
        print(rows[-1], flush=True)
    return {"preset": preset, "groups": len(groups), "runs": len(runs), "steps_measured": steps,
            "grid_hours_extrapolated": round(total_s / 3600, 2),
            "fraction_of_grid_per_hour": round(3600 / total_s, 4), "per_group": rows}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1,
                    help="grouped: groups at once, each in a worker process (key "
                    "quick_fig2_jobsN when N > 1)")
    ap.add_argument("--alone", choices=["seed0", "all", "none"], default="seed0")
    ap.add_argument("--scale", choices=["quick", "paper"], default="quick")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--paper-steps", type=int, default=200)
    ap.add_argument("--paper-preset", default="fig2", help="tiny: a CPU smoke run of this path")
    ap.add_argument("--group-sizes", default="",
                    help="comma-separated group sizes to scan (include 1), e.g. 1,4,12,24,48")
    ap.add_argument("--scan-steps", type=int, default=100)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    res: dict = json.loads(Path(a.out).read_text()) if Path(a.out).exists() else {}
    env = {"python": platform.python_version(), "torch": torch.__version__,
           "cpus": os.cpu_count(), "threads": a.threads, "load_avg": os.getloadavg(),
           "device": a.device}
    if a.group_sizes:
        torch.set_num_threads(a.threads)
        try:
            sizes = sorted({int(k) for k in a.group_sizes.split(",")} | {1})
        except ValueError:
            ap.error(f"--group-sizes must be integers >= 1, comma-separated (got "
                     f"{a.group_sizes!r})")
        if sizes[0] < 1 or len(sizes) < 2 or a.scan_steps < 1:
            ap.error("--group-sizes needs a size >= 2 besides 1, all >= 1, and --scan-steps "
                     f">= 1 (got {a.group_sizes!r}, {a.scan_steps})")
        res["quick_fig2_group_sizes"] = {"env": env, **group_sizes(sizes, a.scan_steps)}
        res["quick_fig2_group_sizes"]["env"]["load_avg_end"] = os.getloadavg()
    elif a.scale == "paper":
        if a.device == "cuda":
            env["gpu"] = torch.cuda.get_device_name(0)
        res[f"paper_{a.paper_preset}"] = {"env": env, **paper_gpu(a.paper_steps, a.device,
                                                                  a.paper_preset)}
    else:
        torch.set_num_threads(a.threads)
        key = "quick_fig2" if a.jobs == 1 else f"quick_fig2_jobs{a.jobs}"
        res[key] = entry = {"env": env, "grouped": grouped(a.threads, a.jobs)}
        if a.alone != "none":
            entry["one_at_a_time"] = alone(a.threads, a.alone)
            g, o = entry["grouped"], entry["one_at_a_time"]
            entry["speedup"] = round(g["model_steps_per_s"] / o["model_steps_per_s"], 2)
            entry["speedup_cpu"] = round(g["model_steps_per_cpu_s"] / o["model_steps_per_cpu_s"],
                                         2)
        entry["env"]["load_avg_end"] = os.getloadavg()
    Path(a.out).parent.mkdir(exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
