"""The memory estimates behind the size checks (``workbench.verifiers.resources``, with
``train``'s in ``workbench.commands._resources``) against the tensors the code really allocates,
built small; the registered constructions' estimates; and the refusal they lead to."""

from __future__ import annotations

import pytest

from workbench.commands import _resources as res
from workbench.testing import mapped, plant
from workbench.verifiers import resources as vr


def _term(terms: list[vr.Term], start: str) -> int:
    return next(t.bytes for t in terms if t.what.startswith(start))


def _rank_one_gap(d: int, H: int) -> int:
    """Estimated minus allocated bytes of the random-features layer's W, Q and M."""
    from workbench.constructions.random_features import random_features

    model = random_features(d, H, generator=0)[0]
    real = sum(t.numel() * t.element_size() for t in (model.W, model.score.Q, model.M))
    terms = vr.rank_one_terms(d, H)
    return _term(terms, "the value maps") + _term(terms, "the key and query") - real


@pytest.mark.parametrize("d,H", [(2, 1), (5, 7), (8, 64)])
def test_rank_one_estimate_is_the_allocated_layer(d: int, H: int) -> None:
    assert _rank_one_gap(d, H) == 0


def test_rank_one_estimate_fails_when_a_term_is_dropped() -> None:
    with plant("workbench.verifiers.resources:rank_one_terms", mapped(lambda ts: ts[1:])):
        with pytest.raises(StopIteration):
            _rank_one_gap(5, 7)
    with plant("workbench.verifiers.resources:rank_one_terms",
               mapped(lambda ts: [vr.Term(t.what, t.flags, t.bytes // 2) for t in ts])):
        assert _rank_one_gap(5, 7) != 0


@pytest.mark.parametrize("d,N", [(2, 2), (4, 3)])
def test_biased_estimate_is_the_allocated_heads(d: int, N: int) -> None:
    from workbench.constructions.biased import biased

    model = biased(d, N, generator=0)[0]
    real = sum(t.numel() * t.element_size() for t in (model.W, model.score.Q, model.M))
    assert _term(vr.biased_terms(d, N), "the 2d^2+1 heads") == real


@pytest.mark.parametrize("d", [2, 5])
def test_full_rank_estimate_is_the_allocated_head(d: int) -> None:
    from workbench.constructions.full_rank import full_rank_model

    model = full_rank_model(d, 1.0)
    real = sum(p.numel() * p.element_size() for p in model.parameters())
    assert _term(vr.full_rank_terms(d), "the head's") == real


@pytest.mark.parametrize("d,H,N", [(4, 8, 2), (4, 8, 3)])
def test_majority_vote_estimate_is_below_the_allocated_model(d: int, H: int, N: int) -> None:
    import torch

    from workbench.constructions.majority_vote import majority_vote

    model = majority_vote(d, H, N, generator=0, claim_samples=2)[0]
    real = sum(t.numel() * t.element_size() for m in model.modules()
               for t in [*m.parameters(recurse=False), *m.buffers(recurse=False)]
               if isinstance(t, torch.Tensor))
    assert 0 < _term(vr.majority_vote_terms(d, H), "the votes'") <= real


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
    terms = vr.rank_one_terms(8, 10**6)
    need = sum(t.bytes for t in terms)
    vr.check_fits(terms, {"--heads": 10**6, "--d": 8}, available=need)
    with pytest.raises(ValueError, match=r"^--heads 1000000 needs at least ~.* this machine "
                       r"has 1 MB available"):
        vr.check_fits(terms, {"--heads": 10**6, "--d": 8}, available=10**9 // 1000)


def test_available_memory_is_read_without_torch() -> None:
    import subprocess
    import sys

    probe = ("import sys; from workbench.verifiers.resources import available_bytes as a; "
             "n = a(); print(n is None or n > 0, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120).stdout.split()
    assert out == ["True", "False"]


# ------------------------------------------------ the sandwich's witnesses, and the registry
def _hardmax_rank1_gaps(d: int, H: int, steps: int) -> list[int]:
    """Estimated minus allocated bytes, term by term, of the optimised rank-1 witness: its
    layer's M, W and Q, its dense kernel matrix, and the directions under Adam (measured on an
    Adam step of a tensor of the same shape)."""
    import torch

    from workbench.constructions import optimized as opt
    from workbench.core.head_kernels import agreement_kernel
    from workbench.verifiers.resources import hardmax_rank1_terms

    w = opt.hardmax_rank1(d, H, steps=steps, seed=0)
    model = opt.witness_model(w)
    Q = torch.from_numpy(w.params["Q"])
    x = torch.zeros(H, d, dtype=torch.float64, requires_grad=True)
    adam = torch.optim.Adam([x])
    if H > 1 and steps > 0:
        x.sum().backward()
        adam.step()
    state = [t for s in adam.state.values() for t in s.values() if t.ndim > 0]
    real = [[model.M], [model.W, model.score.Q], [agreement_kernel(Q, Q)],
            [x] + ([x.grad] if x.grad is not None else []) + state]
    terms = hardmax_rank1_terms(d, H, steps)
    return [t.bytes - sum(a.numel() * a.element_size() for a in ts)
            for t, ts in zip(terms, real, strict=True)]


@pytest.mark.parametrize("d,H,steps", [(3, 1, 5), (4, 6, 2), (6, 17, 0)])
def test_hardmax_rank1_estimate_is_the_allocated_witness(d: int, H: int, steps: int) -> None:
    assert _hardmax_rank1_gaps(d, H, steps) == [0, 0, 0, 0]


def test_hardmax_rank1_estimate_fails_when_a_term_is_off() -> None:
    with plant("workbench.verifiers.resources:rank_one_terms", mapped(
            lambda ts: [vr.Term(t.what, t.flags, t.bytes // 2) for t in ts])):
        assert _hardmax_rank1_gaps(4, 6, 2)[:3] != [0, 0, 0]
    with plant("workbench.verifiers.resources:hardmax_rank1_terms", mapped(
            lambda ts: [*ts[:3], vr.Term(ts[3].what, ts[3].flags, ts[3].bytes // 2)])):
        assert _hardmax_rank1_gaps(4, 6, 2)[3] != 0


def _bayes_heads_gaps(d: int, r: int, H: int, n_fit: int, n_eval: int) -> list[int]:
    """Estimated minus allocated bytes, term by term, of the Bayes heads: the identity, the row
    spaces, both samples, the scores on each and the Gram matrix (the arrays the witness
    builds, rebuilt at the same size)."""
    import numpy as np

    from workbench.constructions import optimized as opt
    from workbench.verifiers.resources import bayes_heads_terms

    w = opt.bayes_heads(d, r, H, n_fit=n_fit, n_eval=n_eval, seed=0)
    B = w.params["B"]
    samples = opt._sample(n_fit, d, 1), opt._sample(n_eval, d, 2)
    fit, ev = (opt._scores(B, *xy)[0] for xy in samples)
    real = [np.eye(d).nbytes, B.nbytes, sum(a.nbytes for xy in samples for a in xy),
            fit.nbytes, ev.nbytes, (fit.T @ fit).nbytes]
    return [t.bytes - n for t, n in zip(bayes_heads_terms(d, r, H, n_fit, n_eval), real,
                                        strict=True)]


@pytest.mark.parametrize("d,r,H", [(3, 1, 1), (6, 2, 5)])
def test_bayes_heads_estimate_is_the_allocated_witness(d: int, r: int, H: int) -> None:
    assert _bayes_heads_gaps(d, r, H, 300, 500) == [0] * 6


def test_bayes_heads_estimate_fails_when_a_term_is_off() -> None:
    with plant("workbench.verifiers.resources:bayes_heads_terms", mapped(
            lambda ts: [vr.Term(t.what, t.flags, t.bytes // 2) for t in ts])):
        assert all(g != 0 for g in _bayes_heads_gaps(6, 2, 5, 300, 500))


def test_every_builtin_construction_estimates_its_memory_from_its_terms() -> None:
    """Each registered estimate is the terms of that construction (the ones measured above)."""
    from workbench.plugins import builtin as bp

    d, r, H, N = 5, 2, 7, 3
    expected = {
        "full-rank": vr.full_rank_terms(d), "random-features": vr.rank_one_terms(d, H),
        "majority-vote": vr.majority_vote_terms(d, H), "biased": vr.biased_terms(d, N),
        "hardmax-rank1": vr.hardmax_rank1_terms(d, H, 200),
        "bayes-heads": vr.bayes_heads_terms(d, r, H, 20_000, 50_000),
    }
    for c in bp._constructions():
        assert c.memory is not None, c.name
        assert c.memory(d, r, H, N, **c.params) == expected[c.name], c.name
    assert expected == {c.name: c.memory(d, r, H, N, **c.params) for c in bp._constructions()}


def test_a_byte_count_is_blamed_on_the_largest_size_flag() -> None:
    from workbench.verifiers.resources import as_terms, size_values

    values = size_values(8, 1, 10**7, 2, {"steps": 3, "law": "x", "heads": 10**7})
    assert values == {"--d": 8, "--rank": 1, "--heads": 10**7, "--N": 2, "--param steps": 3}
    with pytest.raises(ValueError, match=r"^--heads 10000000 needs at least ~1 TB"):
        vr.check_fits(as_terms(10**12), values, available=10**9)
    with pytest.raises(ValueError, match="byte count"):
        as_terms(-1)
