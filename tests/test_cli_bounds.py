"""CLI contract for `bounds`, `harmonics` and `kernel` (DESIGN.md)."""

from __future__ import annotations

import json
import math

import pytest

from workbench.cli import main
from workbench.core.harmonics import dim_harmonics
from workbench.core.lower_bound import lower_bound


def _run(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_bounds_lower_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["bounds", "lower", "--d", "12", "--r", "2", "--heads", "4",
                                   "--json"])
    assert code == 0 and err == ""
    p = json.loads(out)
    assert {"d", "r", "heads", "lower_bound", "degrees_summed", "method"} <= set(p)
    assert (p["d"], p["r"], p["heads"]) == (12, 2, 4)
    lo, hi = p["enclosure"]
    assert lo <= p["lower_bound"] <= hi
    assert p["lower_bound"] == lower_bound(12, 2, 4).value


def test_bounds_heads_needed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, ["bounds", "heads-needed", "--d", "16", "--r", "1", "--eps",
                                 "0.12", "--json"])
    assert code == 0
    H = json.loads(out)["heads_needed"]
    assert lower_bound(16, 1, H).enclosure[0] <= 0.12 < lower_bound(16, 1, H - 1).enclosure[0]


def test_harmonics_sign_and_dim(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, ["harmonics", "sign", "--d", "5", "--max-degree", "3", "--json"])
    assert code == 0
    p = json.loads(out)
    assert p["d"] == 5 and [c["degree"] for c in p["coefficients"]] == [0, 1, 2, 3]
    assert set(p["coefficients"][1]) == {"degree", "eta"}
    assert p["coefficients"][1]["eta"] == pytest.approx(3 / (8 * math.sqrt(1 / 5)), rel=1e-15)
    code, out, _ = _run(capsys, ["harmonics", "dim", "--d", "7", "--degree", "4", "--json"])
    assert code == 0 and json.loads(out)["dimension"] == dim_harmonics(7, 4)
    code, out, _ = _run(capsys, ["harmonics", "sign", "--d", "5", "--max-degree", "1", "--exact"])
    assert code == 0 and "3*sqrt(5)/8" in out


def test_kernel_head_vs_target(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, ["kernel", "head-vs-target", "--d", "3", "--theta", "0", "--json"])
    assert code == 0 and json.loads(out)["b"] == pytest.approx(1 - 1 / math.pi, abs=1e-15)
    code, out, _ = _run(capsys, ["kernel", "head-vs-target", "--d", "2", "--theta", "1.0"])
    assert code == 0 and "b =" in out


@pytest.mark.parametrize(
    "args,name",
    [
        (["bounds", "lower", "--d", "8", "--r", "9", "--heads", "1"], "r"),
        (["bounds", "lower", "--d", "1", "--r", "1", "--heads", "1"], "d"),
        (["bounds", "lower", "--d", "8", "--r", "1", "--heads", "0"], "H"),
        (["bounds", "heads-needed", "--d", "8", "--r", "1", "--eps", "0"], "eps"),
        (["bounds", "heads-needed", "--d", "8", "--r", "1", "--eps", "nan"], "eps"),
        (["harmonics", "sign", "--d", "5", "--max-degree", "-1"], "max-degree"),
        (["harmonics", "dim", "--d", "0", "--degree", "1"], "d"),
        (["kernel", "head-vs-target", "--d", "4", "--theta", "4"], "theta"),
        (["bounds", "lower", "--d", "x", "--r", "1", "--heads", "1"], "d"),
    ],
)
def test_bad_input_exit_2_one_line(capsys: pytest.CaptureFixture[str], args: list[str],
                                   name: str) -> None:
    code, out, err = _run(capsys, args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert name in err
