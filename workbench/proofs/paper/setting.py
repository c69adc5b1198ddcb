"""Claims about the setting (docs/paper.md, "The setting"): the samplers' laws and the attention
classes.

Its test: ``tests/claims/test_setting.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

if TYPE_CHECKING:
    import torch


RESOLUTION = 0.05  # the mean checks resolve departures of 0.05 (half-width must be smaller)
RELATIVE_RESOLUTION = 0.1  # second moments 1/d: resolve 10 % of the value
LAWS = "paper.md#laws-of-the-inputs"


def _moment(values: torch.Tensor, bounds: tuple[float, float], expected: float,
            resolution: float, params: dict[str, object]) -> Evidence:
    """A sampled moment equal to ``expected`` (``bounded`` interval at 99.9 %)."""
    from workbench.core.montecarlo import sample_mean
    est = sample_mean(values, 0.999, "bounded", bounds)
    return Evidence.estimate(est, "==", expected, params=params, resolution=resolution)


@claim(
    "setting.sphere_law",
    "Uniform samples on S^{d-1} have unit norm, mean 0 and covariance I/d",
    "lemma",
    statement="E[y] = 0, E[y y^T] = I/d for y uniform on S^{d-1}",
    ref=LAWS, mark="paper", no_grad=True,
)
def sphere_law(ctx: CheckContext) -> list[Evidence]:
    """Unit norms exactly; the mean and second moment of the first coordinate by Monte Carlo."""
    from workbench.core.sphere import uniform_sphere
    n = ctx.pick(20_000, 200_000)
    out: list[Evidence] = []
    for d in (2, 5, 16):
        y = uniform_sphere(n, d=d, generator=ctx.seed + d)
        norm_err = float((y.norm(dim=-1) - 1).abs().max())
        out.append(Evidence.identity(norm_err, {"d": d}, tolerance=1e-12))
        out.append(_moment(y[:, 0], (-1.0, 1.0), 0.0, RESOLUTION,
                           {"d": d, "statistic": "mean", "n": n}))
        out.append(_moment(y[:, 0] ** 2, (0.0, 1.0), 1.0 / d, RELATIVE_RESOLUTION / d,
                           {"d": d, "statistic": "second_moment", "n": n}))
    return out


@claim(
    "setting.dn_orthonormal",
    "D_N keys are orthonormal and each key is uniform on the sphere",
    "lemma",
    statement="x_i . x_j = delta_ij, E[x_i1^2] = 1/d",
    ref=LAWS, mark="paper", no_grad=True,
)
def dn_orthonormal(ctx: CheckContext) -> list[Evidence]:
    """Gram matrices equal to I up to rounding; the last key (the end of the orthogonalisation)
    still has ``E[x_1^2] = 1/d``, by Monte Carlo."""
    import torch

    from workbench.core.sphere import orthonormal_points
    n = ctx.pick(20_000, 200_000)
    out: list[Evidence] = []
    for d, N in ((2, 2), (5, 3), (16, 16)):
        X = orthonormal_points(n, N, d, generator=ctx.seed + 7 * d + N)
        gram_err = float((X @ X.transpose(1, 2) - torch.eye(N, dtype=X.dtype)).abs().max())
        out.append(Evidence.identity(gram_err, {"d": d, "N": N}, tolerance=1e-12))
        out.append(_moment(X[:, -1, 0] ** 2, (0.0, 1.0), 1.0 / d, RELATIVE_RESOLUTION / d,
                           {"d": d, "N": N, "n": n}))
    return out


@claim(
    "setting.generalized_covers_standard",
    "Standard rank-r multi-head attention is an instance of generalized attention (Eq. 2)",
    "lemma",
    statement="sum_h W_O^T W_V X softmax(X^T W_K^T W_Q y) = sum_h M_h X phi_h(W_h X, y)",
    ref="paper.md#generalized-attention-the-papers-eq-2", mark="paper", no_grad=True,
)
def generalized_covers_standard(ctx: CheckContext) -> list[Evidence]:
    """Random standard layers (softmax and hardmax, three stacked models) and their Eq. 2 form
    ``to_generalized()`` agree on random inputs."""
    import torch

    from workbench.core.sphere import make_generator, uniform_sphere
    from workbench.models.attention import MultiHeadAttention
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
            out.append(Evidence.identity(diff, p, tolerance=1e-10))
    return out
