"""Benchmark: how fast the CLI answers (fast and safe answers to bad input).

Times ``python -m workbench.cli ARGS`` in a fresh process (wall clock, imports included) for
``--help``, bad inputs (which must be answered before torch is imported) and the mathematics
commands (``bounds lower``, ``bounds heads-needed``, ``harmonics sign/dim``, ``kernel
head-vs-target``, which import neither torch, sympy nor scipy). ``python -c pass`` is timed in
the same run, interleaved with the cases, and every median is also given as a ratio to it (the
goal: each answer under 0.5 s on a quiet 2-core machine). Beside the wall time, each run's CPU
time (user + system, from the children's rusage) is recorded, which a shared machine's load
disturbs less. ``--root`` measures another checkout (e.g. the code before a change) with the
same arguments; each checkout's results are stored under its ``--label``. The machine's load
average is recorded beside each run because the figures are times on a shared machine.
Bytecode is cached in a temporary folder (``PYTHONPYCACHEPREFIX``, so the checkout is left as
it is) and every case runs once untimed first, so the times are those of an installed package,
not of compiling the sources.
Writes benchmarks/results/cli_latency.json.

``--grid K`` adds K seeded points of ``bounds lower`` (d <= 64, N = 2 and n-keys; issue 46's
goal: median < 0.5 s, each < 1 s, settled by default) and their summary.

    python benchmarks/cli_latency.py [--label after] [--root .] [--repeats 5] [--only CASE ...]
                                     [--grid 40]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES: dict[str, list[str]] = {
    "help": ["--help"],
    "bad_input_bounds": ["bounds", "lower", "--d", "1", "--r", "1", "--heads", "1"],
    "bad_input_train": ["train", "--d", "4", "--N", "2", "--rank", "9", "--heads", "1",
                        "--steps", "1"],
    "bad_input_construct": ["construct", "full-rank", "--d", "1"],
    "bad_input_check_only": ["check", "--only", "no-such-claim"],
    "bad_input_sweep_preset": ["sweep", "no-such-preset", "--dry-run"],
    "bad_input_report_db": ["report", "--db", "/nonexistent/runs.sqlite", "--out", "/tmp/r"],
    "bad_input_graph_out": ["graph", "--format", "png"],
    "bad_input_train_size": ["train", "--d", "8", "--N", "2", "--rank", "1", "--heads",
                             "1000000000", "--steps", "1"],
    "bounds_lower": ["bounds", "lower", "--d", "16", "--rank", "1", "--heads", "16"],
    "bounds_lower_fiber": ["bounds", "lower", "--d", "12", "--r", "2", "--heads", "4"],
    # the rigorous fiber enclosure's slowest kinds of case: a piece reaching phi = 0 at small d
    # (d = 6: not in the shipped table), the table (d = 3), many heads at d = 64, the trace
    "bounds_lower_fiber_d6": ["bounds", "lower", "--d", "6", "--r", "1", "--heads", "2"],
    "bounds_lower_fiber_d5": ["bounds", "lower", "--d", "5", "--r", "1", "--heads", "1"],
    "bounds_lower_fiber_d3": ["bounds", "lower", "--d", "3", "--r", "1", "--heads", "1"],
    "bounds_lower_fiber_d64": ["bounds", "lower", "--d", "64", "--r", "4", "--heads", "15"],
    "bounds_lower_fiber_query": ["bounds", "lower", "--d", "8", "--r", "1", "--heads", "2",
                                 "--class", "query-dependent-values"],
    "heads_needed": ["bounds", "heads-needed", "--d", "16", "--rank", "1", "--eps", "0.12"],
    "heads_needed_d200": ["bounds", "heads-needed", "--d", "200", "--r", "1", "--eps", "0.01"],
    # issue 46: settled by default (n-keys, its heads-needed, the soft fiber part), listings
    "n_keys_d16_n8": ["bounds", "lower", "--d", "16", "--rank", "1", "--heads", "8", "--N", "8"],
    "n_keys_d64_n8": ["bounds", "lower", "--d", "64", "--rank", "1", "--heads", "8", "--N", "8"],
    "n_keys_d48_n12": ["bounds", "lower", "--d", "48", "--rank", "1", "--heads", "8", "--N",
                       "12"],
    "n_keys_heads_needed": ["bounds", "heads-needed", "--d", "16", "--rank", "1", "--N", "4",
                            "--eps", "0.1"],
    "soft_beta4": ["bounds", "lower", "--d", "16", "--rank", "1", "--heads", "8", "--target",
                   "soft-nearest", "--target-param", "beta=4"],
    "bounds_list": ["bounds", "list"],
    "check_list": ["check", "--list"],
    "witness_list": ["witness", "list"],
    "harmonics_sign": ["harmonics", "sign", "--d", "5", "--max-degree", "9"],
    "harmonics_dim": ["harmonics", "dim", "--d", "3", "--degree", "2"],
    "kernel_head_vs_target": ["kernel", "head-vs-target", "--d", "5", "--theta", "1"],
}
BASELINE = "python_pass"  # ``python -c pass``: the cost of starting the interpreter
OUT = Path(__file__).resolve().parent / "results" / "cli_latency.json"


def _command(args: list[str] | None) -> list[str]:
    return [sys.executable, "-c", "pass"] if args is None else [sys.executable, "-m",
                                                                 "workbench.cli", *args]


def time_case(root: Path, args: list[str] | None, repeats: int, timeout: float,
              pycache: str) -> dict[str, object]:
    """Wall times of ``repeats`` fresh processes (``args=None``: ``python -c pass``), after one
    untimed run that fills the bytecode cache ``pycache``."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONPYCACHEPREFIX": pycache}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(_command(args), cwd=root, env=env, capture_output=True, timeout=timeout)
    times: list[float] = []
    cpu: list[float] = []
    codes: list[int | None] = []
    for _ in range(repeats):
        used = _children_cpu()
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(_command(args), cwd=root, env=env, capture_output=True,
                                  text=True, timeout=timeout)
            codes.append(proc.returncode)
        except subprocess.TimeoutExpired:
            codes.append(None)
        times.append(time.perf_counter() - t0)
        cpu.append(_children_cpu() - used)
    return {"args": args, "median_s": statistics.median(times), "min_s": min(times),
            "max_s": max(times), "median_cpu_s": statistics.median(cpu), "exit_codes": codes,
            "load_avg_1min": os.getloadavg()[0]}


def grid_cases(points: int, seed: int = 46) -> dict[str, list[str]]:
    """``points`` seeded draws of ``bounds lower`` with ``5 <= d <= 64``, r in 1..4, H in
    1..64, half at N = 2 and half at ``3 <= N <= d - 2`` (n-keys), settled by default."""
    import random

    rng = random.Random(seed)
    out: dict[str, list[str]] = {}
    for i in range(points):
        d, r, H = rng.randint(5, 64), rng.randint(1, 4), rng.randint(1, 64)
        N = 2 if i % 2 == 0 else rng.randint(3, d - 2)
        out[f"grid_{i:02d}_d{d}_r{r}_h{H}_n{N}"] = [
            "bounds", "lower", "--d", str(d), "--rank", str(r), "--heads", str(H), "--N", str(N)]
    return out


def _children_cpu() -> float:
    """User + system CPU seconds of the waited-for child processes so far: a process's share of
    it is what a load on the other cores disturbs least."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--label", default="after")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--grid", type=int, default=0,
                    help="also time this many points of bounds lower (d <= 64, every built-in "
                    "route: harmonic count and fiber at N = 2, n-keys at 3 <= N <= d - 2)")
    a = ap.parse_args()
    cases = {k: v for k, v in CASES.items() if not a.only or k in a.only}
    cases.update(grid_cases(a.grid))
    root = a.root.resolve()
    results: dict[str, dict[str, object]] = {}
    base_times: list[float] = []
    base_cpu: list[float] = []
    with tempfile.TemporaryDirectory(prefix="cli_latency_pycache_") as pycache:
        for name, args in cases.items():
            # the baseline is timed next to every case, so both see the same load
            base = time_case(root, None, a.repeats, a.timeout, pycache)
            base_times.append(float(base["median_s"]))  # type: ignore[arg-type]
            base_cpu.append(float(base["median_cpu_s"]))  # type: ignore[arg-type]
            results[name] = time_case(root, args, a.repeats, a.timeout, pycache)
    median_base = statistics.median(base_times)
    median_base_cpu = statistics.median(base_cpu)
    for name, res in results.items():
        res["ratio_to_python"] = float(res["median_s"]) / median_base  # type: ignore[arg-type]
        res["cpu_ratio_to_python"] = float(res["median_cpu_s"]) / median_base_cpu  # type: ignore[arg-type]
        print(f"{a.label:>8} {name:<22} median {res['median_s']:.3f}s "
              f"({res['ratio_to_python']:.1f}x python -c pass; min {res['min_s']:.3f}s; "
              f"cpu {res['median_cpu_s']:.3f}s, {res['cpu_ratio_to_python']:.1f}x; "
              f"load {res['load_avg_1min']:.1f}, exit {res['exit_codes']})", flush=True)
    results[BASELINE] = {"args": None, "median_s": median_base, "medians_s": base_times,
                         "median_cpu_s": median_base_cpu, "medians_cpu_s": base_cpu,
                         "load_avg_1min": os.getloadavg()[0]}
    print(f"{a.label:>8} {BASELINE:<22} median {median_base:.3f}s, cpu {median_base_cpu:.3f}s",
          flush=True)
    grid = [float(v["median_s"]) for k, v in results.items() if k.startswith("grid_")]  # type: ignore[arg-type]
    if grid:
        results["grid_summary"] = {"points": len(grid), "median_s": statistics.median(grid),
                                   "max_s": max(grid), "over_1s": sum(t > 1 for t in grid)}
        print(f"{a.label:>8} grid of {len(grid)}: median {statistics.median(grid):.3f}s, max "
              f"{max(grid):.3f}s, {sum(t > 1 for t in grid)} over 1 s", flush=True)
    data = json.loads(OUT.read_text()) if OUT.exists() else {}
    data[a.label] = {"root": str(a.root), "cpus": os.cpu_count(), "python": sys.version.split()[0],
                     "bytecode": "cached (one untimed run per case first)",
                     "cases": results, "unix_time": time.time()}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
