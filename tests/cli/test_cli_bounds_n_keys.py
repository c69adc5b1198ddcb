"""``bounds lower --N`` and ``bounds heads-needed --N`` beyond two keys (the n-keys bound), and
the one line for what no bound covers."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.core.bounds.sequence_length.n_keys import n_keys_bound


def _run(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_lower_at_n_4_prints_the_n_keys_bound_and_its_name(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["bounds", "lower", "--d", "12", "--rank", "1", "--heads",
                                   "4", "--N", "4", "--json"])
    assert code == 0 and err == ""
    p = json.loads(out)
    want = n_keys_bound(12, 1, 4, 4)
    assert p["bound"] == p["source"] == "n-keys" and p["rigorous"] is True
    assert p["lower_bound"] == want.value and p["enclosure"] == list(want.enclosure)
    code, out, _ = _run(capsys, ["bounds", "lower", "--d", "12", "--rank", "1", "--heads", "4",
                                 "--N", "4"])
    assert code == 0 and "n-keys" in out and "labels: proved, rigorous" in out


@pytest.mark.parametrize("args,words", [
    (["--N", "11"], "no bound covers N >= d-1"),
    (["--N", "13"], "--N must be at most --d"),
    (["--N", "3", "--points", "iid"], "no bound covers i.i.d. keys at N >= 3"),
    (["--N", "3", "--bound", "certified"], "--N must lie in [2]"),
])
def test_outside_what_is_covered_is_one_line(capsys: pytest.CaptureFixture[str],
                                             args: list[str], words: str) -> None:
    code, out, err = _run(capsys, ["bounds", "lower", "--d", "12", "--rank", "1", "--heads",
                                   "2", *args])
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err


def test_heads_needed_agrees_with_lower_at_h_star_and_below(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["bounds", "heads-needed", "--d", "12", "--rank", "1",
                                   "--N", "4", "--eps", "0.15", "--json"])
    assert code == 0 and err == ""
    h = json.loads(out)["heads_needed"]
    values = []
    for H in (h - 1, h):
        _, out, _ = _run(capsys, ["bounds", "lower", "--d", "12", "--rank", "1", "--heads",
                                  str(H), "--N", "4", "--json"])
        values.append(json.loads(out)["lower_bound"])
    assert values[0] > 0.15 >= values[1]
