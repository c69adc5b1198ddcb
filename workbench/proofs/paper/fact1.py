"""Fact 1: one full-rank head approximates nearest-neighbour retrieval to any accuracy.

The head is the construction's model (``workbench.constructions.full_rank``); the checks compare it
with independent computations: the core targets, fresh Monte Carlo samples drawn by the verifiers
(``verifiers.estimate_error``), and the construction's own claimed error.

Its test: ``tests/claims/test_fact1.py``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

from workbench.core.intervals import Estimate, bonferroni_level
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim
from workbench.proofs.support.sphere_quadrature import abs_t_mean

if TYPE_CHECKING:
    import torch


FACT1 = "paper.md#fact-1-one-full-rank-head-suffices"


def _head_error(d: int, beta: float, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-sample ``||head(X, y) - f(X, y)||^2`` of the full-rank head at temperature ``beta``."""
    import workbench.constructions.full_rank as fr
    import workbench.core.targets as targets
    return (fr.full_rank_model(d, beta)(X, y)[0] - targets.nearest_neighbour(X, y)).pow(2).sum(-1)


@claim(
    "fact1.soft_representation",
    "One full-rank head with W_K^T W_Q = beta I, W_O^T W_V = I equals X softmax(beta X^T y)",
    "lemma",
    statement="head(X, y) = X softmax(beta X^T y)",
    ref="paper.md#full-rank", mark="paper", no_grad=True,
)
def soft_representation(ctx: CheckContext) -> list[Evidence]:
    """The construction's head against ``core.targets.soft_nearest_neighbour`` on both laws,
    from N = 1 to N = d, at beta = 0 (the mean of the keys), 1 and 30."""
    import workbench.constructions.full_rank as fr
    import workbench.core.targets as targets
    from workbench.core.sphere import PointLaw, sample_instances
    out: list[Evidence] = []
    for d, N, points in ((2, 1, "iid"), (5, 2, "orthonormal"), (16, 16, "iid"),
                         (8, 8, "orthonormal")):
        law = cast(PointLaw, points)
        X, y = sample_instances(512, N, d, points=law, generator=ctx.seed + d + N)
        for beta in (0.0, 1.0, 30.0):
            head = fr.full_rank_model(d, beta)(X, y)[0]
            diff = float((head - targets.soft_nearest_neighbour(X, y, beta)).abs().max())
            p = {"d": d, "N": N, "points": points, "beta": beta}
            out.append(Evidence.identity(diff, p, tolerance=1e-12))
    return out


@claim(
    "fact1.pointwise_bound",
    "||X p - x_{i*}||^2 <= 4 min(1, (N-1)^2 exp(-2 beta gap)) for the softmax head",
    "lemma",
    depends_on=("fact1.soft_representation",),
    statement="||X softmax(beta X^T y) - f(X, y)||^2 <= 4 min(1, (N-1)^2 exp(-2 beta gap))",
    ref=FACT1, mark="ours", no_grad=True,
)
def pointwise_bound(ctx: CheckContext) -> list[Evidence]:
    """The head's squared error minus the bound, maximised over samples (N = 1: gap inf); the
    bound is the sympy encoding ``fact1.pointwise_error`` evaluated per sample, and the
    construction's own ``pointwise_bound`` is compared with it sample by sample."""
    import torch

    import workbench.constructions.full_rank as fr
    from workbench.core.sphere import PointLaw, sample_instances
    from workbench.core.symbolic import numeric_rhs
    from workbench.core.symbolic import symbols as sym
    encoded = numeric_rhs("fact1.pointwise_error", (sym.N, sym.beta, sym.gap))
    out: list[Evidence] = []
    for d, N, points in ((3, 2, "orthonormal"), (16, 4, "iid"), (16, 16, "iid")):
        X, y = sample_instances(2048, N, d, points=cast(PointLaw, points),
                                generator=ctx.seed + 11 * N)
        s = torch.einsum("bnd,bd->bn", X, y)
        top = s.topk(min(2, N), dim=-1).values
        gap = top[:, 0] - top[:, 1] if N > 1 else torch.full_like(top[:, 0], torch.inf)
        for beta in (1.0, 10.0, 100.0):
            bound = torch.as_tensor(encoded(N, beta, gap.numpy()), dtype=torch.float64)
            excess = float((_head_error(d, beta, X, y) - bound).max())
            p = {"d": d, "N": N, "points": points, "beta": beta}
            out.append(Evidence.identity(excess, p, tolerance=1e-12,
                                         note="max over samples of error minus bound"))
            lib = float((fr.pointwise_bound(X, y, beta) - bound).abs().max())
            out.append(Evidence.identity(lib, p, tolerance=1e-12,
                                         note="max |construction's pointwise_bound - this bound|"
                                         " (the construction's claim is its expectation)"))
    return out


ERROR_RANGE = (0.0, 4.0)  # ||X p - x_{i*}||^2 <= diam^2 = 4 for outputs in the keys' hull


@claim(
    "fact1.hard_limit",
    "The full-rank head's error tends to 0 as beta grows (Fact 1)",
    "fact",
    depends_on=("fact1.pointwise_bound",),
    statement="E||f - X softmax(beta X^T y)||^2 -> 0 as beta -> inf",
    ref=FACT1, mark="paper", no_grad=True,
)
def hard_limit(ctx: CheckContext) -> list[Evidence]:
    """For eps in {1e-2, 1e-3} the head at beta = 50/eps has error below eps beyond its CI
    (``bounded`` interval, errors in [0, 4]: rare-event errors keep a non-negative lower end)."""
    from workbench.core.montecarlo import sample_mean
    from workbench.core.sphere import PointLaw, sample_instances
    n = ctx.pick(60_000, 1_000_000)
    out: list[Evidence] = []
    for d, N, points in ((8, 2, "orthonormal"), (16, 8, "iid")):
        X, y = sample_instances(n, N, d, points=cast(PointLaw, points), generator=ctx.seed + 3 * d)
        for eps in (1e-2, 1e-3):
            beta = 50.0 / eps
            est = sample_mean(_head_error(d, beta, X, y), 0.999, "bounded", ERROR_RANGE)
            p = {"d": d, "N": N, "points": points, "beta": beta, "eps": eps, "n": n}
            out.append(Evidence.estimate(est, "<=", eps, params=p))
    return out


BETA_FOR_EPS: tuple[float, ...] = (1e-1, 1e-2, 1e-3)


@claim(
    "fact1.beta_for",
    "The temperature beta_for(eps, d, N) gives a head with error <= eps",
    "fact",
    depends_on=("fact1.pointwise_bound",),
    statement="error_upper_bound(beta) <= eps and E||f - X softmax(beta X^T y)||^2 <= "
    "4 E[min(1, (N-1)^2 exp(-2 beta gap))] <= error_upper_bound(beta) at beta = "
    "beta_for(eps, d, N)",
    ref="derivations/constructions.md#1-fact-1-the-full-rank-head-and-an-explicit-temperature",
    mark="ours", threads=1, no_grad=True,
)
def beta_for(ctx: CheckContext) -> list[Evidence]:
    """At ``beta = beta_for(eps)``: Fact 1's error upper bound itself against ``eps``; the
    construction's claimed quadrature (N = 2, D_2) against an independent one in ``t``; the bound's
    expectation, by exact quadrature (N = 2) or Monte Carlo (N > 2), against ``eps`` and against
    the upper bound; the head's fresh-sample error (``verifiers.estimate_error``) against
    ``eps`` and the quadrature claim. Every Monte Carlo interval is ``bounded`` (values in
    [0, 4]; valid for the rare-event errors of eps = 1e-3).

    Power: the head's actual error is about eps / 5 (N = 2; the bound is loose), so a beta 3x too
    small still has error < eps: it is refuted by the bound pieces (about 3 eps), not the error.
    The Monte Carlo bound expectation (N > 2) is only run for eps >= 1e-2, where its interval
    resolves the factor 1.5 between eps / 2 and 3 eps / 2.
    """
    import workbench.constructions.full_rank as fr
    from workbench.verifiers.estimate import estimate_error
    from workbench.verifiers.tasks import Task
    n = ctx.pick(200_000, 2_000_000)
    cases = [(8, 2, "orthonormal"), (6, 3, "orthonormal")]
    cases += ctx.pick([], [(16, 2, "orthonormal"), (64, 2, "orthonormal"), (16, 2, "iid"),
                           (16, 4, "iid")])
    level = bonferroni_level(3 * len(cases) * len(BETA_FOR_EPS))
    out: list[Evidence] = []
    for k, (d, N, points) in enumerate(cases):
        task = Task("nearest", d=d, N=N, points=points)
        for j, eps in enumerate(BETA_FOR_EPS):
            beta = fr.beta_for(eps, d, N, points)
            p = {"d": d, "N": N, "points": points, "eps": eps, "beta": beta, "n": n}
            upper = fr.error_upper_bound(beta, d, N, points)
            out.append(Evidence(upper, eps, "<=", "exact", p,
                                note="error_upper_bound at beta_for(eps)"))
            model, claimed = fr.full_rank(d, beta, N, points, claim_samples=20_000,
                                          generator=ctx.seed + 101 + k)
            est = estimate_error(model, task, samples=n, batch=20_000, level=level,
                                 generator=ctx.seed + 1000 * k + j, bounds=ERROR_RANGE)[0]
            out.append(Evidence.estimate(
                est, "<=", eps, params=p,
                note="fresh samples, workbench.verifiers.estimate_error (no power against a "
                "beta a few times too small: the error is about eps / 5)"))
            if N == 2 and points == "orthonormal":
                ref = claimed_reference(d, beta)
                out.append(Evidence(claimed.value, ref, "==", "exact", p,
                                    tolerance=CLAIM_RTOL * ref,
                                    note="claimed quadrature == independent quadrature in t"))
            if N == 2:  # the construction's claim is an exact quadrature for N = 2
                for bound, what in ((upper, "union/Riemann error_upper_bound"), (eps, "eps")):
                    out.append(Evidence(claimed.value, bound, "<=", "exact", p, tolerance=1e-9,
                                        note=f"quadrature 4 E exp(-2 beta gap) <= {what}"))
                out.append(Evidence.estimate(est, "<=", claimed.value, params=p,
                                             note="measured error <= quadrature claim"))
            elif eps >= 1e-2:
                bnd = _bound_expectation(d, N, points, beta, n, level, ctx.seed + 77 * k + j)
                for bound, what in ((upper, "error_upper_bound"), (eps, "eps")):
                    out.append(Evidence.estimate(
                        bnd, "<=", bound, params=p,
                        note=f"Monte Carlo 4 E min(1, (N-1)^2 exp(-2 beta gap)) <= {what}"))
    return out


CLAIM_RTOL = 1e-8  # the construction's quadrature is at relative 1e-11


def claimed_reference(d: int, beta: float) -> float:
    """``4 E exp(-2 beta gap)`` on D_2 (``N = 2``: ``gap = sqrt2 |t|``, the ``min`` inactive),
    independently of the construction: a mean over ``|t|`` in ``t`` itself
    (``proofs.support.sphere_quadrature``), split at the integrand's scale ``1 / beta``."""
    import mpmath
    a = 2 * math.sqrt(2) * beta
    return 4 * abs_t_mean(lambda t: mpmath.exp(-a * t), d, (1 / a, 10 / a, 40 / a))


def _bound_expectation(
    d: int, N: int, points: str, beta: float, n: int, level: float, seed: int
) -> Estimate:
    """Monte Carlo ``4 E min(1, (N-1)^2 exp(-2 beta gap))`` (values in [0, 4]) with a
    ``bounded`` interval."""
    import workbench.constructions.full_rank as fr
    from workbench.core.montecarlo import estimate_mean
    from workbench.core.sphere import PointLaw, sample_instances

    def draw(b: int, g: torch.Generator | None) -> torch.Tensor:
        X, y = sample_instances(b, N, d, points=cast(PointLaw, points), generator=g)
        return fr.pointwise_bound(X, y, beta)

    return estimate_mean(
        draw, samples=n, batch=20_000, level=level, generator=seed, bounds=ERROR_RANGE
    )[0]
