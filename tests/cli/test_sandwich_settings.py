"""``bounds sandwich --N`` and ``--target`` with the witnesses beyond N = 2 hardmax, and the
record keyed by setting (docs/derivations/witnesses_beyond_two.md): the candidates and the best
as documented, the record's witnesses replayed by ``witness verify d,r,H[,N]`` / ``--target``,
bad input refused in one line; a witness planted below the bound is reported as a violation."""

from __future__ import annotations

import pytest

from tests.cli.run_cli import run_cli
from workbench.constructions.optimized import Witness
from workbench.constructions.profile_one_head import profile_one_head_error
from workbench.constructions.witness_setting import NEAREST_2, Setting
from workbench.core.profiles import tanh_profile
from workbench.plugins import get_bound
from workbench.testing import plant, scaled
from workbench.verifiers.witness_record import RECORD_DIR, lookup, read_record

NKEYS = ("bounds", "sandwich", "--d", "8", "--rank", "1", "--heads", "16", "--N", "3", "--json")


def test_nkeys_sandwich_takes_the_least_upper_end(capsys: pytest.CaptureFixture[str]) -> None:
    rc, p, _ = run_cli(capsys, *NKEYS)
    assert rc == 0 and not p["violated"]
    bv = get_bound("certified-n").evaluate(8, 1, 16, 3)
    assert p["bound"] == bv.value >= get_bound("n-keys")(8, 1, 16, 3)
    assert p["bound_name"] == "certified-n" and p["decided_by"] == bv.source
    methods = {c["method"]: c for c in p["candidates"]}
    assert methods["uniform"]["error"] == pytest.approx(2 / 3, abs=1e-15)
    assert 0.55 < methods["one_head_bayes"]["error"] < 2 / 3  # Bayes beats uniform attention
    rec = methods["record:trained_generalized"]
    assert rec["replay"] == "workbench witness verify 8,1,16,3"
    assert p["best"] == min(p["candidates"], key=lambda c: c["ci"][1])
    assert p["ratio"] == pytest.approx(p["best"]["error"] / p["bound"])


def test_nkeys_sandwich_reports_a_witness_below_the_bound(
        capsys: pytest.CaptureFixture[str]) -> None:
    with plant("workbench.verifiers.nkeys_sandwich:nkeys_one_head_losses", scaled(0.05)):
        rc, p, _ = run_cli(capsys, *NKEYS[:-1])
    assert rc == 1 and "VIOLATED" in p


@pytest.mark.parametrize(("args", "words"), [
    (("--N", "3", "--d", "4"), "no certified bound covers"),  # n-keys N <= d-2, multi-level d >= 5
    (("--N", "3", "--target", "soft-nearest"), "--N 3 applies to the hardmax target only"),
    (("--N", "3", "--witness-dir", "/tmp/x"), "--witness-dir applies to the hardmax sandwich"),
    (("--N", "1"), "--N must"),
])
def test_bad_n_is_one_line(capsys: pytest.CaptureFixture[str], args: tuple[str, ...],
                           words: str) -> None:
    base = {"--d": "8", "--rank": "1", "--heads": "2"}
    given = dict(zip(args[::2], args[1::2]))
    argv = [x for k, v in {**base, **given}.items() for x in (k, v)]
    rc, _, err = run_cli(capsys, "bounds", "sandwich", *argv)
    assert rc == 2 and words in err and len(err.strip().splitlines()) == 1


def test_target_sandwich_has_the_one_head_and_the_record(
        capsys: pytest.CaptureFixture[str]) -> None:
    args = ("bounds", "sandwich", "--d", "8", "--rank", "1", "--heads", "4", "--target",
            "soft-nearest", "--target-param", "beta=4", "--json")
    rc, p, _ = run_cli(capsys, *args)
    assert rc == 0
    by = {c["method"]: c for c in p["candidates"]}
    exact = profile_one_head_error(tanh_profile(4.0), 8, 1)
    assert tuple(by["one_head_bayes"]["ci"]) == exact.enclosure
    assert "beta=4" in by["record:trained_generalized"]["note"]
    assert p["best"]["ci"][1] == min(c["ci"][1] for c in p["candidates"])
    rc, p2, _ = run_cli(capsys, *args, "--no-record")
    assert rc == 0 and not any(c["method"].startswith("record:") for c in p2["candidates"])


def test_record_entries_of_every_setting_load_as_recorded() -> None:
    entries = [e for e in read_record() if not e.setting.is_default]
    settings = {e.setting for e in entries}
    assert {Setting(N) for N in (3, 4, 6)} <= settings
    assert {Setting(2, "soft-nearest", (("beta", b),)) for b in (1.0, 4.0, 16.0)} <= settings
    for e in entries:
        w = Witness.load(RECORD_DIR / e.file)
        assert (w.d, w.r, w.heads, w.method, w.setting) == e.point + (e.method, e.setting)
        assert w.error == e.error and e.ci[0] <= e.error <= e.ci[1] and e.code
    # a setting's witnesses never stand in for another's
    assert lookup(entries, 8, 1, 16, NEAREST_2) is None


def test_verify_replays_settings_and_refuses_missing_ones(
        capsys: pytest.CaptureFixture[str]) -> None:
    rc, p, _ = run_cli(capsys, "witness", "verify", "8,1,2,3", "--eval-samples", "5000", "--json")
    bv = get_bound("certified-n").evaluate(8, 1, 2, 3)
    assert rc == 0 and p["reproduced"] and p["bound"] == f"certified-n ({bv.source})"
    assert p["certified"] == bv.certified > 0
    assert p["setting"] == {"N": 3, "target": "nearest", "target_params": {}}
    rc, p, _ = run_cli(capsys, "witness", "verify", "8,1,2", "--target", "soft-nearest",
                    "--target-param", "beta=16", "--eval-samples", "5000", "--json")
    assert rc == 0 and p["reproduced"] and p["setting"]["target_params"] == {"beta": 16.0}
    rc, _, err = run_cli(capsys, "witness", "verify", "8,1,2,5")
    assert rc == 2 and "no witness in the record for N=5" in err
    rc, _, err = run_cli(capsys, "witness", "verify", "8,1,2", "--target", "farthest")
    assert rc == 2 and "--target must be nearest or soft-nearest" in err
