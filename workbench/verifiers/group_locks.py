"""Sweeps sharing one store: a group is computed by whichever sweep holds its lock (docs/sweeps.md,
"Concurrent sweeps").

Each group of a sweep has one lock: a one-byte POSIX record lock (``fcntl.lockf``) in the file
``<store>-groups`` beside the store, at an offset taken from a hash of the group's run keys. The
operating system releases a process's locks when it exits, however it exits (``kill -9``
included), so a killed sweep's groups are free at once for the next one: no lease times, no
stale claims. A sweep computes a group only while it holds its lock, after re-reading which of
its runs are stored; a group whose lock another sweep holds is left for later, and waited for
once nothing else is free. So concurrent sweeps share the work, and each reports what it
computed itself.

Where ``fcntl`` is missing (Windows) every lock is granted: each sweep computes what it finds
missing, and the store's primary key still keeps every run once.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from workbench.verifiers.store import Store

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

Group = list[tuple[str, Any]]  # (run key, run) of one group
_OFFSET_BITS = 62  # lock offsets in 0 .. 2**62 (a file may be locked beyond its end)


def lock_path(store_path: str | os.PathLike[str]) -> Path:
    """The lock file of the store at ``store_path``: ``<store>-groups`` beside it."""
    p = Path(store_path)
    return p.with_name(p.name + "-groups")


def group_offset(keys: Sequence[str]) -> int:
    """The byte a group locks: a 62-bit hash of its sorted run keys."""
    h = hashlib.sha256("\n".join(sorted(keys)).encode()).digest()
    return int.from_bytes(h[:8], "little") >> (64 - _OFFSET_BITS)


class GroupLocks:
    """The group locks of one store, held by this process; a context manager.

    ``acquire(keys, wait=False)`` locks the group of run ``keys`` and says whether it got it
    (``wait=True`` blocks until the other holder exits or releases); ``release(keys)`` frees it.
    Closing releases every lock.
    """

    def __init__(self, store_path: str | os.PathLike[str]) -> None:
        self.path = lock_path(store_path)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644) if fcntl else -1
        self.held: set[int] = set()

    def acquire(self, keys: Sequence[str], wait: bool = False) -> bool:
        off = group_offset(keys)
        if fcntl is None or off in self.held:
            return True
        try:
            fcntl.lockf(self.fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB), 1, off)
        except OSError:  # held by another process (EACCES or EAGAIN)
            return False
        self.held.add(off)
        return True

    def release(self, keys: Sequence[str]) -> None:
        off = group_offset(keys)
        if fcntl is not None and off in self.held:
            fcntl.lockf(self.fd, fcntl.LOCK_UN, 1, off)
            self.held.discard(off)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # releases every lock of this process on the file
            self.fd = -1
        self.held.clear()

    def __enter__(self) -> GroupLocks:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _claim(group: Group, store: Store, locks: GroupLocks, wait: bool
           ) -> tuple[Group | None, int]:
    """Lock ``group`` (or give up at once unless ``wait``): ``(its runs still missing, how many
    another sweep stored)``, ``(None, 0)`` if another sweep holds it. Released at once when
    nothing is missing; else the caller releases it after storing the runs."""
    keys = [k for k, _ in group]
    if not locks.acquire(keys, wait):
        return None, 0
    stored = store.done_keys(keys)
    missing = [(k, r) for k, r in group if k not in stored]
    if not missing:
        locks.release(keys)
    return missing, len(stored)


def next_free(pending: list[Group], store: Store, locks: GroupLocks, block: bool,
               counts: list[int]) -> tuple[Group, Group] | None:
    """The first pending group this sweep can lock and that still misses runs, as ``(group,
    missing runs)``, removed from ``pending``; with ``block``, waits for a held one rather than
    return None while groups remain."""
    while pending:
        for g in list(pending):
            missing, others = _claim(g, store, locks, False)
            if missing is None:
                continue
            pending.remove(g)
            counts[1] += others
            if missing:
                return g, missing
        if not block or not pending:
            return None
        g = pending.pop(0)  # every pending group is held by another sweep: wait for one
        missing, others = _claim(g, store, locks, True)
        counts[1] += others
        if missing:
            return g, missing
    return None
