"""Output that explains itself (docs/architecture.md, Claims and verdicts; issue "One tree, and
output that explains itself"): levels print as they are, every ``inconclusive`` of
``construct`` carries its reason, relations print as written, JSON numbers are numbers, progress
goes to a terminal only, and the registry says that kind names are singular."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest

from workbench import plugins
from workbench.cli import main
from workbench.commands import sweep
from workbench.proofs.claim import Evidence


def _construct(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    rc = main(["construct", *args])
    return rc, capsys.readouterr().out


def test_construct_prints_the_level_as_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _construct(capsys, "random-features", "--d", "3", "--heads", "8",
                         "--eval-samples", "400")
    assert rc == 0 and "(99.9% CI" in out and "(100% CI" not in out, out


@pytest.mark.parametrize("args, why", [
    (["majority-vote", "--d", "4", "--heads", "5", "--seeds", "2", "--eval-samples", "300"],
     "Student-t over 2 independent draws"),
    (["random-features", "--d", "4", "--heads", "16", "--eval-samples", "200"], "seed 0"),
])
def test_an_inconclusive_construction_says_why(capsys: pytest.CaptureFixture[str],
                                               args: list[str], why: str) -> None:
    rc, out = _construct(capsys, *args, "--json")
    p = json.loads(out)
    assert p["verdict"] == "inconclusive" and why in p["reason"], p["reason"]
    rc, out = _construct(capsys, *args)
    assert "verdict: inconclusive (the measured interval" in out, out


FIRST_KEY = """
import torch

def first_key(d, rank, heads, N, seed):
    # always the first key: wrong half the time on D_2, where a miss costs ||x1 - x2||^2 = 2
    return (lambda X, y: X[:, 0, :]), 1.0  # a plain float: exactly the true error
"""


def test_a_plain_float_claim_that_is_inconclusive_says_why(
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "first_key_mod.py").write_text(FIRST_KEY)
    monkeypatch.syspath_prepend(str(tmp_path))
    rc, out = _construct(capsys, "first_key_mod:first_key", "--d", "4", "--eval-samples", "2000",
                         "--json")
    p = json.loads(out)
    assert p["verdict"] == "inconclusive" and "straddles the claimed <= 1" in p["reason"], p


def test_a_decided_construction_has_no_reason(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _construct(capsys, "full-rank", "--d", "4", "--eps", "0.05", "--json")
    p = json.loads(out)
    assert p["verdict"] == "holds" and p["reason"] is None


def test_relations_print_as_written() -> None:
    computed = 0.1 + 0.31  # one ulp above 0.41: still ">=" as the claim wrote it
    row = Evidence(0.3, computed, ">=", "exact").describe()
    assert "needs value ≥ 0.41" in row and ">" not in row.replace("≥", ""), row
    below = math.nextafter(0.41, -math.inf)
    assert "≤ bound 0.41" in Evidence(0.2, below, "<=", "exact").describe()
    assert "> 0" in Evidence(1.0, math.ulp(0.0), ">=", "exact").describe()  # the way to say > 0


def test_bound_json_numbers_are_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bounds", "list", "--json"]) == 0
    rows = {b["name"]: b for b in json.loads(capsys.readouterr().out)["bounds"]}
    assert rows["certified"]["N"] == [2] and rows["certified"]["N_text"] == "2"


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_sweep_progress_goes_to_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr", _Stream(False))
    assert sweep.progress_lines(False) is None
    tty = _Stream(True)
    monkeypatch.setattr("sys.stderr", tty)
    say = sweep.progress_lines(False)
    assert say is not None and sweep.progress_lines(True) is None
    say("group 1/4: 6 runs in 0.1s")
    assert tty.getvalue() == "group 1/4: 6 runs in 0.1s\n"


def test_a_plural_kind_is_refused_saying_kinds_are_singular() -> None:
    for call in (plugins.available, lambda k: plugins.get(k, "fig2")):
        with pytest.raises(ValueError, match="kind names are singular: 'preset'"):
            call("presets")
    assert "fig2" in plugins.available("preset")
