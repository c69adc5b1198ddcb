"""Solving ``C a = b`` for the optimal value weights of rank-1 hardmax heads (docs/paper.md §4).

Two paths, both float64:

- ``cholesky``: forms ``C`` (``H^2`` floats) with ``core.head_kernels.agreement_kernel`` and
  factors it; a tiny diagonal jitter is added only if the factorisation fails (duplicated heads
  make ``C`` singular; ``b`` lies in its range, see docs/derivations/constructions.md §2).
- ``cg``: conjugate gradients with a blocked, matrix-free ``C v`` (``block x block`` tiles, upper
  triangle only), so memory is ``O(block^2)`` plus an optional float32 tile cache (``cache_mb``).

Whatever the path, the reported error ``1 - 2 a.b + a.C.a`` is recomputed exactly for the
returned ``a`` with the unjittered ``C``. CG minimises exactly this quadratic over growing Krylov
spaces, so an early stop still returns a valid (slightly worse) model with its exact error.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch

from workbench.core.validation import check_choice, check_float, check_int

SOLVERS: tuple[str, ...] = ("auto", "cholesky", "cg")
DENSE_LIMIT = 4096  # auto: Cholesky up to this many heads (C is 128 MiB at H = 4096)
_TWO_OVER_PI2 = 2.0 / math.pi**2


@dataclass(frozen=True)
class SolveResult:
    """Value weights ``a`` and the exact error ``1 - 2 a.b + a.C.a`` they reach."""

    a: torch.Tensor
    error: float
    method: str
    iterations: int
    relative_residual: float
    jitter: float
    seconds: float


def _unit(M: torch.Tensor) -> torch.Tensor:
    M = M.to(torch.float64)
    return M / M.norm(dim=-1, keepdim=True)


def kernel_block(
    q1: torch.Tensor, k1: torch.Tensor, q2: torch.Tensor, k2: torch.Tensor, diagonal: bool = False
) -> torch.Tensor:
    """``C`` block for unit rows, built in place (two ``H1 x H2`` buffers).

    Same formula as ``agreement_kernel_cross`` (docs/paper.md §4); the tests check they agree.
    ``diagonal=True`` (a block of ``C`` on its diagonal) sets ``C_hh = 1`` exactly: ``arcsin``
    near 1 turns a rounding of ``<q,q> = 1 - 1e-16`` into an error of ``1e-8``.
    """
    A = torch.mm(q1, q2.T).clamp_(-1.0, 1.0).asin_()
    B = torch.mm(k1, k2.T).clamp_(-1.0, 1.0).asin_()
    C = A.mul_(B).mul_(_TWO_OVER_PI2).add_(0.5)
    if diagonal:
        C.fill_diagonal_(1.0)
    return C


def dense_kernel(Q: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    """The full ``C`` (H, H) in float64, built in place."""
    q, k = _unit(Q), _unit(K)
    return kernel_block(q, k, q, k, diagonal=True)


class BlockedKernel:
    """Matrix-free ``C v``: ``block`` rows of ``C`` at a time, symmetric blocks used twice.

    Up to ``cache_mb`` MiB of blocks are kept in float32 for the CG iterations (0 = recompute
    every time: memory ``O(H block)``). ``matvec(v, exact=True)`` never uses the cache.
    """

    def __init__(self, Q: torch.Tensor, K: torch.Tensor, block: int = 1024, cache_mb: float = 0.0):
        self.q, self.k = _unit(Q), _unit(K)
        self.H = self.q.shape[0]
        self.block = check_int("block", block, lo=1)
        self.budget = check_float("cache_mb", cache_mb, lo=0.0) * 2**20
        self.cache: dict[tuple[int, int], torch.Tensor] = {}
        self.cached_bytes = 0
        self.starts = list(range(0, self.H, self.block))

    def _block(self, i: int, j: int, exact: bool) -> torch.Tensor:
        key = (i, j)
        if not exact and key in self.cache:
            return self.cache[key]
        si, sj = self.starts[i], self.starts[j]
        ei, ej = min(self.H, si + self.block), min(self.H, sj + self.block)
        blk = kernel_block(
            self.q[si:ei], self.k[si:ei], self.q[sj:ej], self.k[sj:ej], diagonal=i == j
        )
        if not exact:
            nbytes = blk.numel() * 4
            if self.cached_bytes + nbytes <= self.budget:
                self.cache[key] = blk.to(torch.float32)
                self.cached_bytes += nbytes
        return blk

    def matvec(self, v: torch.Tensor, exact: bool = False) -> torch.Tensor:
        out = torch.zeros_like(v)
        n = len(self.starts)
        for i in range(n):
            si = self.starts[i]
            ei = min(self.H, si + self.block)
            for j in range(i, n):
                sj = self.starts[j]
                ej = min(self.H, sj + self.block)
                blk = self._block(i, j, exact)
                if blk.dtype != v.dtype:
                    out[si:ei] += (blk @ v[sj:ej].to(blk.dtype)).to(v.dtype)
                    if j != i:
                        out[sj:ej] += (blk.T @ v[si:ei].to(blk.dtype)).to(v.dtype)
                else:
                    out[si:ei] += blk @ v[sj:ej]
                    if j != i:
                        out[sj:ej] += blk.T @ v[si:ei]
        return out


def kernel_matvec(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, block: int = 1024
) -> torch.Tensor:
    """``C @ V`` without forming ``C`` (float64, exact blocks)."""
    return BlockedKernel(Q, K, block).matvec(V, exact=True)


def _cholesky(C: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, float]:
    L, info = torch.linalg.cholesky_ex(C)
    jitter = 0.0
    scale = float(C.diagonal().mean())
    k = 0
    while int(info) != 0:
        new = scale * 10.0 ** (-13 + k)
        C.diagonal().add_(new - jitter)
        jitter = new
        k += 1
        if k > 12:
            raise ValueError("C must be positive semi-definite (Cholesky failed with jitter)")
        L, info = torch.linalg.cholesky_ex(C)
    a = torch.cholesky_solve(b.unsqueeze(-1), L).squeeze(-1)
    if jitter:
        C.diagonal().sub_(jitter)
    return a, jitter


def conjugate_gradient(
    matvec, b: torch.Tensor, tol: float = 1e-8, max_iter: int = 1000
) -> tuple[torch.Tensor, int, float]:
    """Plain CG for SPD systems from ``x0 = 0``; stops at ``||r|| <= tol ||b||``."""
    x = torch.zeros_like(b)
    r = b.clone()
    p = r.clone()
    rr = float(r @ r)
    bnorm = math.sqrt(float(b @ b)) or 1.0
    it = 0
    while it < max_iter and math.sqrt(rr) > tol * bnorm:
        Ap = matvec(p)
        pAp = float(p @ Ap)
        if pAp <= 0:  # exhausted the range of a semi-definite C
            break
        alpha = rr / pAp
        x += alpha * p
        r -= alpha * Ap
        rr_new = float(r @ r)
        p = r + (rr_new / rr) * p
        rr = rr_new
        it += 1
    return x, it, math.sqrt(rr) / bnorm


def solve_value_weights(
    Q: torch.Tensor,
    K: torch.Tensor,
    b: torch.Tensor,
    method: str = "auto",
    tol: float = 1e-8,
    max_iter: int = 1000,
    block: int = 1024,
    cache_mb: float = 1024.0,
) -> SolveResult:
    """Optimal scalar values ``a`` for heads ``(Q, K)``: ``C a = b`` (docs/paper.md §4)."""
    method = check_choice("solver", method, SOLVERS)
    tol = check_float("tol", tol, lo=0.0)
    max_iter = check_int("max_iter", max_iter, lo=1)
    H = Q.shape[0]
    if method == "auto":
        method = "cholesky" if H <= DENSE_LIMIT else "cg"
    t0 = time.perf_counter()
    b = b.to(torch.float64)
    if method == "cholesky":
        C = dense_kernel(Q, K)
        a, jitter = _cholesky(C, b)
        Ca = C @ a
        del C
        iters, jit = 1, jitter
    else:
        op = BlockedKernel(Q, K, block, cache_mb)
        a, iters, _ = conjugate_gradient(op.matvec, b, tol, max_iter)
        op.cache.clear()
        Ca = op.matvec(a, exact=True)  # the reported error never uses the float32 cache
        jit = 0.0
    err = float(1.0 - 2.0 * (a @ b) + a @ Ca)
    res = float((Ca - b).norm() / (b.norm() or 1.0))
    return SolveResult(a, err, method, iters, res, jit, time.perf_counter() - t0)
