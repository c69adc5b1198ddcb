"""Paths and devices named on the command line, checked while the arguments are parsed: before
any work, without importing torch, and leaving every folder as it was."""

from __future__ import annotations

import os

from workbench.core.safe_files import check_path_text, refuse_special


def nvidia_driver_present() -> bool:
    """Whether an NVIDIA driver is loaded (``/proc/driver/nvidia`` or a ``/dev/nvidia*``
    device), read without torch; torch then says whether CUDA works."""
    if os.path.exists("/proc/driver/nvidia/version"):
        return True
    try:
        return any(n.startswith("nvidia") for n in os.listdir("/dev"))
    except OSError:
        return False


def writable_path(flag: str, path: str, folder: bool = False) -> str:
    """``path`` if the command can write there: a file (new or existing) in a folder it can
    create files in, or with ``folder=True`` a folder that exists or can be made in one.
    Checked by creating and removing a probe file, so it holds for root and on /proc too; it
    leaves the folder as it was. A FIFO, device or socket is refused (the file is written by
    ``workbench.core.safe_files``, which replaces a link there rather than follow it)."""
    check_path_text(flag, path)
    p = os.path.abspath(path)
    refuse_special(flag, p)
    kind = "folder" if folder else "file"
    if folder and os.path.isdir(p):
        where = p
    elif os.path.exists(p) and (folder or os.path.isdir(p)):
        raise ValueError(f"{flag} must be a {kind} (got {path!r}, which is not)")
    else:
        where = os.path.dirname(p)
    if not os.path.isdir(where) or not _can_create_in(where):
        raise ValueError(f"{flag} must be a {kind} in an existing, writable folder "
                         f"(got {path!r})")
    if os.path.isfile(p) and not os.access(p, os.W_OK):
        raise ValueError(f"{flag} must be a writable file (got {path!r})")
    return path


def _can_create_in(folder: str) -> bool:
    import tempfile

    try:
        fd, probe = tempfile.mkstemp(prefix=".workbench-probe-", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(probe)
    return True


def readable_file(flag: str, path: str) -> str:
    """``path`` if it is an existing file that can be opened for reading."""
    check_path_text(flag, path)
    if not os.path.isfile(path):
        raise ValueError(f"{flag} must be an existing file (got {path!r})")
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise ValueError(f"{flag} must be a readable file (got {path!r}: {e.strerror})") from None
    return path
