"""The memory estimates behind the size checks (``workbench.commands._resources``) against the
tensors the code really allocates, built small; and the refusal they lead to."""

from __future__ import annotations

import pytest

from workbench.commands import _resources as res
from workbench.testing import mapped, plant


def _term(terms: list[res.Term], start: str) -> int:
    return next(t.bytes for t in terms if t.what.startswith(start))


def _rank_one_gap(d: int, H: int) -> int:
    """Estimated minus allocated bytes of the random-features layer's W, Q and M."""
    from workbench.constructions.random_features import random_features

    model = random_features(d, H, generator=0)[0]
    real = sum(t.numel() * t.element_size() for t in (model.W, model.score.Q, model.M))
    terms = res.rank_one_terms(d, H)
    return _term(terms, "the value maps") + _term(terms, "the key and query") - real


@pytest.mark.parametrize("d,H", [(2, 1), (5, 7), (8, 64)])
def test_rank_one_estimate_is_the_allocated_layer(d: int, H: int) -> None:
    assert _rank_one_gap(d, H) == 0


def test_rank_one_estimate_fails_when_a_term_is_dropped() -> None:
    with plant("workbench.commands._resources:rank_one_terms", mapped(lambda ts: ts[1:])):
        with pytest.raises(StopIteration):
            _rank_one_gap(5, 7)
    with plant("workbench.commands._resources:rank_one_terms",
               mapped(lambda ts: [res.Term(t.what, t.flags, t.bytes // 2) for t in ts])):
        assert _rank_one_gap(5, 7) != 0


@pytest.mark.parametrize("d,N", [(2, 2), (4, 3)])
def test_biased_estimate_is_the_allocated_heads(d: int, N: int) -> None:
    from workbench.constructions.biased import biased

    model = biased(d, N, generator=0)[0]
    real = sum(t.numel() * t.element_size() for t in (model.W, model.score.Q, model.M))
    assert _term(res.biased_terms(d, N), "the 2d^2+1 heads") == real


@pytest.mark.parametrize("d", [2, 5])
def test_full_rank_estimate_is_the_allocated_head(d: int) -> None:
    from workbench.constructions.full_rank import full_rank_model

    model = full_rank_model(d, 1.0)
    real = sum(p.numel() * p.element_size() for p in model.parameters())
    assert _term(res.full_rank_terms(d), "the head's") == real


@pytest.mark.parametrize("d,H,N", [(4, 8, 2), (4, 8, 3)])
def test_majority_vote_estimate_is_below_the_allocated_model(d: int, H: int, N: int) -> None:
    import torch

    from workbench.constructions.majority_vote import majority_vote

    model = majority_vote(d, H, N, generator=0, claim_samples=2)[0]
    real = sum(t.numel() * t.element_size() for m in model.modules()
               for t in [*m.parameters(recurse=False), *m.buffers(recurse=False)]
               if isinstance(t, torch.Tensor))
    assert 0 < _term(res.majority_vote_terms(d, H), "the votes'") <= real


@pytest.mark.parametrize("arch", ["generalized", "attention"])
def test_train_parameter_estimate_is_the_built_model(arch: str) -> None:
    from workbench.verifiers.tasks import Task
    from workbench.verifiers.train import ModelSpec, build_model

    d, N, r, H, K = 6, 2, 2, 3, 4
    model = build_model(ModelSpec(arch, rank=r, heads=H), Task("nearest", d=d, N=N), models=K)
    weights = sum(p.numel() * 4 for p in model.parameters() if p.ndim >= 3)
    allp = sum(p.numel() * 4 for p in model.parameters())
    est = _term(res.train_terms(arch, d, N, r, H, 1, K, 8, 8, 1, d), "parameters")
    assert est == res.ADAM_COPIES * weights
    assert est <= res.ADAM_COPIES * allp  # a lower bound on what is allocated


def test_a_computation_that_does_not_fit_is_refused_naming_the_largest_flag() -> None:
    terms = res.rank_one_terms(8, 10**6)
    need = sum(t.bytes for t in terms)
    res.check_fits(terms, {"--heads": 10**6, "--d": 8}, available=need)
    with pytest.raises(ValueError, match=r"^--heads 1000000 needs at least ~.* this machine "
                       r"has 1 MB available"):
        res.check_fits(terms, {"--heads": 10**6, "--d": 8}, available=10**9 // 1000)


def test_available_memory_is_read_without_torch() -> None:
    import subprocess
    import sys

    probe = ("import sys; from workbench.commands._resources import available_bytes as a; "
             "n = a(); print(n is None or n > 0, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120).stdout.split()
    assert out == ["True", "False"]
