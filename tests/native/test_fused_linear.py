"""``native.fused_linear`` and ``models.stacked_affine``: one affine map per model against the
float64 product, output and every gradient, for own and shared inputs, either weight layout,
with and without a bias, one and several row chunks; the same bits whatever the thread count and
whatever models are stacked; torch's batched GEMM where the kernel does not apply."""

from __future__ import annotations

import pytest
import torch

from workbench.models.stacked_affine import stacked_affine
from workbench.native import build as native
from workbench.native import fused_linear as fl
from workbench.testing import arg_mapped, plant, replaced

needs_kernel = pytest.mark.skipif(not native.available(), reason=native.unavailable_reason())


def _args(K, Kx, M, din, dout, transposed, bias, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(Kx, M, din, generator=g)
    W = torch.randn(K, *((dout, din) if transposed else (din, dout)), generator=g)
    return x, W, torch.randn(K, dout, generator=g) if bias else None


def _grads(fn, x, W, b, transposed, dy):
    ins = [t.clone().requires_grad_(True) for t in (x, W) + ((b,) if b is not None else ())]
    out = fn(ins[0], ins[1], ins[2] if b is not None else None, transposed)
    return [out.detach(), *torch.autograd.grad(out, ins, dy)]


def _reference(x, W, b, transposed):
    out = x @ (W.mT if transposed else W)
    return out if b is None else out + b.unsqueeze(1)


CASES = [(3, 3, 23, 4, 7, False, True), (3, 1, 2100, 8, 96, True, False),
         (2, 2, 1152, 32, 8, False, True), (4, 4, 5, 9, 3, True, True),
         (2, 1, 40, 8, 17, False, True)]


def _check(K, Kx, M, din, dout, transposed, bias) -> None:
    x, W, b = _args(K, Kx, M, din, dout, transposed, bias, seed=M)
    dy = torch.randn(K, M, dout, generator=torch.Generator().manual_seed(1))
    assert fl.supports(x, W)
    got = _grads(fl.fused_linear, x, W, b, transposed, dy)
    want = _grads(_reference, x.double(), W.double(), None if b is None else b.double(),
                  transposed, dy.double())
    for name, a, c in zip(("y", "x", "W", "b"), got, want):
        scale = max(1.0, float(c.abs().max()))
        torch.testing.assert_close(a.double() / scale, c / scale, rtol=0, atol=2e-6, msg=name)


@needs_kernel
@pytest.mark.parametrize("K,Kx,M,din,dout,transposed,bias", CASES)
def test_matches_float64_reference(K, Kx, M, din, dout, transposed, bias) -> None:
    _check(K, Kx, M, din, dout, transposed, bias)


@needs_kernel
def test_planted_faults_are_caught() -> None:
    """A chunk count off from the C side's, or the weight read in the wrong layout, fails."""
    with plant("workbench.native.fused_linear:CHUNK_ROWS", replaced(2 * fl.CHUNK_ROWS)):
        with pytest.raises(AssertionError):
            _check(*CASES[1])
    with plant("workbench.native.fused_linear:fused_linear", arg_mapped(3, "transposed",
                                                                        lambda t: not t)):
        with pytest.raises((AssertionError, RuntimeError)):
            _check(4, 4, 5, 6, 6, True, True)  # square weights: the wrong layout still runs


@needs_kernel
def test_same_bits_whatever_threads_or_stack() -> None:
    x, W, b = _args(3, 3, 2100, 8, 24, False, True)
    dy = torch.randn(3, 2100, 24, generator=torch.Generator().manual_seed(2))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = _grads(fl.fused_linear, x, W, b, False, dy)
        torch.set_num_threads(max(2, before))
        many = _grads(fl.fused_linear, x, W, b, False, dy)
    finally:
        torch.set_num_threads(before)
    alone = _grads(fl.fused_linear, x[1:2], W[1:2], b[1:2], False, dy[1:2])
    for name, a, c, e in zip(("y", "x", "W", "b"), one, many, alone):
        assert torch.equal(a, c), name
        assert torch.equal(a[1:2], e), name


@pytest.mark.parametrize("transposed,bias", [(False, True), (True, False)])
def test_torch_form_without_the_kernel(monkeypatch: pytest.MonkeyPatch, transposed: bool,
                                       bias: bool) -> None:
    """With the kernels off (as ``WORKBENCH_FUSED=0``), ``stacked_affine`` computes in torch."""
    monkeypatch.setitem(native._state, "lib", None)
    for Kx in (3, 1):
        x, W, b = _args(3, Kx, 30, 5, 7, transposed, bias)
        assert not fl.supports(x, W)
        dy = torch.randn(3, 30, 7)
        got = _grads(stacked_affine, x, W, b, transposed, dy)
        want = _grads(_reference, x.double(), W.double(), None if b is None else b.double(),
                      transposed, dy.double())
        for name, a, c in zip(("y", "x", "W", "b"), got, want):
            torch.testing.assert_close(a.double(), c, rtol=1e-5, atol=1e-5, msg=name)
