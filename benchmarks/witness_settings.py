"""Production run: trained witnesses beyond N = 2 and for soft targets (docs/derivations/
witnesses_beyond_two.md), the upper side of ``bounds sandwich --N`` and ``--target``.

Two grids, every point ``(d, r, H)`` of one setting trained in one call of the batched trainer
(``workbench.verifiers.trained_witness.train_witnesses``: all shapes and score kinds stacked):

- ``nkeys``: hardmax nearest neighbour on ``D_N`` (N orthonormal keys), d in {8, 16},
  r in {1, 2}, H in {1, 2, 4, 8, 16}, N in {3, 4, 6}; scores ``mlp`` (per key) and ``set``
  (each key's score sees all N keys, ``workbench.models.scores.SetScore``); one call per
  ``(d, N, r)``;
- ``soft``: soft-nearest at beta in {1, 4, 16} on ``D_2``, d in {8, 16}, r = 1, the same H
  (the grid of ``benchmarks/soft_sandwich.py``); scores ``mlp`` and ``dot``; one call per
  ``(d, beta)``.

Per point the model of least held-out error is measured again on a fresh stream (float64, CLT
interval at 99.9 %) and saved with its weights inside (compressed ``.npz``) under
``benchmarks/results/setting_witnesses/``; ``benchmarks/results/witness_settings.json`` gets
every point (error, interval, stream, budget, seconds, convergence, the held-out table) as each
call finishes. A rerun skips the calls already done (``--force`` redoes them).
``benchmarks/witness_record.py`` then puts the best of them into the shipped record.

    nice -n 10 python benchmarks/witness_settings.py [--grid nkeys soft] [--steps 600]
    python benchmarks/witness_settings.py --grid nkeys --only-d 8 --only-N 3
    python benchmarks/witness_settings.py --only-d 16 --out \
        benchmarks/results/witness_settings_d16.json   # a second run beside the first
    python benchmarks/witness_settings.py --grid soft --only-d 8 --only-H 8 16 --only-beta 1 \
        --scores dot --steps 160000 --lr 0.02 --batch 1024 \
        --out benchmarks/results/witness_settings_soft5.json   # longer, at chosen points
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.constructions.witness_setting import Setting  # noqa: E402
from workbench.verifiers.trained_witness import TrainBudget, train_witnesses  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "witness_settings.json"
WITNESSES = ROOT / "benchmarks" / "results" / "setting_witnesses"
DS = (8, 16)
HS = (1, 2, 4, 8, 16)
NS = (3, 4, 6)
BETAS = (1.0, 4.0, 16.0)
N_EVAL = 20_000


def calls(grids: list[str], only_d: list[int] | None, only_n: list[int] | None,
          only_h: list[int] | None = None, only_beta: list[float] | None = None,
          ) -> list[tuple[int, Setting, list[tuple[int, int]]]]:
    """``(d, setting, shapes)`` of every training call, cheapest first."""
    out = []
    for d in only_d or DS:
        if "nkeys" in grids:
            for N in only_n or NS:
                out += [(d, Setting(N), [(r, H) for H in HS]) for r in (1, 2)]
        if "soft" in grids:
            out += [(d, Setting(2, "soft-nearest", (("beta", b),)),
                     [(1, H) for H in only_h or HS]) for b in only_beta or BETAS]
    return sorted(out, key=lambda c: (c[0] * c[1].N, c[1].N, c[2][0][0]))


def call_key(d: int, s: Setting, r: int) -> str:
    return f"d={d} r={r} {s.label()}"


def point_key(d: int, r: int, H: int, s: Setting) -> str:
    return f"{d},{r},{H}|{s.to_json()}"


def _load(out: Path = OUT) -> dict[str, Any]:
    return json.loads(out.read_text()) if out.exists() else {"calls": {}, "points": {}}


def _save(rec: dict[str, Any], out: Path = OUT) -> None:
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(rec, indent=1, allow_nan=False))
    tmp.replace(out)


def results() -> dict[str, Any]:
    """Every point of every results file (``witness_settings*.json``: runs side by side)."""
    pts: dict[str, Any] = {}
    for f in sorted(OUT.parent.glob("witness_settings*.json")):
        pts.update(_load(f)["points"])
    return pts


def budget_for(s: Setting, steps: int, lr: float = 0.01, batch: int = 256,
               scores: tuple[str, ...] = ()) -> TrainBudget:
    scores = scores or (("mlp", "set") if s.N >= 3 else ("mlp", "dot"))
    return TrainBudget(steps=steps, batch=batch, lrs=(lr,), seeds=1, scores=scores,
                       hidden=16, heldout=10_000)


def run_call(d: int, s: Setting, shapes: list[tuple[int, int]], steps: int,
             seed: int, lr: float = 0.01, batch: int = 256, tag: str = "",
             scores: tuple[str, ...] = ()) -> dict[str, Any]:
    from workbench.constructions.optimized import STATE_PREFIX

    budget = budget_for(s, steps, lr, batch, scores)
    t0 = time.perf_counter()
    got = train_witnesses(d, shapes, budget, seed=seed, n_eval=N_EVAL, setting=s)
    points = {}
    for (r, H), tw in got.items():
        w = tw.witness
        w.params = {STATE_PREFIX + k: v.numpy() for k, v in tw.state.items()}
        name = s.target.replace("-", "_") + "".join(f"_{k}{v:g}" for k, v in s.params)
        f = w.save(WITNESSES / f"d{d}_r{r}_H{H}_N{s.N}_{name}{tag}.npz", compressed=True)
        points[point_key(d, r, H, s)] = {
            "d": d, "r": r, "heads": H, "setting": s.to_dict(), "method": w.method,
            "error": w.error, "ci": list(w.ci), "n_eval": w.n_eval, "stream": w.seed,
            "seed": tw.record["chosen"]["seed"], "witness_file": str(f.relative_to(ROOT)),
            "budget": budget.to_dict(), "training": tw.record,
            "code": f"benchmarks/witness_settings.py --only-d {d} --seed {seed} --steps "
                    f"{steps} --lr {lr:g} --batch {batch}"
                    + (f" --scores {' '.join(scores)}" if scores else "")
                    + f" ({call_key(d, s, r)})"}
    return {"seconds": time.perf_counter() - t0, "points": points}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", nargs="*", default=["nkeys", "soft"], choices=["nkeys", "soft"])
    ap.add_argument("--only-d", type=int, nargs="*", default=None)
    ap.add_argument("--only-N", type=int, nargs="*", default=None)
    ap.add_argument("--only-H", type=int, nargs="*", default=None)
    ap.add_argument("--only-beta", type=float, nargs="*", default=None)
    ap.add_argument("--scores", nargs="*", default=[], choices=["mlp", "dot", "set"])
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--out", type=Path, default=OUT,
                    help="results file (another witness_settings_*.json for a run beside it)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    for d, s, shapes in calls(a.grid, a.only_d, a.only_N, a.only_H, a.only_beta):
        key = call_key(d, s, shapes[0][0])
        rec = _load(a.out)
        if key in rec["calls"] and not a.force:
            continue
        tag = "" if a.out == OUT else "_" + a.out.stem.removeprefix("witness_settings_")
        out = run_call(d, s, shapes, a.steps, a.seed, a.lr, a.batch, tag, tuple(a.scores))
        rec = _load(a.out)
        rec["calls"][key] = {"seconds": out["seconds"], "steps": a.steps,
                             "models": len(shapes) * (len(a.scores) or 2)}
        rec["points"].update(out["points"])
        _save(rec, a.out)
        best = ", ".join(f"H={p['heads']}: {p['error']:.4f}" for p in out["points"].values())
        print(f"{key}: {out['seconds']:.0f}s  {best}", flush=True)


if __name__ == "__main__":
    main()
