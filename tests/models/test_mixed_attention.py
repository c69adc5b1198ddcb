"""``MixedAttention`` (K models of mixed rank and head count in one stack) against the core
``MultiHeadAttention`` run model by model: outputs and gradients, every kernel."""

from __future__ import annotations

import pytest
import torch

from workbench.models.attention import MultiHeadAttention
from workbench.models.mixed_attention import KERNELS as ALL_KERNELS
from workbench.models.mixed_attention import MixedAttention
from workbench.native import build as native

# "fused" needs the native kernel (a C compiler); the others run everywhere
KERNELS = tuple(k for k in ALL_KERNELS if k != "fused" or native.available())

D = 8
SHAPES = [(1, 8), (2, 4), (8, 1), (4, 2)]  # H r = d: the paper's c = 1 grid at d = 8



def _cores(bias: bool, normalizer: str, seed: int = 0) -> list[MultiHeadAttention]:
    g = torch.Generator().manual_seed(seed)
    cores = [MultiHeadAttention(D, r, h, models=2, bias=bias, normalizer=normalizer,
                                scale=r**-0.5, generator=g) for r, h in SHAPES]
    if bias:
        with torch.no_grad():
            for c in cores:
                for name in ("bq", "bk", "bv", "bo"):
                    getattr(c, name).normal_(generator=g)
    return cores


def _inputs():
    g = torch.Generator().manual_seed(1)
    X = torch.randn(3, 5, D, generator=g)
    return [
        (X,),  # self-attention, shared inputs
        (X, torch.randn(3, D, generator=g)),  # lone query
        (X, torch.randn(3, 2, D, generator=g)),  # T = 2 queries
        (torch.randn(8, 3, 5, D, generator=g),),  # per-model inputs
        (torch.randn(8, 3, 5, D, generator=g), torch.randn(8, 3, D, generator=g)),
    ]


def _per_model(cores: list[MultiHeadAttention], args: tuple) -> torch.Tensor:
    outs, k = [], 0
    for c in cores:
        sub = tuple(a[k : k + c.models] if args[0].ndim == 4 else a for a in args)
        outs.append(c(*sub))
        k += c.models
    return torch.cat(outs)


CASES = [(k, b, n) for k in KERNELS for b in (False, True) for n in ("softmax", "hardmax")
         if not (k in ("sdpa", "fused") and n == "hardmax")]


@pytest.mark.parametrize("kernel,bias,normalizer", CASES)
def test_outputs_equal_core_per_model(kernel: str, bias: bool, normalizer: str) -> None:
    cores = _cores(bias, normalizer)
    mixed = MixedAttention.from_core(cores, kernel=kernel)
    assert mixed.ranks == (1, 1, 2, 2, 8, 8, 4, 4) and mixed.P == D
    for args in _inputs():
        torch.testing.assert_close(mixed(*args), _per_model(cores, args), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("bias", [False, True])
def test_gradients_equal_core(kernel: str, bias: bool) -> None:
    cores = _cores(bias, "softmax", seed=2)
    mixed = MixedAttention.from_core(cores, kernel=kernel)
    for args in _inputs()[:2]:
        X = args[0].clone().requires_grad_(True)
        Xc = args[0].clone().requires_grad_(True)
        w = torch.randn(8, *mixed(X, *args[1:]).shape[1:])
        (mixed(X, *args[1:]) * w).sum().backward()
        (_per_model(cores, (Xc, *args[1:])) * w).sum().backward()
        torch.testing.assert_close(X.grad, Xc.grad, rtol=1e-4, atol=1e-5)
        names = ("Wq", "Wk", "Wv", "Wo") + (("bq", "bk", "bv", "bo") if bias else ())
        for name in names:
            want = torch.cat([getattr(c, name).grad.reshape(c.models, -1) for c in cores])
            got = getattr(mixed, name).grad.reshape(8, -1)
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5, msg=name)
        for m in (mixed, *cores):
            m.zero_grad()


def test_select_returns_core_model_and_round_trips() -> None:
    cores = _cores(True, "softmax")
    mixed = MixedAttention.from_core(cores)
    X, y = _inputs()[1]
    for k in range(mixed.models):
        one = mixed.select(k)
        assert isinstance(one, MultiHeadAttention)
        assert (one.rank, one.heads) == (mixed.ranks[k], mixed.head_counts[k])
        torch.testing.assert_close(one(X, y), mixed(X, y)[k : k + 1], rtol=1e-5, atol=1e-6)
    again = MixedAttention.from_core([mixed.select(k) for k in range(mixed.models)])
    for a, b in zip(again.state_dict().values(), mixed.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_initialisation_matches_core_draws() -> None:
    core = MultiHeadAttention(D, 2, 4, bias=True, generator=torch.Generator().manual_seed(5))
    mixed = MixedAttention(D, 2, 4, bias=True, generator=torch.Generator().manual_seed(5))
    torch.testing.assert_close(mixed.select(0).state_dict(), core.state_dict(), rtol=0, atol=0)


@pytest.mark.parametrize("kwargs,name", [
    (dict(ranks=[1, 2], heads=[8, 8]), "heads \\* ranks"),
    (dict(ranks=0, heads=1), "ranks"),
    (dict(ranks=9, heads=1), "ranks"),
    (dict(ranks=1, heads=0), "heads"),
    (dict(ranks=[1, 2], heads=[8, 4], models=3), "ranks"),
    (dict(ranks=1, heads=8, scale=-1.0), "scale"),
    (dict(ranks=1, heads=8, kernel="fast"), "kernel"),
    (dict(ranks=1, heads=8, normalizer="max"), "normalizer"),
    (dict(ranks=1, heads=8, normalizer="hardmax", kernel="sdpa"), "kernel"),
    (dict(ranks=[], heads=8), "ranks"),
])
def test_constructor_validation_names_parameter(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        MixedAttention(D, **kwargs)


def test_input_validation() -> None:
    layer = MixedAttention(D, [1, 2], [8, 4])
    with pytest.raises(ValueError, match="X"):
        layer(torch.randn(3, 5, D + 1))
    with pytest.raises(ValueError, match="X"):
        layer(torch.randn(3, 3, 5, D))
    with pytest.raises(ValueError, match="y"):
        layer(torch.randn(3, 5, D), torch.randn(4, D))


def test_trainer_mixed_rank_group_equals_separate() -> None:
    """The trainer stacks models of equal ``H r`` in one group; each equals its lone run."""
    from workbench.verifiers.tasks import Task
    from workbench.verifiers.train import ModelSpec, TrainConfig, train

    task = Task("farthest", d=6, N=3)
    cfg = TrainConfig(steps=6, batch=16, eval_samples=0)
    specs = [ModelSpec("encoder", r, 6 // r, seed=s, options={"ffn_width": 8})
             for s, r in enumerate((6, 1, 2, 1, 3))]
    run = train(specs, task, cfg)
    assert run.groups == 1
    for spec, res in zip(specs, run.results):
        alone = train([spec], task, cfg).results[0]
        assert res.spec == spec and res.params_paper == 36
        for key in res.state:
            torch.testing.assert_close(res.state[key], alone.state[key], rtol=1e-4, atol=1e-5)
        assert res.final_loss == pytest.approx(alone.final_loss, rel=1e-4)
