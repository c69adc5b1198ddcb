"""Benchmark: the sandwich for soft attention (docs/derivations/soft_targets.md).

For the soft-nearest target at beta in {1, 4, 16, inf}, d in {8, 16}, r = 1 and H in
{1, 2, 4, 8, 16} (N = 2 on D_2): the lower side is the harmonic count of the profile
``tanh(beta t/sqrt2)`` (rigorous; at beta = inf, hardmax, the certified bound: the larger of the
harmonic count and the fiber bound); the upper side the best of the midpoint model (exact) and
Eq. 2 layers trained on the target (workbench trainer, held-out CI at 99.9 %). Writes
``benchmarks/results/soft_sandwich.json`` (every point, the median best/bound per beta) and
``soft_sandwich.png``/``.svg`` (bound and best model against H, one curve per beta, per d).
``--heads-law`` also writes ``soft_heads_needed.json``: the least H of the harmonic count at
eps in {0.05, 0.1}, r = 1, against beta and d, with a fitted power law in beta.

    python benchmarks/soft_sandwich.py [--steps 600] [--seeds 2] [--only-d 8] [--heads-law]
    python benchmarks/soft_sandwich.py --plot   # redraw from the JSON
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.core.bounds.certified import certified_lower_bound  # noqa: E402
from workbench.core.bounds.profiles.profile_harmonic import (  # noqa: E402
    profile_bound,
    profile_heads_needed,
)
from workbench.core.profiles import tanh_profile  # noqa: E402
from workbench.core.targets import nearest_neighbour, soft_nearest_neighbour  # noqa: E402
from workbench.verifiers.target_sandwich import target_sandwich  # noqa: E402
from workbench.verifiers.tasks import TargetTask  # noqa: E402

BETAS = (1.0, 4.0, 16.0, math.inf)
DS = (8, 16)
HS = (1, 2, 4, 8, 16)
OUT = ROOT / "benchmarks" / "results" / "soft_sandwich.json"
LAW = ROOT / "benchmarks" / "results" / "soft_heads_needed.json"


def _name(beta: float) -> str:
    return "inf" if math.isinf(beta) else f"{beta:g}"


def point(d: int, r: int, H: int, beta: float, steps: int, seeds: int) -> dict:
    prof = tanh_profile(beta)
    if math.isinf(beta):
        cb = certified_lower_bound(d, r, H)
        bound, source = cb.value, f"certified ({cb.source})"
        fn = nearest_neighbour
    else:
        pb = profile_bound(prof, d, r, H)
        bound, source = pb.enclosure[0], "harmonic count of tanh(beta t/sqrt2)"

        def fn(X, y, b=beta):  # type: ignore[no-untyped-def]
            return soft_nearest_neighbour(X, y, b)
    task = TargetTask("nearest", d=d, N=2, points="orthonormal", target="soft-nearest",
                      target_params=(("beta", beta),), fn=fn)
    t0 = time.perf_counter()
    s = target_sandwich(task, prof, r, H, bound, True, steps=steps, seeds=seeds)
    out = s.to_dict()
    out.update(beta=_name(beta), bound_source=source, seconds=time.perf_counter() - t0,
               steps=steps, seeds=seeds)
    return out


def medians(points: list[dict]) -> dict[str, dict]:
    by: dict[str, list[float]] = {}
    for p in points:
        if p["ratio"] is not None:
            by.setdefault(p["beta"], []).append(p["ratio"])
    return {b: {"median_best_over_bound": statistics.median(v), "points": len(v),
                "min": min(v), "max": max(v)} for b, v in by.items()}


def plot(data: dict) -> list[str]:
    from workbench.verifiers.figure_style import QUANTITY, pyplot, save, set_x_axis, set_y_axis

    plt = pyplot()
    ds = sorted({p["d"] for p in data["points"]})
    fig, axes = plt.subplots(1, len(ds), figsize=(6.2 * len(ds), 5.6), squeeze=False)
    colors = {"1": "#1b9e77", "4": "#d95f02", "16": "#7570b3", "inf": "#222222"}
    for ax, d in zip(axes[0], ds):
        pts = [p for p in data["points"] if p["d"] == d]
        values: list[float] = []
        for b in colors:
            row = sorted((p for p in pts if p["beta"] == b), key=lambda p: p["heads"])
            if not row:
                continue
            Hs = [p["heads"] for p in row]
            zero = " (0: not drawn)" if any(p["bound"] <= 0 for p in row) else ""
            ax.plot(Hs, [p["bound"] if p["bound"] > 0 else math.nan for p in row], "--",
                    color=colors[b], marker="v", label=f"bound, beta={b}{zero}")
            ax.plot(Hs, [p["best"]["error"] for p in row], "-", color=colors[b], marker="o",
                    label=f"best model, beta={b}")
            values += [p["bound"] for p in row if p["bound"] > 0]
            values += [p["best"]["error"] for p in row]
        set_x_axis(ax, HS, True)
        set_y_axis(ax, values)
        ax.set_xlabel("heads H (rank r = 1)")
        ax.set_ylabel(f"error {QUANTITY} on D₂ (N = 2)")
        ax.set_title(f"soft-nearest, d = {d}: bound vs best model")
        ax.legend(fontsize=8, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.16),
                  frameon=False)  # below the panel: the curves reach every corner
    return save(fig, OUT.with_suffix(""))


def heads_law() -> dict:
    rows = []
    for d in (4, 8, 16):
        for beta in (2.0, 4.0, 8.0, 16.0, 32.0, math.inf):
            for eps in (0.05, 0.1):
                r = profile_heads_needed(tanh_profile(beta), d, 1, eps)
                rows.append({"d": d, "beta": _name(beta), "eps": eps, "heads": r.heads,
                             "max_degree": r.max_degree, "truncation_limited":
                             r.truncation_limited, "rigorous": r.rigorous})
    fits = {}
    for d in (4, 8, 16):
        for eps in (0.05, 0.1):
            pts = [(math.log(float(x["beta"])), math.log(x["heads"])) for x in rows
                   if x["d"] == d and x["eps"] == eps and x["beta"] != "inf"
                   and float(x["beta"]) >= 8 and x["heads"] > 1]
            if len(pts) >= 2:
                mx = sum(p[0] for p in pts) / len(pts)
                my = sum(p[1] for p in pts) / len(pts)
                slope = sum((p[0] - mx) * (p[1] - my) for p in pts) / sum(
                    (p[0] - mx) ** 2 for p in pts)
                fits[f"d={d},eps={eps}"] = {"exponent_in_beta": slope, "range": "beta 8..32",
                                            "points": len(pts)}
    return {"rows": rows, "power_law_fits": fits,
            "law": "log H = a + k log beta, least squares over beta in [8, 32], r = 1"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--only-d", type=int, nargs="*", default=None)
    ap.add_argument("--heads-law", action="store_true")
    ap.add_argument("--plot", action="store_true", help="redraw from the JSON only")
    a = ap.parse_args()
    if a.plot:
        print(plot(json.loads(OUT.read_text())))
        return
    torch.set_num_threads(1)
    pts = []
    for d in a.only_d or DS:
        for beta in BETAS:
            for H in HS:
                p = point(d, 1, H, beta, a.steps, a.seeds)
                pts.append(p)
                print(f"d={d} beta={p['beta']} H={H}: bound {p['bound']:.4g} best "
                      f"{p['best']['error']:.4g} ({p['best']['method']}) ratio "
                      f"{p['ratio'] if p['ratio'] is None else round(p['ratio'], 3)} "
                      f"{p['seconds']:.1f}s", flush=True)
    data = {"points": pts, "medians": medians(pts),
            "grid": {"d": list(a.only_d or DS), "r": [1], "H": list(HS),
                     "beta": [_name(b) for b in BETAS]},
            "torch": torch.__version__}
    OUT.write_text(json.dumps(data, indent=1))
    print(json.dumps(data["medians"], indent=1))
    print(plot(data))
    if a.heads_law:
        law = heads_law()
        LAW.write_text(json.dumps(law, indent=1))
        print(json.dumps(law["power_law_fits"], indent=1))


if __name__ == "__main__":
    main()
