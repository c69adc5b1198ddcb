"""``workbench check`` shows its evidence: key evidence, --verbose, --list, violated
messages with a replay command, the conjecture's reason, broken third-party dependencies; it
runs exactly what --only names (--with-deps adds the dependencies), in --jobs worker processes
with the same results, and reports a raising check as ``error``."""

from __future__ import annotations

import json
import math
import os
import sys
from itertools import count

import pytest

from workbench.cli import main
from workbench.proofs import registry
from workbench.proofs.claim import CheckContext, Claim, Evidence


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _fake(monkeypatch, claims: list[Claim]) -> None:
    monkeypatch.setattr(registry, "load_claims", lambda: {c.id: c for c in claims})


def _ok(ctx: CheckContext) -> list[Evidence]:
    return [Evidence(0.224, 0.102, ">=", "trained", ci=(0.22, 0.228), ci_level=0.95),
            Evidence(0.5, 0.1, ">=", "exact")]


def _bad(ctx: CheckContext) -> list[Evidence]:
    return [Evidence(0.118695, 0.05, "<=", "monte_carlo", ci=(0.11, 0.125), ci_level=0.95)]


def test_row_shows_statement_and_key_evidence_with_margin(capsys, monkeypatch) -> None:
    _fake(monkeypatch, [Claim("t.ok", "A trained model stays above the bound", "theorem", _ok)])
    code, out, _ = run(capsys, "check")
    assert code == 0
    assert "A trained model stays above the bound" in out
    # the tighter row (x2.2) is the key evidence, not the looser one (x5)
    assert "trained 0.224 [0.22, 0.228] (95% CI) ≥ bound 0.102 (×2.2)" in out
    assert "row 1 of 2, the closest to failing" in out and "exact 0.5" not in out
    code, out, _ = run(capsys, "check", "--verbose")
    assert "1. trained 0.224" in out and "2. exact 0.5 ≥ bound 0.1 (×5)" in out


def test_violated_says_what_and_prints_replay(capsys, monkeypatch) -> None:
    _fake(monkeypatch, [Claim("t.bad", "Error at most 0.05", "lemma", _bad)])
    code, out, _ = run(capsys, "check", "--seed", "7")
    assert code == 1
    assert "VIOLATED: the claim needs value ≤ 0.05" in out and "entirely above" in out
    assert "replay: workbench check --only t.bad --scale quick --seed 7" in out
    code, out, _ = run(capsys, "check", "--seed", "7", "--json")
    c = json.loads(out)["claims"][0]
    assert c["replay"].startswith("workbench check --only t.bad") and "VIOLATED" in (
        c["key_evidence"]["text"])


def test_conjecture_row_says_why_inconclusive(capsys, monkeypatch) -> None:
    _fake(monkeypatch, [Claim("t.conj", "Something for all N", "conjecture", _ok)])
    code, out, _ = run(capsys, "check")
    assert code == 0 and "inconclusive" in out and "why:" in out and "by design" in out
    code, out, _ = run(capsys, "check", "--json")
    assert "by design" in json.loads(out)["claims"][0]["reason"]


def test_list_does_not_run_claims(capsys, monkeypatch) -> None:
    def boom(ctx: CheckContext) -> list[Evidence]:
        raise AssertionError("--list must not run a check")

    _fake(monkeypatch, [Claim("t.a", "A", "lemma", boom),
                        Claim("t.b", "B", "lemma", boom, ("t.a",))])
    code, out, _ = run(capsys, "check", "--list", "--json")
    assert code == 0
    p = json.loads(out)
    assert [(c["id"], c["depends_on"]) for c in p["claims"]] == [("t.a", []), ("t.b", ["t.a"])]
    code, out, _ = run(capsys, "check", "--list")
    assert "needs: t.a" in out


def test_list_real_claims_in_dependency_order(capsys) -> None:
    code, out, _ = run(capsys, "check", "--list", "--json")
    claims = json.loads(out)["claims"]
    pos = {c["id"]: i for i, c in enumerate(claims)}
    assert "thm2.harmonic_bound" in pos and "thm2.certified_bound" not in pos
    assert all(pos[d] < pos[c["id"]] for c in claims for d in c["depends_on"])


def test_mistyped_depends_on_marks_that_claim_and_runs_the_rest(capsys, monkeypatch) -> None:
    _fake(monkeypatch, [Claim("t.ok", "fine", "lemma", _ok),
                        Claim("t.typo", "mine", "lemma", _ok, ("t.okk",)),
                        Claim("t.after", "needs the typo", "lemma", _ok, ("t.typo",))])
    code, out, err = run(capsys, "check", "--json")
    assert code == 1 and "1 check failed" not in err
    res = {c["id"]: c for c in json.loads(out)["claims"]}
    assert res["t.ok"]["verdict"] == "holds"
    assert res["t.typo"]["verdict"] == "skipped" and "'t.okk'" in res["t.typo"]["error"]
    assert res["t.after"]["verdict"] == "skipped" and "t.typo" in res["t.after"]["error"]
    code, out, _ = run(capsys, "check")
    assert "ERROR: depends_on names unknown claim(s) 't.okk'" in out


def test_lines_stream_and_json_stays_clean_on_a_terminal(capsys, monkeypatch) -> None:
    _fake(monkeypatch, [Claim("t.ok", "fine", "lemma", _ok)])
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    code, out, err = run(capsys, "check", "--json")
    assert code == 0 and err == "" and json.loads(out)["summary"]["holds"] == 1
    seen: list[str] = []
    real = registry.run_claims

    def spy(*a, **k):
        def on_result(r):  # the row is printed before the run returns
            seen.append(capsys.readouterr().out)

        k2 = dict(k)
        inner = k2.pop("on_result")
        return real(*a, **k2, on_result=lambda r: (inner(r), on_result(r)))

    monkeypatch.setattr(registry, "run_claims", spy)
    code, out, _ = run(capsys, "check")
    assert code == 0 and any("t.ok" in s for s in seen)


@pytest.mark.parametrize("bad", ["--scale=huge", "--only=nope"])
def test_check_bad_input_before_running(capsys, monkeypatch, bad) -> None:
    _fake(monkeypatch, [Claim("t.ok", "fine", "lemma", _ok)])
    code, out, err = run(capsys, "check", bad)
    assert code == 2 and out == "" and err.count("\n") == 1


def test_crashing_check_is_an_error_with_replay(capsys, monkeypatch) -> None:
    def boom(ctx: CheckContext) -> list[Evidence]:
        raise RuntimeError("boom")

    _fake(monkeypatch, [Claim("t.crash", "crashes", "lemma", boom),
                        Claim("t.ok", "fine", "lemma", _ok)])
    code, out, err = run(capsys, "check", "--seed", "2")
    assert code == 1 and "ERROR: RuntimeError: boom" in out
    assert "replay: workbench check --only t.crash --scale quick --seed 2" in out
    assert "1 check failed to run" in err and "1 error (2 claims" in out
    code, out, _ = run(capsys, "check", "--json")
    p = json.loads(out)
    res = {c["id"]: c for c in p["claims"]}
    assert code == 1 and res["t.crash"]["verdict"] == "error" and res["t.ok"]["verdict"] == "holds"
    assert res["t.crash"]["reason"] == "RuntimeError: boom"
    assert p["summary"]["error"] == 1 and p["summary"]["inconclusive"] == 0


def test_no_evidence_is_inconclusive_with_the_reason(capsys, monkeypatch) -> None:
    _fake(monkeypatch, [Claim("t.empty", "returns nothing", "lemma", lambda ctx: [])])
    code, out, _ = run(capsys, "check", "--json")
    c = json.loads(out)["claims"][0]
    assert code == 0 and c["verdict"] == "inconclusive" and "no evidence" in c["reason"]
    code, out, _ = run(capsys, "check")
    assert "why: the check returned no evidence" in out


def test_broken_entry_point_is_reported_and_the_rest_runs(capsys, monkeypatch) -> None:
    from importlib.metadata import EntryPoint

    ep = EntryPoint("broken_pkg", "no_such_module_for_workbench_xyz", "workbench.claims")
    monkeypatch.setattr(registry, "entry_points", lambda group: [ep])
    monkeypatch.setattr(registry, "LOAD_ERRORS", {})
    code, out, err = run(capsys, "check", "--only", "setting.sphere_law", "--json")
    p = json.loads(out)
    assert code == 1 and p["claims"][0]["verdict"] == "holds"
    assert "broken_pkg" in p["load_errors"][0] and "ModuleNotFoundError" in p["load_errors"][0]
    assert p["summary"]["errors"] == 1


def test_only_takes_an_id_prefix(capsys) -> None:
    code, out, _ = run(capsys, "check", "--list", "--json", "--only", "fact1")
    ids = [c["id"] for c in json.loads(out)["claims"]]
    assert code == 0 and ids and all(i.startswith("fact1.") for i in ids)
    assert "fact1.beta_for" in ids and "fact1.hard_limit" in ids
    code, _, err = run(capsys, "check", "--only", "fact")  # a prefix ends at a dot
    assert code == 2 and "--only" in err and err.count("\n") == 1


def test_builtin_leaves_out_a_plugins_claims(capsys, monkeypatch) -> None:
    plugin = Claim("plugin.always_violated", "a plug-in's claim", "lemma",
                   lambda ctx: [Evidence(1.0, 0.0, "<=", "exact")], module="some_plugin.claims")
    monkeypatch.setitem(registry._REGISTRY, plugin.id, plugin)
    code, out, _ = run(capsys, "check", "--list", "--json")
    assert plugin.id in [c["id"] for c in json.loads(out)["claims"]]
    code, out, _ = run(capsys, "check", "--list", "--json", "--builtin")
    assert code == 0 and plugin.id not in [c["id"] for c in json.loads(out)["claims"]]
    code, out, _ = run(capsys, "check", "--only", "plugin", "--json")
    assert code == 1 and json.loads(out)["summary"]["violated"] == 1
    code, _, err = run(capsys, "check", "--only", "plugin", "--builtin")
    assert code == 2 and "--only" in err


def test_only_runs_exactly_what_it_names(capsys, monkeypatch) -> None:
    _fake(monkeypatch, [Claim("t.a", "A", "lemma", _bad),
                        Claim("t.b", "B", "lemma", _ok, ("t.a",))])
    code, out, _ = run(capsys, "check", "--only", "t.b", "--json")
    (c,) = json.loads(out)["claims"]
    assert code == 0 and c["id"] == "t.b" and c["verdict"] == "holds"
    assert c["deps_not_run"] == ["t.a"] and "t.a did not run" in c["reason"]
    code, out, _ = run(capsys, "check", "--only", "t.b", "--with-deps", "--json")
    res = {c["id"]: c for c in json.loads(out)["claims"]}
    assert code == 1 and list(res) == ["t.a", "t.b"]
    assert res["t.a"]["verdict"] == "violated" and res["t.b"]["verdict"] == "unsupported"
    assert res["t.b"]["deps_not_run"] == []


LONG_TITLE = "A title of a claim that goes on well past the width of one terminal line " * 2


def test_titles_are_whole_unless_on_a_terminal(capsys, monkeypatch) -> None:
    _fake(monkeypatch, [Claim("t.ok", LONG_TITLE.strip(), "lemma", _ok)])
    code, out, _ = run(capsys, "check")
    assert code == 0 and LONG_TITLE.strip() in out
    code, out, _ = run(capsys, "check", "--list")
    assert LONG_TITLE.strip() in out
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    code, out, _ = run(capsys, "check")
    assert LONG_TITLE.strip() not in out and "…" in out


def test_key_rows_read_as_sentences() -> None:
    positive = Evidence(0.3, math.ulp(0.0), ">=", "interval", ci=(0.2, 0.4), ci_level=0.95)
    assert positive.describe() == "interval 0.3 [0.2, 0.4] (95% CI) > 0"
    # a bound one ulp past 0.1 is what 0.1 + 1e-17-style arithmetic gives too: the relation
    # prints as written, >=
    ulp_past = Evidence(0.3, math.nextafter(0.1, math.inf), ">=", "exact")
    assert ulp_past.describe() == "exact 0.3 ≥ bound 0.1 (×3)"
    diff = Evidence(0.03, 0.0, ">=", "monte_carlo", ci=(0.01, 0.05), ci_level=0.99,
                    label="difference of errors")
    assert diff.describe() == "difference of errors 0.03 [0.01, 0.05] (99% CI) ≥ 0"


def test_report_key_evidence_is_the_row_check_prints(capsys, monkeypatch, tmp_path) -> None:
    from workbench.commands.report import _key_evidence
    from workbench.verifiers.store import last_check

    def rows(ctx: CheckContext) -> list[Evidence]:  # the tightest row is not the first
        return [Evidence(0.01, 0.1, "<=", "exact"), Evidence(0.1, 0.1001, "<=", "exact"),
                Evidence(0.5, math.ulp(0.0), ">=", "exact", note="positive")]

    _fake(monkeypatch, [Claim("t.rows", "three rows", "lemma", rows)])
    db = tmp_path / "runs.sqlite"
    code, out, _ = run(capsys, "check", "--db", str(db), "--json")
    printed = json.loads(out)["claims"][0]["key_evidence"]
    stored = last_check(db)["claims"][0]
    assert code == 0 and stored["key_evidence"] == printed
    assert _key_evidence(stored) == printed["text"] == (
        "exact 0.1 ≤ bound 0.1001 (margin 0.0001) — checks three rows")


@pytest.fixture
def pool_claims():
    """The claims of ``tests/cli/pool_claims.py``, registered for one test."""
    from tests.cli import pool_claims as mod

    yield mod.IDS
    for cid in mod.IDS:
        registry._REGISTRY.pop(cid, None)


def _verdicts(capsys, *args: str) -> tuple[int, dict[str, dict]]:
    code, out, _ = run(capsys, "check", "--json", *args)
    return code, {c["id"]: c for c in json.loads(out)["claims"]}


def test_jobs_runs_claims_in_workers_with_every_outcome(capsys, pool_claims) -> None:
    code, res = _verdicts(capsys, "--only", "pool", "--jobs", "2")
    assert code == 1 and list(res) == sorted(res, key=list(res).index)  # dependency order
    assert [res[c]["verdict"] for c in pool_claims] == [
        "violated", "unsupported", "error", "holds", "inconclusive", "holds"]
    assert res["pool.raises"]["error"] == "RuntimeError: this check always raises"
    assert res["pool.where"]["evidence"][0]["note"] != f"pid {os.getpid()}"  # a worker ran it
    code1, serial = _verdicts(capsys, "--only", "pool", "--jobs", "1")
    assert serial["pool.where"]["evidence"][0]["note"] == f"pid {os.getpid()}"
    assert {k: v["verdict"] for k, v in serial.items()} == {k: v["verdict"] for k, v in res.items()}


QUICK_RANDOM = ("setting.sphere_law", "setting.dn_orthonormal", "fact1.soft_representation",
                "fact1.pointwise_bound", "kernels.agreement")
NUMBERS = ("value", "bound", "ci", "bound_ci", "params", "verdict")


def _numbers(res: dict[str, dict]) -> dict[str, list]:
    return {k: [c["verdict"]] + [[e[n] for n in NUMBERS] for e in c["evidence"]]
            for k, c in res.items()}


def test_jobs_gives_the_same_verdicts_and_numbers(capsys) -> None:
    only = [a for c in QUICK_RANDOM for a in ("--only", c)]
    code2, parallel = _verdicts(capsys, *only, "--jobs", "2")
    code1, serial = _verdicts(capsys, *only, "--jobs", "1")
    assert code1 == code2 == 0 and list(parallel) == list(serial)  # the same canonical order
    assert set(serial) == set(QUICK_RANDOM)
    assert _numbers(parallel) == _numbers(serial)
    # seeds that depend on what ran before in the same process would break it (planted in this
    # process only: the serial run sees the fault, the workers do not)
    from workbench.testing import arg_mapped, plant

    calls = count()
    with plant("workbench.core.sphere:make_generator",
               arg_mapped(0, "seed", lambda s: s + next(calls))):
        _, faulty = _verdicts(capsys, *only, "--jobs", "1")
    assert _numbers(faulty) != _numbers(parallel)


def test_jobs_out_of_range_is_bad_input(capsys) -> None:
    code, out, err = run(capsys, "check", "--jobs", "0", "--only", "setting.sphere_law")
    assert code == 2 and out == "" and err.count("\n") == 1 and "--jobs" in err and "1.." in err


def _pid_claims() -> list[Claim]:
    """Claims made here at run time (no module a spawned worker could import)."""
    def where(ctx: CheckContext) -> list[Evidence]:
        return [Evidence(0.0, 1.0, "<=", "exact", note=f"pid {os.getpid()}")]

    return [Claim(f"runtime.where{i}", "names its process", "lemma", where) for i in range(3)]


def test_forked_workers_run_claims_made_at_run_time() -> None:
    from workbench.proofs.runner import run_ordered
    from workbench.proofs.workers import claim_pool
    from workbench.verifiers.processes import can_fork

    if not sys.platform.startswith("linux"):
        pytest.skip("workers are forked on Linux only")
    assert can_fork("cpu") and not can_fork("cuda") and not can_fork("cpu", threads=2)
    claims = _pid_claims()
    with claim_pool(2, {c.id: c for c in claims}, "cpu") as pool:
        assert pool.forked and pool.runs(claims)
        res = run_ordered(CheckContext(), claims, {}, 2, pool=pool)
    pids = {r.evidence[0].note for r in res}
    assert [r.verdict for r in res] == ["holds"] * 3 and f"pid {os.getpid()}" not in pids


def test_spawned_workers_cannot_run_claims_made_at_run_time(monkeypatch) -> None:
    from workbench.proofs import runner, workers

    monkeypatch.setattr(workers, "can_fork", lambda device, threads=1: False)
    claims = _pid_claims()
    with workers.claim_pool(2, {c.id: c for c in claims}, "cpu") as pool:
        assert not pool.forked and not pool.runs(claims)
        res = runner.run_ordered(CheckContext(), claims, {}, 2, pool=pool)
    # they ran serially, here, with the same verdicts
    assert {r.evidence[0].note for r in res} == {f"pid {os.getpid()}"}
    assert [r.verdict for r in res] == ["holds"] * 3


_FRESH_CHECK = """
import json, sys
from workbench.cli import main
from workbench.proofs import workers
if sys.argv[1] == "spawn":
    workers.can_fork = lambda device, threads=1: False
main(["check", "--json", "--jobs", "2", *sys.argv[2:]])
"""


def _fresh_verdicts(start: str, *args: str) -> dict[str, dict]:
    """``check --json --jobs 2`` in a fresh process, as a user runs it: a forked worker inherits
    its parent's history, and this test process's (earlier tests) would move the last bits of
    float64 results (1.67e-15 against 1.69e-15 after a planted temperature, restored)."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", _FRESH_CHECK, start, *args], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return {c["id"]: c for c in json.loads(out.stdout)["claims"]}


def test_spawned_workers_give_the_forked_workers_numbers() -> None:
    only = [a for c in QUICK_RANDOM[:3] for a in ("--only", c)]
    forked = _fresh_verdicts("fork", *only)
    spawned = _fresh_verdicts("spawn", *only)
    assert _numbers(forked) == _numbers(spawned) and set(forked) == set(QUICK_RANDOM[:3])


def test_the_order_hint_is_remembered_per_scale(tmp_path, monkeypatch) -> None:
    from workbench.proofs import claim_seconds

    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    assert claim_seconds.recorded("quick") == {}
    claim_seconds.remember("quick", {"a": 2.5, "b": 0.1})
    claim_seconds.remember("quick", {"b": 0.3})
    claim_seconds.remember("full", {"a": 40.0})
    assert claim_seconds.recorded("quick") == {"a": 2.5, "b": 0.3}
    assert claim_seconds.recorded("full") == {"a": 40.0}
    (tmp_path / "cache" / claim_seconds.FILE).write_text("{not json")
    assert claim_seconds.recorded("quick") == {}  # a damaged hint is no hint
    claim_seconds.remember("quick", {"c": 1.0})
    assert claim_seconds.recorded("quick") == {"c": 1.0}


def test_concurrent_checks_each_record_their_whole_run(tmp_path) -> None:
    """Three checks of one default store at once: each run is recorded whole (its row and its
    claims in one transaction), none lost, none mixed, the file sound."""
    import subprocess

    from workbench.verifiers.store import Store, default_path

    argv = [sys.executable, "-m", "workbench.cli", "check", "--only", "setting", "--jobs", "1",
            "--json"]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [e for _, e in outs]
    ids = sorted(c["id"] for c in json.loads(outs[0][0])["claims"])
    with Store(default_path(), readonly=True) as st:
        assert st.integrity() == "ok"
        runs = [r[0] for r in st.con.execute("SELECT id FROM check_runs")]
        assert len(runs) == 3
        for run in runs:
            got = sorted(r[0] for r in st.con.execute(
                "SELECT claim_id FROM claim_results WHERE run_id = ?", (run,)))
            assert got == ids


def test_an_unusable_default_store_is_bad_input_before_any_claim(capsys, monkeypatch,
                                                                 tmp_path) -> None:
    """Without --db the run goes to the default store; a data directory where no store can be
    made (here under a plain file) exits 2 with one line naming --db, before any claim runs."""
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "file" / "data"))
    ran = []
    _fake(monkeypatch, [Claim("t.ok", "ok", "lemma", lambda ctx: ran.append(1) or [])])
    code, out, err = run(capsys, "check", "--jobs", "1")
    assert code == 2 and err.count("\n") == 1 and "--db" in err and "Traceback" not in err
    assert not ran
