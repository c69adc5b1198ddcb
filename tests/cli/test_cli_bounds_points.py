"""`bounds lower --points orthonormal|iid`: the certified bound states the law of the keys it
covers; on i.i.d. keys it is the same number (docs/derivations/iid_transfer.md), at N = 2 only."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.core.bounds.certified import certified_lower_bound

POINT = ["bounds", "lower", "--d", "8", "--rank", "1", "--heads", "2"]


def _lower(capsys: pytest.CaptureFixture[str], extra: list[str]) -> tuple[int, str, str]:
    code = main([*POINT, *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_iid_is_the_certified_number_with_its_law_stated(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _lower(capsys, ["--points", "iid", "--json"])
    p = json.loads(out)
    assert code == 0 and err == ""
    assert p["lower_bound"] == certified_lower_bound(8, 1, 2).value
    assert p["law"] == "iid" and "i.i.d." in p["law_text"]
    code, out, _ = _lower(capsys, ["--json"])
    default = json.loads(out)
    assert code == 0 and default["law"] == "orthonormal" and "D_2" in default["law_text"]
    assert default["lower_bound"] == p["lower_bound"]
    code, out, _ = _lower(capsys, ["--points", "iid"])
    assert code == 0 and "law of the keys: N = 2 i.i.d. uniform keys" in out


@pytest.mark.parametrize("extra, names", [
    (["--points", "iid", "--N", "3"], ("--N", "--points iid", "N = 2")),
    (["--points", "iid", "--bound", "harmonic"], ("--points iid", "--bound harmonic")),
])
def test_iid_outside_n2_or_the_certified_bounds_is_bad_input(
        capsys: pytest.CaptureFixture[str], extra: list[str], names: tuple[str, ...]) -> None:
    code, out, err = _lower(capsys, extra)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert all(n in err for n in names) and "Traceback" not in err


def test_iid_with_a_plug_in_profile_is_its_mixture(capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A profile target given as module:function (``iid_scales`` by construction) gets the
    i.i.d. mixture over its scales, proved when its sympy form is there (soft_targets.md,
    step T, "Any profile"); the same number as the library's."""
    from workbench.core.bounds.profiles.profile_iid_scale import profile_iid_bound
    from workbench.core.profiles import psi_target

    monkeypatch.syspath_prepend("examples/structured_heads")
    from structured_heads.target import soft_sign

    spec = "structured_heads.target:soft_sign"
    code = main(["bounds", "lower", "--d", "6", "--rank", "1", "--heads", "2", "--target", spec,
                 "--target-param", "k=4", "--points", "iid", "--json"])
    out, err = capsys.readouterr()
    p = json.loads(out)
    want = profile_iid_bound(psi_target("s", soft_sign).profile_at({"k": 4.0}), 6, 1, 2)
    assert code == 0 and err == ""
    assert p["law"] == "iid" and p["rigorous"] and p["source"] == "i.i.d. mixture"
    assert p["lower_bound"] == want.value


def test_iid_with_a_target_that_does_not_declare_its_scales_is_bad_input(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from workbench import plugins

    real = plugins.get

    def undeclared(kind: str, name: str) -> object:
        got = real(kind, name)
        return dataclasses.replace(got, iid_scales=False) if kind == "target" else got

    monkeypatch.setattr(plugins, "get", undeclared)
    code = main([*POINT, "--target", "soft-nearest", "--points", "iid"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "iid_scales" in err and "Traceback" not in err
