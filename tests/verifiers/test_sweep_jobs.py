"""The local sweep's worker processes (``run_sweep(jobs=N)``, ``workbench sweep --jobs N``): the
rows of one process, every group in a worker, a killed worker's group rerun and stored once, and
the groups beside a failing one still stored. The ``tiny`` preset, one torch thread per worker."""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from workbench.cli import main
from workbench.verifiers import presets, sweep
from workbench.verifiers.store import Store

COLUMNS = ("heldout", "heldout_lo", "heldout_hi", "best_loss", "final_loss")


def _runs() -> list[presets.Run]:
    """Three of the tiny preset's groups (L = 1, and L = 2 at c = 1): 18 runs."""
    return [r for r in presets.plan("tiny", "quick")
            if r.label_dict()["L"] == 1 or r.label_dict()["c"] == 1]


def tagged(marker: str, group: list[Any], *args: Any) -> list[dict[str, Any]]:
    """``execute_group``, its rows tagged with the computing process. ``marker``: ``""``, or a
    file path (the first call of all, with ``marker`` absent, kills its own process instead),
    or ``"always"`` (every call does)."""
    if marker == "always" or (marker and not os.path.exists(marker)):
        if marker != "always":
            open(marker, "w").close()
        os._exit(1)
    rows = sweep.execute_group(group, *args)
    for r in rows:
        r["extra"]["pid"] = os.getpid()
    return rows


def failing(key: str, group: list[Any], *args: Any) -> list[dict[str, Any]]:
    """``execute_group``, except that the group holding run ``key`` raises."""
    if key in (k for k, _ in group):
        raise ValueError("a planted failure in one group")
    return sweep.execute_group(group, *args)


def _stored(path: Path, runs: list[presets.Run], jobs: int, fn: Any,
            threads: int = 1) -> dict[str, Any]:
    with Store(path) as st:
        rep = sweep.run_sweep("tiny", "quick", st, runs=runs, threads=threads, jobs=jobs,
                              group_fn=fn)
        assert (rep.computed, rep.already, rep.by_others) == (len(runs), 0, 0)
        return {r["key"]: r for r in st.rows()}


def test_workers_store_the_numbers_of_one_process(tmp_path: Path) -> None:
    runs = _runs()
    one = _stored(tmp_path / "one.sqlite", runs, 1, partial(tagged, ""))
    two = _stored(tmp_path / "two.sqlite", runs, 2, partial(tagged, ""))
    assert set(one) == set(two) == {k for k, _ in sweep.keyed(runs)}
    assert {r["extra"]["pid"] for r in one.values()} == {os.getpid()}
    pids = {r["extra"]["pid"] for r in two.values()}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2  # computed in the workers
    for k, r in one.items():
        for col in COLUMNS:
            assert two[k][col] == r[col], (k, col)  # the same seeds: the same bits


def test_spawned_workers_store_the_same_numbers(tmp_path: Path) -> None:
    runs = _runs()[:12]  # two groups; two threads a worker: spawned, not forked
    one = _stored(tmp_path / "one.sqlite", runs, 1, partial(tagged, ""))
    two = _stored(tmp_path / "spawned.sqlite", runs, 2, partial(tagged, ""), threads=2)
    assert os.getpid() not in {r["extra"]["pid"] for r in two.values()}
    assert {r["extra"]["threads"] for r in two.values()} == {2}
    for k, r in one.items():
        for col in COLUMNS:
            assert two[k][col] == r[col], (k, col)


def test_a_killed_worker_is_rerun_and_every_run_stored_once(tmp_path: Path) -> None:
    runs, marker = _runs(), str(tmp_path / "died")
    rows = _stored(tmp_path / "die.sqlite", runs, 2, partial(tagged, marker))
    assert os.path.exists(marker)  # a worker did die mid-group
    assert sorted(rows) == sorted(k for k, _ in sweep.keyed(runs))


def test_a_worker_that_always_dies_is_reported_not_retried_forever(tmp_path: Path) -> None:
    with Store(tmp_path / "always.sqlite") as st:
        with pytest.raises(RuntimeError, match=f"died {sweep.RETRIES + 1} times"):
            sweep.run_sweep("tiny", "quick", st, runs=_runs(), threads=1, jobs=2,
                            group_fn=partial(tagged, "always"))
        assert st.count() == 0


def test_groups_beside_a_failing_one_are_stored_and_its_lock_freed(tmp_path: Path) -> None:
    runs, db = _runs(), tmp_path / "fail.sqlite"
    *before, last = sweep.group_runs(sweep.keyed(runs))  # two workers: both others started
    with Store(db) as st, pytest.raises(ValueError, match="planted failure"):
        sweep.run_sweep("tiny", "quick", st, runs=runs, threads=1, jobs=2,
                        group_fn=partial(failing, last[0][0]))
    with Store(db) as st:  # the group still running when the last one failed is stored too
        assert {r["key"] for r in st.rows()} == {k for g in before for k, _ in g}
        rep = sweep.run_sweep("tiny", "quick", st, runs=runs, threads=1, jobs=2)
        assert rep.by_others == 0 and rep.already + rep.computed == len(runs)  # none locked
        assert st.count() == len(runs)


@pytest.mark.parametrize("kw, msg", [({"jobs": 0}, "jobs must be an integer in 1.."),
                                     ({"jobs": 2, "backend": "ray"}, "jobs must be 1")])
def test_bad_jobs_name_the_argument(tmp_path: Path, kw: dict[str, Any], msg: str) -> None:
    with Store(tmp_path / "x.sqlite") as st, pytest.raises(ValueError, match=msg):
        sweep.run_sweep("tiny", "quick", st, runs=_runs(), **kw)
    with Store(tmp_path / "x.sqlite") as st:
        assert st.count() == 0


def test_cli_jobs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                  monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "cli.sqlite"
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # progress lines go to a terminal
    assert main(["sweep", "tiny", "--db", str(db), "--jobs", "2", "--threads", "1"]) == 0
    err = capsys.readouterr().err
    assert err.count("(worker)") == 4  # every group of the preset, each from a worker
    with Store(db) as st:
        assert st.count() == 24 and {r["extra"]["threads"] for r in st.rows()} == {1}
