"""``native.fused_ffn``: the native feed-forward block against ``relu(x W1 + b1) W2 + b2`` in
float64, output and every gradient, at shapes that leave partial row blocks and tiles, widths
off the 8-wide vectors, and several row chunks; the same bits whatever the thread count and
whatever models are stacked; the torch form where the kernel does not apply."""

from __future__ import annotations

import pytest
import torch

from workbench.native import build as native
from workbench.native import fused_ffn as ff
from workbench.testing import plant, replaced
from workbench.verifiers import chunked_ffn as cf

needs_kernel = pytest.mark.skipif(not native.available(), reason=native.unavailable_reason())
NAMES = ("x", "W1", "b1", "W2", "b2")


def _args(K: int, M: int, d: int, f: int, e: int, seed: int = 0) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=g) for s in ((K, M, d), (K, d, f), (K, f), (K, f, e),
                                                    (K, e))]


def _plain(x, W1, b1, W2, b2):
    return torch.relu(x @ W1 + b1[:, None]) @ W2 + b2[:, None]


def _grads(fn, args: list[torch.Tensor], dy: torch.Tensor) -> list[torch.Tensor]:
    ins = [a.clone().requires_grad_(True) for a in args]
    out = fn(*ins)
    return [out.detach(), *torch.autograd.grad(out, ins, dy)]


def _check_against_float64(K: int, M: int, d: int, f: int, e: int) -> None:
    args = _args(K, M, d, f, e, seed=M)
    dy = torch.randn(K, M, e, generator=torch.Generator().manual_seed(1))
    assert ff.supports(*args)
    got = _grads(ff.fused_ffn, args, dy)
    want = _grads(_plain, [a.double() for a in args], dy.double())
    for name, a, b in zip(("y", *NAMES), got, want):
        scale = max(1.0, float(b.abs().max()))
        torch.testing.assert_close(a.double() / scale, b / scale, rtol=0, atol=2e-5, msg=name)


@needs_kernel
@pytest.mark.parametrize("K,M,d,f,e", [(3, 23, 4, 7, 6), (2, 1152, 8, 64, 8),
                                       (2, 2500, 16, 40, 5), (1, 5, 3, 17, 9),
                                       (4, 33, 8, 24, 16)])
def test_matches_float64_reference(K: int, M: int, d: int, f: int, e: int) -> None:
    _check_against_float64(K, M, d, f, e)


@needs_kernel
def test_planted_faults_are_caught() -> None:
    """A chunk count off from the C side's, or a dropped sum over chunks, fails the check."""
    shape = (2, 2500, 16, 40, 5)  # three row chunks
    with plant("workbench.native.fused_ffn:CHUNK_ROWS", replaced(2 * ff.CHUNK_ROWS)):
        with pytest.raises(AssertionError):
            _check_against_float64(*shape)
    with plant("workbench.native.fused_ffn:sum_chunks", replaced(lambda t: t[:, 0])):
        with pytest.raises(AssertionError):
            _check_against_float64(*shape)


@needs_kernel
def test_same_bits_whatever_threads_or_stack() -> None:
    args = _args(3, 2100, 8, 64, 8)
    dy = torch.randn(3, 2100, 8, generator=torch.Generator().manual_seed(2))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = _grads(ff.fused_ffn, args, dy)
        torch.set_num_threads(max(2, before))
        many = _grads(ff.fused_ffn, args, dy)
    finally:
        torch.set_num_threads(before)
    alone = _grads(ff.fused_ffn, [a[1:2] for a in args], dy[1:2])
    for name, a, b, c in zip(("y", *NAMES), one, many, alone):
        assert torch.equal(a, b), name
        assert torch.equal(a[1:2], c), name


@needs_kernel
def test_chunked_ffn_runs_the_kernel_where_it_applies() -> None:
    args = [a.requires_grad_(True) for a in _args(2, 40, 8, 16, 8)]
    assert type(cf.chunked_ffn(*args).grad_fn).__name__ == "_FusedFFNBackward"
    wide = [a.detach().double().requires_grad_(True) for a in args]
    assert not ff.supports(*wide)
    assert type(cf.chunked_ffn(*wide).grad_fn).__name__ != "_FusedFFNBackward"


def test_torch_form_without_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the kernels off (as ``WORKBENCH_FUSED=0``), ``chunked_ffn`` computes in torch."""
    monkeypatch.setitem(native._state, "lib", None)
    args = _args(2, 50, 8, 16, 8)
    assert not ff.supports(*args)
    dy = torch.randn(2, 50, 8)
    got = _grads(cf.chunked_ffn, args, dy)
    want = _grads(_plain, [a.double() for a in args], dy.double())
    for name, a, b in zip(("y", *NAMES), got, want):
        torch.testing.assert_close(a.double(), b, rtol=1e-4, atol=1e-4, msg=name)
