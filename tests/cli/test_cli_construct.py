"""``workbench construct``: JSON contract, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests import plugin_fixtures as fx
from tests.cli.bad_input_contract import json_error_problems
from workbench.cli import main
from workbench.core.verdict import VERDICT_LEVEL
from workbench.testing import plant, replaced


def _run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["construct", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize(
    "args",
    [
        ["full-rank", "--d", "4", "--eps", "0.05"],
        ["full-rank", "--d", "3", "--N", "1", "--beta", "2"],
        ["random-features", "--d", "3", "--heads", "8", "--seeds", "2"],
        ["majority-vote", "--d", "4", "--heads", "7", "--seeds", "3"],
        ["majority-vote", "--d", "4", "--heads", "3", "--N", "3"],
        ["biased", "--d", "2"],
        ["biased", "--d", "2", "--normalizer", "softmax", "--beta", "50"],
    ],
)
def test_json_output(capsys, args):
    rc, out, err = _run(capsys, *args, "--eval-samples", "2000", "--json", "--seed", "3")
    assert rc == 0, err
    p = json.loads(out)
    assert p["construction"] == args[0]
    assert {"mean", "lo", "hi"} <= set(p["measured_error"])
    assert {"value", "relation", "method"} <= set(p["claimed_error"])
    m, c = p["measured_error"], p["claimed_error"]
    resolved = c["relation"] == "<=" or (m["hi"] - m["lo"]) / 2 <= p["resolution"]
    assert p["params"]["seed"] == 3 and p["verdict"] == ("holds" if resolved else "inconclusive")
    assert len(p["runs"]) == p["params"]["seeds"]
    assert p["measured_error"]["level"] == VERDICT_LEVEL and "nan" not in out.lower()


@pytest.mark.parametrize("args", [
    ["random-features", "--d", "8", "--heads", "64", "--eval-samples", "10"],
    ["random-features", "--d", "3", "--heads", "8", "--eval-samples", "4000"],
    ["random-features", "--d", "3", "--heads", "8", "--eval-samples", "2000",
     "--resolution", "0.5"],
    ["full-rank", "--d", "4", "--eps", "0.05", "--eval-samples", "500"],
])
def test_construct_and_check_give_the_same_verdict_on_the_same_intervals(capsys, args):
    """The verdict ``construct`` prints is the one ``Evidence`` (and so ``check``) gives on the
    same measured and claimed intervals: one rule, ``workbench.core.verdict.decide``."""
    from workbench.proofs.claim import Evidence

    rc, out, err = _run(capsys, *args, "--json")
    assert rc in (0, 1), err
    p = json.loads(out)
    m, c = p["measured_error"], p["claimed_error"]
    ev = Evidence(m["mean"], c["value"], c["relation"], "monte_carlo", ci=(m["lo"], m["hi"]),
                  ci_level=m["level"], resolution=p["resolution"],
                  bound_ci=(c["lo"], c["hi"]) if c.get("method") == "monte_carlo" else None)
    assert p["verdict"] == ev.verdict


def test_a_wide_interval_does_not_confirm_an_equality(capsys):
    """Ten samples give an interval about 0.26 wide: it cannot confirm the claimed error."""
    rc, out, _ = _run(capsys, "random-features", "--d", "8", "--heads", "64", "--eval-samples",
                      "10", "--json")
    p = json.loads(out)
    assert rc == 0 and p["measured_error"]["hi"] - p["measured_error"]["lo"] > 0.1
    assert p["verdict"] == "inconclusive"


def test_human_output(capsys):
    rc, out, _ = _run(capsys, "biased", "--d", "2", "--eval-samples", "200")
    assert rc == 0 and "measured error" in out and "claimed error" in out


def test_same_seed_same_numbers(capsys):
    args = ["random-features", "--d", "3", "--heads", "4", "--eval-samples", "500", "--json"]
    a = json.loads(_run(capsys, *args)[1])
    b = json.loads(_run(capsys, *args)[1])
    assert a["measured_error"] == b["measured_error"]


@pytest.mark.parametrize(
    "args,name",
    [
        (["full-rank", "--d", "1"], "d"),
        (["full-rank", "--d", "3", "--N", "4"], "--N"),
        (["random-features", "--law", "gauss"], "law"),
        (["random-features", "--heads", "0"], "--heads"),
        (["majority-vote", "--copy-style", "x"], "--copy-style"),
        (["biased", "--beta", "-2", "--normalizer", "softmax"], "--beta"),
        (["full-rank", "--eps", "1.5"], "--eps"),
        (["majority-vote", "--seeds", "1"], "--seeds"),
        (["majority-vote", "--points", "grid"], "--points"),
        (["biased", "--eval-samples", "1"], "--eval-samples"),
        (["full-rank", "--seeds", "0"], "seeds"),
        (["full-rank", "--d", "x"], "d"),
    ],
)
def test_bad_input_exit_2_one_line(capsys, args, name):
    rc, out, err = _run(capsys, *args)
    assert rc == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and name in err


def test_majority_vote_defaults_reach_a_documented_verdict(capsys):
    rc, out, err = _run(capsys, "majority-vote", "--eval-samples", "400", "--json")
    p = json.loads(out)
    assert p["params"]["seeds"] >= 2  # the default pools several head draws
    m = p["measured_error"]
    assert m["lo"] is not None and m["lo"] <= m["mean"] <= m["hi"]
    assert p["verdict"] in {"holds", "violated", "inconclusive"}
    assert rc == (1 if p["verdict"] == "violated" else 0), err


def test_eps_range_agrees_with_heads_needed(capsys):
    for args in (["construct", "full-rank", "--eps", "1.01"],
                 ["bounds", "heads-needed", "--d", "8", "--rank", "1", "--eps", "1.01"]):
        rc = main(args)
        err = capsys.readouterr().err
        assert rc == 2 and "--eps" in err and "(0, 1]" in err
    rc = main(["construct", "full-rank", "--d", "3", "--eps", "1", "--eval-samples", "200",
               "--json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["params"]["eps"] == 1.0


def test_cli_choices_match_the_library():
    from workbench.commands.construct import _run as run_mod
    from workbench.commands.construct import biased as b_cmd
    from workbench.commands.construct import majority_vote as mv_cmd
    from workbench.commands.construct import random_features as rf_cmd
    from workbench.constructions import biased, majority_vote, random_features
    from workbench.constructions._kernel_solve import SOLVERS
    from workbench.core.sphere import POINT_LAWS

    assert set(run_mod.POINTS) == set(POINT_LAWS)
    assert set(rf_cmd.LAWS) == set(random_features.HEAD_LAWS)
    assert set(rf_cmd.SOLVERS) == set(SOLVERS)
    assert set(mv_cmd.COPY_STYLES) == set(majority_vote.COPY_STYLES)
    assert set(b_cmd.NORMALIZERS) == set(biased.NORMALIZERS)
    assert set(b_cmd.COEFFICIENTS) == set(biased.COEFFICIENT_LAWS)


# ------------------------------------------------- construct NAME: any registered construction
FX = "tests.plugin_fixtures"


def test_a_module_function_returning_a_module_and_a_number_holds(capsys):
    rc, out, err = _run(capsys, f"{FX}:midpoint", "--d", "5", "--eval-samples", "2000", "--json")
    assert rc == 0, err
    p = json.loads(out)
    assert p["construction"] == f"{FX}:midpoint" and p["verdict"] == "holds"
    assert p["measured_error"]["mean"] == pytest.approx(0.5, abs=1e-6)
    assert p["claimed_error"]["value"] == 0.55 and p["claimed_error"]["relation"] == "<="
    assert p["params"]["d"] == 5 and p["params"]["claim"] == 0.55


def test_a_claimed_error_the_model_does_not_reach_is_violated(capsys):
    rc, out, err = _run(capsys, f"{FX}:overclaimed", "--eval-samples", "2000", "--json")
    assert rc == 1 and json.loads(out)["verdict"] == "violated"
    assert "contradicts the claimed error" in err and len(err.strip().splitlines()) == 1
    rc, out, _ = _run(capsys, f"{FX}:overclaimed", "--eval-samples", "2000")
    assert rc == 1 and "verdict: violated" in out


def test_params_are_typed_by_their_defaults(capsys):
    rc, out, err = _run(capsys, f"{FX}:midpoint", "--param", "claim=0.6", "--param",
                        "stacked=true", "--param", "copies=3", "--param", "label=7",
                        "--eval-samples", "500", "--json")
    assert rc == 0, err
    p = json.loads(out)["params"]
    assert (p["claim"], p["stacked"], p["copies"], p["label"]) == (0.6, True, 3, "7")
    assert [type(p[k]) for k in ("claim", "stacked", "copies", "label")] == [float, bool, int, str]
    rc, out, _ = _run(capsys, f"{FX}:midpoint", "--param", "claim=0.45", "--param",
                      "stacked=no", "--eval-samples", "500", "--json")
    assert rc == 1 and json.loads(out)["params"]["stacked"] is False  # the claim reaches fn


@pytest.mark.parametrize("item,says", [
    ("nope=1", "KEY one of: claim, copies, label, stacked"),
    ("claim", "KEY one of: claim, copies, label, stacked"),
    ("claim=abc", "claim must be a finite number in (-inf, inf)"),
    ("copies=1.5", "copies must be an integer"),
    ("stacked=maybe", "stacked must be true or false"),
])
def test_a_bad_param_exits_2_naming_param(capsys, item, says):
    rc, out, err = _run(capsys, f"{FX}:midpoint", "--param", item)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("error: --param") and says in err


def test_a_construction_without_params_says_so(capsys):
    rc, _, err = _run(capsys, f"{FX}:overclaimed", "--param", "claim=1")
    assert rc == 2 and "--param" in err and "takes none" in err


@pytest.mark.parametrize("args,says", [
    (["no-such-construction"], "NAME: construction must be one of"),
    (["workbench.plugins.builtin:nothing_here"], "cannot be imported"),
    (["hardmax-rank1", "--param", "nope=2"], "--param must be KEY=VALUE with KEY one of: steps"),
    (["hardmax-rank1", "--heads", "0"], "--heads"),
    (["bayes-heads", "--d", "1"], "--d"),
    (["hardmax-rank1", "--N", "3"], "--N must be 2"),
])
def test_bad_input_to_a_named_construction_exits_2_before_torch(args, says):
    """A built-in name is answered before any installed package loads; an unknown one needs
    the packages (which may import torch), so torch stays out only when none is installed."""
    from importlib.metadata import entry_points

    probe = ("import sys, json; from workbench.cli import main; rc = main(json.loads(sys.argv[1]));"
             " print(json.dumps({'rc': rc, 'torch': 'torch' in sys.modules}))")
    proc = subprocess.run([sys.executable, "-c", probe, json.dumps(["construct", *args])],
                          capture_output=True, text=True, timeout=120)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    packages = bool(entry_points(group="workbench.constructions"))
    builtin = args[0] in ("hardmax-rank1", "bayes-heads")
    assert res["rc"] == 2 and (packages and not builtin or not res["torch"]), (res, proc.stderr)
    err = proc.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err and says in err, err


def test_construct_help_lists_every_registered_construction(capsys, monkeypatch):
    from workbench import plugins

    known = dict(plugins.available("construction"))
    mine = plugins.Construction("listed-toy", fx.midpoint, source="my-package",
                                description="a toy that must be listed")
    registry = {**plugins._REGISTRY, "construction": {**known, "listed-toy": mine}}
    monkeypatch.setattr(plugins, "_REGISTRY", registry)
    assert main(["construct", "--help"]) == 0
    out = capsys.readouterr().out
    assert "listed-toy" in out and "[my-package] a toy that must be listed" in out
    for name, c in known.items():
        assert name in out and f"[{c.source}" in out, name
    assert {"hardmax-rank1", "bayes-heads"} <= set(known)
    rc = main(["construct", "listed-toy", "--eval-samples", "300", "--json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["construction"] == "listed-toy"


def test_a_named_construction_shows_its_defaults_and_params(capsys):
    assert main(["construct", "bayes-heads", "--help"]) == 0
    out = capsys.readouterr().out
    assert "n_fit=20000" in out and "[default: 4;" in out and "--param" in out


@pytest.mark.parametrize("own,registered", [
    (["random-features", "--d", "4", "--heads", "16"],
     ["workbench.plugins.builtin:RANDOM_FEATURES", "--d", "4", "--heads", "16"]),
    (["majority-vote", "--d", "4", "--heads", "5", "--seeds", "3"],
     ["workbench.plugins.builtin:MAJORITY_VOTE", "--d", "4", "--heads", "5", "--seeds", "3"]),
    (["full-rank", "--d", "4", "--eps", "0.05"],
     ["workbench.plugins.builtin:FULL_RANK", "--d", "4", "--param", "eps=0.05"]),
])
def test_the_registered_builtins_measure_as_their_own_commands(capsys, own, registered):
    """The specialised subcommands and the registered objects (through the generic path) are
    the same construction on the same samples."""
    tail = ["--eval-samples", "800", "--seed", "2", "--json"]
    a = json.loads(_run(capsys, *own, *tail)[1])
    b = json.loads(_run(capsys, *registered, *tail)[1])
    assert a["measured_error"] == b["measured_error"] and a["verdict"] == b["verdict"]
    assert a["claimed_error"]["value"] == b["claimed_error"]["value"]


def test_the_sandwich_witnesses_as_constructions_keep_their_numbers(capsys):
    from workbench.constructions.optimized import bayes_heads, hardmax_rank1

    rc, out, err = _run(capsys, "hardmax-rank1", "--d", "6", "--heads", "4", "--param",
                        "steps=30", "--seed", "1", "--eval-samples", "20000", "--json")
    p = json.loads(out)
    assert rc == 0 and p["verdict"] == "holds", err
    assert p["claimed_error"]["value"] == hardmax_rank1(6, 4, steps=30, seed=1).error
    rc, out, err = _run(capsys, "bayes-heads", "--d", "6", "--rank", "2", "--heads", "3",
                        "--param", "n_fit=4000", "--param", "n_eval=8000", "--seed", "1",
                        "--eval-samples", "8000", "--json")
    p = json.loads(out)
    w = bayes_heads(6, 2, 3, n_fit=4000, n_eval=8000, seed=1)
    assert rc == 0 and p["verdict"] != "violated", err
    assert (p["claimed_error"]["value"], p["claimed_error"]["lo"]) == (w.error, w.ci[0])


def test_a_plugin_memory_estimate_refuses_a_size_that_cannot_fit(capsys):
    """The estimate is 8 H d^2 bytes: 10**15 heads at d = 5 need 200 PB, so the run is refused
    before the construction is built; without an estimate the same size is attempted (the
    midpoint ignores its heads), and at a small size the estimated plug-in runs."""
    big = ("--heads", str(10**15), "--eval-samples", "500", "--json")
    rc, out, err = _run(capsys, f"{FX}:SIZED", "--d", "5", *big)
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert json_error_problems(out, "--heads", rc) == []  # --json: the error object
    assert err.startswith(f"error: --heads {10**15} needs at least ~200 PB of memory")
    rc, out, err = _run(capsys, f"{FX}:UNSIZED", "--d", "5", *big)
    assert rc == 0 and json.loads(out)["verdict"] == "holds", err
    rc, out, err = _run(capsys, f"{FX}:SIZED", "--d", "5", "--heads", "3", *big[2:])
    assert rc == 0 and json.loads(out)["verdict"] == "holds", err
    with plant("workbench.verifiers.resources:check_fits", replaced(lambda *a, **k: None)):
        rc, out, err = _run(capsys, f"{FX}:SIZED", "--d", "5", *big)
    assert rc == 0, err  # without the check, the refusal above is gone


@pytest.mark.parametrize("seeds", ["1", "2"])
def test_an_error_interval_never_reaches_below_zero(capsys, seeds):
    """A rare-event error (one full-rank head at eps = 0.01, 300 samples: a CLT interval
    would reach below 0) prints an interval of an error, cut at 0, per seed and pooled."""
    rc, out, err = _run(capsys, "full-rank", "--d", "8", "--eps", "0.01", "--eval-samples", "300",
                        "--seeds", seeds, "--json")
    p = json.loads(out)
    m = p["measured_error"]
    assert rc in (0, 1), err
    assert 0.0 <= m["lo"] <= m["mean"] <= m["hi"]
    assert all(0.0 <= r["measured"]["lo"] <= r["measured"]["mean"] for r in p["runs"])
    rc, out, _ = _run(capsys, "full-rank", "--d", "8", "--eps", "0.01", "--eval-samples", "300",
                      "--seeds", seeds)
    assert "CI [-" not in out and "CI [0, " in out


def test_an_ensemble_error_interval_never_reaches_below_zero(capsys):
    """The Student-t interval over seeds of an ensemble claim is cut at 0 too."""
    from workbench.verifiers.construct import run_construction

    def build(s: int):

        from workbench.core.targets import nearest_neighbour

        def model(X, y):  # exact except on a rare half-space of queries that varies by seed
            out = nearest_neighbour(X, y).clone()
            out[y[:, 0] > 0.97 - 0.02 * s] = 0.0
            return out

        return model, 0.5

    p = run_construction("rare", build, d=3, N=2, seeds=3, eval_samples=400, ensemble=True)
    assert 0.0 <= p["measured_error"]["lo"] <= p["measured_error"]["mean"]
