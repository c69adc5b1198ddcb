"""``workbench train``: JSON contract, one-line bad-input errors, resumable runs."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main

ARGS = ["train", "--d", "6", "--N", "2", "--rank", "1", "--heads", "3", "--steps", "15",
        "--batch", "32", "--eval-samples", "500", "--device", "cpu"]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_per_seed_and_best(capsys) -> None:
    code, out, err = run(capsys, *ARGS, "--seeds", "3", "--seed", "4", "--json")
    assert code == 0, err
    p = json.loads(out)
    assert [s["seed"] for s in p["seeds"]] == [4, 5, 6]
    assert p["params"]["paper"] == 3 * 1 * 6 and p["params"]["total"] == 4 * 3 * 6
    for s in p["seeds"]:
        h = s["heldout"]
        assert h["lo"] <= h["mean"] <= h["hi"] and h["n"] == 500 and h["level"] == 0.95
    best = min(p["seeds"], key=lambda s: s["heldout"]["mean"])  # by held-out error, not loss
    assert p["best_of_seeds"]["seed"] == best["seed"]
    assert p["best_of_seeds"]["chosen_by"] == "held-out error"
    assert p["task"] == {"name": "nearest", "d": 6, "N": 2, "points": "iid",
                         "queries": "uniform"}


@pytest.mark.parametrize("extra", [["--task", "farthest", "--layers", "2"],
                                   ["--task", "regression", "--layers", "2"],
                                   ["--points", "orthonormal"],
                                   ["--distribution", "orthonormal"]])
def test_other_tasks_run(capsys, extra: list[str]) -> None:
    code, out, err = run(capsys, *ARGS, *extra, "--json")
    assert code == 0, err
    assert json.loads(out)["seeds"][0]["heldout"]["mean"] > 0


@pytest.mark.parametrize("flag,value,name", [("--rank", "7", "--rank"), ("--steps", "0", "--steps"),
                                             ("--d", "1", "--d"), ("--seeds", "0", "--seeds"),
                                             ("--lr", "-1", "--lr"), ("--N", "9", "--N")])
def test_bad_input_one_line_exit_2(capsys, flag: str, value: str, name: str) -> None:
    args = list(ARGS)
    if flag in args:
        args[args.index(flag) + 1] = value
    else:
        args += [flag, value]
    if flag == "--N":
        args += ["--points", "orthonormal"]
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and name in err and "Traceback" not in err


def test_checkpoint_rerun_gives_same_result(capsys, tmp_path) -> None:
    ck = str(tmp_path / "ck.pt")
    code, first, err = run(capsys, *ARGS, "--checkpoint", ck, "--json")
    assert code == 0, err
    code, second, err = run(capsys, *ARGS, "--checkpoint", ck, "--json")
    assert code == 0, err
    assert json.loads(first)["seeds"] == json.loads(second)["seeds"]
    code, _, err = run(capsys, *ARGS, "--seed", "3", "--checkpoint", ck, "--json")
    assert code == 2 and "checkpoint" in err
    assert "specs[0].seed: 0 (saved) != 3" in err and "config.eval_seed" in err


def test_human_output(capsys) -> None:
    code, out, err = run(capsys, *ARGS)
    assert code == 0, err
    assert "held-out" in out and "best of seeds" in out


def test_orthonormal_n2_prints_the_certified_bound(capsys) -> None:
    from workbench.core.bounds.certified import certified_lower_bound
    from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound

    code, out, err = run(capsys, *ARGS, "--points", "orthonormal", "--json")
    assert code == 0, err
    cb = json.loads(out)["certified_bound"]
    assert cb["lower_bound"] == certified_lower_bound(6, 1, 3).value  # the larger bound
    assert cb["lower_bound"] >= harmonic_bound(6, 1, 3).enclosure[0]
    assert "full value maps" in cb["covers"]
    code, out, _ = run(capsys, *ARGS, "--points", "orthonormal")
    assert "lower bound (d=" in out and "≥ bound" in out and "×" in out
    at_3 = [*ARGS[:3], *ARGS[5:]]  # without --N 2: a flag is given once
    assert ARGS[3:5] == ["--N", "2"]
    code, out, _ = run(capsys, *at_3, "--N", "3")  # i.i.d. keys at N = 3: none applies, we say so
    assert "lower bound (d=" not in out and "no lower bound covers this run (iid keys" in out
    assert "3 <= N <= d on orthonormal keys (D_N)" in out


def test_orthonormal_n_keys_prints_the_bound_beyond_two_keys(capsys) -> None:
    """3 <= N <= d on D_N at one layer: the certified bound at N >= 3 (certified-n, decided by
    n-keys here) beside the result with the margin; N = d - 1, which no bound covers yet, says
    so in one line."""
    from workbench.plugins import get_bound

    args = [*ARGS[:2], "8", "--N", "4", *ARGS[5:], "--points", "orthonormal"]
    code, out, err = run(capsys, *args, "--arch", "generalized", "--score", "set", "--json")
    assert code == 0, err
    cb = json.loads(out)["certified_bound"]
    bv = get_bound("certified-n").evaluate(8, 1, 3, 4)
    assert cb["source"] == bv.source and cb["lower_bound"] == bv.value > 0
    assert get_bound("n-keys").interval(8, 1, 3, 4)[0] <= bv.value  # a part of it
    assert cb["rigorous"] is bv.rigorous and "certified-n" in cb["covers"]
    assert "on D_N" in cb["covers"] and "another N is another theorem" in cb["covers"]
    row = cb["per_seed"][0]
    assert row["margin"] == pytest.approx(row["heldout"] - cb["lower_bound"])
    code, out, _ = run(capsys, *args)
    assert code == 0 and "lower bound (d=8, rank=1, heads=3)" in out
    assert f"from {bv.source}" in out
    from workbench.core.bounds.sequence_length.certified_n import not_covered

    code, out, _ = run(capsys, *[*ARGS[:2], "8", "--N", "7", *ARGS[5:]], "--points",
                       "orthonormal")
    if not_covered(8, 7) is None:  # a bound for N up to d has joined certified-n
        assert code in (0, 1) and "lower bound (d=8, rank=1, heads=3)" in out
    else:
        assert code == 0 and "lower bound (d=" not in out
        assert "no lower bound covers this run" in out


def test_iid_n2_prints_the_certified_bound_by_the_transfer(capsys) -> None:
    """The same number as on D_2 (docs/derivations/iid_transfer.md), stated for i.i.d. keys."""
    from workbench.core.bounds.certified import certified_lower_bound

    code, out, err = run(capsys, *ARGS, "--arch", "generalized", "--json")
    assert code == 0, err
    cb = json.loads(out)["certified_bound"]
    assert cb["lower_bound"] == certified_lower_bound(6, 1, 3).value and cb["points"] == "iid"
    assert "i.i.d. uniform keys by the i.i.d. transfer" in cb["covers"]
    code, out, _ = run(capsys, *ARGS)
    assert cb["certified"] == certified_lower_bound(6, 1, 3).value  # both parts are rigorous
    parts = {q["name"]: q["rigorous"] for q in cb["parts"]}
    assert cb["rigorous"] is True and parts["fiber"] is True
    assert code == 0 and "lower bound (d=6, rank=1, heads=3): " in out
    assert "labels: proved, rigorous, certified >= " in out
    assert "i.i.d. transfer" in out


@pytest.mark.parametrize("task,needle,absent", [
    ("nearest", "nearest neighbour", "farthest"),
    ("farthest", "the point farthest from token i", "nearest neighbour"),
    ("regression", "predicted label of the query", "nearest neighbour"),
])
def test_error_meaning_is_the_tasks_own(capsys, task: str, needle: str, absent: str) -> None:
    extra = [] if task == "nearest" else ["--layers", "2"]
    code, out, err = run(capsys, *ARGS, "--task", task, *extra, "--json")
    assert code == 0, err
    meaning = json.loads(out)["error_meaning"]
    assert needle in meaning and absent not in meaning
    code, out, _ = run(capsys, *ARGS, "--task", task, *extra)
    assert meaning in out


def _with_steps(steps: int) -> list[str]:
    args = list(ARGS)
    args[args.index("--steps") + 1] = str(steps)
    return args


def test_resume_says_so_and_a_finished_run_extends_to_more_steps(capsys, tmp_path) -> None:
    from workbench.verifiers.train import read_checkpoint

    ck = str(tmp_path / "ck.pt")
    code, out, err = run(capsys, *_with_steps(6), "--checkpoint", ck, "--json")
    assert code == 0, err
    assert json.loads(out)["resumed"] is None
    six = read_checkpoint(ck)["groups"][0]["losses"].clone()
    code, out, err = run(capsys, *_with_steps(6), "--checkpoint", ck, "--json")
    p = json.loads(out)
    assert code == 0 and p["resumed"] == {"checkpoint": ck, "from_step": 6, "planned_steps": 6,
                                          "replanned": False}
    code, out, err = run(capsys, *_with_steps(10), "--checkpoint", ck)
    assert code == 0, err
    assert f"resumed from checkpoint {ck} at step 6 of a run planned for 6 steps" in out
    saved = read_checkpoint(ck)
    losses = saved["groups"][0]["losses"]
    assert saved["step"] == 10 and losses.shape[0] == 10
    assert (losses[:6] == six).all() and (losses[6:] > 0).all()  # 4 new steps, the old kept
    code, out, err = run(capsys, *_with_steps(10), "--checkpoint", ck, "--json")
    assert code == 0 and json.loads(out)["resumed"]["planned_steps"] == 10


def test_fewer_steps_than_the_checkpoint_reached_is_bad_input(capsys, tmp_path) -> None:
    ck = str(tmp_path / "ck.pt")
    assert run(capsys, *_with_steps(6), "--checkpoint", ck)[0] == 0
    code, out, err = run(capsys, *_with_steps(4), "--checkpoint", ck)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--steps must be >= 6" in err and "Traceback" not in err


def test_planted_low_error_below_bound_exits_1(capsys, monkeypatch) -> None:
    import dataclasses

    import workbench.core.bounds.certified as cb_mod

    real = cb_mod.certified_lower_bound

    def inflated(d, r, H, *a):  # a bound planted 10x too high must be reported as broken
        cb = real(d, r, H, *a)
        return cb_mod.combined(cb.harmonic, dataclasses.replace(cb.fiber, enclosure=(10.0, 10.0)))

    monkeypatch.setattr(cb_mod, "certified_lower_bound", inflated)
    code, out, err = run(capsys, *ARGS, "--points", "orthonormal")
    assert code == 1 and "BELOW" in out and "counterexample" in err


@pytest.mark.parametrize("arch,needle", [("standard", "standard multi-head attention"),
                                         ("generalized", "generalized attention (Eq. 2)")])
def test_arch_is_trained_and_named(capsys, arch: str, needle: str) -> None:
    code, out, err = run(capsys, *ARGS, "--arch", arch, "--json")
    assert code == 0, err
    p = json.loads(out)
    assert p["arch"] == arch and needle in p["model_class"]
    assert p["model"] == {"standard": "attention", "generalized": "generalized"}[arch]
    if arch == "generalized":  # full d x d value maps: more parameters than H r d
        assert p["params"]["total"] > p["params"]["paper"]


def test_layers_above_one_is_said_to_be_an_encoder(capsys) -> None:
    code, out, _ = run(capsys, *ARGS, "--layers", "2")
    assert code == 0 and "post-norm encoder layer" in out
    code, _, err = run(capsys, *ARGS, "--layers", "2", "--arch", "generalized")
    assert code == 2 and "--arch generalized" in err and "--layers" in err


def test_train_choices_match_the_library() -> None:
    from workbench.commands import train as cmd
    from workbench.core.sphere import POINT_LAWS
    from workbench.models.scores import SCORE_KINDS
    from workbench.verifiers.tasks import TASKS

    assert set(cmd.TASK_NAMES) == set(TASKS) and set(cmd.POINTS) == set(POINT_LAWS)
    assert set(cmd.SCORES) == set(SCORE_KINDS)


def test_json_stays_clean_on_a_terminal(capsys, monkeypatch) -> None:
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    code, out, err = run(capsys, *ARGS, "--json")
    assert code == 0 and err == "" and json.loads(out)["steps"] == 15


def test_fingerprint_diff_names_fields() -> None:
    from workbench.verifiers.train import fingerprint_diff

    a = json.dumps([{"d": 4}, [{"seed": 0}, {"seed": 1}], {"steps": 5}])
    b = json.dumps([{"d": 5}, [{"seed": 0}], {"steps": 5}])
    assert fingerprint_diff(a, b) == "task.d: 4 (saved) != 5; specs: 2 entries (saved) != 1"
    assert fingerprint_diff(a, a) == "fingerprints differ"
