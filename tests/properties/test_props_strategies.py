"""The exported strategies draw what they promise (workbench/strategies.py): the domains, unit
points, orthonormal frames, exact ties and the models' dtype."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from tests.properties.property_helpers import F64, scores
from workbench import strategies as S
from workbench.models.attention import GeneralizedAttention, MultiHeadAttention

pytestmark = pytest.mark.properties


@given(S.attention_configs(max_d=12, max_heads=8, max_n=12, orthonormal=True))
def test_configs_lie_in_the_domain(cfg: S.AttentionConfig) -> None:
    assert cfg.d >= 2 and 1 <= cfg.r <= cfg.d and cfg.H >= 1 and 1 <= cfg.N <= cfg.d


@given(S.bound_arguments(max_d=16, max_heads=1 << 14))
def test_bound_arguments_lie_in_the_domain(args: S.BoundArgs) -> None:
    assert args.d >= 2 and 1 <= args.r <= args.d
    assert 1 <= args.H <= 1 << 14 and 0 < args.eps <= 1


@given(st.data(), S.dims(max_d=9), st.integers(1, 6))
def test_sphere_points_and_frames_are_unit_and_orthonormal(data, d: int, count: int) -> None:
    P = data.draw(S.sphere_points(d, count, dtype=torch.float64))
    assert torch.allclose(P.norm(dim=-1), torch.ones(count, dtype=torch.float64), atol=1e-12)
    k = data.draw(st.integers(1, d))
    F = data.draw(S.orthonormal_frames(d, k, dtype=torch.float64))
    assert F.shape == (k, d)
    assert torch.allclose(F @ F.T, torch.eye(k, dtype=torch.float64), atol=1e-12)
    R = data.draw(S.rotations(d))
    assert torch.allclose(R.T @ R, torch.eye(d, dtype=torch.float64), atol=1e-12)


@given(st.data(), S.dims(max_d=8), st.integers(2, 6), st.sampled_from([torch.float32, F64]))
def test_tie_instances_tie_exactly(data, d: int, N: int, dtype: torch.dtype) -> None:
    X, y = data.draw(S.tie_instances(d, N, dtype=dtype))
    s = scores(X, y)
    assert X.dtype == y.dtype == dtype
    assert torch.equal(s[:, 0], s[:, 1])  # bit-equal scores
    assert torch.allclose(X.norm(dim=-1), torch.ones_like(X[..., 0]), atol=1e-6)


@given(
    st.data(),
    S.attention_configs(max_d=8, max_heads=4, max_n=6),
    st.sampled_from(["generalized", "standard"]),
)
def test_drawn_instances_feed_drawn_models(data, cfg: S.AttentionConfig, kind: str) -> None:
    """A first property test must not hit a dtype error (the models' dtype)."""
    X, y = data.draw(S.instances(cfg, batch=3))
    model = data.draw(S.attention_models(cfg, kind=kind))
    assert X.dtype == y.dtype == S.MODEL_DTYPE
    default = (GeneralizedAttention if kind == "generalized" else MultiHeadAttention)(cfg.d, 1, 1)
    assert next(default.parameters()).dtype == S.MODEL_DTYPE == next(model.parameters()).dtype
    out = model(X, y)
    assert out.shape == (1, 3, cfg.d) and torch.isfinite(out).all()


def test_the_readme_example_runs() -> None:
    """README, "Testing your own construction": the code runs and its properties pass."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = text.split("## Testing your own construction", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    tests = [f for name, f in ns.items() if name.startswith("test_")]
    assert len(tests) == 4
    for t in tests:
        t()
