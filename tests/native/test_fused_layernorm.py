"""``native.fused_layernorm``: the native per-model LayerNorm against ``F.layer_norm`` and the
affine map in float64, outputs and all gradients, for row counts that leave partial blocks and
several weight-gradient chunks, feature counts on and off the 8-wide fast path."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from workbench.models.layer_norm import stacked_layer_norm
from workbench.native import build as native
from workbench.native import fused_layernorm as fl

needs_kernel = pytest.mark.skipif(not native.available(), reason=native.unavailable_reason())


def _reference(x, w, b, eps):
    y = F.layer_norm(x.double(), x.shape[-1:], eps=eps)
    shape = (x.shape[0],) + (1,) * (x.ndim - 2) + (x.shape[-1],)
    return y * w.double().view(shape) + b.double().view(shape)


@needs_kernel
@pytest.mark.parametrize("K,rows,d", [(3, (5, 7), 16), (2, (1100,), 8), (4, (3, 2), 6),
                                      (1, (9,), 64)])
def test_matches_reference(K, rows, d) -> None:
    g = torch.Generator().manual_seed(K * d)
    x = (3 * torch.randn(K, *rows, d, generator=g) + 1).requires_grad_(True)
    w = torch.randn(K, d, generator=g).requires_grad_(True)
    b = torch.randn(K, d, generator=g).requires_grad_(True)
    assert fl.supports(x)
    got, want = stacked_layer_norm(x, w, b), _reference(x, w, b, 1e-5)
    torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=1e-5)
    gy = torch.randn(got.shape, generator=g)
    for name, a, c in zip("xwb", torch.autograd.grad(got, (x, w, b), gy),
                          torch.autograd.grad(want, (x, w, b), gy.double())):
        torch.testing.assert_close(a, c, rtol=1e-4, atol=1e-4, msg=name)


@needs_kernel
def test_models_stacked_or_alone_give_identical_bits() -> None:
    """A model's outputs and gradients do not depend on which models are stacked with it."""
    g = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(3, 600, 16, generator=g), torch.randn(3, 16), torch.randn(3, 16)
    gy = torch.randn(3, 600, 16, generator=g)
    args = [t.clone().requires_grad_(True) for t in (x, w, b)]
    y = stacked_layer_norm(*args)
    grads = torch.autograd.grad(y, args, gy)
    one = [t[1:2].clone().requires_grad_(True) for t in (x, w, b)]
    y1 = stacked_layer_norm(*one)
    assert torch.equal(y1, y[1:2])
    for a, c in zip(torch.autograd.grad(y1, one, gy[1:2]), grads):
        assert torch.equal(a, c[1:2])


def test_fallback_and_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.randn(2, 5, 4, dtype=torch.float64)
    w, b = torch.randn(2, 4, dtype=torch.float64), torch.randn(2, 4, dtype=torch.float64)
    assert not fl.supports(x)  # float64 runs in torch
    torch.testing.assert_close(stacked_layer_norm(x, w, b), _reference(x, w, b, 1e-5))
    monkeypatch.setitem(native._state, "lib", None)
    x32 = x.float()
    assert not fl.supports(x32)
    torch.testing.assert_close(stacked_layer_norm(x32, w.float(), b.float()).double(),
                               _reference(x32, w, b, 1e-5), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="weight and bias"):
        stacked_layer_norm(x, w[:1], b)
