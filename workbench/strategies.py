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

Torch-backed properties should use :func:`torch_settings`: the first call of a torch kernel is
slow, and hypothesis's default 200 ms deadline fails it. The profiles ``ci`` and ``thorough``
ship in ``workbench.hypothesis_profiles`` (``load_profile()`` reads ``HYPOTHESIS_PROFILE``).

Every strategy that draws tensors or a model draws one seed and builds the value from it with
``st.builds`` of a public ``*_from_seed`` function (``instances_from_seed``, ...), so a failing
property's report prints that call, seed included, instead of the tensors; pasting it replays
the failing input::

    Falsifying example: test_mine(
        batch=instances_from_seed(AttentionConfig(d=2, r=1, H=1, N=2), batch=16,
                                  points='iid', dtype=torch.float32, seed=1234),
    )
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import torch
from hypothesis import settings
from hypothesis import strategies as st

from workbench.core.sphere import make_generator, orthonormal_points, sample_instances
from workbench.core.validation import check_choice, check_int, check_orthonormal_keys
from workbench.hypothesis_profiles import SLOW_OK
from workbench.models.attention import GeneralizedAttention, MultiHeadAttention

__all__ = [
    "MODEL_DTYPE",
    "TORCH_PROFILE",
    "AttentionConfig",
    "BoundArgs",
    "attention_configs",
    "attention_model_from_seed",
    "attention_models",
    "bound_arguments",
    "dims",
    "dims_and_ranks",
    "epsilons",
    "heads",
    "instances",
    "instances_from_seed",
    "near_tie_instances",
    "near_tie_instances_from_seed",
    "orthonormal_frame_from_seed",
    "orthonormal_frames",
    "ranks",
    "rotation_from_seed",
    "rotations",
    "seeds",
    "seq_lengths",
    "sphere_points",
    "sphere_points_from_seed",
    "temperatures",
    "tie_instances",
    "tie_instances_from_seed",
    "torch_settings",
]

MODEL_DTYPE: torch.dtype = torch.float32
"""The default parameter dtype of ``GeneralizedAttention`` and ``MultiHeadAttention``."""

TORCH_PROFILE = "workbench-torch"
"""Name of a registered hypothesis profile for torch-backed properties: hypothesis's ``default``
profile with 50 examples and no deadline (``settings.load_profile(TORCH_PROFILE)``)."""

settings.register_profile(TORCH_PROFILE, settings.get_profile("default"), deadline=None,
                          max_examples=50, suppress_health_check=SLOW_OK)

T = TypeVar("T", bound=Callable[..., object])


def torch_settings(test: T) -> T:
    """Settings decorator for torch-backed properties (``@torch_settings`` above ``@given``).

    The property runs under the hypothesis profile that is active when it is decorated (its
    examples, derandomization and database: ``ci`` and ``thorough`` of
    ``workbench.hypothesis_profiles``, or your own), with ``deadline=None`` forced, since a
    first torch call is slow, and the ``too_slow``/``data_too_large`` health checks added to
    those it already switches off. Nothing is fixed when this module is imported, so the
    examples do not depend on the order of imports."""
    active = settings()
    quiet = tuple(dict.fromkeys((*active.suppress_health_check, *SLOW_OK)))
    return settings(active, deadline=None, suppress_health_check=quiet)(test)


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


def attention_configs(
    max_d: int = 32,
    max_heads: int = 64,
    max_n: int = 32,
    orthonormal: bool = False,
    min_d: int = 2,
    *,
    d: int | None = None,
    rank: int | None = None,
    heads: int | None = None,
    N: int | None = None,
) -> st.SearchStrategy[AttentionConfig]:
    """``(d, r, H, N)``; with ``orthonormal=True``, ``N <= d`` so that ``D_N`` exists.

    ``d``, ``rank``, ``heads`` and ``N`` pin what you fix: the rest is drawn around it (a pinned
    rank draws ``d >= rank``, a pinned N with ``orthonormal=True`` draws ``d >= N``). Bad pins
    raise ``ValueError`` at once.

    Example: ``attention_configs(max_d=8, orthonormal=True).example()`` might be
    ``AttentionConfig(d=5, r=4, H=1, N=5)``; ``attention_configs(rank=1, N=2)`` draws rank-1
    configurations on two keys.
    """
    if d is not None:
        d = check_int("d", d, lo=2)
    if rank is not None:
        rank = check_int("rank", rank, lo=1, hi=d)
    if heads is not None:
        heads = check_int("heads", heads, lo=1)
    if N is not None:
        N = check_int("N", N, lo=1)
        if orthonormal and d is not None:
            check_orthonormal_keys("orthonormal", N, d)
    lo = max(min_d, rank or 1, N if orthonormal and N is not None else 1)
    if d is None and max_d < max(2, lo):
        raise ValueError(f"max_d must be an integer >= {max(2, lo)} for the pinned rank and N "
                         f"(got {max_d})")
    return _configs(d, rank, heads, N, lo, max_d, max_heads, max_n, orthonormal)


@st.composite
def _configs(draw: st.DrawFn, d: int | None, rank: int | None, heads_: int | None,
             N: int | None, min_d: int, max_d: int, max_heads: int, max_n: int,
             orthonormal: bool) -> AttentionConfig:
    """The draws of ``attention_configs``, in the order d, r, H, N (pinned ones skipped)."""
    d = draw(dims(min_d=min_d, max_d=max_d)) if d is None else d
    r = draw(ranks(d)) if rank is None else rank
    H = draw(heads(max_heads)) if heads_ is None else heads_
    if N is None:
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


def sphere_points_from_seed(
    d: int, count: int = 1, dtype: torch.dtype = MODEL_DTYPE, *, seed: int
) -> torch.Tensor:
    """The points :func:`sphere_points` draws with ``seed``: ``(count, d)``, unit rows."""
    g = make_generator(seed)
    z = torch.randn(count, d, generator=g, dtype=torch.float64)
    return (z / z.norm(dim=-1, keepdim=True)).to(dtype)


def sphere_points(
    d: int, count: int = 1, dtype: torch.dtype = MODEL_DTYPE
) -> st.SearchStrategy[torch.Tensor]:
    """``count`` i.i.d. uniform points on ``S^{d-1}``: shape ``(count, d)``, unit rows.

    Example: ``sphere_points(3, count=2).example()`` is a ``(2, 3)`` float32 tensor.
    """
    return st.builds(sphere_points_from_seed, st.just(d), count=st.just(count),
                     dtype=st.just(dtype), seed=seeds())


def orthonormal_frame_from_seed(
    d: int, k: int | None = None, dtype: torch.dtype = MODEL_DTYPE, *, seed: int
) -> torch.Tensor:
    """The frame :func:`orthonormal_frames` draws with ``seed``: ``(k, d)``, orthonormal rows."""
    k = d if k is None else k
    return orthonormal_points(1, k, d, generator=seed)[0].to(dtype)


def orthonormal_frames(
    d: int, k: int | None = None, dtype: torch.dtype = MODEL_DTYPE
) -> st.SearchStrategy[torch.Tensor]:
    """A Haar-random orthonormal ``k``-frame in ``R^d`` (``k <= d``, default ``d``): ``(k, d)``.

    Example: ``orthonormal_frames(4, 2).example()`` is a ``(2, 4)`` tensor with orthonormal rows.
    """
    return st.builds(orthonormal_frame_from_seed, st.just(d), k=st.just(k), dtype=st.just(dtype),
                     seed=seeds())


def rotation_from_seed(d: int, dtype: torch.dtype = torch.float64, *, seed: int) -> torch.Tensor:
    """The matrix :func:`rotations` draws with ``seed``."""
    return orthonormal_frame_from_seed(d, d, dtype, seed=seed)


def rotations(d: int, dtype: torch.dtype = torch.float64) -> st.SearchStrategy[torch.Tensor]:
    """A Haar-random orthogonal ``d x d`` matrix (a rotation or a reflection).

    Example: ``R = rotations(3).example()``; then ``R @ R.T`` is the identity.
    """
    return st.builds(rotation_from_seed, st.just(d), dtype=st.just(dtype), seed=seeds())


POINT_NAMES: dict[str, str] = {"iid": "iid", "orthonormal": "orthonormal", "D_N": "orthonormal",
                               "DN": "orthonormal", "D2": "orthonormal", "D_2": "orthonormal"}
"""What ``instances(..., law=...)`` accepts: ``iid`` keys, or orthonormal ones (``D_N``; ``D2``
and ``D_2`` also ask for ``N = 2``), and the point law of ``workbench.core.sphere`` each means."""


def instances_from_seed(
    config: AttentionConfig,
    batch: int = 8,
    points: str = "iid",
    dtype: torch.dtype = MODEL_DTYPE,
    *,
    seed: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The batch :func:`instances` draws with ``seed``: ``X`` ``(batch, N, d)``, ``y``
    ``(batch, d)`` (``points``: ``iid`` or ``orthonormal``, uniform queries)."""
    return sample_instances(batch, config.N, config.d, points=points, generator=seed,  # type: ignore[arg-type]
                            dtype=dtype)


def instances(
    config: AttentionConfig,
    batch: int = 8,
    points: str = "iid",
    dtype: torch.dtype = MODEL_DTYPE,
    *,
    law: str | None = None,
) -> st.SearchStrategy[tuple[torch.Tensor, torch.Tensor]]:
    """A seeded batch ``(X, y)`` for ``config``: ``X`` ``(batch, N, d)``, ``y`` ``(batch, d)``.

    ``points`` (``iid`` or ``orthonormal``) or ``law`` (a key of ``POINT_NAMES``: ``law="D2"``
    is the paper's ``D_2``, two orthonormal keys and a uniform query; ``law="D_N"`` orthonormal
    keys for any ``N <= d``) say how the keys are drawn; queries are uniform. ``dtype`` defaults
    to the models' dtype, so ``model(X, y)`` works as drawn.

    Example: ``instances(AttentionConfig(4, 2, 1, 3)).example()`` is a pair of float32 tensors.
    """
    if law is not None:
        check_choice("law", law, tuple(POINT_NAMES))
        if law in ("D2", "D_2") and config.N != 2:
            raise ValueError(f"law {law!r} needs config.N == 2 (got N = {config.N}); use "
                             "law='D_N' for other N")
        points = POINT_NAMES[law]
    check_choice("points", points, ("iid", "orthonormal"))
    if points == "orthonormal":
        check_orthonormal_keys(points, config.N, config.d, "config.N")
    return st.builds(instances_from_seed, st.just(config), batch=st.just(batch),
                     points=st.just(points), dtype=st.just(dtype), seed=seeds())


def tie_instances_from_seed(
    d: int, N: int, batch: int = 4, dtype: torch.dtype = MODEL_DTYPE, *, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The tied batch :func:`tie_instances` draws with ``seed``."""
    X, y = sample_instances(batch, N, d, generator=seed, dtype=torch.float64)
    y = y.clone()
    y[:, -1] = 0.0
    y = y / y.norm(dim=-1, keepdim=True)
    X = X.clone()
    X[:, 1] = X[:, 0]
    X[:, 1, -1] = -X[:, 0, -1]
    return X.to(dtype), y.to(dtype)


def tie_instances(
    d: int, N: int, batch: int = 4, dtype: torch.dtype = MODEL_DTYPE
) -> st.SearchStrategy[tuple[torch.Tensor, torch.Tensor]]:
    """Batches with an *exact* tie: keys 0 and 1 have bit-equal inner products with the query.

    The query's last coordinate is 0 and ``x_1`` is ``x_0`` with its last coordinate negated, so
    the two dot products have the same terms (``N >= 2``; also exact after a cast to ``dtype``).

    Example: ``tie_instances(3, 2).example()`` gives ``X (4, 2, 3)``, ``y (4, 3)``.
    """
    if N < 2:
        raise ValueError(f"N must be an integer >= 2 for a tie (got {N})")
    return st.builds(tie_instances_from_seed, st.just(d), st.just(N), batch=st.just(batch),
                     dtype=st.just(dtype), seed=seeds())


def near_tie_instances_from_seed(
    d: int, N: int, batch: int = 4, dtype: torch.dtype = MODEL_DTYPE, *, seed: int, gap: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """The nearly tied batch :func:`near_tie_instances` draws with ``seed`` and ``gap``."""
    X, y = tie_instances_from_seed(d, N, batch, torch.float64, seed=seed)
    X = X.clone()
    x1 = X[:, 1] + gap * y
    X[:, 1] = x1 / x1.norm(dim=-1, keepdim=True)
    return X.to(dtype), y.to(dtype)


def near_tie_instances(
    d: int,
    N: int,
    batch: int = 4,
    max_gap: float = 1e-6,
    dtype: torch.dtype = MODEL_DTYPE,
) -> st.SearchStrategy[tuple[torch.Tensor, torch.Tensor]]:
    """Batches whose two best keys are within ``gap <= max_gap`` (``N >= 2``), ``gap`` drawn.

    Example: ``near_tie_instances(5, 3).example()`` gives keys 0 and 1 nearly tied.
    """
    if N < 2:
        raise ValueError(f"N must be an integer >= 2 for a tie (got {N})")
    return st.builds(near_tie_instances_from_seed, st.just(d), st.just(N), batch=st.just(batch),
                     dtype=st.just(dtype), seed=seeds(), gap=st.floats(0.0, max_gap))


def attention_model_from_seed(
    config: AttentionConfig,
    kind: str = "generalized",
    normalizer: str = "softmax",
    dtype: torch.dtype = MODEL_DTYPE,
    *,
    seed: int,
) -> GeneralizedAttention | MultiHeadAttention:
    """The layer :func:`attention_models` draws with ``seed``."""
    g = make_generator(seed)
    if kind == "standard":
        return MultiHeadAttention(config.d, config.r, config.H, normalizer=normalizer,
                                  generator=g, dtype=dtype)
    return GeneralizedAttention(config.d, config.r, config.H, normalizer=normalizer, generator=g,
                                dtype=dtype)


def attention_models(
    config: AttentionConfig,
    kind: str = "generalized",
    normalizer: str | None = None,
    dtype: torch.dtype = MODEL_DTYPE,
) -> st.SearchStrategy[GeneralizedAttention | MultiHeadAttention]:
    """A seeded attention layer for ``config`` (``kind``: ``generalized`` or ``standard``).

    ``normalizer`` (``softmax``/``hardmax``) is drawn when not given. Parameters are in ``dtype``
    (by default the models' own float32).

    Example: ``attention_models(AttentionConfig(4, 2, 3, 2)).example()(X, y)`` with ``X, y``
    from :func:`instances` for the same config.
    """
    if kind not in ("generalized", "standard"):
        raise ValueError(f"kind must be one of 'generalized', 'standard' (got {kind!r})")
    norm = st.just(normalizer) if normalizer else st.sampled_from(["softmax", "hardmax"])
    return st.builds(attention_model_from_seed, st.just(config), kind=st.just(kind),
                     normalizer=norm, dtype=st.just(dtype), seed=seeds())
