"""Sweeps of one store at once share its groups (``workbench.verifiers.group_locks``), a killed
sweep's groups are free at once, and the Ray backend schedules groups on GPUs and reruns a group
whose worker died, with every run stored exactly once. The ``tiny`` preset, one torch thread."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from workbench.verifiers import group_locks, presets, sweep
from workbench.verifiers.store import Store

ROOT = Path(__file__).resolve().parents[2]
TINY_RUNS = 24  # 4 groups (L x c) of 3 ranks x 2 seeds

# one sweep of ``tiny`` into argv[1], started when argv[3] processes have reached the barrier
# folder argv[2]; prints its report and how many runs it trained itself. argv[4] == "nolocks"
# plants a fault: every lock is granted (no sharing); "die" SIGKILLs the process in its first
# group, while it holds that group's lock.
SWEEPER = textwrap.dedent("""
    import contextlib, json, os, signal, sys, time
    from workbench.testing import plant, replaced
    from workbench.verifiers import sweep
    from workbench.verifiers.store import Store

    db, barrier, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    trained = []

    def counting(group, *args):
        if mode == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        trained.append(len(group))
        return sweep.execute_group(group, *args)

    open(os.path.join(barrier, str(os.getpid())), "w").close()
    while len(os.listdir(barrier)) < n:
        time.sleep(0.01)
    fault = (plant("workbench.verifiers.group_locks:GroupLocks.acquire",
                   replaced(lambda self, keys, wait=False: True)) if mode == "nolocks"
             else contextlib.nullcontext())
    with fault, Store(db) as st:
        rep = sweep.run_sweep("tiny", "quick", st, threads=1, group_fn=counting)
    print(json.dumps({**rep.to_dict(), "trained": sum(trained)}))
""")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")]), "OMP_NUM_THREADS": "1"}


def _sweeps(tmp: Path, n: int, mode: str) -> list[subprocess.CompletedProcess[str]]:
    """``n`` sweeps of one store started together; their finished processes."""
    barrier = tmp / f"barrier-{mode}"
    barrier.mkdir()
    argv = [sys.executable, "-c", SWEEPER, str(tmp / f"{mode}.sqlite"), str(barrier), str(n),
            mode]
    procs = [subprocess.Popen(argv, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(n)]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=240)
        out.append(subprocess.CompletedProcess(argv, p.returncode, stdout, stderr))
    return out


def _reports(done: list[subprocess.CompletedProcess[str]]) -> list[dict[str, Any]]:
    for d in done:
        assert d.returncode == 0, d.stderr[-2000:]
    return [json.loads(d.stdout.strip().splitlines()[-1]) for d in done]


def _trained_total(tmp: Path, mode: str) -> tuple[int, list[dict[str, Any]]]:
    reps = _reports(_sweeps(tmp, 2, mode))
    with Store(tmp / f"{mode}.sqlite") as st:
        assert st.count() == TINY_RUNS and st.integrity() == "ok"
    return sum(r["trained"] for r in reps), reps


def test_two_sweeps_of_one_store_share_the_groups(tmp_path: Path) -> None:
    trained, reps = _trained_total(tmp_path, "locks")
    assert trained == TINY_RUNS  # every run trained by exactly one of the two sweeps
    for r in reps:  # each reports what it did, and between them everything is accounted for
        assert r["already"] + r["computed"] + r["by_others"] == TINY_RUNS
        assert r["computed"] == r["trained"]
    assert sum(r["computed"] for r in reps) == TINY_RUNS


def test_sharing_fails_when_every_lock_is_granted(tmp_path: Path) -> None:
    trained, _ = _trained_total(tmp_path, "nolocks")
    assert trained > TINY_RUNS  # the planted fault: both sweeps train groups the other trains


def test_a_killed_sweeps_group_is_free_at_once(tmp_path: Path) -> None:
    (killed,) = _sweeps(tmp_path, 1, "die")
    assert killed.returncode == -signal.SIGKILL
    db = tmp_path / "die.sqlite"
    assert group_locks.lock_path(db).exists()
    with Store(db) as st:  # no lease to expire: the next sweep computes everything at once
        rep = sweep.run_sweep("tiny", "quick", st, threads=1)
        assert (rep.already, rep.computed, rep.by_others) == (0, TINY_RUNS, 0)
        assert st.count() == TINY_RUNS


def test_a_held_group_is_left_to_its_holder(tmp_path: Path) -> None:
    runs = [r for r in presets.plan("tiny", "quick") if r.label_dict()["L"] == 1]
    db = tmp_path / "held.sqlite"
    groups = sweep.group_runs(sweep.keyed(runs))
    holder = textwrap.dedent("""
        import sys, time
        from workbench.verifiers.group_locks import GroupLocks
        locks = GroupLocks(sys.argv[1])
        assert locks.acquire(sys.argv[2].split(","))
        print("held", flush=True)
        sys.stdin.read()
    """)
    with Store(db):
        pass
    keys = ",".join(k for k, _ in groups[0])
    p = subprocess.Popen([sys.executable, "-c", holder, str(db), keys], env=_env(),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "held"
        locks = group_locks.GroupLocks(db)
        assert not locks.acquire([k for k, _ in groups[0]])  # held by the other process
        assert locks.acquire([k for k, _ in groups[1]])
        locks.close()
    finally:
        p.kill()
        p.wait()
    with group_locks.GroupLocks(db) as locks:  # the holder is gone: its lock with it
        assert locks.acquire([k for k, _ in groups[0]])


# --- Ray: one group per GPU, and a worker killed mid-task --------------------------------------


def die_once_then_execute(marker: str, group: list[Any], *args: Any) -> list[dict[str, Any]]:
    """``execute_group``, except that the first call of all (``marker`` absent) kills its worker
    process; records the GPUs Ray gave each call beside ``marker``."""
    import ray

    gpus = [str(g) for g in ray.get_gpu_ids()]
    with open(marker + ".gpus", "a") as f:
        f.write(",".join(gpus) + ";" + os.environ.get("CUDA_VISIBLE_DEVICES", "") + "\n")
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return sweep.execute_group(group, *args)


@pytest.fixture
def local_ray():
    if not sweep.ray_available():
        pytest.skip("ray is not installed (pip install .[ray])")
    import ray

    opts = sweep.ray_init_options(None) | {"num_cpus": 2, "num_gpus": 2}
    ray.init(**opts)  # two declared GPUs: Ray schedules by them, no device is touched
    yield ray
    ray.shutdown()


def test_ray_reruns_a_killed_worker_and_stores_every_run_once(tmp_path: Path,
                                                             local_ray: Any) -> None:
    runs = [r for r in presets.plan("tiny", "quick") if r.label_dict()["c"] == 1]  # 2 groups
    marker = str(tmp_path / "died")
    with Store(tmp_path / "ray.sqlite") as st:
        rep = sweep.run_sweep("tiny", "quick", st, runs=runs, backend="ray", cpus_per_task=1,
                              gpus_per_task=1, threads=1,
                              group_fn=partial(die_once_then_execute, marker))
        keys = [r["key"] for r in st.rows()]
    assert os.path.exists(marker)  # a worker did die mid-task
    assert (rep.computed, rep.already, rep.groups) == (len(runs), 0, 2)
    assert sorted(keys) == sorted(k for k, _ in sweep.keyed(runs)) and len(set(keys)) == len(keys)
    calls = Path(marker + ".gpus").read_text().splitlines()
    assert len(calls) == 3  # two groups, one of them twice
    for line in calls:  # each task holds exactly one of the two GPUs, as CUDA sees it
        ids, visible = line.split(";")
        assert len(ids.split(",")) == 1 and ids in ("0", "1") and visible == ids
