"""Stacked attention layers (docs/paper.md §2, Eq. 2): representation, equivalence, batching."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from tests.layer_arguments import bad_layer_arguments
from workbench.core.sphere import make_generator, sample_instances, uniform_sphere
from workbench.core.targets import nearest_neighbour, soft_nearest_neighbour
from workbench.models.attention import (
    GeneralizedAttention,
    MultiHeadAttention,
    param_count,
    stack_models,
)
from workbench.models.scores import SCORE_KINDS
from workbench.strategies import attention_configs, seeds, temperatures

F64 = torch.float64


def full_rank_head(d, beta, dtype=F64):
    eye = torch.eye(d, dtype=dtype).reshape(1, d, d)
    return MultiHeadAttention.from_weights(beta**0.5 * eye, beta**0.5 * eye, eye, eye)


@given(attention_configs(max_d=12, max_n=12), seeds(), temperatures(200.0))
def test_full_rank_head_equals_soft_target(cfg, seed, beta):
    X, y = sample_instances(16, cfg.N, cfg.d, generator=seed)
    out = full_rank_head(cfg.d, beta)(X, y)
    assert out.shape == (1, 16, cfg.d)
    assert torch.allclose(out[0], soft_nearest_neighbour(X, y, beta), atol=1e-12)


@pytest.mark.parametrize("points,N,d", [("orthonormal", 2, 8), ("iid", 16, 16)])
def test_full_rank_head_tends_to_hard_target(points, N, d):
    X, y = sample_instances(4000, N, d, points=points, generator=5)
    hard = nearest_neighbour(X, y)
    errs = [
        float((full_rank_head(d, b)(X, y)[0] - hard).detach().pow(2).sum(-1).mean())
        for b in (1.0, 10.0, 100.0, 1e3, 1e4)
    ]
    assert all(a > b for a, b in zip(errs, errs[1:]))
    assert errs[-1] < 5e-3
    hardmax = full_rank_head(d, 1.0)
    hardmax.normalizer = "hardmax"
    assert torch.allclose(hardmax(X, y)[0], hard, atol=1e-15)


@given(
    attention_configs(max_d=8, max_heads=5, max_n=6),
    seeds(),
    st.sampled_from(["softmax", "hardmax"]),
)
def test_generalized_dot_equals_standard_multihead(cfg, seed, normalizer):
    g = make_generator(seed)
    mha = MultiHeadAttention(
        cfg.d, cfg.r, cfg.H, models=2, normalizer=normalizer, generator=g, dtype=F64
    )
    gen = mha.to_generalized()
    X = uniform_sphere(5, cfg.N, d=cfg.d, generator=g)
    y = uniform_sphere(5, d=cfg.d, generator=g)
    assert torch.allclose(mha(X, y), gen(X, y), atol=1e-12)
    assert torch.allclose(mha(X), gen(X), atol=1e-12)  # self-attention
    assert torch.allclose(mha(X, X[:, :2]), gen(X, X[:, :2]), atol=1e-12)  # T queries


def test_standard_head_written_out_by_hand():
    g = make_generator(0)
    mha = MultiHeadAttention(5, 2, 3, generator=g, dtype=F64)
    X, y = sample_instances(4, 3, 5, generator=1)
    want = torch.zeros(4, 5, dtype=F64)
    for h in range(3):
        Wq, Wk, Wv, Wo = (getattr(mha, n)[0, h] for n in ("Wq", "Wk", "Wv", "Wo"))
        for b in range(4):
            p = torch.softmax((Wk @ X[b].T).T @ (Wq @ y[b]), dim=0)  # (N,)
            want[b] += Wo.T @ Wv @ (X[b].T @ p)
    assert torch.allclose(mha(X, y)[0], want, atol=1e-12)


@pytest.mark.parametrize("score", SCORE_KINDS)
@pytest.mark.parametrize("normalizer", ["softmax", "hardmax"])
def test_stacked_models_equal_separate_evaluations(score, normalizer):
    K, d, r, H, N = 4, 6, 2, 3, 5
    layer = GeneralizedAttention(
        d,
        r,
        H,
        models=K,
        score=score,
        normalizer=normalizer,
        generator=make_generator(3),
        dtype=F64,
    )
    X, y = sample_instances(7, N, d, generator=2)
    out = layer(X, y)
    for k in range(K):
        assert torch.allclose(out[k], layer.select(k)(X, y)[0], atol=1e-12)
    # per-model inputs (K, B, N, d) also match
    Xk = uniform_sphere(K, 7, N, d=d, generator=4)
    outk = layer(Xk, y.expand(K, -1, -1))
    for k in range(K):
        assert torch.allclose(outk[k], layer.select(k)(Xk[k], y)[0], atol=1e-12)
    # separately built models stacked together give the same stack
    restacked = stack_models([layer.select(k) for k in range(K)])
    assert torch.allclose(restacked(X, y), out, atol=1e-12)


def test_from_weights_with_biases_matches_hand_computation():
    g = make_generator(4)
    W = [torch.randn(2, 3, 5, generator=g, dtype=F64) for _ in range(4)]
    b = {
        "bq": torch.randn(2, 3, generator=g, dtype=F64),
        "bo": torch.randn(5, generator=g, dtype=F64),
    }
    layer = MultiHeadAttention.from_weights(*W, biases=b)
    X, y = sample_instances(3, 4, 5, generator=5)
    want = torch.zeros(3, 5, dtype=F64) + b["bo"]
    for h in range(2):
        Wq, Wk, Wv, Wo = (w[h] for w in W)
        for n in range(3):
            p = torch.softmax((Wk @ X[n].T).T @ (Wq @ y[n] + b["bq"][h]), dim=0)
            want[n] += Wo.T @ Wv @ (X[n].T @ p)
    assert torch.allclose(layer(X, y)[0], want, atol=1e-12)
    with pytest.raises(ValueError, match="^bo must have shape"):
        MultiHeadAttention.from_weights(*W, biases={"bo": torch.zeros(4, dtype=F64)})


def test_multihead_stack_with_bias_equals_separate():
    mha = MultiHeadAttention(6, 3, 2, models=3, bias=True, generator=make_generator(1), dtype=F64)
    with torch.no_grad():
        for p in (mha.bq, mha.bk, mha.bv, mha.bo):
            p.normal_(generator=make_generator(2))
    X = uniform_sphere(5, 4, d=6, generator=0)
    out = mha(X)
    for k in range(3):
        assert torch.allclose(out[k], mha.select(k)(X)[0], atol=1e-12)


@pytest.mark.parametrize("score", SCORE_KINDS)
def test_scores_see_keys_only_through_rank_r_projection(score):
    """Eq. 2: phi_h depends on X only via W_h X. Moving keys inside ker(W_h) changes nothing."""
    d, r, N = 7, 2, 4
    layer = GeneralizedAttention(d, r, 1, score=score, generator=make_generator(5), dtype=F64)
    X, y = sample_instances(6, N, d, generator=6)
    W = layer.W[0, 0].detach()
    null = torch.linalg.svd(W, full_matrices=True).Vh[r:]  # (d - r, d) basis of ker W
    shift = uniform_sphere(6, N, d=d - r, generator=7) @ null
    p1, p2 = layer.probabilities(X, y), layer.probabilities(X + shift, y)
    assert torch.allclose(p1, p2, atol=1e-12)
    # ... whereas moving them along the row space does change the scores
    p3 = layer.probabilities(X + uniform_sphere(6, N, d=r, generator=8) @ W, y)
    assert not torch.allclose(p1, p3, atol=1e-6)


def test_rope_alibi_and_bias_scores_by_hand():
    d, r, N = 4, 4, 3
    X, y = sample_instances(2, N, d, generator=9)
    dot = GeneralizedAttention(d, r, 2, score="dot", generator=make_generator(1), dtype=F64)
    for kind in ("rope", "alibi", "bias"):
        other = GeneralizedAttention(d, r, 2, score=kind, generator=make_generator(1), dtype=F64)
        with torch.no_grad():
            other.W.copy_(dot.W)
            other.score.Q.copy_(dot.score.Q)
        keys = X.unsqueeze(0).unsqueeze(0) @ dot.W.unsqueeze(2).transpose(-1, -2)
        s_dot = dot.score(keys, X.unsqueeze(0).unsqueeze(0), torch.arange(N), torch.arange(N))
        s = other.score(keys, X.unsqueeze(0).unsqueeze(0), torch.arange(N), torch.arange(N))
        if kind == "rope":  # rotation by equal positions cancels on the diagonal
            assert torch.allclose(s.diagonal(dim1=-2, dim2=-1), s_dot.diagonal(dim1=-2, dim2=-1))
            assert not torch.allclose(s, s_dot)
        elif kind == "alibi":
            dist = (torch.arange(N)[:, None] - torch.arange(N)[None, :]).abs()
            slopes = 2.0 ** (-8.0 * torch.arange(1, 3) / 2)
            want = s_dot - slopes[None, :, None, None, None] * dist
            assert torch.allclose(s, want.to(s.dtype))
        else:
            with torch.no_grad():
                other.score.bias[0, 1, 2] = 3.0
            s = other.score(keys, X.unsqueeze(0).unsqueeze(0), torch.arange(N), torch.arange(N))
            want = s_dot.clone()
            want[0, 1, ..., 2] += 3.0
            assert torch.allclose(s, want)


def test_hardmax_is_one_hot_argmax():
    layer = GeneralizedAttention(5, 2, 3, normalizer="hardmax", generator=make_generator(0))
    X, y = sample_instances(8, 4, 5, generator=1, dtype=torch.float32)
    p = layer.probabilities(X, y)
    assert torch.all((p == 0) | (p == 1)) and torch.all(p.sum(-1) == 1)


def test_param_count_conventions():
    mha = MultiHeadAttention(16, 4, 4, models=3)
    assert param_count(mha) == 4 * 4 * 16  # H r d
    assert param_count(mha, "total") == 4 * (4 * 4 * 16)
    assert param_count(MultiHeadAttention(16, 4, 4, bias=True), "total") == 4 * 256 + 3 * 16 + 16
    g = GeneralizedAttention(16, 4, 4)
    assert param_count(g, "total") == 4 * (4 * 16 + 16 * 16 + 4 * 16)


@pytest.mark.parametrize(
    "call,name",
    [
        *bad_layer_arguments(MultiHeadAttention, 4, 2),
        (lambda: MultiHeadAttention(4, 2, 1, models=0), "models"),
        (lambda: MultiHeadAttention(4, 2, 1, normalizer="sparsemax"), "normalizer"),
        (lambda: MultiHeadAttention(4, 2, 1, scale=float("inf")), "scale"),
        (lambda: MultiHeadAttention(4, 2, 1, scale=-1.0), "scale"),
        (lambda: GeneralizedAttention(4, 2, 1, score="cosine"), "score"),
        (lambda: MultiHeadAttention(4, 2, 1)(torch.zeros(2, 3, 5)), "X"),
        (lambda: MultiHeadAttention(4, 2, 1)(torch.zeros(2, 3, 4), torch.zeros(3, 4)), "y"),
        (lambda: MultiHeadAttention(4, 2, 1)(torch.zeros(2, 0, 4)), "N"),
        (lambda: MultiHeadAttention(4, 2, 1, models=2)(torch.zeros(3, 2, 3, 4)), "X"),
        (
            lambda: GeneralizedAttention(4, 2, 1, score="bias", score_options={"max_len": 2})(
                torch.zeros(2, 3, 4), torch.zeros(2, 4)
            ),
            "N",
        ),
        (lambda: MultiHeadAttention(4, 2, 1).select(1), "k"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()


def test_rope_rank2_is_relative_rotation_by_hand():
    """For r = 2 the RoPE score is ``q^T R(p_k - p_q) k`` with R the planar rotation."""
    d, N = 3, 4
    layer = GeneralizedAttention(d, 2, 1, score="rope", generator=make_generator(2), dtype=F64)
    X, y = sample_instances(3, N, d, generator=3)
    p = layer.probabilities(X, y)[0, 0, :, 0]  # lone query at position N
    W, Q = layer.W[0, 0].detach(), layer.score.Q[0, 0].detach()
    for b in range(3):
        q = Q @ y[b]
        s = []
        for j in range(N):
            t = torch.tensor(float(j - N), dtype=F64)
            R = torch.stack([torch.stack([t.cos(), -t.sin()]), torch.stack([t.sin(), t.cos()])])
            s.append(q @ R @ (W @ X[b, j]))
        assert torch.allclose(p[b], torch.softmax(torch.stack(s), 0), atol=1e-12)


@pytest.mark.parametrize("score,sees_others", [("mlp", False), ("set", True)])
def test_set_scores_see_every_key(score, sees_others):
    """The ``set`` score of key i moves when another key moves (its pooled summary of all N
    projected keys); the ``mlp`` score of key i depends on key i and the query alone; both are
    equivariant under permutations of the keys."""
    d, r, N = 7, 2, 4
    layer = GeneralizedAttention(d, r, 1, score=score, generator=make_generator(5), dtype=F64)
    with torch.no_grad():
        layer.score.c.normal_(generator=make_generator(6))
    X, y = sample_instances(6, N, d, generator=6)
    keys = (X @ layer.W[0, 0].detach().T)[None, None]  # (1, 1, B, N, r)
    q = y[None, None, :, None, :]
    pos = torch.arange(N)
    s = layer.score(keys, q, pos, pos[-1:] + 1)[0, 0, :, 0]  # (B, N)
    moved = keys.clone()
    moved[..., 3, :] += 0.5
    s2 = layer.score(moved, q, pos, pos[-1:] + 1)[0, 0, :, 0]
    assert torch.allclose(s[:, :3], s2[:, :3], atol=1e-12) != sees_others
    perm = torch.tensor([2, 0, 3, 1])
    s3 = layer.score(keys[..., perm, :], q, pos, pos[-1:] + 1)[0, 0, :, 0]
    assert torch.allclose(s3, s[:, perm], atol=1e-12)
