"""Keep freed tensor memory in the process between training steps (glibc only).

A batched step allocates and frees the same few-MB activations every step. With glibc's
defaults, blocks above the (dynamic) mmap threshold go back to the kernel when freed and come
back page-faulted on the next step: on the 2-core VM of ``benchmarks/trainer.py`` about 3,500
minor faults per step at d = 16, K = 16, a fifth of the step time. Raising the mmap threshold
to its 32 MiB ceiling and the trim threshold to 1 GiB keeps those blocks on the heap.

``keep_freed_memory()`` applies this once per process (``WORKBENCH_MALLOC_TUNE=0`` skips it);
it returns whether the settings are in force. It changes no result, only where memory lives.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_done: list[bool] = []


def keep_freed_memory() -> bool:
    """Set glibc's mmap threshold to 32 MiB and its trim threshold to 1 GiB (once)."""
    if not _done:
        _done.append(_apply())
    return _done[0]


def _apply() -> bool:
    if os.environ.get("WORKBENCH_MALLOC_TUNE", "1") == "0" or platform.system() != "Linux":
        return False
    name = ctypes.util.find_library("c")
    if name is None or not platform.libc_ver()[0] == "glibc":
        return False
    try:
        libc = ctypes.CDLL(name)
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)) and bool(
            libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30))
    except (OSError, AttributeError):
        return False
