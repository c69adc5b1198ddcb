"""The one way the workbench writes a file (docs/sweeps.md, "Files the workbench writes").

:func:`write_file` writes into a fresh temporary file in the destination's folder, flushes and
syncs it, then renames it over the destination with ``os.replace``: a symbolic link there is
replaced, never followed, so no file outside the folder is touched; a reader sees the old file or
the whole new one; on any error (a full disk included) the temporary file is removed and the
destination is left as it was. :func:`refuse_special` answers a FIFO, a device or a socket up
front, before any work. Errors are :class:`WriteFailed`, a ``ValueError`` whose message starts
with the name it was given (a flag, on the command line), so the CLI's one-line contract holds.

Reading has its one rule too: :func:`reading` (and :func:`read_json`) turn whatever a parser
raises on a truncated, damaged or foreign file (``BadZipFile``, ``EOFError``, a JSON or SQLite
error, a missing key) into :class:`ReadFailed`, a ``ValueError`` naming the flag and the file.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["ReadFailed", "WriteFailed", "create_new", "read_json", "reading", "refuse_special",
           "special_kind", "write_file", "write_text"]

# what os.strerror says is too long or unclear for these: the line the user reads
_REASONS = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exceeded",
            errno.EROFS: "the filesystem is read-only", errno.EACCES: "permission denied",
            errno.EPERM: "permission denied", errno.EIO: "an input/output error"}


class WriteFailed(ValueError):
    """A file could not be written; nothing was left behind. ``str()`` is one line naming
    ``name`` (the flag) and ``path``."""

    def __init__(self, name: str, path: str | os.PathLike[str], why: str) -> None:
        self.name, self.path, self.why = name, os.fspath(path), why
        super().__init__(f"{name} must be a file the workbench can write "
                         f"({self.path!r}: {why}; nothing was written)")


class ReadFailed(ValueError):
    """A file could not be read as ``what``; ``str()`` is one line naming ``name`` (the flag or
    the file's role) and ``path``."""

    def __init__(self, name: str, path: str | os.PathLike[str], what: str, why: str) -> None:
        self.name, self.path = name, os.fspath(path)
        super().__init__(f"{name} must be {what} ({self.path!r} {why})")


@contextmanager
def reading(name: str, path: str | os.PathLike[str], what: str) -> Iterator[None]:
    """Within: reading ``path`` as ``what`` (``a witness .npz``). A ``ValueError`` that already
    names ``name`` passes; any other failure of the parser is :class:`ReadFailed` (``cannot be
    read`` for the system's errors, else ``is truncated or damaged``)."""
    try:
        yield
    except (KeyboardInterrupt, MemoryError, ReadFailed, WriteFailed):
        raise
    except OSError as e:
        raise ReadFailed(name, path, what, f"cannot be read: {e.strerror or e}") from None
    except ValueError as e:
        if str(e).startswith(name):
            raise
        raise ReadFailed(name, path, what, f"is truncated or damaged: {_first_line(e)}") \
            from None
    except Exception as e:  # noqa: BLE001 - any parser's failure on damaged bytes
        raise ReadFailed(name, path, what, f"is truncated or damaged: {_first_line(e)}") \
            from None


def _first_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text[:80]}" if text else type(e).__name__


def read_json(path: str | os.PathLike[str], name: str, what: str) -> Any:
    """The JSON value in ``path``; a file that cannot be read or parsed is :class:`ReadFailed`
    naming ``name``."""
    import json

    with reading(name, path, what):
        return json.loads(Path(path).read_text(encoding="utf-8"))


def special_kind(path: str | os.PathLike[str]) -> str | None:
    """``'a FIFO'``, ``'a device'`` or ``'a socket'`` when ``path`` (not followed if a link) is
    one, else None (a regular file, a link, a folder, or nothing yet)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None


NAME_MAX = 255  # bytes in one file or folder name (Linux, macOS and Windows alike)
PATH_MAX = 4096  # bytes in a whole path (Linux)


def check_path_text(name: str, path: str | os.PathLike[str]) -> None:
    """A one-line ``ValueError`` naming ``name`` for a path no file system takes: empty (which
    would mean the working folder), or a name over ``NAME_MAX`` bytes, or over ``PATH_MAX``."""
    text = os.fspath(path)
    if not str(text).strip():
        raise ValueError(f"{name} must be a non-empty path (got {text!r})")
    raw = os.fsencode(text)
    longest = max((len(part) for part in raw.split(b"/")), default=0)
    if longest > NAME_MAX or len(raw) > PATH_MAX:
        raise ValueError(f"{name} must be a path whose names are at most {NAME_MAX} bytes and "
                         f"whole at most {PATH_MAX} bytes (got a name of {longest} bytes, "
                         f"{len(raw)} in all)")


def refuse_special(name: str, path: str | os.PathLike[str]) -> None:
    """Raise :class:`WriteFailed` when ``path`` is a FIFO, a device or a socket: writing there
    would hang or reach another program, and replacing it would break that program."""
    kind = special_kind(path)
    if kind is not None:
        raise WriteFailed(name, path, f"is {kind}, not a regular file")


def _reason(e: OSError) -> str:
    return _REASONS.get(e.errno or 0) or (e.strerror or str(e)).rstrip(".")


def _mode_for(path: str) -> int:
    """The mode the new file gets: that of the regular file it replaces, else 0666 less the
    umask (what ``open`` would give)."""
    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode)
    except OSError:
        pass
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def _temporary(name: str, path: str) -> Iterator[tuple[IO[bytes], str]]:
    """A new temporary file beside ``path`` (hidden, same suffix), removed unless kept."""
    folder, base = os.path.split(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise WriteFailed(name, path, _reason(e)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh, tmp
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_file(path: str | os.PathLike[str], write: Callable[[IO[bytes]], Any],
               name: str = "path") -> Path:
    """Write ``path`` through ``write(fh)`` (``fh`` a binary file object), atomically and
    without following a link at ``path``; ``name`` (the flag) is named in any error. A FIFO,
    device or socket at ``path`` is refused before ``write`` runs."""
    dest = os.fspath(path)
    refuse_special(name, dest)
    try:
        with _temporary(name, dest) as (fh, tmp):
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
            os.chmod(tmp, _mode_for(dest))
            os.replace(tmp, dest)
    except OSError as e:
        raise WriteFailed(name, dest, _reason(e)) from None
    return Path(dest)


def write_text(path: str | os.PathLike[str], text: str, name: str = "path") -> Path:
    """:func:`write_file` for UTF-8 text."""
    return write_file(path, lambda fh: fh.write(text.encode()), name)


def create_new(path: str | os.PathLike[str], write: Callable[[str], Any],
               name: str = "path") -> bool:
    """Create ``path`` only if nothing (not even a dangling link) is there: ``write(tmp)``
    fills a temporary file beside it by name (a database, say), which is then hard-linked into
    place, so the file appears whole or not at all. False when ``path`` already existed."""
    dest = os.fspath(path)
    if os.path.lexists(dest):
        return False
    try:
        with _temporary(name, dest) as (fh, tmp):
            fh.close()
            write(tmp)
            with open(tmp, "rb+") as again:
                os.fsync(again.fileno())
            os.chmod(tmp, _mode_for(dest))
            try:
                os.link(tmp, dest)
            except FileExistsError:
                return False
            finally:
                os.unlink(tmp)
    except OSError as e:
        raise WriteFailed(name, dest, _reason(e)) from None
    return True
