"""Determinism on the CPU (docs/architecture.md; workbench/verifiers/train.py): the same seed gives
bit-identical sampling, model initialisation, constructions and training; a different seed
gives different numbers (so the equalities below are not vacuous)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import assume, example, given
from hypothesis import strategies as st

from tests.properties.property_helpers import RF_DIMS, fewer
from workbench import strategies as S
from workbench.constructions import biased as bz
from workbench.constructions import full_rank as fr
from workbench.constructions import majority_vote as mv
from workbench.constructions import random_features as rf
from workbench.core.sphere import make_generator, sample_instances
from workbench.models.attention import GeneralizedAttention, MultiHeadAttention
from workbench.verifiers.tasks import Task
from workbench.verifiers.train import ModelSpec, TrainConfig, train

pytestmark = pytest.mark.properties


def _same_state(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@given(S.attention_configs(max_d=9, max_n=9), S.seeds(), st.sampled_from(["iid", "orthonormal"]),
       st.sampled_from([torch.float32, torch.float64]))
@example(S.AttentionConfig(2, 1, 1, 1), 0, "orthonormal", torch.float32)
def test_sampling_is_bit_identical_per_seed(cfg, seed, points, dtype) -> None:
    assume(points == "iid" or cfg.N <= cfg.d)
    a = sample_instances(5, cfg.N, cfg.d, points=points, generator=seed, dtype=dtype)
    b = sample_instances(5, cfg.N, cfg.d, points=points, generator=seed, dtype=dtype)
    c = sample_instances(5, cfg.N, cfg.d, points=points, generator=seed + 1, dtype=dtype)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[1], c[1])


@given(S.attention_configs(max_d=8, max_heads=4), S.seeds(),
       st.sampled_from([GeneralizedAttention, MultiHeadAttention]))
def test_model_initialisation_is_bit_identical_per_seed(cfg, seed, layer) -> None:
    a = layer(cfg.d, cfg.r, cfg.H, generator=make_generator(seed))
    b = layer(cfg.d, cfg.r, cfg.H, generator=make_generator(seed))
    c = layer(cfg.d, cfg.r, cfg.H, generator=make_generator(seed + 1))
    assert _same_state(a, b) and not _same_state(a, c)


@fewer(2)
@given(RF_DIMS, S.heads(8), st.integers(2, 3), S.seeds())
@example(2, 2, 2, 0)
def test_constructions_are_bit_identical_per_seed(d, H, N, seed) -> None:
    m1, c1 = rf.random_features(d, H, generator=seed)
    m2, c2 = rf.random_features(d, H, generator=seed)
    assert m1 is not None and m2 is not None
    assert _same_state(m1, m2) and c1.value == c2.value
    v1, _ = mv.majority_vote(d, H, 2, generator=seed)
    v2, _ = mv.majority_vote(d, H, 2, generator=seed)
    v3, _ = mv.majority_vote(d, H, 2, generator=seed + 1)
    assert _same_state(v1, v2) and not _same_state(v1, v3)
    _, b1, f1 = bz.biased(2, 2, coefficients="random_signs", generator=seed)
    _, b2, f2 = bz.biased(2, 2, coefficients="random_signs", generator=seed)
    assert torch.equal(f1.coeffs, f2.coeffs)
    if N <= d:
        _, k1 = fr.full_rank(d, 5.0, N + 1 if N + 1 <= d else N, claim_samples=500,
                             generator=seed)
        _, k2 = fr.full_rank(d, 5.0, N + 1 if N + 1 <= d else N, claim_samples=500,
                             generator=seed)
        assert k1 == k2


@fewer(3)
@given(st.sampled_from(["attention", "generalized"]), st.integers(2, 5), st.integers(1, 2),
       st.integers(1, 2), S.seeds())
@example("attention", 2, 1, 1, 0)
def test_training_is_bit_identical_per_seed(arch, d, r, H, seed) -> None:
    r = min(r, d)
    task = Task("nearest", d=d, N=2)
    cfg = TrainConfig(steps=4, batch=16, eval_samples=32, eval_batch=32)

    def run(s: int):
        return train([ModelSpec(arch=arch, rank=r, heads=H, seed=s)], task, cfg).results[0]

    a, b, c = run(seed % 2**31), run(seed % 2**31), run(seed % 2**31 + 1)
    assert a.best_loss == b.best_loss and a.final_loss == b.final_loss
    assert a.state.keys() == b.state.keys()
    assert all(torch.equal(a.state[k], b.state[k]) for k in a.state)
    assert any(not torch.equal(a.state[k], c.state[k]) for k in a.state)
