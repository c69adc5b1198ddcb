"""The certified bound at N >= 3 (``workbench.core.bounds.sequence_length.certified_n``, the
registered ``certified-n``) in ``bounds lower``, ``bounds heads-needed``, ``bounds list``,
``falsify``, ``bounds sandwich`` and ``train``: one home for every sequence-length bound, the
largest proved part deciding and named; N up to d accepted, a point no bound covers answered
with ``null`` and the reason, a zero bound called vacuous, bad N one stderr line naming --N and
its range."""

from __future__ import annotations

import json
import sys
import types
from typing import Any

import pytest

from tests.cli.run_cli import run_cli
from workbench.core.bounds.sequence_length import certified_n as cn
from workbench.core.bounds.sequence_length.n_keys import n_keys_bound
from workbench.core.bounds.value import BoundValue, PartKind
from workbench.testing import plant, replaced

AT = ("--d", "12", "--rank", "1", "--heads", "4")
PACKAGE = "workbench.core.bounds.sequence_length"


@pytest.fixture
def n_keys_only(monkeypatch: Any) -> None:
    """The home with its n-keys entry alone (3 <= N <= d - 2), so that the points no bound
    covers stay uncovered whatever bound joins it."""
    monkeypatch.setattr(cn, "SEQUENCE_BOUNDS",
                        tuple(e for e in cn.SEQUENCE_BOUNDS if e.name == "n-keys"))


def test_lower_at_n_4_is_n_keys_named_as_the_deciding_part(capsys: Any, n_keys_only: None
                                                           ) -> None:
    rc, p, err = run_cli(capsys, "bounds", "lower", *AT, "--N", "4", "--json")
    assert rc == 0 and err == ""
    want = n_keys_bound(12, 1, 4, 4)  # the n-keys module's own evaluation
    assert p["bound"] == "certified-n" and p["source"] == p["decided_by"] == "n-keys"
    assert p["lower_bound"] == want.value and p["enclosure"] == list(want.enclosure)
    assert p["rigorous"] is True and p["vacuous"] is None
    assert [c["name"] for c in p["coverage"] if c["covers_here"]] == ["n-keys"]
    rc, out, _ = run_cli(capsys, "bounds", "lower", *AT, "--N", "4")
    assert rc == 0 and "decided by n-keys" in out and "labels: proved, rigorous" in out
    assert "different theorems, about different laws D_N" in out


@pytest.mark.parametrize("N", ["11", "12"])  # d - 1 and d: n-keys stops at d - 2
def test_n_up_to_d_is_accepted_and_an_uncovered_point_says_so(capsys: Any, N: str,
                                                              n_keys_only: None) -> None:
    rc, p, err = run_cli(capsys, "bounds", "lower", *AT, "--N", N, "--json")
    assert rc == 0 and err == ""
    assert p["lower_bound"] is None and p["null_reasons"]["lower_bound"] == p["not_covered"]
    assert "n-keys covers 3 <= N <= d - 2" in p["not_covered"]
    rc, out, _ = run_cli(capsys, "bounds", "lower", *AT, "--N", N)
    assert rc == 0 and "no certified bound" in out and "n-keys covers 3 <= N <= d - 2 (not here)" \
        in out
    rc, h, _ = run_cli(capsys, "bounds", "heads-needed", "--d", "12", "--rank", "1", "--N", N,
                       "--eps", "0.1", "--json")
    assert rc == 0 and h["heads_needed"] is None and "heads_needed" in h["null_reasons"]


@pytest.mark.parametrize("cmd", [("bounds", "lower", *AT),
                                 ("bounds", "heads-needed", "--d", "12", "--rank", "1", "--eps",
                                  "0.2")])
@pytest.mark.parametrize("N", ["13", "1"])
def test_n_out_of_range_is_one_line_naming_the_flag_and_range(capsys: Any, cmd: tuple[str, ...],
                                                              N: str) -> None:
    rc, out, err = run_cli(capsys, *cmd, "--N", N)
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "--N must be an integer in 2..d" in err and "Traceback" not in err
    rc, helptext, _ = run_cli(capsys, *cmd[:2], "--help")
    words = " ".join(helptext.split())
    assert "N in 2..d" in words and "2<=x<=d" in words  # --help states the same range


def test_other_refusals_stay_one_line(capsys: Any) -> None:
    for args, words in ((("--N", "3", "--points", "iid"), "no bound covers i.i.d. keys at N >= 3"),
                        (("--N", "3", "--bound", "certified"), "--N must lie in [2]")):
        rc, out, err = run_cli(capsys, "bounds", "lower", *AT, *args)
        assert rc == 2 and out == "" and err.count("\n") == 1 and words in err


def test_a_zero_bound_says_it_is_vacuous(capsys: Any, n_keys_only: None) -> None:
    rc, p, _ = run_cli(capsys, "bounds", "lower", "--d", "12", "--rank", "9", "--heads", "4",
                       "--N", "4", "--json")
    assert rc == 0 and p["lower_bound"] == 0.0 and p["vacuous"].startswith("vacuous")
    rc, p, _ = run_cli(capsys, "bounds", "lower", *AT, "--N", "4", "--json")
    assert p["vacuous"] is None


def test_heads_needed_agrees_with_lower_at_h_star_and_below(capsys: Any, n_keys_only: None
                                                            ) -> None:
    rc, h, err = run_cli(capsys, "bounds", "heads-needed", "--d", "12", "--rank", "1", "--N", "4",
                         "--eps", "0.15", "--json")
    assert rc == 0 and err == "" and h["decided_by"] == "n-keys" and h["bound"] == "certified-n"
    values = [run_cli(capsys, "bounds", "lower", "--d", "12", "--rank", "1", "--heads", str(H),
                      "--N", "4", "--json")[1]["lower_bound"] for H in (h["heads_needed"] - 1,
                                                                         h["heads_needed"])]
    assert values[0] > 0.15 >= values[1]


def test_json_never_holds_nan(capsys: Any, n_keys_only: None) -> None:
    for N in ("4", "11"):
        for cmd in (("bounds", "lower", *AT), ("bounds", "heads-needed", "--d", "12", "--rank",
                                                "1", "--eps", "0.2")):
            capsys.readouterr()
            from workbench.cli import main

            assert main([*cmd, "--N", N, "--json"]) == 0
            text = capsys.readouterr().out
            assert "NaN" not in text and '"nan"' not in text and json.loads(text)


# ------------------------------------------------------------ one home, all parts, largest decides
def _fake_entry(monkeypatch: Any, lower: float, rigorous: bool = True) -> cn.Entry:
    """A second sequence-length bound covering 3..d with a constant part (the one line a new
    bound adds to ``SEQUENCE_BOUNDS``)."""
    kind = PartKind("fake-level", rigorous=rigorous)
    mod = types.ModuleType(f"{PACKAGE}.fake_level")
    mod.covered = lambda d, N: None if 3 <= N <= d else "N must lie in [3, d]"  # type: ignore
    mod.fake_bound = (lambda d, r, H, N, value_class="eq2", *, max_degree=None:  # type: ignore
                      BoundValue((kind.at((lower, lower + 0.01), "planted constant"),)))
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    entry = cn.Entry("fake-level", "fake_level", "fake_bound", "3 <= N <= d", (kind,))
    monkeypatch.setattr(cn, "SEQUENCE_BOUNDS", (*cn.SEQUENCE_BOUNDS, entry))
    return entry


def test_every_covering_bound_is_a_part_and_the_largest_proved_one_decides(
        monkeypatch: Any, n_keys_only: None) -> None:
    nk = n_keys_bound(12, 1, 4, 4).value
    _fake_entry(monkeypatch, nk + 0.05)
    bv = cn.certified_n_bound(12, 1, 4, 4)
    assert [p.name for p in bv.parts] == ["n-keys", "fake-level"]
    assert bv.source == "fake-level" and bv.value == nk + 0.05
    assert cn.certified_n_bound(12, 1, 4, 4, names=["n-keys"]).source == "n-keys"
    # N = d: only the new bound covers, so the command answers where it said 'no bound' before
    assert cn.not_covered(12, 12) is None and cn.certified_n_bound(12, 1, 4, 12).source == \
        "fake-level"


def test_a_statistical_part_never_outranks_a_proved_one(monkeypatch: Any, n_keys_only: None
                                                        ) -> None:
    nk = n_keys_bound(12, 1, 4, 4).value
    _fake_entry(monkeypatch, nk + 0.05, rigorous=False)
    bv = cn.certified_n_bound(12, 1, 4, 4)
    assert bv.source == "n-keys" and bv.certified == nk
    res = cn.certified_n_heads_needed(12, 1, 4, nk + 0.001)  # the estimate does not count
    assert res.heads == 4 and res.bound_below is not None


def test_the_commands_show_the_new_part_when_it_decides(monkeypatch: Any, capsys: Any,
                                                        n_keys_only: None) -> None:
    nk = n_keys_bound(12, 1, 4, 4).value
    _fake_entry(monkeypatch, nk + 0.05)
    rc, p, _ = run_cli(capsys, "bounds", "lower", *AT, "--N", "4", "--json")
    assert p["decided_by"] == "fake-level" and p["lower_bound"] == nk + 0.05
    assert [q["name"] for q in p["parts"]] == ["n-keys", "fake-level"]


def test_the_checks_fail_when_only_the_first_part_is_kept(monkeypatch: Any, n_keys_only: None
                                                          ) -> None:
    """Planted: a home that evaluates only the first covering entry."""
    _fake_entry(monkeypatch, 0.9)

    def first_only(d: int, N: int, value_class: str = "eq2", names: Any = None) -> Any:
        return cn.SEQUENCE_BOUNDS[:1] if cn.SEQUENCE_BOUNDS[0].covered(d, N) is None else ()

    bv = cn.certified_n_bound(12, 1, 4, 4)
    assert bv.source == "fake-level" and len(bv.parts) == 2  # the check, on the sound home
    with plant(f"{PACKAGE}.certified_n:covering", replaced(first_only)):
        bv = cn.certified_n_bound(12, 1, 4, 4)
    assert bv.source == "n-keys" and len(bv.parts) == 1  # ... which the planted home fails


# ------------------------------------------------------------------------------ other commands
def test_bounds_list_shows_certified_n_and_what_each_part_covers(capsys: Any) -> None:
    rc, p, _ = run_cli(capsys, "bounds", "list", "--json")
    row = {b["name"]: b for b in p["bounds"]}["certified-n"]
    assert "n-keys: 3 <= N <= d - 2" in row["N_text"]
    assert [k["name"] for k in row["parts"]] == [k.name for k in cn.part_kinds()]
    assert row["rigorous"] is all(k["rigorous"] for k in row["parts"] if not k["beside"])


def test_falsify_defaults_to_certified_n_at_n_3_and_above(capsys: Any, n_keys_only: None
                                                          ) -> None:
    rc, p, err = run_cli(capsys, "falsify", "--d", "8", "--rank", "1", "--heads", "2", "--N",
                         "3:4", "--budget", "1", "--attack", "generalized", "--steps", "3",
                         "--eval-samples", "500", "--json")
    assert rc == 0, err
    assert p["bound"] == "certified-n" and p["trials"][0]["labels"]["source"] == "n-keys"
    rc, _, err = run_cli(capsys, "falsify", "--d", "8", "--N", "3:8", "--budget", "1")
    assert rc == 2 and err.count("\n") == 1 and "--d and --N" in err and "n-keys covers" in err


def test_sandwich_at_an_uncovered_n_is_one_line(capsys: Any, n_keys_only: None) -> None:
    rc, out, err = run_cli(capsys, "bounds", "sandwich", "--d", "8", "--rank", "1", "--heads",
                           "2", "--N", "7", "--no-record")
    assert rc == 2 and out == "" and err.count("\n") == 1 and "no certified bound covers" in err
