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
