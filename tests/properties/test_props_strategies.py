"""The exported strategies draw what they promise (workbench/strategies.py): the domains, unit
points, orthonormal frames, exact ties and the models' dtype."""

from __future__ import annotations

import sys
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import DeadlineExceeded

from tests.properties.property_helpers import F64, scores
from workbench import strategies as S
from workbench.hypothesis_profiles import load_profile
from workbench.models.attention import GeneralizedAttention, MultiHeadAttention
from workbench.testing import plant, scaled

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


def _readme_blocks() -> list[str]:
    """The code blocks of the README's section "Testing your own construction"."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = text.split("## Testing your own construction", 1)[1].split("\n## ", 1)[0]
    return [b.split("\n", 1)[1].split("```", 1)[0] for b in section.split("```")[1::2]]


def test_the_readme_example_runs() -> None:
    """README, "Testing your own construction": the code runs and its properties pass."""
    code = _readme_blocks()[0]
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    tests = [f for name, f in ns.items() if name.startswith("test_")]
    assert len(tests) == 4
    for t in tests:
        t()


def test_the_readme_failure_report_is_what_hypothesis_prints() -> None:
    """README: the report of the first property under the planted fault prints the seed call
    the README shows, and the README's pinned D_2 example and its replay run."""
    blocks = _readme_blocks()
    mod = types.ModuleType("readme_example")  # a module, so that plant reaches its import
    exec(compile(blocks[0], "README.md", "exec"), mod.__dict__)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, mod.__name__, mod)
        with plant("workbench.core.targets:nearest_neighbour", scaled(1.01)):
            with pytest.raises(AssertionError) as info:
                mod.test_my_head_is_the_nearest_neighbour()
    printed = _call_text("\n".join(info.value.__notes__), "instances_from_seed")
    shown = _call_text(blocks[1], "instances_from_seed")
    assert " ".join(printed.split()) == " ".join(shown.split()).replace(",)", ")")
    pinned: dict = {}
    exec(compile(blocks[2], "README.md", "exec"), pinned)
    pinned["test_d2_keys_are_orthonormal"]()
    assert torch.equal(pinned["X"], eval(printed, {"torch": torch, **vars(S)})[0])


# --- pinned configurations, D_2 / D_N instances ---------------------------------------------


@given(st.data())
def test_pinned_rank_and_n_are_kept_and_the_rest_is_drawn_around_them(data) -> None:
    cfg = data.draw(S.attention_configs(max_d=9, max_heads=8, max_n=9, rank=3, N=2))
    assert (cfg.r, cfg.N) == (3, 2) and 3 <= cfg.d <= 9 and 1 <= cfg.H <= 8


@given(st.data())
def test_pinned_d_heads_and_orthonormal_n(data) -> None:
    a = data.draw(S.attention_configs(max_d=9, orthonormal=True, d=4, heads=5))
    b = data.draw(S.attention_configs(max_d=9, orthonormal=True, N=6))
    assert a.d == 4 and a.H == 5 and 1 <= a.r <= 4 and 1 <= a.N <= 4
    assert b.N == 6 and 6 <= b.d <= 9 and 1 <= b.r <= b.d


@pytest.mark.parametrize("kw, msg", [
    ({"d": 3, "rank": 4}, "rank must be"),
    ({"d": 1}, "d must be"),
    ({"heads": 0}, "heads must be"),
    ({"N": 0}, "N must be"),
    ({"d": 3, "N": 4, "orthonormal": True}, "N must be"),
    ({"max_d": 4, "rank": 6}, "max_d must be"),
])
def test_bad_pins_are_refused_at_once(kw: dict, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        S.attention_configs(**kw)


@given(st.data(), S.attention_configs(max_d=8, max_heads=2, max_n=8, orthonormal=True))
def test_d2_and_dn_instances_have_orthonormal_keys(data, cfg: S.AttentionConfig) -> None:
    two = S.AttentionConfig(cfg.d, cfg.r, cfg.H, 2)
    for c, law in ((two, "D2"), (cfg, "D_N"), (cfg, "orthonormal")):
        X, y = data.draw(S.instances(c, batch=4, dtype=F64, law=law))
        assert X.shape == (4, c.N, c.d) and y.shape == (4, c.d)
        gram = X @ X.transpose(1, 2)
        assert torch.allclose(gram, torch.eye(c.N, dtype=F64).expand_as(gram), atol=1e-12)
        assert torch.allclose(y.norm(dim=-1), torch.ones(4, dtype=F64), atol=1e-12)


def test_iid_keys_are_not_orthonormal() -> None:
    X, _ = S.instances_from_seed(S.AttentionConfig(4, 1, 1, 2), batch=64, dtype=F64, seed=3)
    assert (X[:, 0] * X[:, 1]).sum(-1).abs().max() > 0.1


def test_instances_refuse_a_law_that_does_not_fit() -> None:
    with pytest.raises(ValueError, match="needs config.N == 2"):
        S.instances(S.AttentionConfig(4, 1, 1, 3), law="D2")
    with pytest.raises(ValueError, match="config.N must be"):
        S.instances(S.AttentionConfig(3, 1, 1, 4), law="D_N")
    with pytest.raises(ValueError, match="law must be one of"):
        S.instances(S.AttentionConfig(3, 1, 1, 2), law="gaussian")


# --- torch_settings and the active profile ---------------------------------------------------


@pytest.fixture
def profile() -> Iterator[Callable[..., None]]:
    """Load a temporary profile built on hypothesis's default one; the suite's comes back."""

    def load(**kw: object) -> None:
        settings.register_profile("props-tmp", settings.get_profile("default"), **kw)
        settings.load_profile("props-tmp")

    try:
        yield load
    finally:
        load_profile()


def test_torch_settings_take_the_active_profiles_examples(profile) -> None:
    profile(max_examples=7, derandomize=True)
    seen: list[int] = []

    @S.torch_settings
    @given(st.integers(0, 2**62))
    def prop(n: int) -> None:
        seen.append(n)

    prop()
    first = list(seen)
    seen.clear()
    prop()
    assert first == seen and 1 < len(first) <= 7  # the profile's bound, derandomized


def test_torch_settings_force_no_deadline(profile) -> None:
    profile(max_examples=1, database=None)  # hypothesis's 200 ms deadline

    def slow(n: int) -> None:
        time.sleep(0.3)  # over 1.25 x the deadline, which hypothesis allows while searching

    S.torch_settings(given(st.integers(0, 3))(slow))()  # no deadline: passes
    with pytest.raises(DeadlineExceeded):
        given(st.integers(0, 3))(slow)()  # the same property under the profile alone


# --- a failing property reports the seed that replays it ---------------------------------


def _call_text(report: str, name: str) -> str:
    """The first ``name(...)`` call in ``report``, with balanced parentheses."""
    start = report.index(name + "(")
    depth = 0
    for i in range(start, len(report)):
        depth += {"(": 1, ")": -1}.get(report[i], 0)
        if depth == 0 and report[i] == ")":
            return report[start:i + 1]
    raise AssertionError(f"unbalanced call in {report!r}")


def _first_key_is_small(batch: tuple[torch.Tensor, torch.Tensor]) -> None:
    X, _ = batch
    assert (X[:, 0, 0] < 0.9).all()


@pytest.mark.parametrize("strategy, name", [
    (S.attention_configs(max_d=4, max_n=3).flatmap(lambda c: S.instances(c, batch=16)),
     "instances_from_seed"),
    (S.dims(min_d=3, max_d=5).flatmap(lambda d: st.tuples(S.orthonormal_frames(d),
                                                          S.rotations(d))),
     "orthonormal_frame_from_seed"),
])
def test_a_failing_property_prints_the_seed_not_the_tensors(strategy, name: str) -> None:
    """hypothesis prints a drawn value as the ``*_from_seed`` call that built it (when the call
    is the shorter text, as it is for anything but a tiny tensor); evaluating the printed call
    gives back the failing input."""

    def check(case) -> None:
        if name == "instances_from_seed":
            _first_key_is_small(case)
        else:
            assert (case[0][0, 0] < 0.5).all()

    prop = settings(database=None, max_examples=200, phases=[Phase.generate])(  # no shrinking
        given(strategy)(check))
    with pytest.raises(AssertionError) as info:
        prop()
    report = "\n".join(getattr(info.value, "__notes__", []))
    assert "seed=" in report and "tensor(" not in report, report
    call = _call_text(report, name)
    replayed = eval(call, {"torch": torch, **vars(S)})  # the printed call is the input
    with pytest.raises(AssertionError):
        check(replayed if name == "instances_from_seed" else (replayed, None))
