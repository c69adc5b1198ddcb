"""Build the shipped record of best-known witnesses (``workbench/verifiers/witness_record/``;
docs/derivations/sandwich.md, "The record of witnesses") from the grid
(``benchmarks/results/sandwich.json``) and the trained witnesses of
``benchmarks/witness_training.py`` (``benchmarks/results/witness_training.json``).

Every grid point's own best witness and every trained one is a candidate; an entry is kept when
it is the best known (``lookup``: least interval upper end, inheritance from fewer heads and
lower ranks) at some point of the grid or of the issue's table, so a dominated witness ships no
weights. Each kept witness is written as one compressed ``.npz`` of numbers (``Witness.save``'s
layout; trained weights as ``state.*`` arrays), and ``record.json`` lists them with their error,
interval, evaluation stream, seed, budget and the code that made them.

    python benchmarks/witness_record.py
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import witness_training as training  # noqa: E402

from workbench.constructions.optimized import STATE_PREFIX, Witness  # noqa: E402
from workbench.verifiers.witness_record import (  # noqa: E402
    RECORD_DIR,
    RECORD_FILE,
    _entry,
    lookup,
)

GRID = ROOT / "benchmarks" / "results" / "sandwich.json"
INTERVAL = {"trained_generalized": "normal", "random_features": "normal",
            "hardmax_rank1": "exact", "one_head_bayes": "exact", "bayes_heads": "bernstein"}


def _grid_candidates() -> list[dict[str, Any]]:
    out = []
    for p in json.loads(GRID.read_text())["points"]:
        if not p["witness_file"]:
            continue
        f = ROOT / p["witness_file"]
        trained = p["method"] == "trained_generalized"
        extra = "" if not trained or "_w31" in f.name else " --train"
        if "_w31" in f.name:  # replaced by benchmarks/witness_training.py: listed there
            continue
        weights = f.with_suffix(".pt") if trained else None
        out.append({"d": p["d"], "r": p["r"], "heads": p["heads"], "method": p["method"],
                    "error": p["best_error"], "ci": p["best_ci"], "npz": f, "weights": weights,
                    "seed": 0, "budget": (p.get("training") or {}).get("budget")
                    or {"scale": p.get("budget", "quick")},
                    "code": f"benchmarks/sandwich.py{extra} --only-d {p['d']} --seed 0"})
    return out


def _training_candidate(t: dict[str, Any]) -> dict[str, Any]:
    return {"d": t["d"], "r": t["r"], "heads": t["heads"], "method": "trained_generalized",
            "error": t["error"], "ci": t["ci"], "npz": ROOT / t["witness_file"],
            "weights": ROOT / t["weights"], "seed": t["chosen"]["seed"], "budget": t["budget"],
            "code": t["code"], "convergence": {"relative_drop": t["chosen"]["relative_drop"],
                                               "curve": t["chosen"]["curve"]}}


def main() -> None:
    cands = _grid_candidates()
    for run in sorted(training.OUT.parent.glob("witness_training*.json")):
        cands += [_training_candidate(t) for t in json.loads(run.read_text())["points"].values()]
    cands = list({str(c["npz"]): c for c in cands}.values())
    entries = []
    for c in cands:
        w = Witness.load(c["npz"])
        c["stream"], c["n_eval"] = w.seed, w.n_eval
        entries.append((_entry({**c, "interval": INTERVAL[c["method"]], "file": ""}, "grid",
                               "record"), c))
    grid = sorted({(c["d"], c["r"], c["heads"]) for c in cands} | set(training.EXTRA))
    keep: dict[int, Any] = {}
    for d, r, H in grid:
        best = lookup([e for e, _ in entries], d, r, H)
        assert best is not None
        i = next(i for i, (e, _) in enumerate(entries) if e is best)
        keep[i] = entries[i]
    shutil.rmtree(RECORD_DIR, ignore_errors=True)
    RECORD_DIR.mkdir(parents=True)
    out = []
    for e, c in sorted(keep.values(), key=lambda x: x[0].point):
        w = Witness.load(c["npz"])
        if c["weights"] is not None:
            state = training._read_state(c["weights"])
            w.params = {STATE_PREFIX + k: v.numpy() for k, v in state.items()}
        name = f"d{e.d}_r{e.r}_H{e.heads}_{e.method}.npz"
        w.save(RECORD_DIR / name, compressed=True)
        rec = {**e.to_dict(), "file": name}
        rec.pop("source")
        if "convergence" in c:
            rec["convergence"] = c["convergence"]
        out.append(rec)
    RECORD_FILE.write_text(json.dumps({"grid": [list(p) for p in grid], "witnesses": out},
                                      indent=1, allow_nan=False) + "\n")
    size = sum(f.stat().st_size for f in RECORD_DIR.iterdir())
    print(f"{len(out)} witnesses for {len(grid)} points, {size / 1024:.0f} KiB in {RECORD_DIR}")


if __name__ == "__main__":
    main()
