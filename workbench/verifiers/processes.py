"""Worker processes, shared by ``workbench check --jobs`` (``workbench.proofs.workers``) and the
local sweep's ``--jobs`` (``workbench.verifiers.sweep``): how many cores there are, how many
workers may be asked for, whether they may be forked, and how they end with their parent.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time

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


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int) -> None:
    """A worker's first act (a pool's ``initializer``, given the parent's pid): the kernel
    kills it when its parent ends, however the parent ends (``PR_SET_PDEATHSIG`` on Linux; a
    thread watching the parent's pid elsewhere), and it ignores SIGINT, which a terminal sends
    the whole group: the parent answers it and ends its workers (:func:`end_workers`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)
    armed = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if not armed:
        threading.Thread(target=_watch, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # the parent ended before the watch began
        os._exit(1)


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def end_workers() -> int:
    """Kill every worker process this process started (``multiprocessing``'s children) and reap
    them; how many there were. Called when the parent is interrupted, before the pools shut
    down, so no pool waits for a group or a claim to finish."""
    children = multiprocessing.active_children()
    for c in children:
        c.kill()
    for c in children:
        c.join(timeout=5)
    return len(children)
