"""CLI contract for `bounds`, `harmonics` and `kernel` (README, "The CLI")."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import types
from importlib.metadata import EntryPoint

import pytest

from tests.plugin_registry import fresh_registry
from workbench.cli import main
from workbench.core.bounds.certified import certified_lower_bound
from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound
from workbench.core.harmonics import dim_harmonics
from workbench.plugins import Bound
from workbench.testing import plant


def _run(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_bounds_lower_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["bounds", "lower", "--d", "12", "--rank", "2", "--heads", "4",
                                   "--json"])
    assert code == 0 and err == ""
    p = json.loads(out)
    assert {"d", "r", "heads", "lower_bound", "degrees_summed", "method"} <= set(p)
    assert (p["d"], p["r"], p["heads"]) == (12, 2, 4)
    lo, hi = p["enclosure"]
    assert lo <= p["lower_bound"] <= hi
    # the certified end of the larger bound: here the fiber bound (H r = 8 < d = 12)
    assert p["lower_bound"] == certified_lower_bound(12, 2, 4).value == lo
    assert p["source"] == "fiber" and p["fiber"]["lower_bound"] == lo
    assert p["harmonic_count"]["lower_bound"] == harmonic_bound(12, 2, 4).enclosure[0] < lo
    assert p["vacuous"] is None
    # H r >= d: no fiber, the harmonic count is the bound
    q = json.loads(_run(capsys, ["bounds", "lower", "--d", "12", "--rank", "2", "--heads", "6",
                                 "--json"])[1])
    assert q["source"] == "harmonic count" and q["fiber"]["lower_bound"] == 0
    assert q["lower_bound"] == harmonic_bound(12, 2, 6).enclosure[0] > 0


def test_bounds_heads_needed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, ["bounds", "heads-needed", "--d", "16", "--r", "1", "--eps",
                                 "0.12", "--json"])
    assert code == 0
    p = json.loads(out)
    H, L = p["heads_needed"], p["max_degree"]  # at the truncation the answer reports
    assert harmonic_bound(16, 1, H, max_degree=L).enclosure[0] <= 0.12
    assert 0.12 < harmonic_bound(16, 1, H - 1, max_degree=L).enclosure[0]


def test_harmonics_sign_and_dim(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, ["harmonics", "sign", "--d", "5", "--max-degree", "3", "--json"])
    assert code == 0
    p = json.loads(out)
    assert p["d"] == 5 and [c["degree"] for c in p["coefficients"]] == [0, 1, 2, 3]
    assert set(p["coefficients"][1]) == {"degree", "eta"}
    assert p["coefficients"][1]["eta"] == pytest.approx(3 / (8 * math.sqrt(1 / 5)), rel=1e-15)
    code, out, _ = _run(capsys, ["harmonics", "dim", "--d", "7", "--degree", "4", "--json"])
    assert code == 0 and json.loads(out)["dimension"] == dim_harmonics(7, 4)
    code, out, _ = _run(capsys, ["harmonics", "sign", "--d", "5", "--max-degree", "1", "--exact"])
    assert code == 0 and "3*sqrt(5)/8" in out


def test_kernel_head_vs_target(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, ["kernel", "head-vs-target", "--d", "3", "--theta", "0", "--json"])
    assert code == 0 and json.loads(out)["b"] == pytest.approx(1 - 1 / math.pi, abs=1e-15)
    code, out, _ = _run(capsys, ["kernel", "head-vs-target", "--d", "2", "--theta", "1.0"])
    assert code == 0 and "b =" in out


@pytest.mark.parametrize(
    "args,name",
    [
        (["bounds", "lower", "--d", "8", "--rank", "9", "--heads", "1"], "--rank"),
        (["bounds", "lower", "--d", "8", "--r", "9", "--heads", "1"], "--rank"),
        (["bounds", "lower", "--d", "1", "--r", "1", "--heads", "1"], "--d"),
        (["bounds", "lower", "--d", "8", "--r", "1", "--heads", "0"], "--heads"),
        (["bounds", "lower", "--d", "5000", "--r", "1", "--heads", "1"], "--d"),
        (["bounds", "heads-needed", "--d", "8", "--r", "1", "--eps", "1.5"], "--eps"),
        (["harmonics", "sign", "--d", "5", "--max-degree", "300", "--exact"], "--max-degree"),
        (["bounds", "heads-needed", "--d", "8", "--r", "1", "--eps", "0"], "eps"),
        (["bounds", "heads-needed", "--d", "8", "--r", "1", "--eps", "nan"], "eps"),
        (["harmonics", "sign", "--d", "5", "--max-degree", "-1"], "max-degree"),
        (["harmonics", "dim", "--d", "0", "--degree", "1"], "d"),
        (["kernel", "head-vs-target", "--d", "4", "--theta", "4"], "theta"),
        (["bounds", "lower", "--d", "x", "--r", "1", "--heads", "1"], "d"),
    ],
)
def test_bad_input_exit_2_one_line(capsys: pytest.CaptureFixture[str], args: list[str],
                                   name: str) -> None:
    code, out, err = _run(capsys, args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert name in err


def test_rank_alias_is_hidden_and_equivalent(capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(capsys, ["bounds", "lower", "--d", "9", "--r", "2", "--heads", "3", "--json"])[1]
    b = _run(capsys, ["bounds", "lower", "--d", "9", "--rank=2", "--heads", "3", "--json"])[1]
    assert a == b
    code, out, _ = _run(capsys, ["bounds", "lower", "--help"])
    assert "--rank" in out and "--r " not in out and "--r," not in out


def test_vacuous_bound_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, ["bounds", "lower", "--d", "6", "--rank", "5", "--heads", "2"])
    assert code == 0 and "vacuous" in out and "r >= d-1" in out
    p = json.loads(_run(capsys, ["bounds", "lower", "--d", "6", "--rank", "5", "--heads", "2",
                                 "--json"])[1])
    assert p["lower_bound"] == 0 and "vacuous" in p["vacuous"]
    # one head of rank d-1 leaves a two-point fiber: the fiber bound is positive there
    p = json.loads(_run(capsys, ["bounds", "lower", "--d", "6", "--rank", "5", "--heads", "1",
                                 "--json"])[1])
    assert p["lower_bound"] > 0 and p["source"] == "fiber" and p["vacuous"] is None


def test_heads_needed_huge_is_exact_in_json_and_readable(capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    code, out, _ = _run(capsys, ["bounds", "heads-needed", "--d", "60", "--rank", "1", "--eps",
                                 "0.02", "--json"])
    p = json.loads(out)
    H = p["heads_needed"]
    assert code == 0 and isinstance(H, int) and str(H) == p["heads_needed_exact"]
    assert p["digits"] == len(str(H)) > 15
    # independent check: the closed form of eta_l (docs/paper.md) in 60-digit mpmath with the
    # exact integer weights; H (33 digits) is exact: bound(H) <= eps < bound(H - 1)
    import mpmath as mp

    from workbench.core.bounds.harmonic_count.harmonic import _tables

    d = 60
    L = p["max_degree"]
    degrees, Ns, Ds = _tables(d, 1, L)
    with mp.workdps(60):
        def eta2(l: int) -> mp.mpf:
            m = (l - 1) // 2
            e = (mp.sqrt(dim_harmonics(d, l)) * 2 * mp.gamma(d - 1) * mp.factorial(2 * m)
                 * mp.gamma(m + mp.mpf(d) / 2) / (mp.sqrt(mp.pi) * mp.gamma(mp.mpf(d - 1) / 2)
                                                  * mp.gamma(2 * m + d) * mp.factorial(m)))
            return e * e

        e2 = [eta2(l) for l in degrees]

        # the degrees above L: their energy 1 - sum e2, uncaptured at least in the fraction
        # 1 - h D_l/N(d,l) <= 1 - 3 h / N(d, L+2) (r = 1: D_l = 3; Lemma 6, the counted tail)
        tail, n_next = 1 - sum(e2), dim_harmonics(d, L + 2)

        def bound(h: int) -> mp.mpf:
            return (sum((e * mp.mpf(n - h * D) / n for e, n, D in zip(e2, Ns, Ds) if n > h * D),
                        mp.mpf(0)) + tail * max(mp.mpf(0), 1 - mp.mpf(3 * h) / n_next)) / 2

        assert bound(H) <= mp.mpf(0.02) < bound(H - 1)
    code, out, _ = _run(capsys, ["bounds", "heads-needed", "--d", "60", "--rank", "1", "--eps",
                                 "0.02"])
    assert f"e+{p['digits'] - 1} ({p['digits']} digits)" in out and str(H) not in out


def test_harmonics_dim_huge_is_null_with_reason(capsys: pytest.CaptureFixture[str]) -> None:
    for d, l in ((1_000_000_000, 1_000_000_000), (100_000, 1_000_000)):
        code, out, _ = _run(capsys, ["harmonics", "dim", "--d", str(d), "--degree", str(l),
                                     "--json"])
        p = json.loads(out)
        assert code == 0 and p["dimension"] is None and "digits" in p["null_reasons"]["dimension"]
        assert p["log10_dimension"] > 1000
    p = json.loads(_run(capsys, ["harmonics", "dim", "--d", "300", "--degree", "900",
                                 "--json"])[1])
    n = dim_harmonics(300, 900)
    assert p["dimension"] == n and p["log10_dimension"] == pytest.approx(math.log10(n), rel=1e-12)


# --- bounds list ------------------------------------------------------------------------------

LOWER_FIELDS = {"d", "r", "heads", "lower_bound", "enclosure", "source", "harmonic_count",
                "fiber", "degrees_summed", "tail", "method", "class", "covers", "vacuous",
                "error_meaning"}  # bounds lower's JSON before --bound existed


@pytest.fixture
def my_bounds(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A module of bounds a user might write: a plain function and a Bound object that covers
    N = 3 only and H <= 4."""
    mod = types.ModuleType("my_bounds")
    mod.half = lambda d, rank, heads, N: 0.5  # type: ignore[attr-defined]
    mod.NARROW = Bound(  # type: ignore[attr-defined]
        "narrow", lambda d, r, H, N: 0.25 / H, status="conjectured", law="iid",
        value_class="mine", N=(3,), domain=lambda d, r, H, N: None if H <= 4 else "needs H <= 4",
        enclosure=lambda d, r, H, N: (0.2 / H, 0.3 / H), description="a narrow one")
    mod.broken = lambda d, rank, heads, N: 1 / 0  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "my_bounds", mod)
    return mod


@pytest.fixture
def entry_points(monkeypatch: pytest.MonkeyPatch, my_bounds: types.ModuleType) -> None:
    """Installed packages: one whose bound loads, one whose module is missing."""
    fresh_registry(monkeypatch, EntryPoint("narrow", "my_bounds:NARROW", "workbench.bounds"),
                   EntryPoint("broken-pkg", "pkg_missing_module:f", "workbench.bounds"))


def test_bounds_list_shows_every_bound_and_where_it_applies(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["bounds", "list", "--json"])
    assert code == 0 and err == ""
    rows = {b["name"]: b for b in json.loads(out)["bounds"]}
    assert {"certified", "certified-query-values", "harmonic", "fiber"} <= set(rows)
    c = rows["certified"]
    assert (c["side"], c["status"], c["target"], c["law"], c["value_class"], c["N"],
            c["source"]) == ("lower", "proved", "nearest", "orthonormal", "eq2", [2],
                             "workbench")
    # computed from the kinds of its parts: both proved enclosures; Theorem 3's lower side is a
    # Hoeffding interval, not one
    assert c["rigorous"] is True and rows["harmonic"]["rigorous"] is True
    assert rows["fiber"]["rigorous"] is True and rows["theorem3-lower"]["rigorous"] is False
    assert [q["name"] for q in c["parts"]] == ["harmonic count", "fiber"]
    assert rows["certified-query-values"]["value_class"] == "query-dependent-values"
    assert c["has_enclosure"] is True and c["ref"].startswith("paper.md#")
    code, out, _ = _run(capsys, ["bounds", "list"])
    assert code == 0 and out.splitlines()[0].split() == ["name", "side", "status", "rigorous",
                                                         "target", "law", "class", "N", "source"]
    line = next(ln for ln in out.splitlines() if ln.startswith("certified "))
    assert line.split() == ["certified", "lower", "proved", "yes", "nearest", "orthonormal", "eq2",
                            "2", "workbench"]


def test_bounds_list_reports_a_broken_package_by_name_and_lists_the_rest(
        capsys: pytest.CaptureFixture[str], entry_points: None) -> None:
    code, out, _ = _run(capsys, ["bounds", "list", "--json"])
    p = json.loads(out)
    assert code == 0
    rows = {b["name"]: b for b in p["bounds"]}
    assert "certified" in rows and rows["narrow"]["N"] == [3]
    assert (rows["narrow"]["status"], rows["narrow"]["law"], rows["narrow"]["value_class"],
            rows["narrow"]["spec"]) == ("conjectured", "iid", "mine", "narrow")  # its name
    assert set(p["load_errors"]) == {"broken-pkg"}
    assert "pkg_missing_module" in p["load_errors"]["broken-pkg"]
    code, out, _ = _run(capsys, ["bounds", "list"])
    assert code == 0 and "narrow" in out
    assert out.splitlines()[-1].startswith("not loaded: broken-pkg: ")


# --- bounds lower --bound -----------------------------------------------------------------------


@pytest.mark.parametrize("d, r, H", [(12, 2, 4), (16, 1, 16), (6, 1, 2)])
def test_bounds_lower_says_what_is_rigorous(capsys: pytest.CaptureFixture[str], d: int, r: int,
                                            H: int) -> None:
    """Both parts are rigorous enclosures, so ``certified`` is the larger lower end and the text
    calls both so (docs/derivations/intervals.md, "Rigorous enclosures"). With the fiber part
    planted as a non-rigorous estimate, ``certified`` falls back to the harmonic count and the
    text says which number is an estimate: a part that is not rigorous is never certified."""
    args = ["bounds", "lower", "--d", str(d), "--rank", str(r), "--heads", str(H)]
    p = json.loads(_run(capsys, [*args, "--json"])[1])
    hc, fb = p["harmonic_count"], p["fiber"]
    assert hc["rigorous"] is True and fb["rigorous"] is True and p["rigorous"] is True
    assert p["certified"] == p["lower_bound"] == max(hc["lower_bound"], fb["lower_bound"])
    text = _run(capsys, args)[1]
    assert "not rigorous" not in text
    assert f"labels: proved, rigorous, certified >= {p['certified']:.6g}, from " in text
    if fb["span_rank"] < d:
        assert "fiber: >= " in text and "rigorous enclosure [" in text
    with plant("workbench.core.bounds.fiber_bound.fiber:trusted_fiber_bound",
               lambda f: lambda *a: dataclasses.replace(f(*a), rigorous=False)):
        q = json.loads(_run(capsys, [*args, "--json"])[1])
        text = _run(capsys, args)[1]
    assert q["fiber"]["rigorous"] is False and q["certified"] == q["harmonic_count"]["lower_bound"]
    assert q["rigorous"] is (q["source"] == "harmonic count")
    assert ("labels: proved, not rigorous, certified >= " in text) is (not q["rigorous"])
    assert ("fiber: >= " in text and "enclosure, not rigorous [" in text)


def test_bounds_lower_default_keeps_its_output_and_names_the_bound(
        capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bounds", "lower", "--d", "12", "--rank", "2", "--heads", "4"]
    p = json.loads(_run(capsys, [*args, "--json"])[1])
    assert set(p) == LOWER_FIELDS | {"bound", "law", "law_text", "rigorous", "certified",
                                     "status", "parts", "truncation", "truncation_matters"}
    assert p["bound"] == "certified"
    assert json.loads(_run(capsys, [*args, "--bound", "certified", "--N", "2", "--json"])[1]) == p
    text = _run(capsys, args)[1]
    assert _run(capsys, [*args, "--bound", "certified"])[1] == text
    assert "bound certified" not in text and text.startswith("d=12 rank=2 heads=4: every model")
    q = json.loads(_run(capsys, [*args, "--class", "query-dependent-values", "--json"])[1])
    assert q["bound"] == "certified-query-values" and q["class"] == "query-dependent-values"
    assert json.loads(_run(capsys, [*args, "--bound", "certified-query-values", "--json"])[1]) == q
    assert q["lower_bound"] == certified_lower_bound(12, 2, 4, "query-dependent-values").value


def test_bounds_lower_of_another_registered_bound(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, ["bounds", "lower", "--d", "12", "--rank", "2", "--heads", "4",
                                 "--bound", "harmonic", "--json"])
    p = json.loads(out)
    lo, hi = harmonic_bound(12, 2, 4).enclosure
    assert code == 0 and p["bound"] == "harmonic" and p["value"] == p["lower_bound"] == lo
    assert p["enclosure"] == [lo, hi] and (p["status"], p["law"], p["class"]) == (
        "proved", "orthonormal", "eq2")
    assert p["N"] == 2 and p["covers_N"] == [2] and p["package"] == "workbench"
    assert p["source"] == "harmonic count" and p["rigorous"] is True
    code, out, _ = _run(capsys, ["bounds", "lower", "--d", "12", "--rank", "2", "--heads", "4",
                                 "--bound", "fiber"])
    assert code == 0 and "bound fiber = 0.169813" in out and "status proved" in out
    assert "value class eq2" in out and "law of the keys orthonormal" in out


def test_bounds_lower_of_a_module_function_and_a_bound_object(
        capsys: pytest.CaptureFixture[str], my_bounds: types.ModuleType) -> None:
    code, out, _ = _run(capsys, ["bounds", "lower", "--d", "2048", "--rank", "3", "--heads", "9",
                                 "--N", "7", "--bound", "my_bounds:half", "--json"])
    p = json.loads(out)  # a plain function: conjectured, every N, no enclosure
    assert code == 0 and p["value"] == 0.5 and p["bound"] == "my_bounds:half"
    assert (p["status"], p["law"], p["class"], p["covers_N"]) == (
        "conjectured", "any", "unspecified", None)
    assert p["null_reasons"]["covers_N"] == "the bound covers every N"
    assert p["enclosure"] is None and "enclosure" in p["null_reasons"]
    code, out, _ = _run(capsys, ["bounds", "lower", "--d", "6", "--rank", "1", "--heads", "2",
                                 "--N", "3", "--bound", "my_bounds:NARROW", "--json"])
    p = json.loads(out)
    assert code == 0 and p["value"] == 0.125 and p["enclosure"] == [0.1, 0.15]
    assert (p["status"], p["law"], p["class"], p["description"]) == (
        "conjectured", "iid", "mine", "a narrow one")
    code, out, _ = _run(capsys, ["bounds", "lower", "--d", "6", "--rank", "1", "--heads", "2",
                                 "--N", "3", "--bound", "my_bounds:NARROW"])
    assert "bound my_bounds:NARROW = 0.125" in out and "conjectured: not proved" in out
    assert "[0.10000000000000001, 0.14999999999999999]" in out and "covers N = 3" in out


@pytest.mark.parametrize("args, flag", [
    (["--bound", "certified", "--N", "3"], "--N must lie in [2], the N it covers (got 3) for "
     "--bound certified"),
    (["--bound", "harmonic", "--N", "1"], "--N must be an integer in 2..d (got '1')"),
    (["--bound", "my_bounds:NARROW"], "--N must lie in [3]"),
    (["--bound", "my_bounds:NARROW", "--N", "3", "--heads", "5"], "--heads"),
    (["--bound", "no-such-bound"], "--bound"),
    (["--bound", "no_such_module:f"], "--bound"),
    (["--bound", "harmonic", "--max-degree", "5"], "--max-degree"),
    (["--bound", "fiber", "--class", "eq2"], "--class"),
    (["--bound", "certified-query-values", "--class", "eq2"], "--class"),
    (["--bound", "my_bounds:half", "--N", "0"], "--N"),
    (["--bound", "harmonic", "--d", "5000"], "--d"),
])
def test_bounds_lower_outside_what_the_bound_covers_is_bad_input(
        capsys: pytest.CaptureFixture[str], my_bounds: types.ModuleType, args: list[str],
        flag: str) -> None:
    base = {"--d": "6", "--rank": "1", "--heads": "2"}
    for k in args[::2]:
        base.pop(k, None)
    code, out, err = _run(capsys, ["bounds", "lower", *sum(base.items(), ()), *args])
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("error: --") and flag in err, err


@pytest.mark.parametrize("bound", ["certified", "fiber", "my_bounds:half"])
@pytest.mark.parametrize("args, flag", [
    (["--d", "1"], "--d"), (["--rank", "7"], "--rank"), (["--rank", "0"], "--rank"),
    (["--heads", "0"], "--heads"), (["--N", "0"], "--N"),
])
def test_a_domain_error_names_only_the_flag_out_of_range(
        capsys: pytest.CaptureFixture[str], my_bounds: types.ModuleType, bound: str,
        args: list[str], flag: str) -> None:
    base = {"--d": "6", "--rank": "1", "--heads": "2", "--N": "2", args[0]: args[1]}
    code, out, err = _run(capsys, ["bounds", "lower", *sum(base.items(), ()), "--bound", bound])
    assert code == 2 and out == "" and err.startswith(f"error: {flag} must "), err
    assert [f for f in ("--d", "--rank", "--heads", "--N") if f in err] == [flag], err


def test_bounds_lower_reports_a_bound_that_crashes(capsys: pytest.CaptureFixture[str],
                                                   my_bounds: types.ModuleType) -> None:
    code, out, err = _run(capsys, ["bounds", "lower", "--d", "6", "--rank", "1", "--heads", "2",
                                   "--bound", "my_bounds:broken"])
    # a user's bound that fails is bad input naming the flag (docs/extending.md)
    assert code == 2 and "ZeroDivisionError" in err and "my_bounds:broken" in err
    assert err.startswith("error: --bound ") and err.count("\n") == 1 and "Traceback" not in err


def test_bounds_lower_names_an_installed_bound_as_it_was_given(
        capsys: pytest.CaptureFixture[str], entry_points: None) -> None:
    code, out, _ = _run(capsys, ["bounds", "lower", "--d", "6", "--rank", "1", "--heads", "2",
                                 "--N", "3", "--bound", "narrow", "--json"])
    p = json.loads(out)
    assert code == 0 and p["bound"] == "narrow" and p["value"] == 0.125
    assert p["bound_info"]["spec"] == "narrow" and p["status"] == "conjectured"


def test_heads_needed_class_and_truncation(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["bounds", "heads-needed", "--d", "8", "--rank", "1", "--eps", "0.01",
            "--max-degree", "201"]
    eq, qv = (json.loads(_run(capsys, base + extra + ["--json"])[1])
              for extra in ([], ["--class", "query-dependent-values"]))
    assert eq["class"] == "eq2" and qv["class"] == "query-dependent-values"
    for p, vc in ((eq, "eq2"), (qv, "query-dependent-values")):  # each its own class's least H
        H = p["heads_needed"]
        assert harmonic_bound(8, 1, H, max_degree=201, value_class=vc).enclosure[0] <= 0.01
        assert harmonic_bound(8, 1, H - 1, max_degree=201, value_class=vc).enclosure[0] > 0.01
        assert p["truncation_limited"] and p["set_by"] == "truncation" and not p["raised"]
    text = _run(capsys, base)[1]
    assert "set by the truncation, not the bound" in text and "--max-degree" in text
    fine = json.loads(_run(capsys, ["bounds", "heads-needed", "--d", "8", "--rank", "1",
                                    "--eps", "0.3", "--json"])[1])
    assert not fine["truncation_limited"] and fine["set_by"] == "bound"
