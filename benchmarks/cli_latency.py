"""Benchmark: how fast the CLI answers (fast and safe answers to bad input).

Times ``python -m workbench.cli ARGS`` in a fresh process (wall clock, imports included) for
``--help``, bad inputs (which must be answered before torch is imported) and valid ``bounds``
calls. ``--root`` measures another checkout (e.g. the code before a change) with the same
arguments; each checkout's results are stored under its ``--label``. The machine's load average is
recorded beside each run because the figures are wall-clock times on a shared machine.
Writes benchmarks/results/cli_latency.json.

    python benchmarks/cli_latency.py [--label after] [--root .] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CASES: dict[str, list[str]] = {
    "help": ["--help"],
    "bad_input_bounds": ["bounds", "lower", "--d", "1", "--r", "1", "--heads", "1"],
    "bad_input_train": ["train", "--d", "4", "--N", "2", "--rank", "9", "--heads", "1",
                        "--steps", "1"],
    "bad_input_construct": ["construct", "full-rank", "--d", "1"],
    "bounds_lower": ["bounds", "lower", "--d", "12", "--r", "2", "--heads", "4"],
    "heads_needed_d200": ["bounds", "heads-needed", "--d", "200", "--r", "1", "--eps", "0.01"],
}
OUT = Path(__file__).resolve().parent / "results" / "cli_latency.json"


def time_case(root: Path, args: list[str], repeats: int, timeout: float) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    times, codes = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, "-m", "workbench.cli", *args], cwd=root,
                                  env=env, capture_output=True, text=True, timeout=timeout)
            codes.append(proc.returncode)
        except subprocess.TimeoutExpired:
            codes.append(None)
        times.append(time.perf_counter() - t0)
    return {"args": args, "median_s": statistics.median(times), "min_s": min(times),
            "max_s": max(times), "exit_codes": codes, "load_avg_1min": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--label", default="after")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--only", nargs="*", default=None)
    a = ap.parse_args()
    cases = {k: v for k, v in CASES.items() if not a.only or k in a.only}
    results = {}
    for name, args in cases.items():
        reps = 1 if name == "heads_needed_d200" else a.repeats  # the old code took ~25 s
        results[name] = time_case(a.root.resolve(), args, reps, a.timeout)
        print(f"{a.label:>8} {name:<22} median {results[name]['median_s']:.3f}s "
              f"(min {results[name]['min_s']:.3f}s, load {results[name]['load_avg_1min']:.1f}, "
              f"exit {results[name]['exit_codes']})", flush=True)
    data = json.loads(OUT.read_text()) if OUT.exists() else {}
    data[a.label] = {"root": str(a.root), "cpus": os.cpu_count(), "python": sys.version.split()[0],
                     "cases": results, "unix_time": time.time()}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
