"""Worker processes, shared by ``workbench check --jobs`` (``workbench.proofs.workers``) and the
local sweep's ``--jobs`` (``workbench.verifiers.sweep``): how many cores there are, how many
workers may be asked for, and whether they may be forked.
"""

from __future__ import annotations

import multiprocessing
import os
import sys

from workbench.core.validation import check_int


def available_cores() -> int:
    """The cores this process may run on (its affinity where the platform tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def check_jobs(name: str, jobs: int, cores: int | None = None) -> int:
    """``jobs`` if it is an integer in ``1 .. 4 * cores`` (four workers per core is already
    oversubscribed); else ``ValueError`` naming ``name`` and the range."""
    n = available_cores() if cores is None else cores
    try:
        return check_int(name, jobs, lo=1, hi=4 * n)
    except ValueError:
        raise ValueError(f"{name} must be an integer in 1..{4 * n} (got {jobs}; four workers "
                         f"per core of the {n} here is already oversubscribed)") from None


def can_fork(device: str, threads: int = 1) -> bool:
    """Forked workers: on Linux (fork is the platform's own), for CPU runs with one thread per
    worker only (a forked child cannot re-initialise CUDA, and an OpenMP pool of more than one
    thread is not fork-safe)."""
    return (sys.platform.startswith("linux") and device == "cpu" and threads == 1
            and "fork" in multiprocessing.get_all_start_methods())
