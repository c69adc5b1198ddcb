"""Resumable sweeps over presets (docs/paper.md §7): the ``local`` and ``ray`` backends.

- The runs of a preset that the store lacks are grouped by ``Run.group_key`` (same task,
  training settings and stacked shape); each group is one batched
  ``workbench.verifiers.train.train``
  call, and its rows are written in one transaction as soon as it finishes.
- ``local`` runs the groups one after the other in this process; ``ray`` runs each group as a
  Ray task with declared CPU and GPU resources (a local Ray instance, or ``address``) and
  writes the rows as the tasks finish; a task whose worker dies is rerun (``RAY_RETRIES``).
  Both call ``execute_group``, so the numbers agree.
- Sweeps of one store at once share the groups: a group is computed only under its lock
  (``workbench.verifiers.group_locks``), after re-reading which of its runs are stored.
- Best of seeds: per configuration, the seed with the lowest held-out error.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from typing import Any

import torch

from workbench.core.validation import check_choice, check_float, check_seed
from workbench.verifiers.group_locks import GroupLocks, next_free
from workbench.verifiers.presets import Run, plan
from workbench.verifiers.processes import can_fork, check_jobs, die_with_parent
from workbench.verifiers.store import Store, code_version, run_key
from workbench.verifiers.train import train

BACKENDS: tuple[str, ...] = ("local", "ray")


@dataclass
class SweepReport:
    """What a sweep did: planned runs, how many were already stored, how many it computed, and
    how many another sweep of the same store computed while it ran."""

    preset: str
    scale: str
    backend: str
    planned: int
    already: int
    computed: int
    groups: int
    seconds: float
    keys: list[str]
    by_others: int = 0  # runs of this sweep that another sweep of the store computed meanwhile

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "keys"}


def keyed(runs: Sequence[Run], version: str | None = None) -> list[tuple[str, Run]]:
    """``(key, run)`` pairs: the key hashes the run's configuration, the code and the seed."""
    v = version or code_version()
    return [(run_key(r.config_dict(), v, r.seed), r) for r in runs]


def group_runs(items: Sequence[tuple[str, Run]]) -> list[list[tuple[str, Run]]]:
    """Runs that can train in one batched call, in a deterministic order."""
    groups: dict[str, list[tuple[str, Run]]] = {}
    for k, r in items:
        groups.setdefault(r.group_key(), []).append((k, r))
    return [groups[g] for g in sorted(groups)]


def execute_group(group: Sequence[tuple[str, Run]], version: str, backend: str,
                  threads: int | None = None, device: str = "cpu") -> list[dict[str, Any]]:
    """Train (or solve) one group; the store rows of its runs. Runs in a Ray worker too."""
    if threads:
        torch.set_num_threads(threads)
    runs = [r for _, r in group]
    t0 = time.perf_counter()
    if runs[0].kind == "random_features":
        results = [_random_features(r) for r in runs]
    else:
        cfg = runs[0].config
        if device != cfg.device:
            cfg = replace(cfg, device=device)
        tr = train([r.spec for r in runs], runs[0].task, cfg)
        results = []
        for res in tr.results:
            h = res.heldout
            results.append({"params_paper": res.params_paper, "params_total": res.params_total,
                            "best_loss": res.best_loss, "final_loss": res.final_loss,
                            "heldout": h.mean if h else None, "heldout_lo": h.lo if h else None,
                            "heldout_hi": h.hi if h else None, "heldout_n": h.n if h else None,
                            "extra": {"ci_level": h.level if h else None,
                                      "interval": h.method if h else None, "device": device,
                                      "threads": torch.get_num_threads()}})
    seconds = (time.perf_counter() - t0) / len(runs)
    now = time.time()
    return [{"key": k, "preset": r.preset, "scale": r.scale, "kind": r.kind,
             "model_class": r.model_class, "group_key": r.group_key(), "seed": r.seed,
             "labels": r.label_dict(), "config": r.config_dict(), **res, "seconds": seconds,
             "backend": backend, "code_version": version, "created": now}
            for (k, r), res in zip(group, results)]


def compute(runs: Sequence[Run], threads: int | None = None,
            device: str = "cpu") -> list[dict[str, Any]]:
    """The rows of ``runs`` computed in memory (no store), grouped as a sweep groups them."""
    version = code_version()
    out: list[dict[str, Any]] = []
    for g in group_runs(keyed(runs, version)):
        out += execute_group(g, version, "memory", threads, device)
    return out


def _random_features(run: Run) -> dict[str, Any]:
    """Exact D_2 error of H random rank-1 hardmax heads (drawn from ``run.law``) with optimal
    values, and Theorem 2's certified lower bound (the larger of the harmonic count and the fiber
    bound) for the same (d, r = 1, H)."""
    from workbench.constructions.random_features import random_features
    from workbench.core.bounds.certified import certified_lower_bound

    d, H = run.task.d, run.spec.heads
    _, claimed = random_features(d, H, run.law, generator=run.seed, build_model=False)
    err = float(claimed.value)
    lb = certified_lower_bound(d, 1, H)
    return {"params_paper": H * d, "params_total": H * (2 * d + 1), "best_loss": None,
            "final_loss": None, "heldout": err, "heldout_lo": err, "heldout_hi": err,
            "heldout_n": None, "extra": {"lower_bound": lb.value,
                                         "lower_bound_hi": lb.enclosure[1],
                                         "lower_bound_source": lb.source, "exact": True}}


def check_address(address: str, timeout: float = 3.0) -> str:
    """Fail (``ValueError`` naming ``--address``) unless ``host:port`` accepts a TCP connection.

    Accepts ``host:port`` and ``ray://host:port``.
    """
    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"--address must be host:port or ray://host:port (got {address!r})")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as e:
        raise ValueError(f"--address must be a reachable Ray cluster ({address!r}: "
                         f"{e.strerror or e})") from None
    return address


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


GroupFn = Callable[..., list[dict[str, Any]]]  # execute_group's signature
RETRIES = 3  # times a group whose worker died is rerun (the rows are written only once)


def run_sweep(preset: str, scale: str, store: Store, *, seed: int = 0, backend: str = "local",
              address: str | None = None, cpus_per_task: float = 1.0,
              gpus_per_task: float = 0.0, threads: int | None = None, device: str = "cpu",
              jobs: int = 1, runs: Sequence[Run] | None = None,
              progress: Callable[[str], None] | None = None,
              group_fn: GroupFn = execute_group) -> SweepReport:
    """Compute every run of ``preset`` at ``scale`` that ``store`` lacks, and store it.

    A group is computed only while this process holds its lock (``GroupLocks``), so sweeps of
    one store running at once share the groups; ``by_others`` counts the runs another sweep
    stored meanwhile. ``runs`` overrides the preset's plan and ``group_fn`` the function that
    computes a group (tests). ``threads``: torch threads per group (local default: torch's
    current setting, or 1 in each of ``jobs > 1`` workers; ray default: ``cpus_per_task``).
    ``jobs``: local groups computed at once, each in its own worker process (``1``: in this
    process, one after the other).
    """
    check_choice("backend", backend, BACKENDS)
    check_seed(seed)
    check_float("cpus_per_task", cpus_per_task, lo=0.0, lo_open=True)
    check_float("gpus_per_task", gpus_per_task, lo=0.0)
    check_jobs("jobs", jobs)
    if jobs > 1 and backend != "local":
        raise ValueError(f"jobs must be 1 with backend {backend!r} (Ray places the groups by "
                         f"cpus_per_task and gpus_per_task; got {jobs})")
    plan_runs = list(runs) if runs is not None else plan(preset, scale, seed)
    version = code_version()
    items = keyed(plan_runs, version)
    done = store.done_keys(k for k, _ in items)
    todo = group_runs([(k, r) for k, r in items if k not in done])
    say = progress or (lambda _m: None)
    t0 = time.perf_counter()
    counts = [0, 0]  # runs this sweep stored, runs another sweep stored meanwhile
    if todo:
        with GroupLocks(store.path) as locks:
            if backend == "ray":
                _run_ray(todo, store, locks, version, address, cpus_per_task, gpus_per_task,
                         threads, device, say, group_fn, counts)
            elif jobs > 1 and len(todo) > 1:
                _run_pool(todo, store, locks, version, jobs, threads or 1, device, say,
                          group_fn, counts)
            else:
                _run_local(todo, store, locks, version, threads, device, say, group_fn, counts)
    return SweepReport(preset, scale, backend, len(items), len(done), counts[0], len(todo),
                       time.perf_counter() - t0, [k for k, _ in items], counts[1])


Group = list[tuple[str, Run]]


def _run_local(todo: list[Group], store: Store, locks: GroupLocks, version: str,
               threads: int | None, device: str, say: Callable[[str], None],
               group_fn: GroupFn, counts: list[int]) -> None:
    pending, n = list(todo), 0
    while (got := next_free(pending, store, locks, True, counts)) is not None:
        g, missing = got
        t = time.perf_counter()
        try:
            counts[0] += store.write(group_fn(missing, version, "local", threads, device))
        finally:
            locks.release([k for k, _ in g])
        n += 1
        say(f"group {n}/{len(todo)}: {len(missing)} runs in {time.perf_counter() - t:.1f}s")


def _run_pool(todo: list[Group], store: Store, locks: GroupLocks, version: str, jobs: int,
              threads: int, device: str, say: Callable[[str], None], group_fn: GroupFn,
              counts: list[int]) -> None:
    """Up to ``jobs`` locked groups at once, each computed in a worker process (forked where
    ``can_fork`` allows, spawned otherwise) and written here as it finishes. A group whose
    worker died is rerun in fresh workers, up to ``RETRIES`` times; when a group raises, the
    groups already running are still stored, then the error is raised."""
    mp = multiprocessing.get_context("fork" if can_fork(device, threads) else "spawn")
    pending: list[Group] = list(todo)
    # a running group: (group, its missing runs, when it was submitted, times it died before)
    inflight: dict[Future[list[dict[str, Any]]], tuple[Group, Group, float, int]] = {}
    finished, error = 0, None
    executor = ProcessPoolExecutor(jobs, mp_context=mp, initializer=die_with_parent,
                                   initargs=(os.getpid(),))

    def submit(g: Group, missing: Group, died: int) -> None:
        f = executor.submit(group_fn, missing, version, "local", threads, device)
        inflight[f] = (g, missing, time.perf_counter(), died)

    try:
        while pending or inflight:
            while error is None and len(inflight) < jobs and (
                    got := next_free(pending, store, locks, not inflight, counts)) is not None:
                submit(*got, 0)
            if not inflight:
                break
            ready, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            broken = False
            for f in ready:
                g, missing, t, died = inflight[f]
                try:
                    rows = f.result()
                except BrokenProcessPool:
                    broken = True
                    continue
                except Exception as e:
                    error = error or e
                    rows = None
                del inflight[f]
                try:
                    if rows is not None:
                        counts[0] += store.write(rows)
                finally:
                    locks.release([k for k, _ in g])
                if rows is not None:
                    finished += 1
                    say(f"group {finished}/{len(todo)}: {len(missing)} runs in "
                        f"{time.perf_counter() - t:.1f}s (worker)")
            if broken:  # a dead worker breaks the pool: every group still running goes again
                again = list(inflight.values())
                inflight.clear()
                executor.shutdown(wait=True)
                executor = ProcessPoolExecutor(jobs, mp_context=mp,
                                               initializer=die_with_parent,
                                               initargs=(os.getpid(),))
                for g, missing, _t, died in again:
                    if died < RETRIES and error is None:
                        submit(g, missing, died + 1)
                        continue
                    locks.release([k for k, _ in g])
                    error = error or RuntimeError(
                        f"a worker process computing a group of {len(missing)} runs died "
                        f"{died + 1} times; nothing of that group was stored")
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
        for g, *_ in inflight.values():
            locks.release([k for k, _ in g])
    if error is not None:
        raise error


def ray_init_options(address: str | None) -> dict[str, Any]:
    """What ``ray.init`` gets: workers import this checkout (``PYTHONPATH``), no dashboard; a
    local instance gets every core."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    env = {"env_vars": {"PYTHONPATH": path, "WORKBENCH_FUSED":
                        os.environ.get("WORKBENCH_FUSED", "1")}}
    kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                          "runtime_env": env}
    if address is None:
        kw["num_cpus"] = max(1, os.cpu_count() or 1)
    return kw


def _call(group_fn: GroupFn, *args: Any) -> list[dict[str, Any]]:
    """``group_fn(*args)`` in a Ray worker (``group_fn`` travels by value, any picklable one)."""
    return group_fn(*args)


def _run_ray(todo: list[Group], store: Store, locks: GroupLocks, version: str,
             address: str | None, cpus: float, gpus: float, threads: int | None, device: str,
             say: Callable[[str], None], group_fn: GroupFn, counts: list[int]) -> None:
    """Each locked group is one Ray task declaring ``cpus`` CPUs and ``gpus`` GPUs (Ray gives
    the task its GPUs as ``CUDA_VISIBLE_DEVICES``, so ``cuda`` is its own); a task whose worker
    dies is rerun up to ``RETRIES`` times, and its rows are written once, here."""
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(address=address, **ray_init_options(address))
    try:
        task: Any = ray.remote(num_cpus=cpus, num_gpus=gpus, max_retries=RETRIES)(_call)
        n_threads = threads or max(1, int(cpus))
        pending: list[Group] = list(todo)
        inflight: dict[Any, Group] = {}
        finished = 0
        while pending or inflight:
            while (got := next_free(pending, store, locks, not inflight, counts)) is not None:
                inflight[task.remote(group_fn, got[1], version, "ray", n_threads,
                                     device)] = got[0]
            if not inflight:
                continue
            ready, _ = ray.wait(list(inflight), num_returns=1)
            for ref in ready:
                g = inflight.pop(ref)
                try:
                    counts[0] += store.write(ray.get(ref))
                finally:
                    locks.release([k for k, _ in g])
                finished += 1
                say(f"group {finished}/{len(todo)} done (ray)")
    finally:
        if started:
            ray.shutdown()


def grid(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """The planned configurations of ``runs``, one entry per set of labels: the task (name, d,
    N, keys), the model (arch, rank, heads, layers), the training settings (steps, batch, lr) and
    the seeds; what ``sweep --dry-run`` lists."""
    by: dict[str, dict[str, Any]] = {}
    for r in runs:
        k = repr(sorted(r.label_dict().items()))
        if k not in by:
            by[k] = {"labels": r.label_dict(), "task": r.task.name, "d": r.task.d, "N": r.task.N,
                     "points": r.task.points, "arch": r.spec.arch, "rank": r.spec.rank,
                     "heads": r.spec.heads, "layers": r.spec.layers, "steps": r.config.steps,
                     "batch": r.config.batch, "lr": r.spec.lr, "seeds": []}
        by[k]["seeds"].append(r.seed)
    return list(by.values())


def best_of_seeds(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per configuration (preset, scale and labels), the seed with the lowest held-out error,
    with the spread over seeds (``seeds``, ``worst``, ``all``)."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("heldout") is None:
            continue
        k = repr((r["preset"], r["scale"], sorted(r["labels"].items())))
        by.setdefault(k, []).append(r)
    out = []
    for rs in by.values():
        rs = sorted(rs, key=lambda r: (r["heldout"], r["seed"]))
        best = dict(rs[0])
        best.update(seeds=len(rs), worst=rs[-1]["heldout"], all=[r["heldout"] for r in rs],
                    worst_hi=max(r["heldout_hi"] for r in rs),
                    best_lo=min(r["heldout_lo"] for r in rs))
        out.append(best)
    return out
