"""A fused CPU kernel for the softmax attention core of ``MixedAttention`` (float32).

For K stacked models of mixed rank (model ``k``: ``P / r_k`` heads of rank ``r_k``) it computes
``o = softmax(scale_k q k^T) v`` per head in one pass over each sample, and its gradient in a
second pass that recomputes the probabilities (nothing of size ``B H T N`` is ever stored).
This is the memory-bound part of training the paper's small attention layers (PAPER.md §4);
the C source is ``fused_attention.c``, compiled on first use with the system C compiler into a
per-user cache (``$WORKBENCH_CACHE`` or ``~/.cache/workbench``) and called through ctypes, one
thread per ``torch.get_num_threads()`` over the flat index ``k B + b``.

``available()`` says whether the kernel could be built (``WORKBENCH_FUSED=0`` turns it off);
``fused_attention(q, k, v, ranks, scales)`` is differentiable in ``q, k, v``.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import torch

SOURCE = Path(__file__).with_name("fused_attention.c")
_FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math", "-shared", "-fPIC")
_LANES = 8  # samples per block, as LANES in the C source
_state: dict[str, Any] = {}


class _View(ctypes.Structure):
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
    src = SOURCE.read_bytes()
    key = hashlib.sha256(src + repr(_FLAGS).encode() + cc.encode() + _cpu_key().encode())
    cache = Path(os.environ.get("WORKBENCH_CACHE") or Path.home() / ".cache" / "workbench")
    lib = cache / f"fused_attention-{key.hexdigest()[:16]}.so"
    try:
        if not lib.exists():
            cache.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(suffix=".so", dir=cache)
            os.close(fd)
            subprocess.run([cc, *_FLAGS, "-o", tmp, str(SOURCE), "-lm"], check=True,
                           capture_output=True, timeout=120)
            os.replace(tmp, lib)
        dll = ctypes.CDLL(str(lib))
    except (OSError, subprocess.SubprocessError) as exc:
        _state["reason"] = f"build failed: {exc}"
        return None
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    head: list[Any] = [i64, i64, i64, i64, ptr, ptr, _View, _View, _View]
    dll.fused_attention_forward.argtypes = head + [ptr, i64, i64]
    dll.fused_attention_backward.argtypes = head + [_View, ptr, ptr, ptr, i64, i64]
    dll.fused_attention_forward.restype = dll.fused_attention_backward.restype = ctypes.c_int
    return dll


def _lib() -> ctypes.CDLL | None:
    if "lib" not in _state:
        _state["lib"] = _build()
    return _state["lib"]


def available() -> bool:
    """True when the fused kernel is built and loadable on this machine."""
    return _lib() is not None


def unavailable_reason() -> str:
    """Why ``available()`` is False ('' when it is True)."""
    return "" if available() else str(_state.get("reason", ""))


def _view(t: torch.Tensor) -> _View:
    s = t.stride()
    return _View(t.data_ptr(), s[0], s[1], s[2])


def _run(fn: Any, total: int, *args: Any) -> None:
    """Call ``fn(*args, start, stop)`` over ``[0, total)``, split across torch's thread count."""
    n = max(1, min(torch.get_num_threads(), total))
    if n == 1:
        codes = [fn(*args, 0, total)]
    else:
        pool = _state.get("pool")
        if pool is None or pool._max_workers < n:
            pool = _state["pool"] = ThreadPoolExecutor(max_workers=n)
        cuts = [total * i // n for i in range(n + 1)]
        codes = list(pool.map(lambda i: fn(*args, cuts[i], cuts[i + 1]), range(n)))
    if any(codes):
        raise MemoryError("fused attention kernel could not allocate its scratch buffer")


def _blocks(B: int) -> int:
    return -(-B // _LANES)


def _prep(t: torch.Tensor, K: int) -> torch.Tensor:
    t = t.expand(K, *t.shape[1:])
    return t if t.stride(-1) == 1 else t.contiguous()


class _FusedCore(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                ranks: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
        lib = _lib()
        assert lib is not None
        K, B, T, P = q.shape
        N = k.shape[2]
        k_lead, v_lead = k.shape[0], v.shape[0]
        q, k, v = _prep(q, K), _prep(k, K), _prep(v, K)
        o = torch.empty(K, B, T, P, dtype=q.dtype)
        _run(lib.fused_attention_forward, K * _blocks(B), B, T, N, P, ranks.data_ptr(),
             scales.data_ptr(), _view(q), _view(k), _view(v), o.data_ptr())
        ctx.save_for_backward(q, k, v, ranks, scales)
        ctx.lead = (k_lead, v_lead)
        return o

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        lib = _lib()
        assert lib is not None
        q, k, v, ranks, scales = ctx.saved_tensors
        do = _prep(grads[0], q.shape[0])
        K, B, T, P = q.shape
        N = k.shape[2]
        dq, dk, dv = torch.empty_like(q, memory_format=torch.contiguous_format), \
            torch.empty(K, B, N, P, dtype=q.dtype), torch.empty(K, B, N, P, dtype=q.dtype)
        _run(lib.fused_attention_backward, K * _blocks(B), B, T, N, P, ranks.data_ptr(),
             scales.data_ptr(), _view(q), _view(k), _view(v), _view(do), dq.data_ptr(),
             dk.data_ptr(), dv.data_ptr())
        k_lead, v_lead = ctx.lead
        dk = dk if k_lead == K else dk.sum(0, keepdim=True)
        dv = dv if v_lead == K else dv.sum(0, keepdim=True)
        return dq, dk, dv, None, None


def supports(q: torch.Tensor, normalizer: str) -> bool:
    """Whether the fused kernel applies: CPU float32 softmax attention, kernel built."""
    return (normalizer == "softmax" and q.device.type == "cpu" and q.dtype == torch.float32
            and available())


def fused_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                    ranks: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """``(K, B, T, P)`` softmax attention outputs of K mixed-rank models (see module doc).

    ``q (K, B, T, P)``, ``k, v (K|1, B, N, P)`` float32 on the CPU; ``ranks`` int64 ``(K,)``
    dividing ``P``; ``scales`` float32 ``(K,)``. Differentiable in ``q, k, v``.
    """
    if not available():
        raise RuntimeError(f"the fused attention kernel is unavailable: {unavailable_reason()}")
    if not all(t.dtype == torch.float32 and t.device.type == "cpu" for t in (q, k, v)):
        raise ValueError("q, k and v must be float32 CPU tensors for the fused kernel "
                         f"(got {q.dtype} on {q.device.type})")
    K, B, T, P = q.shape
    if ranks.dtype != torch.int64 or ranks.shape != (K,) or bool((P % ranks).any()):
        raise ValueError(f"ranks must be an int64 tensor of K = {K} divisors of P = {P}")
    if scales.dtype != torch.float32 or scales.shape != (K,):
        raise ValueError(f"scales must be a float32 tensor of shape ({K},)")
    if k.shape[1:] != v.shape[1:] or k.shape[1] != B or k.shape[3] != P:
        raise ValueError(f"k and v must have shape (K, {B}, N, {P}) (got {tuple(k.shape)}, "
                         f"{tuple(v.shape)})")
    return _FusedCore.apply(q, k, v, ranks.contiguous(), scales.contiguous())
