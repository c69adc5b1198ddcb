"""Native CPU kernels for stacked models: build, load and run (float32, Linux, any C compiler).

The C sources (``cpu_kernels.c``: the fused attention core of ``native.fused_attention`` and the
per-model LayerNorm of ``native.fused_layernorm``; ``ffn_kernels.c``: the feed-forward block of
``native.fused_ffn``; ``kernels_common.h``: what they share) are compiled on first use with the
system C compiler (``$CC``, ``cc`` or ``gcc``; ``-O3 -march=native``) into a per-user cache
(``$WORKBENCH_CACHE`` or ``~/.cache/workbench``, keyed by sources, flags and CPU) and called
through ctypes. The kernels split their work items with OpenMP (``-fopenmp``; the library then
shares torch's ``libgomp`` and its thread count, so no second pool spins against torch's);
each item writes only its own outputs, so results do not depend on the thread count.
``WORKBENCH_FUSED=0`` turns the kernels off; every caller then falls back to plain torch.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import torch

SOURCES = tuple(Path(__file__).with_name(n) for n in ("cpu_kernels.c", "ffn_kernels.c"))
HEADER = Path(__file__).with_name("kernels_common.h")
_FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math", "-shared", "-fPIC")
LANES = 8  # samples (or rows) per block, as LANES in the C source
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


def _build() -> ctypes.CDLL | None:
    if os.environ.get("WORKBENCH_FUSED", "1") == "0":
        _state["reason"] = "disabled by WORKBENCH_FUSED=0"
        return None
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None or platform.system() != "Linux":
        _state["reason"] = "no C compiler found (or not Linux)"
        return None
    src = b"".join(p.read_bytes() for p in (*SOURCES, HEADER))
    key = hashlib.sha256(src + repr(_FLAGS).encode() + cc.encode() + _cpu_key().encode())
    cache = cache_root()
    lib = cache / f"native-{key.hexdigest()[:16]}.so"
    try:
        if not lib.exists():
            cache.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(suffix=".so", dir=cache)
            os.close(fd)
            try:  # OpenMP: the same runtime (libgomp.so.1) and thread count as torch's ops
                _compile(cc, ["-fopenmp"], tmp)
            except subprocess.CalledProcessError:
                _compile(cc, [], tmp)  # no OpenMP: the kernels run on one thread
            os.replace(tmp, lib)
        dll = ctypes.CDLL(str(lib))
    except (OSError, subprocess.SubprocessError) as exc:
        _state["reason"] = f"build failed: {exc}"
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
    for fn in ("fused_attention_forward", "fused_attention_backward", "layernorm_forward",
               "layernorm_backward", "ffn_forward", "ffn_backward", "linear_forward",
               "linear_backward"):
        getattr(dll, fn).restype = ctypes.c_int
    return dll


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
