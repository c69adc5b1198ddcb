"""CLI contract for --target / --target-param (docs/extending.md, "Adding a target")."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.core.bounds.fiber_bound.fiber import fiber_bound
from workbench.core.bounds.profiles.profile_harmonic import profile_bound
from workbench.core.profiles import tanh_profile


def _json(capsys: pytest.CaptureFixture[str], args: list[str]) -> dict:  # type: ignore[type-arg]
    code = main([*args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_lower_soft_nearest_is_the_profile_count(capsys: pytest.CaptureFixture[str]) -> None:
    p = _json(capsys, ["bounds", "lower", "--d", "8", "--rank", "1", "--heads", "2",
                       "--target", "soft-nearest", "--target-param", "beta=16"])
    want = profile_bound(tanh_profile(16.0), 8, 1, 2)
    parts = {q["name"]: q for q in p["parts"]}
    assert parts["harmonic count"]["lower_bound"] == want.bound_value.part("harmonic count").lower
    assert p["rigorous"] is True and p["target"]["params"] == {"beta": 16.0}
    fiber = parts["fiber"]
    assert fiber["rigorous"] is True and fiber["lower_bound"] > want.enclosure[0]
    assert p["lower_bound"] == fiber["lower_bound"] and p["source"] == "fiber"
    assert p["lower_bound"] < fiber_bound(8, 1, 2).enclosure[0]


def test_nearest_and_farthest_keep_the_certified_numbers(capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    a = _json(capsys, ["bounds", "lower", "--d", "8", "--rank", "1", "--heads", "2"])
    b = _json(capsys, ["bounds", "lower", "--d", "8", "--rank", "1", "--heads", "2",
                       "--target", "farthest"])
    assert a["lower_bound"] == b["lower_bound"] and "target" not in a
    assert b["target"]["name"] == "farthest"


def test_a_numpy_profile_is_flagged_not_rigorous(capsys: pytest.CaptureFixture[str]) -> None:
    p = _json(capsys, ["bounds", "lower", "--d", "6", "--rank", "1", "--heads", "1",
                       "--target", "numpy:tanh"])
    assert p["rigorous"] is False and p["lower_bound"] > 0


def test_heads_needed_grows_with_beta(capsys: pytest.CaptureFixture[str]) -> None:
    hs = [_json(capsys, ["bounds", "heads-needed", "--d", "8", "--rank", "1", "--eps", "0.1",
                         "--target", "soft-nearest", "--target-param", f"beta={b}"])
          ["heads_needed"] for b in (4, 16, 32)]
    assert hs[0] < hs[1] < hs[2]


def test_list_shows_targets(capsys: pytest.CaptureFixture[str]) -> None:
    p = _json(capsys, ["bounds", "list"])
    names = {t["name"]: t for t in p["targets"]}
    assert {"nearest", "soft-nearest", "farthest", "theorem3-biased"} <= set(names)
    assert names["theorem3-biased"]["bounds"] == "theorem3-lower"


def test_full_rank_head_computes_its_soft_target(capsys: pytest.CaptureFixture[str]) -> None:
    p = _json(capsys, ["construct", "full-rank", "--d", "6", "--beta", "4", "--eval-samples",
                       "1000", "--target", "soft-nearest", "--target-param", "beta=4"])
    assert p["measured_error"]["mean"] < 1e-12
    q = _json(capsys, ["construct", "full-rank", "--d", "6", "--beta", "4", "--eval-samples",
                       "1000", "--target", "soft-nearest", "--target-param", "beta=8"])
    assert q["measured_error"]["mean"] > 1e-3
