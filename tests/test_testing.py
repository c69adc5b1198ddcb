"""``workbench.testing``: ``plant`` replaces a name wherever it is bound and restores all of it,
the wraps change what they say and nothing else, ``edited`` refuses an ambiguous edit, and
``property_fails`` tells a failing property from a passing one."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from types import ModuleType

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from workbench import testing
from workbench.core.harmonics import dim_harmonics
from workbench.strategies import torch_settings

_SOURCE = '''
from functools import lru_cache

from hypothesis import strategies as st


def f(x):
    return x + 1


def calls_f(x):
    return f(x)


@lru_cache(maxsize=None)
def cached(x):
    return 2 * x


@st.composite
def pairs(draw):
    a = draw(st.integers(0, 9))
    return a, a


class Base:
    def method(self):
        return "base"


class Thing(Base):
    @staticmethod
    def helper(x):
        return x - 1

    def own(self, x):
        return x
'''

_USER = '''
from fault_source import f, pairs


def use(x):
    return f(x)
'''


@pytest.fixture
def mods(tmp_path, monkeypatch) -> Iterator[tuple[ModuleType, ModuleType]]:
    """A module defining the targets, and one that imports ``f`` and ``pairs`` by name."""
    (tmp_path / "fault_source.py").write_text(textwrap.dedent(_SOURCE))
    (tmp_path / "fault_user.py").write_text(textwrap.dedent(_USER))
    monkeypatch.syspath_prepend(str(tmp_path))
    src, user = importlib.import_module("fault_source"), importlib.import_module("fault_user")
    yield src, user
    for name in ("fault_source", "fault_user"):
        sys.modules.pop(name, None)


# --- plant ------------------------------------------------------------------------------------


def test_plant_reaches_from_imports_and_restores_every_binding(mods) -> None:
    src, user = mods
    orig = src.f
    with testing.plant("fault_source:f", testing.scaled(10)) as faulty:
        assert src.f is faulty and user.f is faulty
        assert src.calls_f(1) == 20 and user.use(1) == 20
    assert src.f is orig and user.f is orig
    assert src.calls_f(1) == 2 and user.use(1) == 2


def test_plant_restores_on_an_exception(mods) -> None:
    src, user = mods
    orig = src.f
    with pytest.raises(RuntimeError, match="inside"), \
            testing.plant("fault_source:f", testing.replaced(abs)):
        assert user.f is abs
        raise RuntimeError("inside")
    assert src.f is orig and user.f is orig


def test_nested_plants_of_one_name_unwind_in_order(mods) -> None:
    src, user = mods
    with testing.plant("fault_source:f", testing.scaled(2)):
        with testing.plant("fault_source:f", testing.scaled(3)):
            assert user.use(1) == 12
        assert user.use(1) == 4
    assert user.use(1) == 2


def test_plant_on_a_class_restores_an_inherited_attribute_by_removing_it(mods) -> None:
    src, _ = mods
    with testing.plant("fault_source:Thing.method", testing.replaced(lambda self: "fault")):
        assert src.Thing().method() == "fault"
        assert src.Base().method() == "base"
    assert "method" not in vars(src.Thing)
    assert src.Thing().method() == "base"


def test_plant_on_a_class_keeps_a_static_method_static(mods) -> None:
    src, _ = mods
    raw = vars(src.Thing)["helper"]
    with testing.plant("fault_source:Thing.helper", testing.scaled(2)):
        assert src.Thing.helper(5) == 8 and src.Thing().helper(5) == 8
    assert vars(src.Thing)["helper"] is raw
    assert src.Thing().helper(5) == 4


def test_plant_names_a_missing_target() -> None:
    with pytest.raises(ValueError, match="names nothing"):
        with testing.plant("workbench.core.harmonics:no_such_function", testing.scaled(2)):
            pass
    with pytest.raises(ValueError, match="module:attr"):
        with testing.plant("workbench.core.harmonics", testing.scaled(2)):
            pass


# --- the wraps --------------------------------------------------------------------------------


def test_scaled_and_mapped_change_the_result_only(mods) -> None:
    src, _ = mods
    assert testing.scaled(3)(src.f)(1) == 6
    assert testing.mapped(lambda v: -v)(src.f)(1) == -2


def test_arg_wraps_change_the_named_argument_positional_or_keyword(mods) -> None:
    src, _ = mods

    def g(a, b=1.0):
        return (a, b)

    assert testing.arg_scaled(1, "b", 2.0)(g)(1, 3.0) == (1, 6.0)
    assert testing.arg_scaled(1, "b", 2.0)(g)(1, b=3.0) == (1, 6.0)
    assert testing.arg_scaled(1, "b", 2.0)(g)(1) == (1, 1.0)  # not passed: the default stands
    assert testing.arg_mapped(0, "a", lambda a: a + 1)(g)(1) == (2, 1.0)
    assert testing.arg_mapped(0, "a", lambda a: a + 1)(g)(a=1, b=5.0) == (2, 5.0)


def test_edited_recompiles_one_function_and_leaves_its_module_alone(mods) -> None:
    src, user = mods
    with testing.plant("fault_source:f", testing.edited("x + 1", "x + 2")):
        assert user.use(1) == 3 and src.calls_f(1) == 3
    assert user.use(1) == 2


def test_edited_keeps_the_decorators(mods) -> None:
    src, _ = mods
    with testing.plant("fault_source:cached", testing.edited("2 * x", "3 * x")) as faulty:
        assert src.cached(2) == 6 and faulty.cache_info().currsize == 1
    assert src.cached(2) == 4


def test_edited_reaches_a_hypothesis_composite(mods) -> None:
    src, user = mods
    with testing.plant("fault_source:pairs", testing.edited("return a, a", "return a, a + 1")):

        @settings(max_examples=5, database=None)
        @given(user.pairs())
        def apart(pair: tuple[int, int]) -> None:
            assert pair[1] == pair[0] + 1

        apart()


@pytest.mark.parametrize("old", ["x + 7", "x"], ids=["absent", "twice"])
def test_edited_refuses_text_that_does_not_occur_exactly_once(mods, old: str) -> None:
    src, _ = mods
    with pytest.raises(ValueError, match="must occur once"):
        testing.edited(old, "x")(src.f)


def test_edited_refuses_what_is_not_a_module_level_function(mods) -> None:
    src, _ = mods
    with pytest.raises(ValueError, match="module-level function"):
        testing.edited("return x", "return 0")(src.Thing.own)


# --- property_fails ---------------------------------------------------------------------------

_SEEN: list[int] = []


@settings(derandomize=True, max_examples=30)
@given(st.integers(1, 40))
@example(2)
def _dim_one_is_d(d: int) -> None:
    _SEEN.append(d)
    assert dim_harmonics(d + 1, 1) == d + 1


@torch_settings
@given(st.integers(2, 12))
def _torch_property(d: int) -> None:
    assert torch.tensor(dim_harmonics(d, 1)).item() == d


@given(st.integers(0, 5))
def _crashes(x: int) -> None:
    raise RuntimeError("a crash, not a failed check")


def test_property_fails_reports_a_clean_property_as_passing() -> None:
    inner = _dim_one_is_d.hypothesis.inner_test
    assert testing.property_fails(_dim_one_is_d) is False
    assert _dim_one_is_d.hypothesis.inner_test is inner


def test_property_fails_reports_a_planted_fault_at_its_first_failing_example() -> None:
    inner = _dim_one_is_d.hypothesis.inner_test
    _SEEN.clear()
    with testing.plant("workbench.core.harmonics:dim_harmonics", testing.scaled(2)):
        assert testing.property_fails(_dim_one_is_d) is True
    assert _SEEN == [2]  # the explicit example fails: nothing shrunk, nothing more tried
    assert _dim_one_is_d.hypothesis.inner_test is inner
    assert testing.property_fails(_dim_one_is_d) is False


def test_property_fails_runs_the_examples_the_property_runs() -> None:
    _SEEN.clear()
    _dim_one_is_d()
    own = list(_SEEN)
    _SEEN.clear()
    assert testing.property_fails(_dim_one_is_d) is False
    assert _SEEN == own and len(own) > 1


def test_property_fails_works_under_torch_settings() -> None:
    assert testing.property_fails(_torch_property) is False
    with testing.plant("workbench.core.harmonics:dim_harmonics", testing.mapped(lambda n: n + 1)):
        assert testing.property_fails(_torch_property) is True


def test_property_fails_lets_a_crash_through() -> None:
    with pytest.raises(RuntimeError, match="a crash"):
        testing.property_fails(_crashes)


def test_property_fails_refuses_a_plain_function() -> None:
    with pytest.raises(TypeError, match="@given property"):
        testing.property_fails(lambda: None)
