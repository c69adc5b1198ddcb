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
    python benchmarks/witness_record.py --settings   # only the N >= 3 and soft witnesses

``--settings`` keeps the record's N = 2 hardmax entries as they are and replaces its entries of
other settings (N >= 3 on ``D_N``, soft-nearest; ``benchmarks/witness_settings.py``, every
``benchmarks/results/witness_settings*.json``) by the best known at each point of their grids.
"""

from __future__ import annotations

import json
import shutil
import sys
from typing import Any

# run as a script beside them; witness_training puts the repository and benchmarks/ on sys.path
import witness_settings as settings
import witness_training as training

from workbench.constructions.optimized import STATE_PREFIX, Witness
from workbench.verifiers.witness_record import RECORD_DIR, RECORD_FILE, _entry, lookup

ROOT = training.ROOT

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


def _setting_entries() -> list[dict[str, Any]]:
    """The best trained witness of every point of the settings' grids (inheritance within a
    setting), written as compressed ``.npz`` into the record; their entries."""
    from workbench.constructions.witness_setting import Setting

    pts = list(settings.results().values())
    entries = []
    for p in pts:
        s = Setting.from_dict(p["setting"])
        w = Witness.load(ROOT / p["witness_file"])
        assert w.setting == s, (p["witness_file"], w.setting, s)
        raw = {"interval": "normal", **p, "file": ""}
        entries.append((_entry(raw, "settings", "record"), p))
    keep: dict[int, Any] = {}
    for e0, _ in entries:
        best = lookup([e for e, _ in entries], e0.d, e0.r, e0.heads, e0.setting)
        assert best is not None
        i = next(i for i, (e, _) in enumerate(entries) if e is best)
        keep[i] = entries[i]
    out = []
    for e, p in sorted(keep.values(), key=lambda x: (x[0].setting.to_json(), x[0].point)):
        tag = e.setting.target.replace("-", "_") + "".join(f"_{k}{v:g}" for k, v in
                                                           e.setting.params)
        name = f"d{e.d}_r{e.r}_H{e.heads}_N{e.setting.N}_{tag}.npz"
        shutil.copyfile(ROOT / p["witness_file"], RECORD_DIR / name)
        rec = {**e.to_dict(), "file": name}
        rec.pop("source")
        conv = p["training"]["convergence"]
        rec["convergence"] = {"relative_drop": conv["relative_drop"]}
        out.append(rec)
    return out


def settings_only() -> None:
    data = json.loads(RECORD_FILE.read_text())
    for old in data["witnesses"]:
        if old.get("setting"):
            (RECORD_DIR / old["file"]).unlink(missing_ok=True)
    data["witnesses"] = [w for w in data["witnesses"] if not w.get("setting")]
    new = _setting_entries()
    data["witnesses"] += new
    RECORD_FILE.write_text(json.dumps(data, indent=1, allow_nan=False) + "\n")
    size = sum(f.stat().st_size for f in RECORD_DIR.iterdir())
    print(f"{len(new)} witnesses of other settings; the record holds "
          f"{len(data['witnesses'])} in {size / 1024:.0f} KiB")


def main() -> None:
    if "--settings" in sys.argv[1:]:
        settings_only()
        return
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
    out += _setting_entries()
    RECORD_FILE.write_text(json.dumps({"grid": [list(p) for p in grid], "witnesses": out},
                                      indent=1, allow_nan=False) + "\n")
    size = sum(f.stat().st_size for f in RECORD_DIR.iterdir())
    print(f"{len(out)} witnesses for {len(grid)} points, {size / 1024:.0f} KiB in {RECORD_DIR}")


if __name__ == "__main__":
    main()
