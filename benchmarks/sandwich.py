"""Benchmark: the sandwich grid (docs/derivations/lower_bound.md, "The sandwich").

For d in {3,4,6,8,12,16,32}, r in {1, 2, d/2, d-2} (distinct, 1 <= r <= d-1) and H in
{1,2,4,16,64,256}: the certified lower bounds (Eq. 2: the larger of the D'_l count and the fiber
bound, docs/derivations/fiber_bound.md; and query-dependent values), the best explicit
witness (method, error, CI, saved file), the ratio best / certified and the seconds. Points are
appended to ``benchmarks/results/sandwich.json`` as they finish (a rerun skips the points already
there, or upgrades them with ``--budget full``); ``--plot`` draws both sides against H per d.

    python benchmarks/sandwich.py [--budget quick|full] [--only-d 8 16] [--max-heads 16] [--plot]
    python benchmarks/sandwich.py --train [--only-d 3 4]   # the trained grid (train_shapes)
    python benchmarks/sandwich.py --recertify --plot   # new bounds, same witnesses
    python benchmarks/sandwich.py --only-d --db runs.sqlite  # store the points for the report

``--train`` gives every point with ``H r >= d`` and ``d <= 8``, and the smallest such H per r at
d = 12 and 16, its own trained witness (``workbench.verifiers.trained_witness``): per d, every
shape of one budget (``train_budget``) in one training call. Its record is stored as the point's
``training`` field (and the trained candidate's); the point's ``budget`` becomes ``full``.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.core.bounds.certified import certified_lower_bound  # noqa: E402
from workbench.verifiers.sandwich import one_head_witness, sandwich, save_witness  # noqa: E402
from workbench.verifiers.sandwich_store import best_witnesses  # noqa: E402
from workbench.verifiers.trained_witness import TrainBudget, train_witnesses  # noqa: E402

DS = (3, 4, 6, 8, 12, 16, 32)
HS = (1, 2, 4, 16, 64, 256)
OUT = ROOT / "benchmarks" / "results" / "sandwich.json"
WITNESSES = ROOT / "benchmarks" / "results" / "sandwich_witnesses"


def ranks(d: int) -> list[int]:
    return sorted({r for r in (1, 2, d // 2, d - 2) if 1 <= r <= d - 1})


def train_shapes(d: int) -> list[tuple[int, int]]:
    """The ``(r, H)`` trained at ``d``: all with ``H r >= d`` for d <= 8, else the least such H
    per r (larger H inherit it: a witness for fewer heads is one for more)."""
    out = []
    for r in ranks(d):
        hs = [H for H in HS if H * r >= d]
        out += [(r, H) for H in (hs if d <= 8 else hs[:1])]
    return out


def train_budget(H: int) -> TrainBudget:
    """The budget of a trained witness with H heads: the cost is ~ H x models x steps x batch,
    so larger H get fewer models and steps (about 35 minutes for the grid on two cores)."""
    if H <= 2:
        return TrainBudget(steps=1500, batch=256, lrs=(0.01, 0.003), seeds=2)
    if H <= 16:
        return TrainBudget(steps=1500 if H <= 4 else 800, batch=256, seeds=2)
    return TrainBudget(steps=300 if H <= 64 else 200, batch=128, seeds=2 if H <= 64 else 1,
                       scores=("mlp",), heldout=10_000)


def _load() -> dict[str, dict]:
    if OUT.exists():
        return {f"{p['d']},{p['r']},{p['heads']}": p for p in json.loads(OUT.read_text())["points"]}
    return {}


def _inherit(pts: list[dict]) -> None:
    """A witness with H' <= H heads of key-rank r' <= r is also a model with H heads of rank r
    (extra heads with M_h = 0): ``best`` is the point's cell by the one inheritance rule,
    ``workbench.verifiers.sandwich_store.best_witnesses``."""
    by_key = {(p["d"], p["r"], p["heads"]): p for p in pts}
    for cell in best_witnesses(pts):
        p = by_key[(cell.d, cell.r, cell.heads)]
        r2, H2 = cell.inherited_from or (cell.r, cell.heads)
        src = by_key[(cell.d, r2, H2)]
        p["best"] = {"error": src["best_error"], "ci": src["best_ci"], "method": src["method"],
                     "witness_file": src["witness_file"],
                     "from": [src["d"], src["r"], src["heads"]]}
        cert = p["certified"]
        p.pop("ratio_null_reason", None)
        p["ratio_best"] = src["best_error"] / cert if cert > 0 else None
        if cert <= 0:  # JSON holds no Infinity: null, with the reason
            p["ratio_null_reason"] = "certified bound is 0 here: the ratio is undefined"


def _one_head_optima() -> dict[tuple[int, int], float]:
    """``(d, r) -> err(M = I)`` where ``sandwich_one_head.json`` found no better single head:
    the value-map search's gap is <= 1e-12 and no trained head lies below it beyond its CI
    (evidence that the Bayes head is the one-head optimum, not a certificate)."""
    f = OUT.with_name("sandwich_one_head.json")
    if not f.exists():
        return {}
    return {(q["d"], q["r"]): q["bayes_identity_enclosure"][0]
            for q in json.loads(f.read_text())["points"]
            if q["value_map_search"]["gap"] <= 1e-12
            and not q["trained"]["below_identity_beyond_ci"]}


def _gap(p: dict, optima: dict[tuple[int, int], float]) -> dict:
    """Where the gap ``[certified, best]`` is known to lie. ``share_lower``: the part below the
    best evidenced lower estimate of the optimum (the one-head optimum where evidenced, else the
    certified bound: share 0); ``share_upper``: the part above the least error of any model
    measured at the point (the best witness itself: share 0); the rest is ``share_unknown``."""
    lo, up = p["certified"], p["best"]["error"]
    ev = optima.get((p["d"], p["r"])) if p["heads"] == 1 else None
    width = up - lo
    share = 0.0 if ev is None or width <= 0 else min(1.0, max(0.0, (ev - lo) / width))
    return {"width": width, "lower_estimate": lo if ev is None else ev,
            "lower_estimate_source": "certified bound" if ev is None else
            "one-head optimum: M = I (evidence: value-map search and training)",
            "share_lower": share, "share_upper": 0.0, "share_unknown": 1.0 - share}


def _monotone(pts: list[dict]) -> None:
    """``certified_monotone``: the largest certified bound among points with as many or more
    heads and as high or higher rank at the same d (a model of the smaller class is one of the
    larger, so their bound holds here too)."""
    for p in pts:
        p["certified_monotone"] = max(q["certified"] for q in pts if q["d"] == p["d"]
                                      and q["r"] >= p["r"] and q["heads"] >= p["heads"])


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def _regime(pts: list[dict]) -> dict:
    finite = [p["ratio_best"] for p in pts if p["ratio_best"] is not None]
    return {"points": len(pts), "finite_ratios": len(finite), "median_ratio": _median(finite),
            "points_above_2x": sum(1 for x in finite if x > 2),
            "median_share_lower": _median([p["gap"]["share_lower"] for p in pts]),
            "points_with_own_trained_witness": sum(1 for p in pts if any(
                c["method"] == "trained_generalized" for c in p["candidates"])),
            "points_inheriting": sum(1 for p in pts if p["best"]["from"] != [p["d"], p["r"],
                                                                            p["heads"]])}


def _write(points: dict[str, dict]) -> None:
    pts = sorted(points.values(), key=lambda p: (p["d"], p["r"], p["heads"]))
    _inherit(pts)
    _monotone(pts)
    optima = _one_head_optima()
    for p in pts:
        p["gap"] = _gap(p, optima)
    finite = [p["ratio_best"] for p in pts if p["ratio_best"] is not None]
    summary = {
        "points": len(pts),
        "median_ratio": statistics.median(finite) if finite else None,
        "points_above_2x": sum(1 for x in finite if x > 2),
        "points_certified_zero": sum(1 for p in pts if p["ratio_best"] is None),
        "h1_ratios": {f"{p['d']},{p['r']}": p["ratio_best"] for p in pts if p["heads"] == 1},
        "violations": sum(1 for p in pts if p["violated"]),
        "regime_hr_below_d": _regime([p for p in pts if p["heads"] * p["r"] < p["d"]]),
        "regime_hr_at_least_d": _regime([p for p in pts if p["heads"] * p["r"] >= p["d"]]),
        "points_certified_monotone_larger": sum(1 for p in pts
                                                if p["certified_monotone"] > p["certified"]),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text(json.dumps({"summary": summary, "points": pts}, indent=1, allow_nan=False))
    tmp.replace(OUT)


def plot() -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = list(_load().values())
    fig, axes = plt.subplots(2, 4, figsize=(16, 7), sharex=True)
    for ax, d in zip(axes.flat, DS):
        for i, r in enumerate(ranks(d)):
            sel = sorted((p for p in pts if p["d"] == d and p["r"] == r), key=lambda p: p["heads"])
            if not sel:
                continue
            H = [p["heads"] for p in sel]
            ax.plot(H, [p["certified"] for p in sel], "-", color=f"C{i}")
            ax.plot(H, [p["best"]["error"] for p in sel], "o--", color=f"C{i}", label=f"r = {r}")
        ax.set_xscale("log", base=2)
        ax.set_title(f"d = {d}")
        ax.legend(fontsize=8, loc="upper right", framealpha=0.85)  # one entry per rank
    from matplotlib.lines import Line2D

    spare = axes.flat[-1]
    spare.axis("off")
    spare.legend(handles=[Line2D([], [], color="k", label="certified lower bound"),
                          Line2D([], [], color="k", linestyle="--", marker="o",
                                 label="best witness")], loc="center", fontsize=10)
    fig.supxlabel("heads H")
    fig.supylabel("error E‖f − A‖² on D₂ (N = 2)")
    png = OUT.with_suffix(".png")
    fig.savefig(png, dpi=90)
    return png


def recertify() -> None:
    """Recompute the certified side (harmonic count and fiber bound) and the exact one-head
    witness of every stored point, keeping every other witness as it is."""
    points = _load()
    for p in points.values():
        d, r, H = p["d"], p["r"], p["heads"]
        cb = certified_lower_bound(d, r, H)
        p["certified"] = cb.value
        p["certified_harmonic"] = cb.harmonic.enclosure[0]
        p["certified_fiber"] = cb.fiber.enclosure[0]
        p["certified_source"] = cb.source
        p["certified_query_values"] = certified_lower_bound(
            d, r, H, value_class="query-dependent-values"
        ).value
        if r < d:
            w = one_head_witness(d, r)
            for c in p["candidates"]:
                if c["method"] == "one_head_bayes":
                    c["error"], c["ci"] = w.error, list(w.ci)
            if p["method"] == "one_head_bayes":
                p["best_error"], p["best_ci"] = w.error, list(w.ci)
                save_witness(w, ROOT / p["witness_file"])
        p["ratio"] = p["best_error"] / cb.value if cb.value > 0 else None
        p["violated"] = any(c["ci"][1] < cb.value for c in p["candidates"])
    _write(points)


def _run_point(d: int, r: int, H: int, budget: str, seed: int, old: dict | None,
               **extra: object) -> None:
    """Measure one point and store it; a worse run never replaces the stored witness, and the
    earlier candidates and seconds are kept."""
    key = f"{d},{r},{H}"
    with tempfile.TemporaryDirectory() as stage:
        p = sandwich(d, r, H, budget=budget, witness_dir=stage, seed=seed, **extra).to_dict()
        p["budget"] = "full" if p.get("training") else budget
        if not math.isfinite(p["ratio"]):  # JSON holds no Infinity (the bound is 0 here)
            p["ratio"] = None
        if old is not None and old["best_ci"][1] < p["best_ci"][1]:
            new = p
            p = {**old, "budget": p["budget"], "candidates": old["candidates"] + p["candidates"],
                 "seconds": old["seconds"] + p["seconds"]}
            for k in ("training", "random_features_law"):  # additive: this run's records
                p[k] = new[k] or old.get(k)
        else:  # the new witness is kept: move its files next to the others
            staged = Path(p["witness_file"])
            for f in Path(stage).glob(staged.stem + ".*"):
                shutil.move(str(f), WITNESSES / f.name)
            p["witness_file"] = str((WITNESSES / staged.name).relative_to(ROOT))
            if old is not None:
                p["candidates"] = old["candidates"] + p["candidates"]
                p["seconds"] = old["seconds"] + p["seconds"]
                if not p.get("training") and old.get("training"):  # an earlier trained run
                    p["training"], p["budget"] = old["training"], old["budget"]
    points = _load()  # another run may have added points meanwhile
    points[key] = p
    _write(points)
    print(f"{key}: bound {p['certified']:.4f} best {p['best_error']:.4f} ({p['method']}) "
          f"ratio {p['ratio'] or math.inf:.2f} {p['seconds']:.1f}s", flush=True)


def train_grid(ds: list[int], only_r: list[int] | None, min_h: int, max_h: int,
               seed: int) -> None:
    """Train the witnesses of ``train_shapes`` (one call per d and budget), then measure each
    point with its trained witness beside the constructions (quick budget)."""
    for d in ds:
        shapes = [(r, H) for r, H in train_shapes(d)
                  if (only_r is None or r in only_r) and min_h <= H <= max_h]
        for b in dict.fromkeys(train_budget(H) for _, H in shapes):
            group = [s for s in shapes if train_budget(s[1]) == b]
            n_eval = 100_000 if max(H for _, H in group) <= 16 else 50_000
            trained = train_witnesses(d, group, b, seed=seed, n_eval=n_eval)
            print(f"d={d} trained {group} in {trained[group[0]].record['seconds']:.0f}s",
                  flush=True)
            for (r, H), tw in trained.items():
                _run_point(d, r, H, "quick", seed, _load().get(f"{d},{r},{H}"), trained=tw)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", choices=("quick", "full"), default="quick")
    ap.add_argument("--only-d", type=int, nargs="*", default=list(DS))
    ap.add_argument("--only-r", type=int, nargs="*", default=None)
    ap.add_argument("--max-heads", type=int, default=max(HS))
    ap.add_argument("--min-heads", type=int, default=1)
    ap.add_argument("--plot", action="store_true")
    ap.add_argument("--summary", action="store_true", help="rewrite the summary only")
    ap.add_argument("--recertify", action="store_true", help="recompute the bounds only")
    ap.add_argument("--force", action="store_true",
                    help="rerun points already measured at this budget (the better witness stays)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the witnesses (training seeds)")
    ap.add_argument("--db", default=None, help="also store every point in this results store")
    ap.add_argument("--train", action="store_true",
                    help="train the witnesses of train_shapes (the better witness stays)")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (more than the free cores slows training many-fold)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if a.summary:
        _write(_load())
        a.only_d = []
    if a.train:
        train_grid(a.only_d, a.only_r, a.min_heads, a.max_heads, a.seed)
        a.only_d = []
    if a.recertify:
        recertify()
        a.only_d = []
    points = _load()
    for d in a.only_d:
        for r in ranks(d):
            if a.only_r is not None and r not in a.only_r:
                continue
            for H in (h for h in HS if a.min_heads <= h <= a.max_heads):
                key = f"{d},{r},{H}"
                old = points.get(key)
                done = old is not None and (a.budget == "quick" or old.get("budget") == "full")
                if done and not a.force:
                    continue
                _run_point(d, r, H, a.budget, a.seed, old)
    if a.db:  # workbench report --db draws the sandwich from the store
        from workbench.verifiers.sandwich_store import write_points
        from workbench.verifiers.store import Store

        with Store(a.db) as st:
            print(f"stored {write_points(st, _load().values(), 'benchmarks/sandwich.py')} points")
    if a.plot:
        print(plot())


if __name__ == "__main__":
    main()
