"""Theorem 2, Lemmas 1-3: the projection, odd-part and conditional-law reductions
(docs/derivations/lower_bound.md).

Its test: ``tests/claims/test_thm2_reductions.py``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

from workbench.core.intervals import Estimate, bonferroni_level, z_value
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

if TYPE_CHECKING:
    import torch

    from workbench.models.attention import GeneralizedAttention


LOWER_BOUND = "derivations/lower_bound.md"


# --------------------------------------------------------------------------- Lemma 1
@claim(
    "thm2.projection_reduction",
    "Lemma 1: projecting the error on w gives ||f - A||^2 >= (s - G)^2 / 2 pointwise",
    "lemma",
    statement="sqrt2 <w, f - A> = s - G and ||f - A||^2 >= (s - G)^2 / 2",
    ref=f"{LOWER_BOUND}#lemma-1-projection-on-w",
    mark="ours",
    no_grad=True,
)
def projection_reduction(ctx: CheckContext) -> list[Evidence]:
    import workbench.core.sphere as sphere
    import workbench.core.targets as targets
    import workbench.proofs.support.eq2_models as eq2
    n = ctx.pick(2000, 50_000)
    g = sphere.make_generator(ctx.seed + 1001)
    out: list[Evidence] = []
    for d, r, H, score, norm in eq2.MODEL_CASES:
        model = eq2.random_model(d, r, H, 3, score, norm, g)
        X, y = sphere.sample_instances(n, 2, d, points="orthonormal", generator=g)
        _, w, s = eq2.decompose(X, y)
        resid = targets.nearest_neighbour(X, y) - model(X, y)  # (K, n, d)
        G = eq2.G(model, X, y)
        p = {"d": d, "r": r, "H": H, "score": score, "normalizer": norm, "n": n, "models": 3}
        ident = float((eq2.SQRT2 * (resid * w).sum(-1) - (s - G)).abs().max())
        out.append(Evidence.identity(ident, p, tolerance=1e-11,
                                     note="max |sqrt2 <w, f - A> - (s - G)|"))
        excess = float(((s - G) ** 2 / 2 - (resid**2).sum(-1)).max())
        out.append(Evidence.identity(excess, p, tolerance=1e-11,
                                     note="max of (s - G)^2 / 2 - ||f - A||^2"))
    return out


# --------------------------------------------------------------------------- Lemma 2
ODD_RESOLUTION = 0.08  # the symmetry step resolves a change of 0.08 in E(s - G)^2 (about 1)


def _at_reflected_query(
    model: GeneralizedAttention, X: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``s(-y)`` from the data and ``G(-y)`` from the model, both evaluated at the query ``-y``."""
    import workbench.proofs.support.eq2_models as eq2
    return eq2.decompose(X, -y)[2], eq2.G(model, X, -y)


def _odd_cases(g: torch.Generator) -> list[tuple[dict[str, object], GeneralizedAttention]]:
    """Random models of every score (``G`` nearly uncorrelated with ``s``) and full-rank aligned
    ones (``G`` strongly correlated with ``s``, with an even part): the lemma must hold on both."""
    import workbench.proofs.support.eq2_models as eq2
    cases: list[tuple[dict[str, object], GeneralizedAttention]] = []
    for d, r, H, score, norm in eq2.MODEL_CASES:
        p = {"d": d, "r": r, "H": H, "score": score, "normalizer": norm, "kind": "random"}
        cases.append((p, eq2.random_model(d, r, H, 3, score, norm, g)))
    for d, H in ((6, 2), (4, 3)):
        p = {"d": d, "r": d, "H": H, "score": "dot", "normalizer": "softmax", "kind": "aligned"}
        cases.append((p, eq2.aligned_model(d, H, 3, g)))
    return cases


@claim(
    "thm2.odd_reduction",
    "Lemma 2: only the y-odd part of G correlates with s: E(s - G)^2 >= E(s - G_odd)^2",
    "lemma",
    depends_on=("thm2.projection_reduction",),
    statement="s(-y) = -s(y); E(s - G(y))^2 = E(s(-y) - G(-y))^2 (y ~ -y); hence "
    "E(s - G)^2 = E(s - G_odd)^2 + E G_even^2 >= E(s - G_odd)^2, G_odd = (G(y) - G(-y)) / 2",
    ref=f"{LOWER_BOUND}#lemma-2-odd-part-in-y",
    mark="ours",
    threads=1,
    no_grad=True,
)
def odd_reduction(ctx: CheckContext) -> list[Evidence]:
    """s(-y) and G(-y) are computed from the data and the model at the reflected query; the
    symmetry step and the inequality are Monte Carlo statements on paired samples (CLT intervals:
    the paired differences are bounded, |s - G| <= 1 + 2 sum_h ||M_h||, but that range is too loose
    for a distribution-free interval to resolve them)."""
    import workbench.core.sphere as sphere
    import workbench.proofs.support.eq2_models as eq2
    from workbench.core.montecarlo import sample_mean
    n = ctx.pick(30_000, 400_000)
    g = sphere.make_generator(ctx.seed + 1002)
    cases = _odd_cases(g)
    level = bonferroni_level(2 * 3 * len(cases))  # jointly at 99.9%
    out: list[Evidence] = []
    for p0, model in cases:
        d = int(cast(int, p0["d"]))
        X, y = sphere.sample_instances(n, 2, d, points="orthonormal", generator=g)
        s = eq2.decompose(X, y)[2]
        s_neg, G_neg = _at_reflected_query(model, X, y)
        G = eq2.G(model, X, y)
        G_odd = (G - G_neg) / 2
        p = {**p0, "n": n}
        out.append(Evidence.identity(float((s_neg + s).abs().max()), p,
                                     note="s is odd: max |s(-y) + s(y)| from the data"))
        for k in range(model.models):
            sym = sample_mean((s - G[k]) ** 2 - (s_neg - G_neg[k]) ** 2, level, "normal")
            out.append(Evidence.estimate(
                sym, "==", 0.0, params={**p, "model": k}, resolution=ODD_RESOLUTION,
                note="symmetry: E(s - G(y))^2 - E(s(-y) - G(-y))^2 (paired samples)"))
            gain = sample_mean((s - G[k]) ** 2 - (s - G_odd[k]) ** 2, level, "normal")
            p_k = {**p, "model": k, "E(s-G)^2": float(((s - G[k]) ** 2).mean())}
            out.append(Evidence.estimate(
                gain, ">=", 0.0, params=p_k,
                note="E(s - G)^2 - E(s - G_odd)^2 (= E G_even^2 by the lemma)"))
    return out


# --------------------------------------------------------------------------- Lemma 3
LAW_RESOLUTION = 0.05  # a shift of 0.05 standard deviations of the statistic is resolved


def _uniform_orthogonal(w: torch.Tensor, n: int, g: torch.Generator) -> torch.Tensor:
    """``n`` uniform points of the unit sphere of ``w^perp``."""
    import torch
    z = torch.randn(n, w.shape[0], generator=g, dtype=torch.float64)
    z = z - (z @ w)[:, None] * w
    return z / z.norm(dim=1, keepdim=True)


def _difference(a: torch.Tensor, b: torch.Tensor, level: float) -> Estimate:
    """``E a - E b`` from two independent samples of equal size, with its CLT interval."""
    n = a.numel()
    diff = float(a.mean() - b.mean())
    se = math.sqrt(float(a.var()) / n + float(b.var()) / n)
    half = z_value(level) * se
    return Estimate(diff, diff - half, diff + half, level, n, se * math.sqrt(n), "normal")


@claim(
    "thm2.conditional_law",
    "Lemma 3: the law of W u given w depends on w only through W w",
    "lemma",
    depends_on=("thm2.projection_reduction",),
    statement="W w = W w'  =>  Law(W u | w) = Law(W u | w')  (u uniform on w^perp)",
    ref=f"{LOWER_BOUND}#lemma-3-conditioning-on-w",
    mark="ours",
    no_grad=True,
)
def conditional_law(ctx: CheckContext) -> list[Evidence]:
    import torch

    import workbench.core.sphere as sphere
    import workbench.proofs.support.eq2_models as eq2
    n = ctx.pick(30_000, 400_000)
    cases = ctx.pick(((7, 2), (5, 1)), ((7, 2), (5, 1), (9, 4), (6, 5)))
    level = bonferroni_level(2 * len(cases))  # jointly at 99.9%
    g = sphere.make_generator(ctx.seed + 1003)
    out: list[Evidence] = []
    for d, r in cases:
        eye = torch.eye(d, dtype=torch.float64)
        W = torch.randn(r, d, generator=g, dtype=torch.float64)
        P = torch.linalg.pinv(W) @ W  # projection on the row space
        w = sphere.uniform_sphere(d=d, generator=g)
        k = (eye - P) @ torch.randn(d, generator=g, dtype=torch.float64)
        w2 = P @ w + k / k.norm() * ((eye - P) @ w).norm()  # same W w, same norm, different w
        w3 = torch.linalg.svd(W).Vh[0]  # a w with a different W w (negative control)
        c = torch.randn(r, generator=g, dtype=torch.float64)

        def stat(ww: torch.Tensor, W: torch.Tensor = W, c: torch.Tensor = c) -> torch.Tensor:
            Wu = _uniform_orthogonal(ww, n, g) @ W.T
            return torch.cos(Wu @ c) + Wu[:, 0] ** 2 * Wu[:, -1] + (Wu**2).sum(-1)

        s1, s2, s3 = stat(w), stat(w2), stat(w3)
        p = {"d": d, "r": r, "n": n, "|w - w'|": float((w - w2).norm())}
        equal, control = _difference(s1, s2, level), _difference(s1, s3, level)
        out.append(Evidence.estimate(
            equal, "==", 0.0, params={**p, "pair": "equal W w"},
            resolution=LAW_RESOLUTION * math.sqrt(float(s1.var())),
            note="difference of E[stat(W u) | w] between w and w'; resolution 0.05 standard "
            "deviations of the statistic"))
        size = abs(control.mean)  # |difference|, with the same half-width
        out.append(Evidence(
            size, eq2.TINY, ">=", "monte_carlo", {**p, "pair": "negative control: different W w"},
            ci=(size - control.half_width, size + control.half_width), ci_level=level,
            interval="normal", note="the statistic detects a change of W w (test power)"))
    return out
