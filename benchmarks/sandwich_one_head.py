"""Benchmark: the sandwich's H = 1 column at d = 3, 4 (docs/derivations/sandwich.md, "One head").

For each (d, r) with r in {1, 2}: the certified bound (fiber and harmonic count), the exact
error of the Bayes head with M = I, and two searches for a better single head:

- the value-map search of ``workbench.verifiers.one_head_optimum`` (multi-start BFGS over all
  d x d value maps of the exact per-fiber functional; ``gap > 0`` would be an M beating I);
- the Hessian of that functional at M = I by central differences (step 1e-3) on the d^2 - 1
  directions orthogonal to I (the functional ignores scale): all eigenvalues < 0 make I a strict
  local maximum;
- trained one-head generalized attention (MLP and dot scores, free d x d value map), the best by
  held-out error re-measured on a fresh stream (CLT interval at 99.9 %): a model below the M = I
  error beyond its interval would refute its optimality.

    python benchmarks/sandwich_one_head.py   # writes benchmarks/results/sandwich_one_head.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.core.bounds.certified import certified_lower_bound  # noqa: E402
from workbench.core.bounds.fiber_bound.fiber import one_head_error  # noqa: E402
from workbench.verifiers.one_head_optimum import (  # noqa: E402
    captured_functional,
    search_value_maps,
)
from workbench.verifiers.trained_witness import TrainBudget, train_witnesses  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "sandwich_one_head.json"
POINTS = ((3, 1), (3, 2), (4, 1), (4, 2))
BUDGET = TrainBudget(steps=2000, batch=256, lrs=(0.01, 0.003), seeds=3)


def hessian_at_identity(d: int, r: int, h: float = 1e-3) -> np.ndarray:
    """Eigenvalues (ascending) of the central-difference Hessian of ``captured_functional`` at
    ``M = I``, restricted to the directions orthogonal to I."""
    n, eye = d * d, np.eye(d).ravel()

    def f(x: np.ndarray) -> float:
        return captured_functional(x.reshape(d, d), d, r)

    E, hess = np.eye(n), np.zeros((n, n))
    for i in range(n):
        for j in range(i, n):
            a, b = h * E[i], h * E[j]
            hess[i, j] = hess[j, i] = (f(eye + a + b) - f(eye + a - b) - f(eye - a + b)
                                       + f(eye - a - b)) / (4 * h * h)
    basis = np.linalg.svd(np.eye(n) - np.outer(eye, eye) / d)[0][:, : n - 1]  # I's complement
    return np.linalg.eigvalsh(basis.T @ hess @ basis)


def main() -> None:
    torch.set_num_threads(1)
    rows = []
    for d in sorted({d for d, _ in POINTS}):
        t0 = time.perf_counter()
        trained = train_witnesses(d, [(r, 1) for dd, r in POINTS if dd == d], BUDGET, seed=0)
        for (r, _), tw in trained.items():
            cb = certified_lower_bound(d, r, 1)
            err_i, enc = one_head_error(d, r)
            s = search_value_maps(d, r, starts=32, spread=1.0)
            w = tw.witness
            ev = hessian_at_identity(d, r)
            rows.append({
                "d": d, "r": r, "certified": cb.value, "certified_source": cb.source,
                "certified_fiber": cb.fiber.enclosure[0],
                "certified_harmonic": cb.harmonic.enclosure[0],
                "bayes_identity_error": err_i, "bayes_identity_enclosure": list(enc),
                "ratio": err_i / cb.value,
                "value_map_search": {"starts": s.starts, "spread": 1.0, "gap": s.gap,
                                     "best_captured": s.best,
                                     "captured_identity": s.captured_identity,
                                     "stationarity": s.stationarity,
                                     "min_start_value": min(s.start_values)},
                "hessian_at_identity": {"step": 1e-3, "directions": len(ev),
                                        "max_eigenvalue": float(ev[-1]),
                                        "min_eigenvalue": float(ev[0])},
                "trained": {"error": w.error, "ci": list(w.ci), "samples": w.n_eval,
                            "below_identity_beyond_ci": w.ci[1] < enc[0],
                            "training": tw.record},
            })
            print(f"d={d} r={r}: cert {cb.value:.5f} M=I {err_i:.5f} search gap {s.gap:.1e} "
                  f"Hessian max {ev[-1]:.3f} trained {w.error:.5f} "
                  f"[{w.ci[0]:.5f}, {w.ci[1]:.5f}]", flush=True)
        print(f"d={d}: {time.perf_counter() - t0:.0f}s", flush=True)
    OUT.write_text(json.dumps({"benchmark": "sandwich one-head column", "points": rows},
                              indent=1, allow_nan=False))
    print(OUT)


if __name__ == "__main__":
    main()
