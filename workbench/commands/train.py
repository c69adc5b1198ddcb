"""``workbench train``: train K seeds of one configuration in one batched call (PAPER.md §4).

Prints per-seed and best-of-seeds errors (training loss and held-out error with its CI) and the
parameter counts. ``--checkpoint PATH`` makes a killed run resumable.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from verifiers.tasks import TASKS, Task
from verifiers.train import ModelSpec, TrainConfig, train
from workbench.commands._common import common_options, emit, resolve_device
from workbench.core.sphere import POINT_LAWS
from workbench.core.validation import check_dim, check_float, check_heads, check_int, check_rank


@click.command(help="Train low-rank attention models (K seeds batched) and report their errors.")
@click.option("--d", "d", type=int, required=True, help="Dimension d (>= 2).")
@click.option("--N", "N", type=int, required=True, help="Keys per instance (context pairs).")
@click.option("--rank", type=int, required=True, help="Head rank r in 1..d.")
@click.option("--heads", type=int, required=True, help="Heads per layer H (>= 1).")
@click.option("--layers", type=int, default=1, show_default=True, help="Layers L.")
@click.option("--steps", type=int, required=True, help="Training steps.")
@click.option("--seeds", type=int, default=1, show_default=True, help="Seeds seed..seed+K-1.")
@click.option("--task", type=click.Choice(TASKS), default="nearest", show_default=True)
@click.option("--distribution", type=click.Choice(POINT_LAWS), default="iid", show_default=True)
@click.option("--lr", type=float, default=0.01, show_default=True)
@click.option(
    "--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True
)
@click.option("--batch", type=int, default=256, show_default=True, help="Fresh samples/step.")
@click.option("--eval-samples", type=int, default=20_000, show_default=True)
@click.option(
    "--checkpoint",
    type=click.Path(dir_okay=False),
    default=None,
    help="Checkpoint file: written during training, resumed from if present.",
)
@common_options
def cli(
    d: int,
    N: int,
    rank: int,
    heads: int,
    layers: int,
    steps: int,
    seeds: int,
    task: str,
    distribution: str,
    lr: float,
    device: str,
    batch: int,
    eval_samples: int,
    checkpoint: str | None,
    as_json: bool,
    seed: int,
) -> None:
    d = check_dim(d, "--d")
    check_int("--N", N, lo=1)
    rank = check_rank(rank, 48 if task == "regression" else d, "--rank")  # regression width 48
    check_heads(heads, "--heads")
    check_int("--layers", layers, lo=1)
    check_int("--steps", steps, lo=1)
    check_int("--seeds", seeds, lo=1)
    check_float("--lr", lr, lo=0.0, lo_open=True)
    check_int("--batch", batch, lo=1)
    check_int("--eval-samples", eval_samples, lo=100)
    if checkpoint is not None:
        parent = os.path.dirname(os.path.abspath(checkpoint))
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
            raise ValueError(
                f"--checkpoint must be a file in an existing, writable folder (got {checkpoint!r})"
            )
    check_int("--seed", seed, lo=0)
    if distribution == "orthonormal" and N > d:
        raise ValueError(
            f"--N must be an integer in 1..d = 1..{d} for orthonormal points (got {N})"
        )
    dev = resolve_device(device)
    t = Task(task, d=d, N=N, points=distribution)
    arch = {
        "nearest": "attention" if layers == 1 else "encoder",
        "farthest": "encoder",
        "regression": "regression",
    }[task]
    specs = [ModelSpec(arch, rank, heads, layers, seed=s, lr=lr) for s in range(seed, seed + seeds)]
    cfg = TrainConfig(
        steps=steps, batch=batch, eval_samples=eval_samples, device=dev, eval_seed=seed
    )
    with _progress(as_json) as bar:
        job = bar.add_task("training", total=steps)
        run = train(
            specs, t, cfg, checkpoint=checkpoint, progress=lambda i, n: bar.update(job, completed=i)
        )
    per_seed: list[dict[str, Any]] = [
        {
            "seed": r.spec.seed,
            "best_loss": r.best_loss,
            "final_loss": r.final_loss,
            "heldout": r.heldout.to_dict() if r.heldout else None,
        }
        for r in run.results
    ]
    best = min(per_seed, key=lambda s: s["best_loss"])
    first = run.results[0]
    payload: dict[str, Any] = {
        "task": t.to_dict(),
        "arch": arch,
        "rank": rank,
        "heads": heads,
        "layers": layers,
        "steps": steps,
        "batch": batch,
        "lr": lr,
        "device": dev,
        "params": {"paper": first.params_paper, "total": first.params_total},
        "seeds": per_seed,
        "best_of_seeds": best,
        "seconds": run.seconds,
        "model_steps_per_s": run.model_steps_per_s,
    }
    emit(payload, as_json, _human)


def _progress(as_json: bool) -> Progress:
    console = Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} steps"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=as_json or not sys.stderr.isatty(),
    )


def _human(p: dict[str, Any]) -> str:
    lines = [
        f"task {p['task']['name']} d={p['task']['d']} N={p['task']['N']} "
        f"({p['task']['points']}), {p['arch']} r={p['rank']} H={p['heads']} "
        f"L={p['layers']}, {p['steps']} steps, params {p['params']['paper']} (paper) / "
        f"{p['params']['total']} (total)"
    ]
    for s in p["seeds"]:
        h = s["heldout"]
        lines.append(
            f"  seed {s['seed']}: best loss {s['best_loss']:.4f}, final "
            f"{s['final_loss']:.4f}, held-out {h['mean']:.4f} "
            f"[{h['lo']:.4f}, {h['hi']:.4f}] ({h['level']:.0%} CI, n={h['n']})"
        )
    lines.append(
        f"best of seeds: seed {p['best_of_seeds']['seed']}, held-out "
        f"{p['best_of_seeds']['heldout']['mean']:.4f}"
    )
    return "\n".join(lines)
