"""``workbench train``: train K seeds of one configuration in one batched call (docs/paper.md,
the experiments).

Prints per-seed and best-of-seeds errors (best by held-out error, with its CI) and the
parameter counts, says which model class was trained and which class the certified bound covers,
and, for nearest neighbour with N = 2 at one layer (orthonormal keys, where it is proved, or
i.i.d. keys, by the transfer of docs/derivations/iid_transfer.md), prints the certified lower
bound beside the result with the margin (exit 1 if a model's whole CI lies below it); for
3 <= N <= d on orthonormal keys (D_N), one layer, the registered bound ``certified-n`` (where a
sequence-length bound covers the point) the same way; elsewhere one line says what the bounds
cover. What the error means is stated for each task.

``--checkpoint PATH`` makes a killed run resumable, and says when it resumed and from which
step. A checkpoint of the same run with fewer ``--steps`` is continued to the new ``--steps``
(a finished run is extended; the added steps follow the schedule of the new length, so the
result is not that of an uninterrupted run of that length); ``--steps`` below the step the
checkpoint reached is bad input (exit 2). Arguments are validated before torch is imported.
"""

from __future__ import annotations

from typing import Any

import click

from workbench.commands._arguments import IntIn
from workbench.commands._bound_labels import label_fields, labels_text
from workbench.commands._common import (
    LEVEL,
    AliasCommand,
    CheckFailed,
    aliases,
    common_options,
    device_option,
    emit,
    on_terminal,
    path_option,
    progress_bar,
    resolve_device,
)
from workbench.commands._error_meaning import error_meaning
from workbench.commands._interrupts import saying_what_was_stored
from workbench.commands._long_work import announce, progress_lines
from workbench.commands._resources import EVAL_BATCH, train_terms
from workbench.commands._target import ChosenTarget, choose_target, target_options
from workbench.core.validation import (
    check_dim,
    check_float,
    check_heads,
    check_int,
    check_orthonormal_keys,
    check_rank,
)
from workbench.core.verdict import percent
from workbench.verifiers.resources import check_fits

TASK_NAMES = ("nearest", "farthest", "regression")  # workbench.verifiers.tasks.TASKS
POINTS = ("iid", "orthonormal")  # workbench.core.sphere.POINT_LAWS
ARCHS = ("standard", "generalized")
SCORES = ("dot", "bias", "rope", "alibi", "mlp", "set")  # workbench.models.scores.SCORE_KINDS
REGRESSION_WIDTH = 48

CLASS_TEXT = {
    "standard": "standard multi-head attention (per head W_O^T W_V and softmax(K^T Q)), a special "
    "case of generalized attention (Eq. 2)",
    "generalized": "generalized attention (Eq. 2): sum_h M_h X phi_h(W_h X, y) with rank-r key "
    "maps W_h, full d x d value maps M_h and {score} scores",
}
BOUND_CLASS = {
    "orthonormal": "the certified bound covers generalized attention (Eq. 2) with full value "
    "maps M_h, one layer, N = 2 on D_2 (orthonormal keys), so it applies to this model",
    "iid": "the certified bound covers generalized attention (Eq. 2) with full value maps M_h, "
    "one layer, N = 2 on i.i.d. uniform keys by the i.i.d. transfer (the same number as on D_2, "
    "since E[1 - <x1, x2>] = 1), so it applies to this model",
}
HELP = f"""Train attention models (K seeds batched) and report their errors.

--arch standard trains standard multi-head attention; --arch generalized trains Eq. 2's
generalized attention (rank-r key maps, full value maps M_h, --score scores), the class the
certified lower bound is proved against. With --layers > 1 (or --task farthest) the model is a
stack of post-norm encoder layers (FFN width 2048), standard attention only; the bound covers one
layer. --task regression uses the in-context regression stack (width {REGRESSION_WIDTH}).

For --task nearest --N 2 at one layer (--points orthonormal, where it is proved, or iid, by the
i.i.d. transfer) the certified lower bound for (d, rank, heads) is printed beside the result;
for 3 <= --N <= d with --points orthonormal (D_N), the certified bound at N >= 3 (certified-n),
where a sequence-length bound covers (d, N).
Best of seeds = lowest held-out error. The output states what the error means for the task.
--checkpoint resumes a killed run, or extends a finished one to more --steps.
"""


@aliases({"--distribution": "--points"})
@click.command(cls=AliasCommand, help=HELP)
@click.option("--d", "d", type=IntIn(2), required=True, help="Dimension d (>= 2).")
@click.option("--N", "N", type=IntIn(1), required=True, help="Keys per instance (context pairs).")
@click.option("--rank", type=IntIn(1), required=True, help="Head rank r in 1..d.")
@click.option("--heads", type=IntIn(1), required=True, help="Heads per layer H (>= 1).")
@click.option("--layers", type=IntIn(1), default=1, show_default=True,
              help="Layers L; L > 1 means post-norm encoder layers (standard attention).")
@click.option("--arch", type=click.Choice(ARCHS), default="standard", show_default=True,
              help="Model class: standard attention or generalized attention (Eq. 2).")
@click.option("--score", type=click.Choice(SCORES), default="dot", show_default=True,
              help="Score function of --arch generalized.")
@click.option("--steps", type=IntIn(1), required=True, help="Training steps.")
@click.option("--seeds", type=IntIn(1), default=1, show_default=True, help="Seeds seed..seed+K-1.")
@click.option("--task", type=click.Choice(TASK_NAMES), default="nearest", show_default=True)
@click.option("--points", type=click.Choice(POINTS), default="iid", show_default=True,
              help="Law of the keys: iid uniform, or orthonormal (D_N).")
@click.option("--lr", type=float, default=0.01, show_default=True)
@device_option()
@click.option("--batch", type=IntIn(1), default=256, show_default=True, help="Fresh samples/step.")
@click.option("--eval-samples", type=IntIn(100), default=20_000, show_default=True,
              help=f"Held-out samples per model ({LEVEL:.0%} CI).")
@path_option("--checkpoint", "Checkpoint file: written during training, resumed from if present.",
             access="write")
@target_options
@common_options
def cli(
    d: int,
    N: int,
    rank: int,
    heads: int,
    layers: int,
    arch: str,
    score: str,
    steps: int,
    seeds: int,
    task: str,
    points: str,
    lr: float,
    device: str,
    batch: int,
    eval_samples: int,
    checkpoint: str | None,
    target: str,
    target_params: tuple[str, ...],
    as_json: bool,
    seed: int,
) -> None:
    d = check_dim(d, "--d")
    check_int("--N", N, lo=1)
    width = REGRESSION_WIDTH if task == "regression" else d
    rank = check_rank(rank, width, "--rank")
    check_heads(heads, "--heads")
    check_int("--layers", layers, lo=1)
    check_int("--steps", steps, lo=1)
    check_int("--seeds", seeds, lo=1)
    check_float("--lr", lr, lo=0.0, lo_open=True)
    check_int("--batch", batch, lo=1)
    check_int("--eval-samples", eval_samples, lo=100)
    if arch == "generalized" and (layers != 1 or task != "nearest"):
        raise ValueError(
            "--arch generalized must be used with --layers 1 and --task nearest "
            f"(got --layers {layers}, --task {task})"
        )
    if score != "dot" and arch != "generalized":
        raise ValueError(f"--score must be 'dot' unless --arch generalized (got {score!r})")
    check_orthonormal_keys(points, N, d, "--N")
    chosen = choose_target(target, target_params)
    if target != "nearest":
        if task != "nearest":
            raise ValueError(f"--target applies to --task nearest (got --task {task})")
        if chosen.target.N is not None and N not in chosen.target.N:
            raise ValueError(f"--N must lie in {list(chosen.target.N)} for --target {target} "
                             f"(got {N})")
    model_arch = _model(task, arch, layers, score)[0]
    check_fits(train_terms(model_arch, d, N, rank, heads, layers, seeds, batch,
                           min(eval_samples, EVAL_BATCH), steps, width),
               {"--seeds": seeds, "--heads": heads, "--rank": rank, "--d": d, "--N": N,
                "--layers": layers, "--batch": batch, "--steps": steps})
    dev = resolve_device(device)
    from workbench.verifiers.tasks import TargetTask, Task
    from workbench.verifiers.train import ModelSpec, TrainConfig, train

    t = Task(task, d=d, N=N, points=points) if target == "nearest" else TargetTask(
        task, d=d, N=N, points=points, target=target,
        target_params=tuple(sorted(chosen.params.items())), fn=chosen.map())
    model, options, described = _model(task, arch, layers, score)
    specs = [
        ModelSpec(model, rank, heads, layers, seed=s, lr=lr, options=options)
        for s in range(seed, seed + seeds)
    ]
    cfg = TrainConfig(
        steps=steps, batch=batch, eval_samples=eval_samples, device=dev, eval_seed=seed,
        level=LEVEL,
    )
    kept = (f"the checkpoint {checkpoint} holds the last step saved (run again to resume)"
            if checkpoint is not None else "nothing was kept (no --checkpoint)")
    per_sample = (N + 1) * d * seeds * layers
    announce(f"training {seeds} model(s)", (steps * batch + eval_samples) * per_sample,
             f"({steps} steps x --batch {batch} + --eval-samples {eval_samples}) x (N + 1 = "
             f"{N + 1} points) x --d {d} x {seeds} seed(s) x {layers} layer(s)")
    lines = progress_lines(f"training {seeds} model(s)", on_terminal(as_json),
                           f"now the held-out error on {eval_samples} samples")
    with saying_what_was_stored(lambda: kept), progress_bar(as_json, "steps") as bar:
        job = bar.add_task(f"training {seeds} model(s)", total=steps)

        def progress(i: int, n: int) -> None:
            bar.update(job, completed=i)
            lines(i, n)

        run = train(specs, t, cfg, checkpoint=checkpoint, progress=progress)
    per_seed: list[dict[str, Any]] = [
        {
            "seed": r.spec.seed,
            "best_loss": r.best_loss,
            "final_loss": r.final_loss,
            "heldout": r.heldout.to_dict() if r.heldout else None,
        }
        for r in run.results
    ]
    best = min(per_seed, key=lambda s: s["heldout"]["mean"])
    first = run.results[0]
    payload: dict[str, Any] = {
        "task": t.to_dict(),
        "arch": arch,
        "model": model,
        "model_class": described,
        "rank": rank,
        "heads": heads,
        "layers": layers,
        "steps": steps,
        "batch": batch,
        "lr": lr,
        "device": dev,
        "level": LEVEL,
        "params": {"paper": first.params_paper, "total": first.params_total},
        "seeds": per_seed,
        "best_of_seeds": {**best, "chosen_by": "held-out error"},
        "certified_bound": _certified(task, N, points, layers, d, rank, heads, per_seed, chosen),
        "no_bound": None,
        "error_meaning": error_meaning(task, N, points, target),
        "target": chosen.describe(),
        "resumed": None if run.resumed is None else {
            "checkpoint": run.resumed.path, "from_step": run.resumed.step,
            "planned_steps": run.resumed.planned, "replanned": run.resumed.planned != steps},
        "seconds": run.seconds,
        "model_steps_per_s": run.model_steps_per_s,
    }
    if payload["certified_bound"] is None and N >= 3:
        payload["no_bound"] = _no_bound(t.to_dict(), rank, heads, layers)
    emit(payload, as_json, _human)
    cb = payload["certified_bound"]
    if cb is not None and cb["below"]:
        raise CheckFailed(
            f"seeds {cb['below']}: held-out CI entirely below the certified lower bound "
            f"{cb['lower_bound']:.6g} (a counterexample: replay this command)"
        )


def _no_bound(task: dict[str, Any], rank: int, heads: int, layers: int) -> str:
    """Why no lower bound is printed for a run with ``N >= 3`` (the paper's N-sweep among
    them), in the words of the report's figure against N."""
    from workbench.core.bounds.sequence_length.certified_n import NAME
    from workbench.plugins import get_bound
    from workbench.verifiers.n_figure import no_bound_line, why_no_bound

    row = {"config": {"task": task, "spec": {"rank": rank, "heads": heads, "layers": layers}}}
    why = why_no_bound(row, get_bound(NAME)) or "another target than hardmax"
    return no_bound_line(why, "this run")


def _model(task: str, arch: str, layers: int, score: str) -> tuple[str, dict[str, Any], str]:
    """The trainer's architecture, its options, and the model class in words."""
    if task == "regression":
        return "regression", {}, f"in-context regression stack, {layers} layer(s), width 48"
    if task == "farthest" or layers > 1:
        return "encoder", {}, (
            f"{layers} post-norm encoder layer(s) of standard attention (FFN width 2048)"
        )
    if arch == "generalized":
        return "generalized", {"score": score}, CLASS_TEXT["generalized"].format(score=score)
    return "attention", {}, "one layer of " + CLASS_TEXT["standard"]


def _certified(
    task: str, N: int, points: str, layers: int, d: int, rank: int, heads: int,
    seeds: list[dict[str, Any]], chosen: ChosenTarget,
) -> dict[str, Any] | None:
    """The certified bound beside the result, where it applies (N = 2, one layer; D_2, or i.i.d.
    keys by the transfer; another target: its profile's harmonic count, D_2 only)."""
    if task != "nearest" or layers != 1 or d > 2048:
        return None
    covers = BOUND_CLASS[points]
    if N != 2:
        if not chosen.is_hardmax:
            return None
        from workbench.core.bounds.sequence_length.certified_n import NAME
        from workbench.plugins import get_bound

        b = get_bound(NAME)
        if points != "orthonormal" or b.outside(d, rank, heads, N) is not None:
            return None
        bv, covers = b.evaluate(d, rank, heads, N), N_KEYS_COVERS
    elif not chosen.is_hardmax:
        if points != "orthonormal" or chosen.profile is None:
            return None
        from workbench.core.bounds.profiles.profile_fiber import profile_lower_bound

        bv = profile_lower_bound(chosen.profile, d, rank, heads)
    else:
        from workbench.core.bounds.certified import certified_lower_bound

        bv = certified_lower_bound(d, rank, heads).bound_value
    labels = label_fields(bv)
    lb = bv.value
    rows = []
    for s in seeds:
        h = s["heldout"]
        rows.append({"seed": s["seed"], "heldout": h["mean"], "hi": h["hi"],
                     "ratio": h["mean"] / lb if lb > 0 else None,
                     "margin": h["mean"] - lb})
    return {
        **labels,
        "covers": covers,
        "points": points,
        "per_seed": rows,
        "below": [r["seed"] for r in rows if r["hi"] < lb],  # whole CI below the bound
    }


N_KEYS_COVERS = ("the certified bound at N >= 3 (certified-n: the largest sequence-length bound "
                 "covering (d, N); its source names the one that decided) covers generalized "
                 "attention (Eq. 2) with full value maps M_h, one layer, on D_N (N orthonormal "
                 "keys; a bound at another N is another theorem, about another law), so it "
                 "applies to this model")


COVERAGE = ("(the certified lower bounds cover nearest neighbour at one layer: N = 2 on "
            "orthonormal keys, and on i.i.d. keys by the transfer; 3 <= N <= d on "
            "orthonormal keys (D_N) where a sequence-length bound covers (d, N) (certified-n); "
            "this run is outside them, so none is printed)")


def _human(p: dict[str, Any]) -> str:
    lines = [
        f"task {p['task']['name']}"
        + ("" if p["target"]["name"] == "nearest" else
           f" labelled by target {p['target']['name']} ({p['target']['profile']})")
        + f" d={p['task']['d']} N={p['task']['N']} "
        f"({p['task']['points']} keys), rank={p['rank']} heads={p['heads']} "
        f"layers={p['layers']}, {p['steps']} steps, params {p['params']['paper']} (paper: L H r d)"
        f" / {p['params']['total']} (total)",
        f"model: {p['model_class']}",
        p["error_meaning"],
    ]
    rs = p["resumed"]
    if rs is not None:
        lines.insert(1, f"resumed from checkpoint {rs['checkpoint']} at step {rs['from_step']}"
                     + (f" of a run planned for {rs['planned_steps']} steps, continued to "
                        f"{p['steps']} (the steps after {rs['from_step']} follow the "
                        f"{p['steps']}-step schedule)" if rs["replanned"] else f" of {p['steps']}"))
    for s in p["seeds"]:
        h = s["heldout"]
        lines.append(
            f"  seed {s['seed']}: held-out error {h['mean']:.4f} [{h['lo']:.4f}, {h['hi']:.4f}] "
            f"({percent(h['level'])} CI, n={h['n']}); training loss best {s['best_loss']:.4f}, "
            f"final {s['final_loss']:.4f}"
        )
    b = p["best_of_seeds"]
    lines.append(f"best of seeds (lowest held-out error): seed {b['seed']}, held-out "
                 f"{b['heldout']['mean']:.4f} [{b['heldout']['lo']:.4f}, "
                 f"{b['heldout']['hi']:.4f}] ({percent(b['heldout']['level'])} CI)")
    cb = p["certified_bound"]
    if cb is not None:
        lb = cb["lower_bound"]
        row = next(r for r in cb["per_seed"] if r["seed"] == b["seed"])
        rel = f"×{row['ratio']:.2f}" if row["ratio"] is not None else f"+{row['margin']:.4f}"
        lines.append(f"lower bound (d={p['task']['d']}, rank={p['rank']}, "
                     f"heads={p['heads']}): {lb:.4f}; trained {row['heldout']:.4f} ≥ "
                     f"bound {lb:.4f} ({rel})" if not cb["below"] else
                     f"lower bound {lb:.4f}: seeds {cb['below']} lie BELOW it "
                     "beyond their CI: a counterexample to the bound")
        lines.append(f"  {labels_text(cb)}")
        lines.append(f"  ({cb['covers']})")
    elif p.get("no_bound"):
        lines.append(f"({p['no_bound']})")
    elif p["task"]["name"] == "nearest" and p["layers"] == 1:
        lines.append(COVERAGE)
    return "\n".join(lines)
