"""What a researcher sees (issue 47): a damaged store refused before it is read, the help of a bare
command, ``--version --json``, parameters echoed as given, runs against N that no bound covers
said so, ``falsify`` on a bound's own target, long runs announced, and the figures' and the
report's reading (log2 rank axis, every seed, the sandwich's order and legend, ``‖f − A‖²``).
The bad-input side of each (one line, exit 2) is in ``test_bad_inputs.py``'s cases."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_bad_inputs import damaged_stores
from workbench.cli import main
from workbench.testing import plant, replaced


def _run(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(args)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("stores")
    damaged_stores(root)
    return root


@pytest.mark.parametrize("name, why", [
    ("badutf8.sqlite", "a claim_results.payload cell that is not UTF-8 text"),
    ("quickcheck.sqlite", "fails SQLite's quick_check"),
])
def test_a_damaged_store_is_refused_before_it_is_read(
        stores: Path, name: str, why: str, tmp_path: Path) -> None:
    from workbench.verifiers.store import Store, check_database, last_check

    for read in (check_database, lambda p: Store(p, readonly=True), Store):
        with pytest.raises(ValueError, match="^--db must be an undamaged workbench") as e:
            read(stores / name)
        assert why in str(e.value)
    assert last_check(stores / name) is None
    good = tmp_path / "good.sqlite"
    with Store(good):
        pass
    check_database(good)  # a sound store passes


def test_without_the_soundness_check_a_damaged_store_reaches_the_reader(
        stores: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Power: the check is what answers; without it, report meets the undecodable cell."""
    with plant("workbench.verifiers.store:check_sound", replaced(lambda *a, **k: None)):
        with pytest.raises(sqlite3.OperationalError, match="decode"):
            main(["report", "--db", str(stores / "badutf8.sqlite"), "--out",
                  str(tmp_path / "r")])


def test_bare_commands_print_their_help_and_version_takes_json(
        capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(capsys, [])
    assert rc == 0 and err == "" and out.startswith("Usage: workbench [OPTIONS] COMMAND")
    assert out.count("\n") > 10 and "bounds" in out  # the help as click lays it out
    rc, out, _ = _run(capsys, ["bounds"])
    assert rc == 0 and out.startswith("Usage: workbench bounds") and "heads-needed" in out
    rc, out, _ = _run(capsys, ["--json"])
    assert rc == 0 and set(json.loads(out)["commands"]) >= {"check", "bounds", "report"}
    from workbench import __version__

    for args in (["--version", "--json"], ["--json", "--version"]):
        rc, out, _ = _run(capsys, args)
        assert rc == 0 and json.loads(out) == {"version": __version__}
    rc, out, _ = _run(capsys, ["--version"])
    assert rc == 0 and __version__ in out


def test_a_repeated_flag_names_both_values(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(capsys, ["bounds", "lower", "--d", "16", "--d", "8", "--rank", "1",
                                 "--heads", "2"])
    assert rc == 2 and out == ""
    assert err == "error: --d must be given once (got '16' and '8'): repeat only the flags " \
        "that collect values\n"
    # flags that collect values may repeat
    rc, _, err = _run(capsys, ["check", "--only", "fact1", "--only", "thm2", "--list"])
    assert rc == 0, err


def test_one_range_for_d_in_help_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, ["bounds", "lower", "--help"])
    assert rc == 0 and "2<=x<=2048" in out and "2**63" not in out.split("--rank")[0]
    for d in ("1", "3000", "1000000"):
        rc, _, err = _run(capsys, ["bounds", "lower", "--d", d, "--rank", "1", "--heads", "8",
                                   "--N", "4"])
        assert rc == 2 and err == f"error: --d must be an integer in 2..2048 (got '{d}')\n"


def test_target_parameters_are_echoed_as_given(capsys: pytest.CaptureFixture[str]) -> None:
    for given in ("inf", "1e999"):
        rc, out, _ = _run(capsys, ["bounds", "lower", "--d", "8", "--rank", "1", "--heads", "2",
                                   "--target", "soft-nearest", "--target-param",
                                   f"beta={given}", "--json"])
        t = json.loads(out)["target"]
        assert rc == 0 and t["params"] == {"beta": "inf"} and t["params_given"] == {
            "beta": given}
        assert "null_reasons" not in t and "nan" not in out
    rc, out, _ = _run(capsys, ["bounds", "lower", "--d", "8", "--rank", "1", "--heads", "2",
                               "--target", "soft-nearest", "--target-param", "beta=4", "--json"])
    assert json.loads(out)["target"]["params"] == {"beta": 4.0}


def test_sweeps_against_n_without_a_bound_say_so(capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path) -> None:
    db = str(tmp_path / "s.sqlite")
    for scale in ("quick", "full"):
        rc, out, _ = _run(capsys, ["sweep", "vary_n", "--scale", scale, "--dry-run", "--db", db,
                                   "--json"])
        note = json.loads(out)["bound_note"]
        assert rc == 0 and "no lower bound covers these runs" in note
        assert "the paper's own N-sweep" in note and "farthest task" in note
    assert ("2 layers" in note) and "iid keys" in note
    rc, out, _ = _run(capsys, ["sweep", "vary_n", "--scale", "quick", "--dry-run", "--db", db])
    assert "the paper's own N-sweep" in out
    rc, out, _ = _run(capsys, ["sweep", "tiny", "--dry-run", "--db", db, "--json"])
    assert json.loads(out)["bound_note"] is None  # its x axis is the rank


def test_train_at_n_3_outside_every_bound_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["train", "--d", "6", "--N", "4", "--rank", "1", "--heads", "1", "--steps", "2",
            "--eval-samples", "200", "--batch", "8", "--device", "cpu"]
    rc, out, _ = _run(capsys, [*base, "--layers", "2", "--json"])
    p = json.loads(out)
    assert rc == 0 and p["certified_bound"] is None
    assert "no lower bound covers this run (iid keys" in p["no_bound"]
    assert "2 layers, not one" in p["no_bound"] and "the paper's own N-sweep" in p["no_bound"]
    rc, out, _ = _run(capsys, [*base, "--points", "orthonormal", "--json"])
    p = json.loads(out)  # 3 <= N <= d - 2 on D_N, one layer: the n-keys bound applies
    assert rc == 0 and p["certified_bound"] is not None and p["no_bound"] is None


def test_falsify_attacks_a_bound_on_its_own_target(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["falsify", "--bound", "theorem3-lower", "--d", "4", "--rank", "1", "--heads", "1",
            "--budget", "1", "--steps", "2", "--eval-samples", "200", "--attack", "train",
            "--json"]
    rc, out, _ = _run(capsys, args)
    p = json.loads(out)
    assert rc == 0 and p["target"]["name"] == "theorem3-biased"
    rc, out, _ = _run(capsys, [*args, "--target", "theorem3-biased"])
    assert rc == 0 and json.loads(out)["target"]["name"] == "theorem3-biased"
    with plant("workbench.commands.falsify:_bound_target",
               replaced(lambda b, bound, chosen, target: (chosen, None))):
        rc, out, _ = _run(capsys, args)  # power: the nearest neighbour's models, as before
    assert json.loads(out)["target"]["name"] == "nearest"


def test_a_long_run_is_announced_and_a_short_one_is_not(
        capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.commands._long_work import LARGE, announce, progress_lines

    announce("training 1 model(s)", LARGE - 1, "x")
    assert capsys.readouterr().err == ""
    announce("training 1 model(s)", 8 * LARGE, "2 steps x ...")
    err = capsys.readouterr().err
    assert err.startswith("note: training 1 model(s) handles about 1.6e+10 numbers")
    note = progress_lines("training", shown=False)
    note(1, 10)  # at once: nothing yet
    assert capsys.readouterr().err == ""
    with plant("workbench.commands._long_work:FIRST", replaced(-1.0)):
        late = progress_lines("training", shown=False)
    late(1, 10)
    assert capsys.readouterr().err.startswith("training: step 1 of 10")


def _cell(task: str, H: int, inherited: bool = False) -> Any:
    from workbench.verifiers.sandwich_store import SandwichCell

    return SandwichCell(4, 1, H, 0.3 / H, 0.35 / H, (0.34 / H, 0.36 / H), "m",
                        (1, 1) if inherited else None, "certified", 0.3 / H, task)


def test_the_sandwich_orders_targets_numerically_and_lists_only_what_it_draws() -> None:
    from workbench.verifiers.sandwich_figure import GAP, INHERITED, natural, sandwich_figure

    names = ["soft-nearest(beta=1000.0)", "soft-nearest(beta=4.0)", "soft-nearest(beta=inf)"]
    assert sorted(names, key=natural) == [names[1], names[0], names[2]]
    fig = sandwich_figure([_cell(names[0], 1), _cell(names[1], 1)])  # one H: no gap
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert "beta=4.0" in titles[0] and "beta=1000.0" in titles[1]
    assert all(len(line) <= 40 for t in titles for line in t.split("\n"))
    legend = [t.get_text() for ax in fig.axes if ax.get_legend() for t in
              ax.get_legend().get_texts()] + [t.get_text() for lg in fig.legends
                                               for t in lg.get_texts()]
    assert GAP not in legend and INHERITED not in legend
    assert not any(t.startswith("0.5") for t in legend)  # no nearest panel: no 0.5 line
    fig = sandwich_figure([_cell("nearest", 1), _cell("nearest", 2, inherited=True)])
    legend = [t.get_text() for ax in fig.axes if ax.get_legend() for t in
              ax.get_legend().get_texts()]
    assert GAP in legend and INHERITED in legend and any(t.startswith("0.5") for t in legend)


def test_a_rank_axis_of_doublings_is_log2_and_every_seed_is_drawn() -> None:
    from workbench.verifiers.figures import preset_figure
    from workbench.verifiers.presets import get_preset

    rows = []
    for r in (1, 2, 4, 8):
        for seed, err in ((0, 0.2), (1, 0.4)):
            rows.append({"labels": {"L": 1, "c": 1, "r": r}, "seed": seed, "heldout": err,
                         "heldout_lo": err - 0.004, "heldout_hi": err + 0.004, "heldout_n": 4000,
                         "kind": "train", "model_class": "standard", "extra": {},
                         "config": {"task": {"name": "farthest", "d": 8, "N": 8,
                                             "points": "iid"},
                                    "spec": {"rank": r, "heads": 8 // r, "layers": 1},
                                    "train": {"steps": 10}}})
    fig = preset_figure(get_preset("fig2"), rows, "quick")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    seeds = [c for c in ax.collections if len(c.get_offsets()) == 8]
    assert seeds and sorted({round(float(y), 3) for y in seeds[0].get_offsets()[:, 1]}) == [
        0.2, 0.4]
    note = fig.texts[-1].get_text()
    assert "half-width at most 0.004" in note and "every seed" in note


def test_report_renders_norms() -> None:
    from workbench.commands.report import _md_cell

    assert _md_cell("E||f - A||^2 = 0.31 >= 0.2") == "E‖f − A‖² = 0.31 >= 0.2"
    assert _md_cell("a | b") == "a \\| b"
