"""``workbench.verifiers.chunked_ffn`` against the plain ``relu(x W1 + b1) W2 + b2`` in float64:
outputs
and every gradient, with the groups of models forced small (one model per group; two, with a
ragged last group; all at once)."""

from __future__ import annotations

import pytest
import torch

from workbench.verifiers import chunked_ffn as cf


@pytest.mark.parametrize("chunk_bytes", [4 * 23 * 7, 2 * 4 * 23 * 7, cf.CHUNK_BYTES])
def test_matches_plain_form(monkeypatch: pytest.MonkeyPatch, chunk_bytes: int) -> None:
    monkeypatch.setattr(cf, "CHUNK_BYTES", chunk_bytes)  # groups of 1, 2 (+1) or 3 models
    g = torch.Generator().manual_seed(0)
    K, M, d, f, e = 3, 23, 4, 7, 6
    args = [torch.randn(*s, generator=g, dtype=torch.float64).requires_grad_(True)
            for s in ((K, M, d), (K, d, f), (K, f), (K, f, e), (K, e))]
    x, W1, b1, W2, b2 = args
    plain = torch.relu(x @ W1 + b1[:, None]) @ W2 + b2[:, None]
    got = cf.chunked_ffn(*args)
    torch.testing.assert_close(got, plain, rtol=1e-12, atol=1e-12)
    w = torch.randn(K, M, e, generator=g, dtype=torch.float64)
    want = torch.autograd.grad(plain, args, w)
    for name, a, b in zip(("x", "W1", "b1", "W2", "b2"), torch.autograd.grad(got, args, w),
                          want):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12, msg=name)


def test_strided_input_equals_contiguous() -> None:
    """A non-contiguous input (a transposed view) gives the same result as its copy."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 6, 9, generator=g).transpose(1, 2)  # (2, 9, 6), strided
    W1, b1 = torch.randn(2, 6, 8, generator=g), torch.randn(2, 8, generator=g)
    W2, b2 = torch.randn(2, 8, 6, generator=g), torch.randn(2, 6, generator=g)
    torch.testing.assert_close(cf.chunked_ffn(x, W1, b1, W2, b2),
                               cf.chunked_ffn(x.contiguous(), W1, b1, W2, b2))
