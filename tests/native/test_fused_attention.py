"""The fused C attention kernel against a float64 softmax-attention reference written here,
head by head: outputs and the gradients of q, k and v, for mixed ranks, batch sizes that are
not a multiple of the kernel's block, T != N, and keys shared by all models."""

from __future__ import annotations

import pytest
import torch

from workbench.models.mixed_attention import MixedAttention
from workbench.native import build as native
from workbench.native import fused_attention as fa

needs_kernel = pytest.mark.skipif(not fa.available(), reason=fa.unavailable_reason())


def _reference(q, k, v, ranks, scales):
    """Plain per-model, per-head softmax attention in float64."""
    K, B, T, P = q.shape
    out = []
    for m in range(K):
        r = int(ranks[m])
        H = P // r
        km, vm = k[m if k.shape[0] > 1 else 0], v[m if v.shape[0] > 1 else 0]
        qh = q[m].double().reshape(B, T, H, r).transpose(1, 2)
        kh = km.double().reshape(B, -1, H, r).transpose(1, 2)
        vh = vm.double().reshape(B, -1, H, r).transpose(1, 2)
        p = torch.softmax(float(scales[m]) * qh @ kh.mT, dim=-1)
        out.append((p @ vh).transpose(1, 2).reshape(B, T, P))
    return torch.stack(out)


CASES = [  # P, ranks, B, T, N, models sharing k and v (blocks of 8 samples: full and partial)
    (16, [1, 2, 4, 16, 8], 5, 8, 8, False),
    (16, [1, 2, 4, 16], 19, 8, 8, False),
    (8, [2, 8], 16, 3, 5, True),
    (6, [1, 2, 3, 6], 13, 1, 7, False),
    (12, [3, 1], 9, 5, 9, True),
    (64, [1, 4, 64], 2, 16, 3, False),
]


@needs_kernel
@pytest.mark.parametrize("P,ranks,B,T,N,shared", CASES)
def test_outputs_and_gradients_match_reference(P, ranks, B, T, N, shared) -> None:
    g = torch.Generator().manual_seed(P + B)
    K = len(ranks)
    Kk = 1 if shared else K
    q = torch.randn(K, B, T, P, generator=g).requires_grad_(True)
    k = (3 * torch.randn(Kk, B, N, P, generator=g)).requires_grad_(True)  # peaked softmax too
    v = torch.randn(Kk, B, N, P, generator=g).requires_grad_(True)
    rt = torch.tensor(ranks)
    st = torch.rand(K, generator=g) + 0.1
    got, want = fa.fused_attention(q, k, v, rt, st), _reference(q, k, v, rt, st)
    torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=2e-6)
    w = torch.randn(got.shape, generator=g)
    grads = torch.autograd.grad(got, (q, k, v), w)
    wants = torch.autograd.grad(want, (q, k, v), w.double())
    for name, a, b in zip("qkv", grads, wants):
        assert a.shape == b.shape, name
        torch.testing.assert_close(a, b, rtol=1e-4, atol=2e-5, msg=name)


@needs_kernel
def test_strided_views_are_read_in_place() -> None:
    """q, k, v as views of one packed projection (as ``MixedAttention`` passes them)."""
    g = torch.Generator().manual_seed(3)
    qkv = torch.randn(3, 11, 6, 3 * 8, generator=g)
    q, k, v = qkv.split(8, dim=-1)
    rt, st = torch.tensor([1, 2, 8]), torch.tensor([1.0, 0.5, 0.25])
    torch.testing.assert_close(fa.fused_attention(q, k, v, rt, st).double(),
                               _reference(q, k, v, rt, st), rtol=1e-5, atol=2e-6)


@needs_kernel
@pytest.mark.parametrize("bad,match", [
    (dict(ranks=torch.tensor([3, 1])), "ranks"),
    (dict(ranks=torch.tensor([1.0, 1.0])), "ranks"),
    (dict(scales=torch.ones(3)), "scales"),
    (dict(q=torch.randn(2, 4, 5, 8, dtype=torch.float64)), "float32"),
    (dict(k=torch.randn(2, 3, 5, 8)), "k and v"),
])
def test_input_validation_names_argument(bad, match) -> None:
    args = dict(q=torch.randn(2, 4, 5, 8), k=torch.randn(2, 4, 6, 8), v=torch.randn(2, 4, 6, 8),
                ranks=torch.tensor([1, 2]), scales=torch.ones(2))
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        fa.fused_attention(**args)


def test_layer_falls_back_when_kernel_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the kernel off, ``auto`` runs the torch kernels and gives the same outputs."""
    layer = MixedAttention(8, [1, 2, 8], [8, 4, 1], generator=torch.Generator().manual_seed(0))
    X = torch.randn(5, 7, 8, generator=torch.Generator().manual_seed(1))
    want = MixedAttention(**{**layer.config(), "kernel": "matmul"})
    want.load_state_dict(layer.state_dict())
    monkeypatch.setitem(native._state, "lib", None)
    monkeypatch.setitem(native._state, "reason", "switched off by the test")
    assert not fa.available() and fa.unavailable_reason() == "switched off by the test"
    torch.testing.assert_close(layer(X), want(X), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="unavailable"):
        fa.fused_attention(torch.randn(1, 2, 3, 8), torch.randn(1, 2, 3, 8),
                           torch.randn(1, 2, 3, 8), torch.tensor([1]), torch.ones(1))


def test_disabled_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_FUSED", "0")
    assert native._build() is None
    assert "WORKBENCH_FUSED" in native._state["reason"]


@needs_kernel
def test_results_do_not_depend_on_thread_count() -> None:
    """Blocks are independent work items: 1 and 3 OpenMP threads give the same bits."""
    g = torch.Generator().manual_seed(11)
    q, k, v = (torch.randn(4, 37, 6, 16, generator=g).requires_grad_(True) for _ in range(3))
    rt, st = torch.tensor([1, 2, 4, 16]), torch.tensor([1.0, 0.7, 0.5, 0.25])
    w = torch.randn(4, 37, 6, 16, generator=g)
    threads = torch.get_num_threads()
    outs = []
    try:
        for n in (1, 3):
            torch.set_num_threads(n)
            o = fa.fused_attention(q, k, v, rt, st)
            outs.append((o, *torch.autograd.grad(o, (q, k, v), w)))
    finally:
        torch.set_num_threads(threads)
    assert all(torch.equal(a, b) for a, b in zip(*outs))


@needs_kernel
def test_packed_self_attention_matches_reference() -> None:
    """``[q | k | v]`` in one tensor (as ``MixedAttention`` passes it), gradients in one buffer."""
    g = torch.Generator().manual_seed(7)
    K, B, N, P = 3, 10, 6, 8
    qkv = torch.randn(K, B, N, 3 * P, generator=g).requires_grad_(True)
    rt, st = torch.tensor([1, 2, 8]), torch.tensor([1.0, 0.7, 0.35])
    got = fa.fused_self_attention(qkv, rt, st)
    want = _reference(qkv[..., :P], qkv[..., P : 2 * P], qkv[..., 2 * P :], rt, st)
    torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=2e-6)
    w = torch.randn(got.shape, generator=g)
    (a,), (b,) = torch.autograd.grad(got, (qkv,), w), torch.autograd.grad(want, (qkv,), w.double())
    torch.testing.assert_close(a.double(), b.double(), rtol=1e-4, atol=2e-5)
    with pytest.raises(ValueError, match="qkv"):
        fa.fused_self_attention(qkv[..., :-1], rt, st)
