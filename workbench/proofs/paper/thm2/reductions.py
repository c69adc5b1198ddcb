"""Theorem 2, Lemmas 1-3: the projection, odd-part and conditional-law reductions
(docs/derivations/lower_bound.md)."""

from __future__ import annotations

import math

import torch

from workbench.core.sphere import make_generator, sample_instances, uniform_sphere
from workbench.core.targets import nearest_neighbour
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.paper.harmonics import (
    family_z,
)
from workbench.proofs.paper.thm2._common import (
    _G,
    _MODEL_CASES,
    _TINY,
    SQRT2,
    _decompose,
    _random_model,
)
from workbench.proofs.registry import claim


# --------------------------------------------------------------------------- Lemma 1
@claim(
    "thm2.projection_reduction",
    "Lemma 1: projecting the error on w gives ||f - A||^2 >= (s - G)^2 / 2 pointwise",
    "lemma",
    statement="sqrt2 <w, f - A> = s - G and ||f - A||^2 >= (s - G)^2 / 2",
    source="docs/derivations/lower_bound.md (Lemma 1); PAPER.md §3 step 1",
)
@torch.no_grad()
def projection_reduction(ctx: CheckContext) -> list[Evidence]:
    n = 2000 if ctx.scale == "quick" else 50_000
    g = make_generator(ctx.seed + 1001)
    out: list[Evidence] = []
    for d, r, H, score, norm in _MODEL_CASES:
        model = _random_model(d, r, H, 3, score, norm, g)
        X, y = sample_instances(n, 2, d, points="orthonormal", generator=g)
        _, w, s = _decompose(X, y)
        A = model(X, y)  # (K, n, d)
        resid = nearest_neighbour(X, y) - A
        G = _G(model, X, y)
        p = {"d": d, "r": r, "H": H, "score": score, "normalizer": norm, "n": n, "models": 3}
        ident = float((SQRT2 * (resid * w).sum(-1) - (s - G)).abs().max())
        out.append(
            Evidence(
                ident,
                0.0,
                "<=",
                "identity",
                p,
                tolerance=1e-11,
                note="max |sqrt2 <w, f - A> - (s - G)|",
            )
        )
        excess = float(((s - G) ** 2 / 2 - (resid**2).sum(-1)).max())
        out.append(
            Evidence(
                excess,
                0.0,
                "<=",
                "identity",
                p,
                tolerance=1e-11,
                note="max of (s - G)^2 / 2 - ||f - A||^2",
            )
        )
    return out


# --------------------------------------------------------------------------- Lemma 2
@claim(
    "thm2.odd_reduction",
    "Lemma 2: only the y-odd part of G correlates with s: E(s - G)^2 >= E(s - G_odd)^2",
    "lemma",
    depends_on=("thm2.projection_reduction",),
    statement="(s - G(y))^2 + (-s - G(-y))^2 = 2 (s - G_odd)^2 + 2 G_even^2",
    source="docs/derivations/lower_bound.md (Lemma 2); PAPER.md §3 step 2",
)
@torch.no_grad()
def odd_reduction(ctx: CheckContext) -> list[Evidence]:
    n = 2000 if ctx.scale == "quick" else 50_000
    g = make_generator(ctx.seed + 1002)
    out: list[Evidence] = []
    for d, r, H, score, norm in _MODEL_CASES:
        model = _random_model(d, r, H, 3, score, norm, g)
        X, y = sample_instances(n, 2, d, points="orthonormal", generator=g)
        s = _decompose(X, y)[2]
        G, G_neg = _G(model, X, y), _G(model, X, -y)
        G_odd, G_even = (G - G_neg) / 2, (G + G_neg) / 2
        pair = (s - G) ** 2 + (-s - G_neg) ** 2
        p = {"d": d, "r": r, "H": H, "score": score, "normalizer": norm, "n": n, "models": 3}
        ident = float((pair - 2 * (s - G_odd) ** 2 - 2 * G_even**2).abs().max())
        out.append(
            Evidence(
                ident,
                0.0,
                "<=",
                "identity",
                p,
                tolerance=1e-10,
                note="max |pair - 2 (s - G_odd)^2 - 2 G_even^2|",
            )
        )
        excess = float((2 * (s - G_odd) ** 2 - pair).max())
        out.append(
            Evidence(
                excess,
                0.0,
                "<=",
                "identity",
                p,
                tolerance=1e-10,
                note="max of 2 (s - G_odd)^2 - [(s - G(y))^2 + (-s - G(-y))^2]",
            )
        )
    return out


# --------------------------------------------------------------------------- Lemma 3
def _uniform_orthogonal(w: torch.Tensor, n: int, g: torch.Generator) -> torch.Tensor:
    """``n`` uniform points of the unit sphere of ``w^perp``."""
    z = torch.randn(n, w.shape[0], generator=g, dtype=torch.float64)
    z = z - (z @ w)[:, None] * w
    return z / z.norm(dim=1, keepdim=True)


@claim(
    "thm2.conditional_law",
    "Lemma 3: the law of W u given w depends on w only through W w",
    "lemma",
    depends_on=("thm2.projection_reduction",),
    statement="W w = W w'  =>  Law(W u | w) = Law(W u | w')  (u uniform on w^perp)",
    source="docs/derivations/lower_bound.md (Lemma 3); PAPER.md §3 step 3",
)
@torch.no_grad()
def conditional_law(ctx: CheckContext) -> list[Evidence]:
    n = 30_000 if ctx.scale == "quick" else 400_000
    cases = ((7, 2), (5, 1)) if ctx.scale == "quick" else ((7, 2), (5, 1), (9, 4), (6, 5))
    z, level = family_z(2 * len(cases))
    g = make_generator(ctx.seed + 1003)
    out: list[Evidence] = []
    for d, r in cases:
        eye = torch.eye(d, dtype=torch.float64)
        W = torch.randn(r, d, generator=g, dtype=torch.float64)
        P = torch.linalg.pinv(W) @ W  # projection on the row space
        w = uniform_sphere(d=d, generator=g)
        k = (eye - P) @ torch.randn(d, generator=g, dtype=torch.float64)
        w2 = P @ w + k / k.norm() * ((eye - P) @ w).norm()  # same W w, same norm, different w
        w3 = torch.linalg.svd(W).Vh[0]  # a w with a different W w (negative control)
        c = torch.randn(r, generator=g, dtype=torch.float64)

        def stat(ww: torch.Tensor, W: torch.Tensor = W, c: torch.Tensor = c) -> torch.Tensor:
            Wu = _uniform_orthogonal(ww, n, g) @ W.T
            return torch.cos(Wu @ c) + Wu[:, 0] ** 2 * Wu[:, -1] + (Wu**2).sum(-1)

        s1, s2, s3 = stat(w), stat(w2), stat(w3)
        p = {"d": d, "r": r, "n": n, "|w - w'|": float((w - w2).norm())}
        for other, name in ((s2, "equal W w"), (s3, "negative control: different W w")):
            diff = float(s1.mean() - other.mean())
            se = math.sqrt(float(s1.var()) / n + float(other.var()) / n)
            if name == "equal W w":
                out.append(
                    Evidence(
                        diff,
                        0.0,
                        "==",
                        "monte_carlo",
                        {**p, "pair": name},
                        ci=(diff - z * se, diff + z * se),
                        ci_level=level,
                        note="difference of E[stat(W u) | w] between w and w'",
                    )
                )
            else:
                out.append(
                    Evidence(
                        abs(diff),
                        _TINY,
                        ">=",
                        "monte_carlo",
                        {**p, "pair": name},
                        ci=(abs(diff) - z * se, abs(diff) + z * se),
                        ci_level=level,
                        note="the statistic detects a change of W w (test power)",
                    )
                )
    return out
