"""``workbench sweep PRESET``: a resumable grid of docs/paper.md §7 into the results store.

PRESET is resolved by ``workbench.plugins.get_preset``: a registered preset (the built-ins,
``fig2``, ``tiny``, ..., and those of installed packages, entry-point group
``workbench.presets``) or ``module:attr`` naming a ``workbench.verifiers.presets.Preset``.
Every input is validated before anything is created: an unknown preset, an unusable ``--db``,
an unreachable ``--address`` or a malformed ``--export`` path exits 2 with one line and writes
no file, before torch is imported (the built-in presets' names are read from their source).
``--scale full`` (or ``paper``) runs the paper's sizes, stored under the preset's scale ``paper``;
``--dry-run`` only reads the store. A killed sweep resumes where it stopped; a finished one
reruns with no compute.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from workbench.commands._arguments import MAX_THREADS, IntIn
from workbench.commands._common import (
    common_options,
    device_option,
    emit,
    plugin_errors,
    plural,
    resolve_device,
)
from workbench.commands._interrupts import saying_what_was_stored
from workbench.commands._paths import writable_path

SCALES = {"quick": "quick", "full": "paper", "paper": "paper"}  # the word -> the preset's scale


@click.command(help="Run a preset grid of the paper's experiments (a registered preset, or "
               "module:attr naming a Preset) into the results store.")
@click.argument("preset")
@click.option("--scale", type=click.Choice(["quick", "full", "paper"]), default="quick",
              show_default=True, help="quick, or full: the paper's sizes (paper is the same).")
@click.option("--backend", type=click.Choice(["local", "ray"]), default="local",
              show_default=True)
@click.option("--db", type=click.Path(dir_okay=False), default=None,
              help="SQLite store (default: runs.sqlite under the user's data directory).")
@click.option("--address", default=None, help="Ray: attach to this cluster (host:port).")
@click.option("--export", "export_path", type=click.Path(dir_okay=False), default=None,
              help="Also write this sweep's runs to a .csv or .parquet file.")
@device_option()
@click.option("--threads", type=IntIn(1, MAX_THREADS), default=None,
              help="Torch threads per group (default: 1 in each of several --jobs).")
@click.option("--jobs", type=IntIn(1), default=None, metavar="N",
              help="Local: groups computed at once, each in its own worker process (default: "
              "the cores here divided by --threads on a CPU run, 1 on CUDA).")
@click.option("--cpus-per-task", type=float, default=1.0, show_default=True,
              help="Ray: CPUs each group declares.")
@click.option("--gpus-per-task", type=float, default=0.0, show_default=True,
              help="Ray: GPUs each group declares.")
@click.option("--dry-run", is_flag=True,
              help="Only list the grid and count the runs planned and stored; creates no "
              "file.")
@common_options
def cli(preset: str, scale: str, backend: str, db: str | None, address: str | None,
        export_path: str | None, device: str, threads: int | None, jobs: int | None,
        cpus_per_task: float, gpus_per_task: float, dry_run: bool, as_json: bool,
        seed: int) -> None:
    import importlib.util

    from workbench.commands._declared import builtin_preset_names, has_entry_points
    from workbench.core.validation import check_float, check_int
    from workbench.verifiers import store
    from workbench.verifiers.processes import available_cores, check_jobs

    cores = available_cores()
    if threads is not None:
        check_int("--threads", threads, lo=1)
    if jobs is not None:
        check_jobs("--jobs", jobs, cores)
        if backend != "local" and jobs != 1:
            raise ValueError("--jobs must be 1 with --backend ray (Ray places the groups by "
                             "--cpus-per-task and --gpus-per-task)")
    check_float("--cpus-per-task", cpus_per_task, lo=0.0, lo_open=True)
    check_float("--gpus-per-task", gpus_per_task, lo=0.0)
    if export_path is not None:
        store.check_export_path(export_path)
        writable_path("--export", export_path)
    if address is not None and backend != "ray":
        raise ValueError("--address must be used with --backend ray")
    if backend == "ray" and address is not None:  # reachable first, as ray's own error says
        from workbench.verifiers.sweep import check_address

        check_address(address)
    if backend == "ray" and importlib.util.find_spec("ray") is None:
        raise ValueError("--backend ray needs the ray extra (pip install "
                         "'attention-rank-workbench[ray]')")
    path = Path(writable_path("--db", db)) if db is not None else store.default_path()
    if db is not None or path.parent.is_dir():
        writable_path("--db", str(path))
        store.check_writable(path)
    known = builtin_preset_names()
    if ":" not in preset and preset not in known and not has_entry_points("workbench.presets"):
        raise ValueError(f"PRESET: preset must be one of {sorted(known)} or module:attr "
                         f"(got {preset!r})")
    from workbench.plugins import get_preset

    try:
        p = get_preset(preset)
    except ValueError as e:
        raise ValueError(f"PRESET: {e}") from None
    from workbench.verifiers import sweep

    name = p.name
    dev = resolve_device(device)
    if jobs is None:  # the cores, one worker per --threads of them; one process for a GPU
        jobs = max(1, cores // (threads or 1)) if dev == "cpu" and backend == "local" else 1
    with plugin_errors({"preset": "PRESET"}):
        runs = _checked_runs(p, preset, SCALES[scale], seed)
    say = progress_lines(as_json)
    if dry_run:  # counts only: an existing store is read, a missing one is not created
        keys = [k for k, _ in sweep.keyed(runs)]
        rows: list[dict[str, Any]] = []
        if path.exists():
            with store.Store(path, readonly=True) as st:
                done = len(st.done_keys(keys))
                rows = st.rows(keys=keys)
        else:
            done = 0
        rep = sweep.SweepReport(name, SCALES[scale], backend, len(keys), done, 0, 0, 0.0, keys)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        with store.Store(path) as st:
            keys = [k for k, _ in sweep.keyed(runs)]
            with saying_what_was_stored(lambda: f"{len(st.done_keys(keys))} of {len(keys)} "
                                        f"runs of this sweep are stored in {path} (run it "
                                        "again to compute the rest)"):
                rep = sweep.run_sweep(name, SCALES[scale], st, seed=seed, backend=backend,
                                      address=address, cpus_per_task=cpus_per_task,
                                      gpus_per_task=gpus_per_task, threads=threads, device=dev,
                                      jobs=jobs, runs=runs, progress=say)
            rows = st.rows(keys=rep.keys)
    if export_path is not None:
        store.export(rows, export_path)
    best = sweep.best_of_seeds(rows)
    payload: dict[str, Any] = {
        **rep.to_dict(), "scale": scale if scale != "paper" else "full", "db": str(path),
        "model_class": p.model_class, "why": p.why,
        "export": export_path, "dry_run": dry_run,
        "grid": sweep.grid(runs) if dry_run else None,
        "findings": _findings(p, rows),
        "bound_note": _bound_note(p, runs),
        "best_of_seeds": [{"labels": b["labels"], "heldout": b["heldout"],
                           "ci": [b["heldout_lo"], b["heldout_hi"]], "seed": b["seed"],
                           "seeds": b["seeds"], "worst": b["worst"],
                           "model_class": b["model_class"]} for b in best],
    }
    emit(payload, as_json, _human)


def _findings(p: Any, rows: list[dict[str, Any]]) -> list[str]:
    """For a sweep against N (labels N and r): its two findings as orderings with intervals."""
    if p.x != "N" or "r" not in p.curves:
        return []
    from workbench.verifiers.orderings import findings_lines

    return findings_lines(rows)


def _bound_note(p: Any, runs: list[Any]) -> str | None:
    """For a sweep against N that no lower bound covers (the paper's among them): why."""
    if p.x != "N" or not runs:
        return None
    from workbench.core.bounds.sequence_length.certified_n import NAME
    from workbench.plugins import get_bound
    from workbench.verifiers.n_figure import sweep_bound_line

    rows = [{"config": {"task": {"name": r.task.name, "d": r.task.d, "N": r.task.N,
                                 "points": r.task.points},
                        "spec": {"rank": r.spec.rank, "heads": r.spec.heads,
                                 "layers": r.spec.layers}}} for r in runs]
    return sweep_bound_line(rows, get_bound(NAME))


def _checked_runs(p: Any, preset: str, scale: str, seed: int) -> list[Any]:
    """The preset's runs, checked before the store is touched: a preset whose ``runs`` raises,
    exits, or gives anything but a list of ``Run`` (each with a configuration that hashes) is a
    ``PluginFailed`` (bad input naming PRESET)."""
    from workbench.plugins import PluginFailed, call_user
    from workbench.verifiers.presets import Run
    from workbench.verifiers.sweep import keyed

    who = ("preset", preset)
    runs = call_user(who, p.runs, scale, seed)
    if not isinstance(runs, list | tuple):
        raise PluginFailed(who, f"gave {type(runs).__name__} for its runs, not a list of Run")
    wrong = next((r for r in runs if not isinstance(r, Run)), None)
    if wrong is not None:
        raise PluginFailed(who, f"gave {wrong!r:.40} ({type(wrong).__name__}) among its runs, "
                           "not a Run")
    call_user(who, keyed, runs)
    return list(runs)


def _others(p: dict[str, Any]) -> str:
    n = p.get("by_others", 0)
    return f", {n} computed meanwhile by another sweep of this store" if n else ""


def _human(p: dict[str, Any]) -> str:
    lines = [f"sweep {p['preset']} ({p['scale']}, {p['backend']}): "
             f"{plural(p['planned'], 'run')} planned, {p['already']} already stored, "
             f"{p['computed']} computed in {plural(p['groups'], 'group')} "
             f"({p['seconds']:.1f}s){_others(p)}; store {p['db']}",
             f"model class: {p['model_class']} -- {p['why']}"]
    if p["export"]:
        lines.append(f"exported to {p['export']}")
    if p.get("grid"):
        lines.append(f"grid ({plural(len(p['grid']), 'configuration')}):")
        for g in p["grid"]:
            lab = " ".join(f"{k}={v}" for k, v in g["labels"].items())
            lines.append(f"  {lab:<24} {g['task']} d={g['d']} N={g['N']} ({g['points']} keys), "
                         f"{g['arch']} rank={g['rank']} heads={g['heads']} layers={g['layers']}, "
                         f"{g['steps']} steps, batch {g['batch']}, lr {g['lr']:g}, seeds "
                         f"{', '.join(map(str, g['seeds']))}")
    rows = sorted(p["best_of_seeds"], key=lambda b: sorted(b["labels"].items()))
    for b in rows:
        lab = " ".join(f"{k}={v}" for k, v in b["labels"].items())
        ci = b.get("ci") or [None, None]
        iv = f" [{ci[0]:.4g}, {ci[1]:.4g}]" if None not in ci else ""
        lines.append(f"  {lab:<40} best held-out {b['heldout']:.4g}{iv} (seed {b['seed']}, "
                     f"worst of {b['seeds']}: {b['worst']:.4g})")
    lines += [f"  {line}" if i else line for i, line in enumerate(p.get("findings") or [])]
    if p.get("bound_note"):
        lines.append(p["bound_note"])
    return "\n".join(lines)


def progress_lines(as_json: bool) -> Callable[[str], None] | None:
    """Where ``group 1/4: ...`` lines go: to stderr when it is a terminal (and no ``--json``);
    a log or a pipe gets the summary alone."""
    if as_json or not sys.stderr.isatty():
        return None
    return lambda m: click.echo(m, err=True)
