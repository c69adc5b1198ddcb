"""Monte Carlo error with CIs: calibration of the nominal level, streaming, early stop.

Truths used (no numbers from our own runs): a model that always answers ``x_1`` has error
exactly 1 on i.i.d. uniform N = 2 (reflecting y across the bisector of x_1, x_2 swaps the
target, so given the keys the error is ||x_1 - x_2||^2 with probability 1/2, and
E ||x_1 - x_2||^2 = 2); the zero model has error exactly 1 on the sphere; random rank-1 hardmax
heads with optimal values have the exact kernel error ``1 - 2 a.b + a.C.a`` on D_2.
"""

from __future__ import annotations

import pytest
import torch
from scipy.stats import binomtest

from workbench.core.intervals import z_value
from workbench.core.montecarlo import estimate_mean
from workbench.verifiers.estimate import estimate_error
from workbench.verifiers.tasks import Task


def first_key(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return X[..., 0, :]


def coverage(model, task: Task, truth: float, runs: int, n: int, **kw) -> int:
    hits = 0
    for i in range(runs):
        est = estimate_error(model, task, samples=n, batch=n, generator=1000 + i, **kw)[0]
        hits += est.covers(truth)
    return hits


@pytest.mark.parametrize("level", [0.95, 0.5])
def test_normal_ci_is_calibrated(level: float) -> None:
    runs = 200
    hits = coverage(first_key, Task("nearest", d=5, N=2), 1.0, runs, 400, level=level)
    assert binomtest(hits, runs, level).pvalue > 1e-3, (hits, runs, level)


def test_bootstrap_ci_is_calibrated() -> None:
    runs = 100
    hits = coverage(first_key, Task("nearest", d=5, N=2), 1.0, runs, 300, method="bootstrap",
                    resamples=400)
    assert binomtest(hits, runs, 0.95).pvalue > 1e-3, hits


def test_calibrated_on_random_features_kernel_error() -> None:
    from workbench.constructions import random_features as rf
    from workbench.constructions import rank_one

    Q, K = rf.sample_heads(4, 6, generator=3)
    a = rank_one.solve_heads(Q, K).a
    truth = rank_one.exact_error(Q, K, a)
    model = rank_one.rank_one_model(Q, K, a)
    runs = 120
    hits = coverage(model, Task("nearest", d=6, N=2, points="orthonormal"), truth, runs, 400)
    assert binomtest(hits, runs, 0.95).pvalue > 1e-3, (hits, truth)


def test_zero_model_scores_exactly_one() -> None:
    est = estimate_error(lambda X, y: torch.zeros_like(y), Task("nearest", d=7, N=5),
                         samples=3000, batch=1000)[0]
    assert est.mean == pytest.approx(1.0, abs=1e-6) and est.std < 1e-6


def test_streaming_matches_one_shot_statistics() -> None:
    vals = torch.randn(3, 1001, dtype=torch.float64).exp()
    pos = [0]

    def draw(b: int, g: torch.Generator | None) -> torch.Tensor:
        out = vals[:, pos[0] : pos[0] + b]
        pos[0] += b
        return out

    for batch in (1, 7, 1001):
        pos[0] = 0
        ests = estimate_mean(draw, samples=1001, batch=batch)
        for k, e in enumerate(ests):
            assert e.n == 1001
            assert e.mean == pytest.approx(float(vals[k].mean()), rel=1e-12)
            assert e.std == pytest.approx(float(vals[k].std()), rel=1e-10)
            half = z_value(0.95) * e.std / 1001**0.5
            assert e.half_width == pytest.approx(half, rel=1e-10)


def test_early_stop_on_half_width() -> None:
    task = Task("nearest", d=5, N=2)
    est = estimate_error(first_key, task, samples=200_000, batch=500, tol=0.05)[0]
    assert est.n < 200_000 and est.half_width <= 0.05
    full = estimate_error(first_key, task, samples=2000, batch=500)[0]
    assert full.n == 2000


def test_stacked_models_get_one_estimate_each() -> None:
    def two(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.stack([torch.zeros_like(y), X[:, 0]])

    zero, first = estimate_error(two, Task("nearest", d=5, N=2), samples=4000, level=0.999)
    assert zero.mean == pytest.approx(1.0) and zero.std < 1e-6
    assert first.covers(1.0) and first.std > 0.1


def test_fresh_samples_differ_by_generator() -> None:
    task = Task("nearest", d=5, N=2)
    a = estimate_error(first_key, task, samples=500, generator=1)[0]
    b = estimate_error(first_key, task, samples=500, generator=2)[0]
    c = estimate_error(first_key, task, samples=500, generator=1)[0]
    assert a != b and a == c


@pytest.mark.parametrize("kw,name", [({"level": 1.0}, "level"), ({"method": "t"}, "method"),
                                     ({"samples": 1}, "samples"), ({"tol": -1.0}, "tol")])
def test_bad_arguments_name_the_parameter(kw: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        estimate_error(first_key, Task("nearest", d=3, N=2), **kw)


# --- intervals valid for bounded, rare-event errors (workbench.core.intervals) ----------------
def _rare(p: float):
    """Per-sample errors 4 * Bernoulli(p): mean 4p, range [0, 4] (a rare-event error)."""

    def draw(b: int, g: torch.Generator | None) -> torch.Tensor:
        return 4.0 * (torch.rand(b, generator=g, dtype=torch.float64) < p).double()

    return draw


def test_bounded_interval_covers_rare_event_errors() -> None:
    p, runs, n = 2.5e-4, 200, 30_000  # eps = 1e-3: about 7 of 30,000 samples carry the error
    hits, neg_normal = 0, 0
    for i in range(runs):
        est = estimate_mean(_rare(p), samples=n, batch=n, level=0.95, bounds=(0.0, 4.0),
                            generator=i)[0]
        assert est.method == "bounded" and est.lo >= 0.0
        hits += est.covers(4 * p)
        nrm = estimate_mean(_rare(p), samples=n, batch=n, level=0.95, generator=i)[0]
        neg_normal += nrm.lo < 0
    # valid (conservative) at every n: at least the nominal coverage
    assert binomtest(hits, runs, 0.95, alternative="less").pvalue > 1e-3, hits
    assert hits >= 0.95 * runs
    # the CLT interval does go below 0 here (about 6 % of runs: 3 or fewer hits of ~7.5)
    assert neg_normal > 0


def test_bounded_interval_is_narrow_where_it_should_be() -> None:
    # 0 of 200,000 samples carry error: the upper end is about 4 log(2/delta) / n
    est = estimate_mean(_rare(0.0), samples=200_000, level=0.999, bounds=(0.0, 4.0))[0]
    assert est.lo == 0.0 and 0 < est.hi < 4 * 9.0 / 200_000  # log(4 / 0.001) = 8.3


@pytest.mark.parametrize("method", ["bernstein", "chernoff", "bounded"])
def test_bounded_methods_need_and_check_the_range(method: str) -> None:
    with pytest.raises(ValueError, match="bounds"):
        estimate_mean(_rare(0.5), samples=100, method=method)
    with pytest.raises(ValueError, match="bounds"):
        estimate_mean(_rare(0.5), samples=100, method=method, bounds=(0.0, 1.0))  # values 4
    est = estimate_mean(_rare(0.5), samples=4000, method=method, bounds=(0.0, 4.0))[0]
    assert est.method == method and est.lo <= 2.0 <= est.hi


def test_an_error_interval_is_cut_at_zero_and_still_covers() -> None:
    """The error of a model exact except on a rare cap of queries (``y_0 > 0.95``, where it
    answers 0: error 1 there) is the cap's probability; on 200 samples the CLT interval reaches
    below 0, the error's interval (train, sandwich, witness verify) stops at 0, and over 200
    runs it covers the truth as often as the uncut one."""
    from scipy.special import betainc

    from workbench.core.targets import nearest_neighbour

    d = 3
    truth = 0.5 * float(betainc((d - 1) / 2, 0.5, 1 - 0.95**2))  # P(y_0 > 0.95) on S^2

    def model(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = nearest_neighbour(X, y).clone()
        out[y[..., 0] > 0.95] = 0.0
        return out

    task = Task("nearest", d=d, N=2, points="iid")
    cut = [estimate_error(model, task, samples=200, batch=200, level=0.9, generator=g)[0]
           for g in range(200)]
    raw = [estimate_error(model, task, samples=200, batch=200, level=0.9, generator=g,
                          bounds=None)[0] for g in range(200)]
    assert any(e.lo < 0 for e in raw)  # what an uncut CLT interval prints
    assert all(0.0 == min(e.lo, 0.0) and e.lo <= e.mean <= e.hi for e in cut)
    assert [e.hi for e in cut] == [e.hi for e in raw]
    assert sum(e.covers(truth) for e in cut) == sum(e.covers(truth) for e in raw)
