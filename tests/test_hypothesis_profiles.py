"""The hypothesis profiles shipped with the package (workbench/hypothesis_profiles.py) and how
``workbench.strategies.torch_settings`` takes the active one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from workbench import hypothesis_profiles as hp

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def restore_profile() -> Iterator[None]:
    """Load the suite's profile again afterwards (the one tests/conftest.py loaded)."""
    try:
        yield
    finally:
        hp.load_profile()


def test_the_profiles_ship_with_the_documented_settings() -> None:
    ci, thorough = settings.get_profile("ci"), settings.get_profile("thorough")
    assert (ci.max_examples, ci.derandomize, ci.database, ci.deadline) == (25, True, None, None)
    assert (thorough.max_examples, thorough.derandomize, thorough.deadline) == (250, False, None)
    assert thorough.database is not None  # a failure found once is replayed first next time
    for p in (ci, thorough, settings.get_profile("dev")):
        assert {HealthCheck.too_slow, HealthCheck.data_too_large} <= set(p.suppress_health_check)
    assert hp.DEFAULT == "ci" and set(hp.PROFILES) == {"ci", "thorough", "dev"}


def test_load_profile_reads_the_environment_and_defaults_to_ci(
        monkeypatch: pytest.MonkeyPatch, restore_profile: None) -> None:
    monkeypatch.setenv("HYPOTHESIS_PROFILE", "thorough")
    assert hp.load_profile() == "thorough" and settings().max_examples == 250
    monkeypatch.delenv("HYPOTHESIS_PROFILE")
    assert hp.load_profile() == "ci" and settings().derandomize is True
    assert hp.load_profile("dev") == "dev" and settings().max_examples == 60


def test_the_suite_runs_under_the_profile_of_the_environment() -> None:
    want = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE") or "ci")
    assert settings().max_examples == want.max_examples
    assert settings().derandomize == want.derandomize


_IMPORT_FIRST = """
import json
from hypothesis import given, strategies as st
import workbench.strategies as S          # imported before any profile is loaded
from workbench.hypothesis_profiles import load_profile
load_profile("ci")
seen = []

@S.torch_settings
@given(st.integers(0, 2**62))
def prop(n):
    seen.append(n)

prop(); first = list(seen); seen.clear(); prop()
print(json.dumps({"first": first, "second": seen}))
"""


def test_torch_settings_do_not_depend_on_the_import_order() -> None:
    """workbench.strategies imported before the profile is loaded: the property still runs the
    profile's derandomized examples, and no more than the profile allows."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")])}
    env.pop("HYPOTHESIS_PROFILE", None)
    env.pop("CI", None)
    out = subprocess.run([sys.executable, "-c", _IMPORT_FIRST], capture_output=True, text=True,
                         env=env, timeout=300, check=True).stdout
    res = json.loads(out.strip().splitlines()[-1])
    assert res["first"] == res["second"]  # derandomized: the same examples twice
    ci = settings.get_profile("ci").max_examples
    assert ci < 50 and 1 < len(res["first"]) <= ci  # the ci profile's bound, not a fixed 50
