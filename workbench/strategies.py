"""Hypothesis strategies over dimension, rank, heads, sequence length, points and models.

Exported so users can property-test their own constructions (README, "Testing your own
construction"). Everything here draws small, valid arguments and favours the edges where
theorems and code break: ``d = 2, 3, 5``, ``r = d - 1``, ``r = d``, ``N = 1``, ``N = d``, ties.
Tensors come in the dtype the models use by default (``MODEL_DTYPE``, float32) unless a
``dtype`` is given, so a drawn batch can be fed straight to a drawn model::

    from hypothesis import given
    from workbench.strategies import attention_configs, torch_settings

    @torch_settings
    @given(attention_configs(max_d=16))
    def test_mine(cfg): ...

Torch-backed properties should use :data:`torch_settings` (or the profile ``TORCH_PROFILE``): the
first call of a torch kernel is slow, and hypothesis's default 200 ms deadline fails it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from workbench.core.sphere import make_generator, orthonormal_points, sample_instances
from workbench.models.attention import GeneralizedAttention, MultiHeadAttention

__all__ = [
    "MODEL_DTYPE",
    "TORCH_PROFILE",
    "AttentionConfig",
    "BoundArgs",
    "attention_configs",
    "attention_models",
    "bound_arguments",
    "dims",
    "dims_and_ranks",
    "epsilons",
    "heads",
    "instances",
    "near_tie_instances",
    "orthonormal_frames",
    "ranks",
    "rotations",
    "seeds",
    "seq_lengths",
    "sphere_points",
    "temperatures",
    "tie_instances",
    "torch_settings",
]

MODEL_DTYPE: torch.dtype = torch.float32
"""The default parameter dtype of ``GeneralizedAttention`` and ``MultiHeadAttention``."""

TORCH_PROFILE = "workbench-torch"
"""Name of a registered hypothesis profile for torch-backed properties (no deadline)."""

settings.register_profile(
    TORCH_PROFILE,
    deadline=None,
    max_examples=50,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
torch_settings: settings = settings.get_profile(TORCH_PROFILE)
"""Settings decorator for torch-backed properties: no deadline (a first torch call is slow),
and no ``too_slow`` health check. Example: ``@torch_settings`` above ``@given(...)``."""


@dataclass(frozen=True)
class AttentionConfig:
    """A point ``(d, r, H, N)`` of the parameter domain (``1 <= r <= d``, ``N >= 1``)."""

    d: int
    r: int
    H: int
    N: int


@dataclass(frozen=True)
class BoundArgs:
    """Arguments ``(d, r, H, eps)`` of the lower bound (``1 <= r <= d``, ``0 < eps <= 1``)."""

    d: int
    r: int
    H: int
    eps: float


def dims(min_d: int = 2, max_d: int = 32) -> st.SearchStrategy[int]:
    """Ambient dimension ``d >= 2``, favouring 2, 3 and 5.

    Example: ``dims(max_d=8).example()`` might be ``3``.
    """
    lo = max(2, min_d)
    if max_d < lo:
        raise ValueError(f"max_d must be an integer >= {lo} (got {max_d})")
    edge = [v for v in (2, 3, 5, max_d) if lo <= v <= max_d]
    return st.one_of(st.sampled_from(edge), st.integers(min_value=lo, max_value=max_d))


def ranks(d: int) -> st.SearchStrategy[int]:
    """Rank ``r`` in ``1..d``, with the edge cases 1, d-1 and d favoured.

    Example: ``ranks(5).example()`` might be ``4``.
    """
    edge = sorted({1, max(1, d - 1), d})
    return st.one_of(st.sampled_from(edge), st.integers(1, d))


def dims_and_ranks(
    min_d: int = 2, max_d: int = 32, max_r: int | None = None
) -> st.SearchStrategy[tuple[int, int]]:
    """Pairs ``(d, r)`` with ``1 <= r <= min(d, max_r)``, edges favoured.

    Example: ``dims_and_ranks(max_d=6).example()`` might be ``(5, 4)``.
    """

    def with_rank(d: int) -> st.SearchStrategy[tuple[int, int]]:
        top = d if max_r is None else max(1, min(d, max_r))
        return ranks(top).map(lambda r: (d, r))

    return dims(min_d, max_d).flatmap(with_rank)


def heads(max_heads: int = 64) -> st.SearchStrategy[int]:
    """Head count ``H >= 1``, favouring 1 and ``max_heads``.

    Example: ``heads(16).example()`` might be ``1``.
    """
    return st.one_of(st.sampled_from(sorted({1, max_heads})), st.integers(1, max_heads))


def seq_lengths(max_n: int = 32) -> st.SearchStrategy[int]:
    """Number of keys ``N >= 1``, with 1, 2 and ``max_n`` favoured (the paper's N = 2 theorems).

    Example: ``seq_lengths(8).example()`` might be ``2``.
    """
    return st.one_of(st.sampled_from(sorted({1, min(2, max_n), max_n})), st.integers(1, max_n))


def temperatures(max_beta: float = 1e4) -> st.SearchStrategy[float]:
    """Finite inverse temperatures in ``[0, max_beta]``, including 0 and ``max_beta``.

    Example: ``temperatures(100.0).example()`` might be ``0.0``.
    """
    return st.one_of(
        st.sampled_from([0.0, float(max_beta)]),
        st.floats(0.0, max_beta, allow_nan=False, allow_infinity=False),
    )


def epsilons(min_eps: float = 1e-3, max_eps: float = 1.0) -> st.SearchStrategy[float]:
    """Target accuracies ``eps`` in ``[min_eps, max_eps]`` (``0 < eps <= 1``), ends included.

    Example: ``epsilons().example()`` might be ``1.0``.
    """
    if not 0 < min_eps <= max_eps <= 1:
        raise ValueError(f"min_eps, max_eps must satisfy 0 < min_eps <= max_eps <= 1 "
                         f"(got {min_eps}, {max_eps})")
    return st.one_of(
        st.sampled_from([min_eps, max_eps]),
        st.floats(min_eps, max_eps, allow_nan=False, allow_infinity=False),
    )


def seeds() -> st.SearchStrategy[int]:
    """Seeds for ``workbench.core.sphere`` samplers.

    Example: ``seeds().example()`` might be ``1234``.
    """
    return st.integers(0, 2**31 - 1)


@st.composite
def attention_configs(
    draw: st.DrawFn,
    max_d: int = 32,
    max_heads: int = 64,
    max_n: int = 32,
    orthonormal: bool = False,
    min_d: int = 2,
) -> AttentionConfig:
    """``(d, r, H, N)``; with ``orthonormal=True``, ``N <= d`` so that ``D_N`` exists.

    Example: ``attention_configs(max_d=8, orthonormal=True).example()`` might be
    ``AttentionConfig(d=5, r=4, H=1, N=5)``.
    """
    d = draw(dims(min_d=min_d, max_d=max_d))
    r = draw(ranks(d))
    H = draw(heads(max_heads))
    N = draw(seq_lengths(min(d, max_n) if orthonormal else max_n))
    return AttentionConfig(d, r, H, N)


@st.composite
def bound_arguments(
    draw: st.DrawFn,
    max_d: int = 24,
    max_heads: int = 1 << 14,
    min_eps: float = 1e-3,
) -> BoundArgs:
    """``(d, r, H, eps)`` inside and at the edges of the lower bound's domain.

    Edges: ``d = 2, 3``, ``r = 1, d - 1, d`` (the bound is 0 for ``r >= d - 1``), ``H = 1`` and
    ``H = max_heads``, ``eps = min_eps`` and 1; heads are drawn log-uniformly.

    Example: ``bound_arguments(max_d=8).example()`` might be ``BoundArgs(3, 2, 1, 1.0)``.
    """
    d, r = draw(dims_and_ranks(max_d=max_d))
    log_h = draw(st.floats(0.0, math.log2(max_heads)))
    H = draw(st.one_of(st.sampled_from(sorted({1, max_heads})), st.just(int(2**log_h))))
    eps = draw(epsilons(min_eps, 1.0))
    return BoundArgs(d, r, max(1, min(H, max_heads)), eps)


@st.composite
def sphere_points(
    draw: st.DrawFn, d: int, count: int = 1, dtype: torch.dtype = MODEL_DTYPE
) -> torch.Tensor:
    """``count`` i.i.d. uniform points on ``S^{d-1}``: shape ``(count, d)``, unit rows.

    Example: ``sphere_points(3, count=2).example()`` is a ``(2, 3)`` float32 tensor.
    """
    g = make_generator(draw(seeds()))
    z = torch.randn(count, d, generator=g, dtype=torch.float64)
    return (z / z.norm(dim=-1, keepdim=True)).to(dtype)


@st.composite
def orthonormal_frames(
    draw: st.DrawFn, d: int, k: int | None = None, dtype: torch.dtype = MODEL_DTYPE
) -> torch.Tensor:
    """A Haar-random orthonormal ``k``-frame in ``R^d`` (``k <= d``, default ``d``): ``(k, d)``.

    Example: ``orthonormal_frames(4, 2).example()`` is a ``(2, 4)`` tensor with orthonormal rows.
    """
    k = d if k is None else k
    return orthonormal_points(1, k, d, generator=draw(seeds()))[0].to(dtype)


@st.composite
def rotations(draw: st.DrawFn, d: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """A Haar-random orthogonal ``d x d`` matrix (a rotation or a reflection).

    Example: ``R = rotations(3).example()``; then ``R @ R.T`` is the identity.
    """
    return draw(orthonormal_frames(d, d, dtype=dtype))


@st.composite
def instances(
    draw: st.DrawFn,
    config: AttentionConfig,
    batch: int = 8,
    points: str = "iid",
    dtype: torch.dtype = MODEL_DTYPE,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A seeded batch ``(X, y)`` for ``config``: ``X`` ``(batch, N, d)``, ``y`` ``(batch, d)``.

    ``dtype`` defaults to the models' dtype, so ``model(X, y)`` works as drawn.

    Example: ``instances(AttentionConfig(4, 2, 1, 3)).example()`` is a pair of float32 tensors.
    """
    seed = draw(seeds())
    return sample_instances(batch, config.N, config.d, points=points, generator=seed, dtype=dtype)  # type: ignore[arg-type]


@st.composite
def tie_instances(
    draw: st.DrawFn, d: int, N: int, batch: int = 4, dtype: torch.dtype = MODEL_DTYPE
) -> tuple[torch.Tensor, torch.Tensor]:
    """Batches with an *exact* tie: keys 0 and 1 have bit-equal inner products with the query.

    The query's last coordinate is 0 and ``x_1`` is ``x_0`` with its last coordinate negated, so
    the two dot products have the same terms (``N >= 2``; also exact after a cast to ``dtype``).

    Example: ``tie_instances(3, 2).example()`` gives ``X (4, 2, 3)``, ``y (4, 3)``.
    """
    if N < 2:
        raise ValueError(f"N must be an integer >= 2 for a tie (got {N})")
    X, y = sample_instances(batch, N, d, generator=draw(seeds()), dtype=torch.float64)
    y = y.clone()
    y[:, -1] = 0.0
    y = y / y.norm(dim=-1, keepdim=True)
    X = X.clone()
    X[:, 1] = X[:, 0]
    X[:, 1, -1] = -X[:, 0, -1]
    return X.to(dtype), y.to(dtype)


@st.composite
def near_tie_instances(
    draw: st.DrawFn,
    d: int,
    N: int,
    batch: int = 4,
    max_gap: float = 1e-6,
    dtype: torch.dtype = MODEL_DTYPE,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Batches whose two best keys are within ``gap <= max_gap`` (``N >= 2``), ``gap`` drawn.

    Example: ``near_tie_instances(5, 3).example()`` gives keys 0 and 1 nearly tied.
    """
    X, y = draw(tie_instances(d, N, batch, dtype=torch.float64))
    gap = draw(st.floats(0.0, max_gap))
    X = X.clone()
    x1 = X[:, 1] + gap * y
    X[:, 1] = x1 / x1.norm(dim=-1, keepdim=True)
    return X.to(dtype), y.to(dtype)


@st.composite
def attention_models(
    draw: st.DrawFn,
    config: AttentionConfig,
    kind: str = "generalized",
    normalizer: str | None = None,
    dtype: torch.dtype = MODEL_DTYPE,
) -> GeneralizedAttention | MultiHeadAttention:
    """A seeded attention layer for ``config`` (``kind``: ``generalized`` or ``standard``).

    ``normalizer`` (``softmax``/``hardmax``) is drawn when not given. Parameters are in ``dtype``
    (by default the models' own float32).

    Example: ``attention_models(AttentionConfig(4, 2, 3, 2)).example()(X, y)`` with ``X, y``
    from :func:`instances` for the same config.
    """
    if kind not in ("generalized", "standard"):
        raise ValueError(f"kind must be one of 'generalized', 'standard' (got {kind!r})")
    norm = normalizer or draw(st.sampled_from(["softmax", "hardmax"]))
    g = make_generator(draw(seeds()))
    if kind == "standard":
        return MultiHeadAttention(config.d, config.r, config.H, normalizer=norm, generator=g,
                                  dtype=dtype)
    return GeneralizedAttention(config.d, config.r, config.H, normalizer=norm, generator=g,
                                dtype=dtype)
