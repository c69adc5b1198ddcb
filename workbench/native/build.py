"""Native CPU kernels for stacked models: build, load and run (float32, Linux, any C compiler).

The C sources (``cpu_kernels.c``: the fused attention core of ``native.fused_attention`` and the
per-model LayerNorm of ``native.fused_layernorm``; ``ffn_kernels.c``: the feed-forward block of
``native.fused_ffn``; ``kernels_common.h``: what they share) are compiled on first use with the
system C compiler (``$CC``, ``cc`` or ``gcc``; ``-O3 -march=native``) into a per-user cache
(``$WORKBENCH_CACHE`` or ``~/.cache/workbench``; the name is a hash of the sources, flags, the
compiler and its version, and the CPU) and called through ctypes. A cached library is loaded only
if its SHA-256 equals the one recorded beside it when it was built; a damaged one is built again,
a failed compile leaves nothing behind, and when the kernels cannot be had the workbench says
why once on stderr and runs plain torch. The kernels split their work items with OpenMP
(``-fopenmp``; the library then shares torch's ``libgomp`` and its thread count, so no second
pool spins against torch's); each item writes only its own outputs, so results do not depend on
the thread count.
``WORKBENCH_FUSED=0`` turns the kernels off; every caller then falls back to plain torch.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from workbench.core.safe_files import write_text

SOURCES = tuple(Path(__file__).with_name(n) for n in ("cpu_kernels.c", "ffn_kernels.c"))
HEADER = Path(__file__).with_name("kernels_common.h")
_FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math", "-shared", "-fPIC")
LANES = 8  # samples (or rows) per block, as LANES in the C source
KERNELS = ("fused_attention_forward", "fused_attention_backward", "layernorm_forward",
           "layernorm_backward", "ffn_forward", "ffn_backward", "linear_forward",
           "linear_backward")
_state: dict[str, Any] = {}


def cache_root() -> Path:
    """The per-user cache folder: ``$WORKBENCH_CACHE``, else ``~/.cache/workbench``."""
    return Path(os.environ.get("WORKBENCH_CACHE") or Path.home() / ".cache" / "workbench")


class View(ctypes.Structure):
    """A tensor as the C side sees it: data pointer and (model, sample, token) strides."""

    _fields_ = [("ptr", ctypes.c_void_p), ("sk", ctypes.c_int64), ("sb", ctypes.c_int64),
                ("st", ctypes.c_int64)]


def _cpu_key() -> str:
    try:
        flags = next((ln for ln in Path("/proc/cpuinfo").read_text().splitlines()
                      if ln.startswith("flags")), "")
    except OSError:
        flags = ""
    return f"{platform.machine()}|{flags}"


def _compiler_id(cc: str) -> str:
    """The compiler's path and the first line of its ``--version`` (another compiler, or
    another version of it, builds another library)."""
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
        return f"{cc}|{out.stdout.splitlines()[0] if out.stdout else out.returncode}"
    except (OSError, subprocess.SubprocessError):
        return cc


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sound(lib: Path) -> bool:
    """Whether the cached ``lib`` is the file that was built: its SHA-256 equals the one
    recorded beside it (``.sha256``) when it was built. A truncated, emptied or replaced library
    fails, and is never loaded."""
    try:
        return lib.is_file() and _digest(lib) == lib.with_suffix(".sha256").read_text().strip()
    except OSError:
        return False


def _fresh(cc: str, cache: Path, lib: Path) -> None:
    """Compile into a temporary file in ``cache``, record its checksum, and move it into place;
    a failed compile leaves nothing behind."""
    cache.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=cache)
    os.close(fd)
    tmp = Path(name)
    try:
        try:  # OpenMP: the same runtime (libgomp.so.1) and thread count as torch's ops
            _compile(cc, ["-fopenmp"], str(tmp))
        except subprocess.CalledProcessError:
            _compile(cc, [], str(tmp))  # no OpenMP: the kernels run on one thread
        write_text(lib.with_suffix(".sha256"), _digest(tmp) + "\n", "native kernel cache")
        os.replace(tmp, lib)
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def _locked(cache: Path, lib: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``lib``'s lock file in ``cache`` for the block (it stays, empty;
    the kernels are built on Linux only)."""
    import fcntl

    cache.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(lib.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError:  # a read-only cache: a sound library there is still loaded, unlocked
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _build() -> ctypes.CDLL | None:
    if os.environ.get("WORKBENCH_FUSED", "1") == "0":
        _state["reason"] = "disabled by WORKBENCH_FUSED=0"
        return None
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None or platform.system() != "Linux":
        _fallback("no C compiler found (or not Linux)")
        return None
    src = b"".join(p.read_bytes() for p in (*SOURCES, HEADER))
    key = hashlib.sha256(src + repr(_FLAGS).encode() + _compiler_id(cc).encode()
                         + _cpu_key().encode())
    cache = cache_root()
    lib = cache / f"native-{key.hexdigest()[:16]}.so"
    try:
        with _locked(cache, lib):  # one process checks and builds at a time (workers start at once)
            if not _sound(lib):  # missing, or damaged: removed and built again
                for f in (lib, lib.with_suffix(".sha256")):
                    if f.is_file() or f.is_symlink():
                        f.unlink()
                _fresh(cc, cache, lib)
            if not _sound(lib):
                _fallback(f"the library built in {cache} fails its checksum")
                return None
            dll = ctypes.CDLL(str(lib))
        for fn in KERNELS:
            getattr(dll, fn)
    except subprocess.CalledProcessError as exc:
        why = (exc.stderr or b"").decode(errors="replace").strip().splitlines()
        _fallback(f"the C compiler {cc} failed" + (f": {why[0][:120]}" if why else ""))
        return None
    except (OSError, ValueError, AttributeError, subprocess.SubprocessError) as exc:
        why = ("it is not a folder" if cache.exists() and not cache.is_dir() else
               exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc))
        _fallback(f"the kernel cache {cache} cannot be used: {why}; set WORKBENCH_CACHE to a "
                  "writable folder")
        return None
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    head: list[Any] = [i64, i64, i64, i64, ptr, ptr, View, View, View]
    dll.fused_attention_forward.argtypes = head + [View, i64, i64]
    dll.fused_attention_backward.argtypes = head + [View] * 4 + [i64, i64]
    f32 = ctypes.c_float
    dll.layernorm_forward.argtypes = [i64, i64, ptr, ptr, ptr, f32, ptr, ptr, ptr, i64, i64]
    dll.layernorm_backward.argtypes = [i64, i64] + [ptr] * 8 + [i64, i64]
    dll.ffn_forward.argtypes = [i64] * 4 + [ptr] * 6 + [i64, i64]
    dll.ffn_backward.argtypes = [i64] * 4 + [ptr] * 10 + [i64, i64]
    dll.linear_forward.argtypes = [i64] * 5 + [ptr] * 4 + [i64, i64]
    dll.linear_backward.argtypes = [i64] * 5 + [ptr] * 6 + [i64, i64]
    for fn in KERNELS:
        getattr(dll, fn).restype = ctypes.c_int
    return dll


def _fallback(reason: str) -> None:
    """Record why the kernels are off and say so once, on stderr: every caller then runs plain
    torch, which is slower (``WORKBENCH_FUSED=0``, a choice, is not announced)."""
    _state["reason"] = reason
    print(f"workbench: native CPU kernels off ({' '.join(reason.split())}); using plain torch, "
          "which is slower", file=sys.stderr)
    return None


def _compile(cc: str, extra: list[str], out: str) -> None:
    subprocess.run([cc, *_FLAGS, *extra, "-o", out, *map(str, SOURCES), "-lm"], check=True,
                   capture_output=True, timeout=120)


def lib() -> ctypes.CDLL | None:
    """The loaded kernel library, built on first call (None where it cannot be)."""
    if "lib" not in _state:
        _state["lib"] = _build()
    return _state["lib"]


def available() -> bool:
    """True when the fused kernel is built and loadable on this machine."""
    return lib() is not None


def unavailable_reason() -> str:
    """Why ``available()`` is False ('' when it is True)."""
    return "" if available() else str(_state.get("reason", ""))


def view(t: torch.Tensor) -> View:
    """``t``'s data pointer and first three strides."""
    s = t.stride()
    return View(t.data_ptr(), s[0], s[1], s[2])


def run(fn: Any, total: int, *args: Any) -> None:
    """Call ``fn(*args, 0, total)``: the kernel splits ``[0, total)`` over its OpenMP threads
    (torch's runtime and ``torch.get_num_threads()``), one scratch buffer per thread."""
    codes = [fn(*args, 0, total)]
    if any(codes):
        raise MemoryError("a native kernel could not allocate its scratch buffer")
