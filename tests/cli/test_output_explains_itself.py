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


def _mean_of_keys_error(N: int, points: str, n: int = 4000) -> tuple[float, float]:
    """Monte Carlo of the error of always answering the mean of the keys on the nearest task:
    mean and standard error (independent of the sentence it checks)."""
    import torch

    from workbench.verifiers.tasks import Task

    task = Task("nearest", d=8, N=N, points=points)
    (X, _y), target = task.sample(n, torch.Generator().manual_seed(3))
    err = task.error(X.mean(1), target).reshape(-1).double()
    return float(err.mean()), float(err.std() / math.sqrt(n))


@pytest.mark.parametrize("N, points", [(2, "orthonormal"), (2, "iid"), (8, "orthonormal")])
def test_the_stated_reference_point_scores_what_it_says(N: int, points: str) -> None:
    """Each baseline the error's meaning names is measured here, on its own keys."""
    import re

    from workbench.commands._error_meaning import error_meaning

    text = error_meaning("nearest", N, points)
    stated = float(re.findall(r"scores (?:1 - 1/N = )?([0-9.]+)", text)[-1])
    mean, se = _mean_of_keys_error(N, points)
    assert abs(mean - stated) <= 4 * se + 1e-9, (text, mean, se)


def test_the_error_meaning_names_d2_only_where_it_applies(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The midpoint of D_2 is named for N = 2 alone, never for N = 8 nor for the farthest task,
    nor in the header of a check that runs claims at many N."""
    from workbench.commands._error_meaning import error_meaning

    assert "D_2" in error_meaning("nearest", 2, "orthonormal")
    for args in [("nearest", 8, "orthonormal"), ("nearest", 8, "iid"), ("farthest", 8, "iid"),
                 ("farthest", 2, "iid"), ("regression", 2, "iid"), ("nearest", None, None)]:
        assert "D_2" not in error_meaning(*args) and "midpoint" not in error_meaning(*args), args
    rc, out = _construct(capsys, "full-rank", "--d", "8", "--N", "8", "--eps", "0.5",
                         "--eval-samples", "300", "--json")
    meaning = json.loads(out)["error_meaning"]
    assert rc in (0, 1) and meaning == error_meaning("nearest", 8, "orthonormal")
    assert "D_2" not in meaning and "mean of the 8 orthonormal keys scores" in meaning
    rc, out = _construct(capsys, "full-rank", "--d", "8", "--N", "2", "--eps", "0.5",
                         "--eval-samples", "300")
    assert "on D_2 predicting the midpoint" in out
    assert main(["check", "--only", "setting.sphere_law", "--jobs", "1"]) == 0
    assert "D_2" not in capsys.readouterr().out.splitlines()[0]


# cheap built-in claims (a few seconds in all) whose rows include every shape the quick check
# prints: identities, exact counts, enclosures, Monte Carlo rows with and without a note
CHEAP_CLAIMS = ("harmonics.dimension", "setting", "targets.full_rank_soft_exact",
                "fact1.soft_representation", "fact1.hard_limit", "thm2.isotropy",
                "thm2.harmonic_bound", "kernels.agreement", "thm3.biased_construction")


def _rows_explain_themselves(capsys: pytest.CaptureFixture[str], only: tuple[str, ...]) -> int:
    """Run ``check`` on ``only`` (every built-in claim when empty) and assert that every
    evidence row, as the text output prints it, says what was measured and against what (its
    note, else its claim's statement or title) and at which parameters: the key row without
    ``--verbose``, every row with it. The number of rows seen."""
    from workbench.commands.check import _human_row
    from workbench.proofs.claim import METHODS, measured_what

    argv = ["check", "--builtin", "--jobs", "1", "--json", *[a for c in only for a in
                                                             ("--only", c)]]
    assert main(argv) in (0, 1)
    claims = json.loads(capsys.readouterr().out)["claims"]
    seen = 0
    for c in claims:
        brief, full = _human_row(c, False), _human_row(c, True)
        key = c["key_evidence"]
        for i, e in enumerate(c["evidence"]):
            what = measured_what(e, c.get("statement") or c["title"])
            assert what and what not in METHODS, (c["id"], i, e)
            line = next(ln for ln in full.splitlines() if ln.strip().startswith(f"{i + 1}. "))
            assert what in line and all(f"{k}=" in line for k in e["params"]), (c["id"], line)
            if key is not None and i == key["index"]:
                assert what in brief and "closest to failing" in brief or len(
                    c["evidence"]) == 1, (c["id"], brief)
            seen += 1
    return seen


def test_every_printed_evidence_row_says_what_it_measured(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert _rows_explain_themselves(capsys, CHEAP_CLAIMS) > 100


@pytest.mark.slow
def test_every_builtin_claims_rows_say_what_they_measured(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The same for every built-in claim at quick scale (minutes: ``pytest -m slow``)."""
    assert _rows_explain_themselves(capsys, ()) > 500
