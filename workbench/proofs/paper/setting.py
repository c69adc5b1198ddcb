"""Claims about the setting of docs/paper.md §2: the samplers' laws and the attention classes."""

from __future__ import annotations

import torch

from workbench.core.sphere import make_generator, orthonormal_points, uniform_sphere
from workbench.models.attention import MultiHeadAttention
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.paper._mc import Z_999, bounded_mean_ci
from workbench.proofs.registry import claim

RESOLUTION = 0.05  # the mean checks resolve departures of 0.05 (half-width must be smaller)
RELATIVE_RESOLUTION = 0.1  # second moments 1/d: resolve 10 % of the value


@claim(
    "setting.sphere_law",
    "Uniform samples on S^{d-1} have unit norm, mean 0 and covariance I/d",
    "lemma",
    statement="E[y] = 0, E[y y^T] = I/d for y uniform on S^{d-1}",
    source="docs/paper.md §2 (distributions)",
)
@torch.no_grad()
def sphere_law(ctx: CheckContext) -> list[Evidence]:
    n = 20_000 if ctx.scale == "quick" else 200_000
    out: list[Evidence] = []
    for d in (2, 5, 16):
        y = uniform_sphere(n, d=d, generator=ctx.seed + d)
        norm_err = float((y.norm(dim=-1) - 1).abs().max())
        out.append(Evidence(norm_err, 0.0, "<=", "identity", {"d": d}, tolerance=1e-12))
        for name, s in (("mean", y[:, 0]), ("second_moment", y[:, 0] ** 2)):
            rng = (-1.0, 1.0) if name == "mean" else (0.0, 1.0)
            m, ci = bounded_mean_ci(s, rng, Z_999)
            bound = 0.0 if name == "mean" else 1.0 / d
            out.append(
                Evidence(
                    m,
                    bound,
                    "==",
                    "monte_carlo",
                    {"d": d, "statistic": name, "n": n},
                    ci=ci,
                    ci_level=0.999,
                    interval="bounded",
                    resolution=RESOLUTION if name == "mean" else RELATIVE_RESOLUTION / d,
                )
            )
    return out


@claim(
    "setting.dn_orthonormal",
    "D_N keys are orthonormal and each key is uniform on the sphere",
    "lemma",
    statement="x_i . x_j = delta_ij, E[x_i1^2] = 1/d",
    source="docs/paper.md §2 (D_N)",
)
@torch.no_grad()
def dn_orthonormal(ctx: CheckContext) -> list[Evidence]:
    n = 20_000 if ctx.scale == "quick" else 200_000
    out: list[Evidence] = []
    for d, N in ((2, 2), (5, 3), (16, 16)):
        X = orthonormal_points(n, N, d, generator=ctx.seed + 7 * d + N)
        gram_err = float((X @ X.transpose(1, 2) - torch.eye(N, dtype=X.dtype)).abs().max())
        out.append(Evidence(gram_err, 0.0, "<=", "identity", {"d": d, "N": N}, tolerance=1e-12))
        m, ci = bounded_mean_ci(X[:, -1, 0] ** 2, (0.0, 1.0))
        out.append(
            Evidence(
                m,
                1.0 / d,
                "==",
                "monte_carlo",
                {"d": d, "N": N, "n": n},
                ci=ci,
                ci_level=0.999,
                interval="bounded",
                resolution=RELATIVE_RESOLUTION / d,
            )
        )
    return out


@claim(
    "setting.generalized_covers_standard",
    "Standard rank-r multi-head attention is an instance of generalized attention (Eq. 2)",
    "lemma",
    statement="sum_h W_O^T W_V X softmax(X^T W_K^T W_Q y) = sum_h M_h X phi_h(W_h X, y)",
    source="docs/paper.md §2 (Eq. 2)",
)
@torch.no_grad()
def generalized_covers_standard(ctx: CheckContext) -> list[Evidence]:
    out: list[Evidence] = []
    gen = make_generator(ctx.seed)
    for d, r, H, N in ((2, 1, 2, 3), (8, 2, 4, 5), (16, 16, 1, 16)):
        for normalizer in ("softmax", "hardmax"):
            mha = MultiHeadAttention(
                d, r, H, models=3, normalizer=normalizer, generator=gen, dtype=torch.float64
            )
            X = uniform_sphere(256, N, d=d, generator=gen)
            y = uniform_sphere(256, d=d, generator=gen)
            diff = float((mha(X, y) - mha.to_generalized()(X, y)).abs().max())
            p = {"d": d, "r": r, "H": H, "N": N, "normalizer": normalizer}
            out.append(Evidence(diff, 0.0, "<=", "identity", p, tolerance=1e-10))
    return out
