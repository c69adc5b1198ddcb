"""The sandwich (docs/derivations/lower_bound.md): witnesses replay, planted faults are caught,
the Eq. 2 bound lies below every witness, the optimisers are deterministic."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main
from workbench.constructions.optimized import (
    Witness,
    bayes_heads,
    hardmax_rank1,
)
from workbench.core.bounds.certified import CertifiedBound, combined
from workbench.core.bounds.certified import certified_lower_bound as true_certified
from workbench.proofs.claim import combine
from workbench.proofs.paper.thm2 import sandwich as claims
from workbench.verifiers import sandwich as sw

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("make", ["hardmax", "bayes", "one_head"])
def test_saved_witness_replays_to_its_recorded_error(tmp_path: Path, make: str) -> None:
    if make == "hardmax":
        w = hardmax_rank1(6, 4, steps=30, seed=1)
    elif make == "bayes":
        w = bayes_heads(6, 2, 3, n_fit=4000, n_eval=8000, seed=1)
    else:
        w = sw.one_head_witness(6, 2, n_eval=40_000, seed=1)
    path = sw.save_witness(w, tmp_path / f"{make}.npz")
    loaded, err, ci = sw.replay_file(path)
    assert loaded.method == w.method and loaded.error == w.error
    if make == "one_head":  # exact error, replayed by a fresh Monte Carlo
        assert ci[0] <= w.error <= ci[1] and ci[1] - ci[0] < 0.03
    else:
        assert err == pytest.approx(w.error, abs=1e-12)
    assert combine(claims.replay_evidence(path), "experiment") == "holds"


def test_committed_witnesses_replay() -> None:
    res = ROOT / "benchmarks" / "results" / "sandwich.json"  # committed: missing is a failure
    pts = json.loads(res.read_text())["points"]
    small = [p for p in pts if p["d"] <= 6 and p["heads"] <= 4 and p["witness_file"]][:4]
    assert small
    for p in small:
        ev = claims.replay_evidence(
            ROOT / p["witness_file"], true_certified(p["d"], p["r"], p["heads"]).value
        )
        assert combine(ev, "experiment") == "holds", p


def test_weakened_witness_is_caught_by_its_replay(tmp_path: Path) -> None:
    for w in (
        hardmax_rank1(6, 4, steps=30, seed=2),
        bayes_heads(6, 2, 3, n_fit=4000, n_eval=8000, seed=2),
    ):
        weak = dataclasses.replace(w, params={**w.params, "a": 0.9 * w.params["a"]})
        path = sw.save_witness(weak, tmp_path / f"{w.method}.npz")  # recorded error unchanged
        assert combine(claims.replay_evidence(path), "experiment") == "violated"


def _scaled_bound(factor: float, heads: int | None = 1):  # type: ignore[no-untyped-def]
    def inflated(d: int, r: int, H: int, value_class: str = "eq2") -> CertifiedBound:
        cb = true_certified(d, r, H, value_class)
        if (heads is not None and H != heads) or value_class != "eq2":
            return cb
        v = factor * cb.value  # planted through the fiber side, which then is the larger
        fiber = dataclasses.replace(cb.fiber, value=v, enclosure=(v, v))
        return combined(cb.harmonic, fiber)

    return inflated


def test_true_bound_holds_and_lies_below_every_witness() -> None:
    for d, r, H in ((8, 1, 1), (6, 2, 2), (8, 4, 4), (4, 1, 16)):
        p = sw.sandwich(d, r, H)
        assert not p.violated
        assert all(c["ci"][1] >= p.certified for c in p.candidates)
        assert p.certified_query_values <= p.certified <= p.best_ci[1]


def test_optimisers_deterministic_under_a_seed() -> None:
    a, b = hardmax_rank1(6, 5, steps=40, seed=7), hardmax_rank1(6, 5, steps=40, seed=7)
    # the weights are bit-identical; the error agrees to rounding (LAPACK may reorder sums)
    assert np.array_equal(a.params["Q"], b.params["Q"])
    assert a.error == pytest.approx(b.error, abs=1e-13)
    c = hardmax_rank1(6, 5, steps=40, seed=8)
    assert not np.array_equal(a.params["Q"], c.params["Q"])
    x, y = (
        bayes_heads(6, 2, 3, n_fit=3000, n_eval=3000, seed=4),
        bayes_heads(6, 2, 3, n_fit=3000, n_eval=3000, seed=4),
    )
    assert np.array_equal(x.params["a"], y.params["a"]) and x.error == y.error


def test_witness_roundtrip_keeps_every_array(tmp_path: Path) -> None:
    w = Witness(
        "bayes_heads",
        5,
        2,
        2,
        0.3,
        (0.29, 0.31),
        {"B": np.ones((2, 2, 5)), "a": np.array([0.5, 0.4])},
        10,
        3,
    )
    back = Witness.load(w.save(tmp_path / "w.npz"))
    assert (back.d, back.r, back.heads, back.n_eval, back.seed) == (5, 2, 2, 10, 3)
    assert back.ci == w.ci and np.array_equal(back.params["B"], w.params["B"])


def test_cli_sandwich(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = main(
        [
            "bounds",
            "sandwich",
            "--d",
            "6",
            "--rank",
            "2",
            "--heads",
            "2",
            "--json",
            "--witness-dir",
            str(tmp_path),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0
    p = json.loads(out)
    assert p["certified"] <= p["best_error"] and Path(p["witness_file"]).exists()
    assert p["ratio"] == pytest.approx(p["best_error"] / p["certified"])
    code = main(["bounds", "sandwich", "--d", "6", "--rank", "7", "--heads", "2"])
    out, err = capsys.readouterr()
    assert code == 2 and "rank" in err and out == ""

    monkeypatch.setattr(sw, "certified_lower_bound", _scaled_bound(1.5, heads=None))
    assert main(["bounds", "sandwich", "--d", "6", "--rank", "2", "--heads", "1"]) == 1


# ------------------------------------------------ random features, named bounds and witnesses
FX = "tests.plugin_fixtures"


def _sandwich(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    code = main(["bounds", "sandwich", *args, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else {}), err


def test_random_features_is_a_default_witness(capsys: pytest.CaptureFixture[str]) -> None:
    """At (8, 1, 256) random features (error 0.205) beat every other quick witness (one Bayes
    head: 0.457). The witness draws its heads from the law and seed of least exact error, so it
    is at most ``construct random-features`` (the paper's law, seed 0), and its measured error
    agrees with its exact one."""
    p = sw.sandwich(8, 1, 256)
    rf = [c for c in p.candidates if c["method"] == "random_features"]
    assert len(rf) == 1 and rf[0]["interval"] == "normal" and rf[0]["level"] == sw.LEVEL
    law, draw, exact = sw.best_law(8, 256)
    assert p.random_features_law == f"{law} (draw {draw})"
    assert rf[0]["ci"][0] <= exact <= rf[0]["ci"][1]
    assert main(["construct", "random-features", "--d", "8", "--heads", "256", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert exact <= out["claimed_error"]["value"]
    assert p.best_error <= out["measured_error"]["hi"] and p.best_error < 0.3 and not p.violated


def test_the_random_features_law_is_the_one_of_least_exact_error() -> None:
    from workbench.constructions.random_features import HEAD_LAWS, random_features

    law, draw, exact = sw.best_law(4, 4, seed=1, draws=2)
    errs = [random_features(4, 4, lw, generator=s, build_model=False)[1].value
            for lw in HEAD_LAWS for s in (1, 2)]
    assert exact == min(errs) and draw in (1, 2) and law in HEAD_LAWS


def test_random_features_are_left_out_only_when_too_large(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small = sw.sandwich(4, 1, 2)
    assert "random_features" in [c["method"] for c in small.candidates] and not small.skipped
    monkeypatch.setitem(sw.RF_MAX_SIZE, "quick", 4 * 4 * 2 - 1)
    p = sw.sandwich(4, 1, 2)
    assert "random_features" not in [c["method"] for c in p.candidates]
    assert p.skipped and "H d^2 = 32" in p.skipped[0]
    assert [c for c in p.candidates] == [c for c in small.candidates
                                         if c["method"] != "random_features"]


def test_a_random_features_witness_replays_and_a_weakened_one_is_caught(tmp_path: Path) -> None:
    w = sw.random_features_witness(6, 8, n_eval=8000, seed=3)
    path = sw.save_witness(w, tmp_path / "rf.npz")
    loaded, err, ci = sw.replay_file(path)
    assert loaded.method == "random_features" and err == pytest.approx(w.error, abs=1e-12)
    assert combine(claims.replay_evidence(path), "experiment") == "holds"
    weak = dataclasses.replace(w, params={**w.params, "a": 0.9 * w.params["a"]})
    path = sw.save_witness(weak, tmp_path / "weak.npz")
    assert combine(claims.replay_evidence(path), "experiment") == "violated"


def test_the_bound_is_any_named_bound(capsys: pytest.CaptureFixture[str]) -> None:
    code, p, _ = _sandwich(capsys, "--d", "6", "--rank", "1", "--heads", "1")
    assert code == 0 and p["bound"] == "certified" and p["bound_value"] == p["certified"]
    code, p, err = _sandwich(capsys, "--d", "6", "--rank", "1", "--heads", "1", "--bound",
                             f"{FX}:bound_0_6")
    assert code == 1 and p["violated"] and "bound_0_6" in err  # one head: 0.441 < 0.6
    assert (p["bound"], p["bound_value"], p["bound_status"]) == (f"{FX}:bound_0_6", 0.6,
                                                                 "conjectured")
    assert p["ratio"] == pytest.approx(p["best_error"] / 0.6)
    assert p["certified"] == true_certified(6, 1, 1).value  # still reported
    code, p, _ = _sandwich(capsys, "--d", "6", "--rank", "1", "--heads", "1", "--bound",
                           f"{FX}:bound_0_3")
    assert code == 0 and not p["violated"] and p["bound_value"] == 0.3


@pytest.mark.parametrize("args,says", [
    (["--bound", "no-such-bound"], "--bound: bound must be one of"),
    (["--bound", f"{FX}:UPPER"], "--bound tests.plugin_fixtures:UPPER (upper bound, "),
    (["--bound", "certified", "--N", "3"], "--bound applies to the hardmax sandwich at N = 2 "
     "only (got --N 3)"),
    (["--witness", "no-such-construction"], "--witness: construction must be one of"),
    (["--witness", "biased"], "--witness biased is measured on orthonormal keys, gaussian"),
    (["--witness", f"{FX}:too_many_heads"], "--witness must have at most H = 1 heads"),
    (["--witness", "majority-vote"], "--witness must be one attention layer"),
])
def test_a_bad_bound_or_witness_exits_2(capsys: pytest.CaptureFixture[str], args: list[str],
                                         says: str) -> None:
    code = main(["bounds", "sandwich", "--d", "6", "--rank", "1", "--heads", "1", *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and says in err, err


def test_named_witnesses_are_measured_by_the_runner(capsys: pytest.CaptureFixture[str]) -> None:
    code, p, _ = _sandwich(capsys, "--d", "8", "--rank", "1", "--heads", "1", "--witness",
                           f"{FX}:midpoint")
    mid = [c for c in p["candidates"] if c["method"] == f"{FX}:midpoint"]
    assert code == 0 and len(mid) == 1 and not p["violated"]
    assert mid[0]["error"] == pytest.approx(0.5, abs=1e-6)  # measured, not the claimed 0.55
    assert mid[0]["interval"] == "normal" and mid[0]["ci"][0] <= 0.5 <= mid[0]["ci"][1] + 1e-6
    assert mid[0]["replay"].startswith(f"workbench construct {FX}:midpoint --d 8 --rank 1")
    code, p, err = _sandwich(capsys, "--d", "8", "--rank", "1", "--heads", "1", "--witness",
                             f"{FX}:oracle")  # error 0: below every bound
    assert code == 1 and p["violated"] and p["method"] == f"{FX}:oracle"
    assert p["witness_file"] == "" and "certified lower bound" in err
