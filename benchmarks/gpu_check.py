"""GPU readiness: one script, under 5 minutes on one GPU (docs/sweeps.md, "GPU").

1. ``ratio``: grouped training against one model at a time on ``--device`` (the quick ``fig2``
   groups for ``--ratio-steps`` steps; ``--toy``: one ``tiny`` group), model-steps per second
   of each, with ``torch.cuda.synchronize`` before every clock read.
2. ``paper_scale``: the paper-scale group's throughput and the projection of every paper preset
   (``benchmarks/paper_scale.py``).
3. ``check``: ``workbench check --scale quick --builtin --json`` on the CPU and on ``--device``
   (``--toy``: the ``fact1`` claims only); every verdict must be equal.
4. ``training``: one training step of the same model (the trainer's initialisation of seed 0)
   on the same CPU-drawn batch on both devices: loss and every gradient within float32
   tolerance. Then the trainer's whole run on each device, held-out errors with their CIs side by
   side (the trainer draws its samples from a generator on its device, and CUDA's generator is
   not the CPU's, so the two runs see different samples: they are compared as estimates, not
   bit for bit).

TF32 stays off (``torch.backends.cuda.matmul.allow_tf32`` is recorded): float32 throughout. The
exit status is 1 if a verdict differs or the step is outside tolerance. Writes
``benchmarks/results/gpu_check.json`` (``gpu_check_toy.json`` with ``--toy``), naming the device.

    python benchmarks/gpu_check.py --device cuda
    python benchmarks/gpu_check.py --toy --device cpu     # CI: both sides on the CPU, < 2 min
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import paper_scale  # noqa: E402

from workbench.core.sphere import make_generator  # noqa: E402
from workbench.verifiers import presets, sweep  # noqa: E402
from workbench.verifiers.train import build_model, derive_seed, train  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
GRAD_RTOL = 1e-4  # float32: relative to the largest entry of each gradient


def ratio(preset: str, steps: int, device: str, groups_n: int | None = None) -> dict[str, Any]:
    """Grouped against one at a time, the groups of ``preset`` (quick; the first ``groups_n``)
    for ``steps`` steps."""
    groups = [[r for _, r in g] for g in sweep.group_runs(sweep.keyed(presets.plan(preset,
                                                                                  "quick")))]
    groups = groups[:groups_n]
    paper_scale.timed(groups[0][:1], 2, device)  # warm-up
    grouped = sum(paper_scale.timed(g, steps, device) for g in groups)
    alone = sum(paper_scale.timed([r], steps, device) for g in groups for r in g)
    n = sum(len(g) for g in groups) * steps
    return {"preset": preset, "steps": steps, "groups": len(groups),
            "runs": sum(len(g) for g in groups),
            "grouped_model_steps_per_s": round(n / grouped, 1),
            "one_at_a_time_model_steps_per_s": round(n / alone, 1),
            "speedup": round(alone / grouped, 2)}


def check_verdicts(device: str, only: list[str]) -> dict[str, Any]:
    """The quick check's verdicts on the CPU and on ``device``, and the claims that differ."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")])}
    out: dict[str, dict[str, str]] = {}
    seconds: dict[str, float] = {}
    for side, dev in (("cpu", "cpu"), ("device", device)):
        argv = [sys.executable, "-m", "workbench.cli", "check", "--scale", "quick", "--builtin",
                "--json", "--device", dev, *[a for c in only for a in ("--only", c)]]
        t0 = time.perf_counter()
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=280)
        seconds[side] = round(time.perf_counter() - t0, 1)
        if p.returncode not in (0, 1):
            raise RuntimeError(f"workbench check --device {dev} exited {p.returncode}: "
                               f"{p.stderr[-500:]}")
        out[side] = {c["id"]: c["verdict"] for c in json.loads(p.stdout)["claims"]}
    differ = sorted(c for c in set(out["cpu"]) | set(out["device"])
                    if out["cpu"].get(c) != out["device"].get(c))
    return {"claims": len(out["cpu"]), "only": only, "seconds": seconds, "verdicts_cpu":
            out["cpu"], "verdicts_device": out["device"], "differ": differ,
            "equal": not differ}


def one_step(run: presets.Run, device: str) -> dict[str, Any]:
    """Loss and gradients of one step of ``run``'s model, the same weights and batch on both."""
    spec, task = run.spec, run.task
    cpu = build_model(spec, task, 1, make_generator(derive_seed(spec.seed, "init")))
    dev = copy.deepcopy(cpu).to(device)
    inputs, target = task.sample(run.config.batch, make_generator(derive_seed(spec.seed,
                                                                              "data")))
    losses = []
    for m, where in ((cpu, "cpu"), (dev, device)):
        loss = task.error(m(*[x.to(where) for x in inputs]), target.to(where)).mean()
        loss.backward()
        losses.append(loss.item())
    worst = 0.0
    for (name, a), b in zip(cpu.named_parameters(), dev.parameters()):
        ga, gb = a.grad, b.grad
        assert ga is not None and gb is not None, name
        scale = float(ga.abs().max()) or 1.0
        worst = max(worst, float((ga - gb.cpu()).abs().max()) / scale)
    rel_loss = abs(losses[0] - losses[1]) / abs(losses[0])
    return {"loss_cpu": losses[0], "loss_device": losses[1], "loss_rel_diff": rel_loss,
            "grad_max_rel_diff": worst, "rtol": GRAD_RTOL,
            "within": rel_loss <= GRAD_RTOL and worst <= GRAD_RTOL}


def whole_runs(run: presets.Run, device: str, steps: int) -> dict[str, Any]:
    out = {}
    for side, dev in (("cpu", "cpu"), ("device", device)):
        cfg = replace(run.config, steps=steps, device=dev)
        h = train([run.spec], run.task, cfg).results[0].heldout
        out[side] = None if h is None else {"heldout": h.mean, "lo": h.lo, "hi": h.hi,
                                            "level": h.level}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--toy", action="store_true", help="toy sizes (CI, on the CPU)")
    ap.add_argument("--ratio-steps", type=int, default=None)
    ap.add_argument("--paper-steps", type=int, default=None)
    a = ap.parse_args()
    dev = a.device
    if dev.startswith("cuda") and not torch.cuda.is_available():
        print("--device must be cpu on this machine (no CUDA device found)", file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    toy = a.toy
    t0 = time.perf_counter()
    res: dict[str, Any] = {"env": paper_scale.environment(dev), "toy": toy}
    res["ratio"] = ratio("tiny" if toy else "fig2", a.ratio_steps or (20 if toy else 200), dev,
                         1 if toy else None)
    print("ratio", res["ratio"], flush=True)
    pm = 1 if toy else 35
    res["paper_scale"] = paper_scale.run(dev, a.paper_steps or (3 if toy else 300), pm, 1)
    print("paper_scale", res["paper_scale"]["measured"], flush=True)
    res["check"] = check_verdicts(dev, ["fact1"] if toy else [])
    print("check", {k: res["check"][k] for k in ("claims", "differ", "seconds")}, flush=True)
    run = presets.plan("tiny" if toy else "fig2", "quick")[0]
    res["training"] = {"run": run.label_dict(), "one_step": one_step(run, dev),
                       "whole_runs": whole_runs(run, dev, 30 if toy else run.config.steps)}
    print("training", res["training"], flush=True)
    res["ok"] = res["check"]["equal"] and res["training"]["one_step"]["within"]
    res["seconds"] = round(time.perf_counter() - t0, 1)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / ("gpu_check_toy.json" if toy else "gpu_check.json")
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"{'ok' if res['ok'] else 'FAILED'} in {res['seconds']}s; wrote {out}")
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
