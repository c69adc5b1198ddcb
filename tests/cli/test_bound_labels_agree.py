"""One truth per number: every registered bound, walked through every command that prints it
(``bounds list``, ``bounds lower --bound``, ``bounds lower`` for the certified ones, ``falsify
--bound``, ``bounds sandwich --bound``, ``train``'s bound), text and JSON, at a few points: its
labels (value, rigorous, status, certified, source) agree everywhere and with the bound's own
evaluation (``Bound.evaluate``, its :class:`~workbench.core.bounds.value.BoundValue`).

The first comparisons use only what every command printed before the labels had one home, so
that a contradiction between commands (the fiber bound called rigorous by ``bounds lower`` and
not by ``bounds lower --bound fiber``) is what fails first."""

from __future__ import annotations

import json
from typing import Any

import pytest

from workbench import plugins
from workbench.cli import main
from workbench.commands._bound_labels import LABELS_RE

POINTS = ((6, 1, 2), (8, 2, 4), (16, 1, 8))  # the fiber part chosen, the harmonic count chosen
CHEAP = ((6, 1, 2),)  # for the bounds whose evaluation trains or samples (theorem3-lower)
# the built-in bounds: an installed plug-in never changes what the tests check (a plug-in's
# function, named as module:function, is walked by the last test)
BOUNDS = sorted(n for n, b in plugins.available("bound").items() if b.source == "workbench")
CERTIFIED = {"certified": "eq2", "certified-query-values": "query-dependent-values"}


def _run(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str]:
    code = main(args)
    out, err = capsys.readouterr()
    assert code in (0, 2), err
    return code, out if code == 0 else err


def _json(capsys: pytest.CaptureFixture[str], args: list[str]) -> dict[str, Any]:
    code, out = _run(capsys, [*args, "--json"])
    assert code == 0, out
    return json.loads(out)  # type: ignore[no-any-return]


def _text_labels(text: str) -> list[tuple[str, bool, float, str]]:
    """Every labels line of a command's text: (status, rigorous, certified, source)."""
    return [(s, r == "rigorous", float(c), src.strip()) for s, r, c, src in LABELS_RE.findall(text)]


def _points(b: Any) -> list[tuple[int, int, int, int]]:
    """The points it covers, each at the least N in 2..4 it covers there."""
    pts = CHEAP if b.name == "theorem3-lower" else POINTS
    return [(d, r, H, n) for d, r, H in pts
            for n in [next((k for k in (2, 3, 4) if b.outside(d, r, H, k) is None), 0)] if n]


def _at(d: int, r: int, H: int, N: int) -> list[str]:
    return ["--d", str(d), "--rank", str(r), "--heads", str(H), "--N", str(N)]


def _close(printed: float, value: float) -> bool:
    return printed == float(f"{value:.6g}")  # text prints 6 significant digits


@pytest.mark.parametrize("name", BOUNDS)
def test_bounds_lower_and_list_agree_with_the_evaluation(
        capsys: pytest.CaptureFixture[str], name: str) -> None:
    b = plugins.get_bound(name)
    listed = {row["name"]: row for row in _json(capsys, ["bounds", "list"])["bounds"]}[name]
    table = _run(capsys, ["bounds", "list"])[1]
    row = next(line.split() for line in table.splitlines() if line.split()[:1] == [name])
    suffix = "-query-values" if b.value_class == "query-dependent-values" else ""
    for pt in _points(b):
        if name in CERTIFIED:  # its two parts have the labels of those bounds at this point
            default = _json(capsys, ["bounds", "lower", *_at(*pt), "--class", CERTIFIED[name]])
            for key, other in (("harmonic_count", "harmonic"), ("fiber", "fiber")):
                q = _json(capsys, ["bounds", "lower", *_at(*pt), "--bound", other + suffix])
                assert default[key]["rigorous"] is q["rigorous"], (name, pt, key)
                assert default[key]["lower_bound"] == q["lower_bound"], (name, pt, key)
        p = _json(capsys, ["bounds", "lower", *_at(*pt), "--bound", name])
        if name in CERTIFIED:  # the default command prints the same labels as --bound NAME
            assert default["rigorous"] is p["rigorous"] and default["source"] == p["source"]
            assert default["lower_bound"] == p["lower_bound"]
            assert _text_labels(_run(capsys, ["bounds", "lower", *_at(*pt), "--class",
                                              CERTIFIED[name]])[1]) == _text_labels(
                _run(capsys, ["bounds", "lower", *_at(*pt), "--bound", name])[1])
        # a part named like another bound has that bound's labels at the same point
        for part in p["parts"]:
            same = {"fiber": "fiber", "harmonic count": "harmonic"}.get(part["name"])
            if same and same + suffix != name:
                q = _json(capsys, ["bounds", "lower", *_at(*pt), "--bound", same + suffix])
                assert part["rigorous"] is q["rigorous"], (name, pt, part["name"])
                assert part["lower_bound"] == q["lower_bound"], (name, pt, part["name"])
        # bounds list: rigorous exactly when every part is, here and in the table
        parts = p["parts"]
        assert listed["rigorous"] is all(q["rigorous"] for q in parts), (name, pt)
        assert listed["status"] == ("proved" if all(q["proved"] for q in parts)
                                    else "conjectured")
        assert row[2:4] == [listed["status"], "yes" if listed["rigorous"] else "no"]
        # and every label is the evaluation's, in JSON and in text
        bv = b.evaluate(*pt)
        assert (p["lower_bound"], p["rigorous"], p["status"], p["certified"], p["source"]) == (
            bv.value, bv.rigorous, bv.status, bv.certified, bv.source), (name, pt)
        assert listed["rigorous"] is b.rigorous and listed["status"] == b.status
        text = _text_labels(_run(capsys, ["bounds", "lower", *_at(*pt), "--bound", name])[1])
        assert len(text) == 1 and text[0][:2] == (bv.status, bv.rigorous)
        assert _close(text[0][2], bv.certified) and text[0][3] == bv.source, (name, pt, text)


@pytest.mark.parametrize("name", BOUNDS)
def test_falsify_prints_the_evaluation_s_labels(capsys: pytest.CaptureFixture[str],
                                                name: str) -> None:
    b = plugins.get_bound(name)
    d, r, H, N = _points(b)[0]
    args = ["falsify", "--bound", name, "--d", str(d), "--rank", str(r), "--heads", str(H),
            "--N", str(N), "--budget", "1", "--attack", "generalized", "--steps", "3",
            "--eval-samples", "1000"]
    p = _json(capsys, args)
    info, (trial,) = p["bound_info"], p["trials"]
    bv = b.evaluate(d, r, H, N)
    assert (info["rigorous"], info["status"]) == (b.rigorous, b.status)
    assert trial["bound"] == bv.value == trial["labels"]["lower_bound"]
    assert (trial["labels"]["rigorous"], trial["labels"]["status"], trial["labels"]["certified"],
            trial["labels"]["source"]) == (bv.rigorous, bv.status, bv.certified, bv.source)
    (text,) = _text_labels(_run(capsys, args)[1])
    assert text[:2] == (bv.status, bv.rigorous) and text[3] == bv.source
    assert _close(text[2], bv.certified)


@pytest.mark.parametrize("name", BOUNDS)
def test_the_sandwich_prints_the_evaluation_s_labels(capsys: pytest.CaptureFixture[str],
                                                     name: str) -> None:
    """The sandwich takes the lower bounds on the nearest neighbour for orthonormal keys; it
    refuses the others in one line (exit 2)."""
    b = plugins.get_bound(name)
    d, r, H, _ = (*CHEAP[0], 2)
    args = ["bounds", "sandwich", "--bound", name, "--d", str(d), "--rank", str(r), "--heads",
            str(H), "--no-record"]
    code, out = _run(capsys, [*args, "--json"])
    if (b.target != "nearest" or b.law == "iid" or b.side != "lower"
            or b.outside(d, r, H, 2) is not None):
        assert code == 2 and out.startswith(f"error: --bound {name} ") and out.count("\n") == 1
        return
    p = json.loads(out)
    bv, cert = b.evaluate(d, r, H, 2), plugins.get_bound("certified").evaluate(d, r, H, 2)
    assert (p["bound_value"], p["bound_rigorous"], p["bound_status"], p["bound_certified"],
            p["bound_source"]) == (bv.value, bv.rigorous, bv.status, bv.certified, bv.source)
    assert (p["certified"], p["rigorous"], p["certified_rigorous"], p["certified_source"]) == (
        cert.value, cert.rigorous, cert.certified, cert.source)
    text = _text_labels(_run(capsys, args)[1])
    want = [] if name == "certified" else [(bv.status, bv.rigorous, bv.source)]
    assert [(s, rg, src) for s, rg, _, src in text] == [
        *want, (cert.status, cert.rigorous, cert.source)]


def test_train_prints_the_certified_bound_s_labels(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["train", "--d", "6", "--N", "2", "--rank", "1", "--heads", "2", "--steps", "3",
            "--batch", "32", "--eval-samples", "300", "--device", "cpu"]
    cb = _json(capsys, args)["certified_bound"]
    bv = plugins.get_bound("certified").evaluate(6, 1, 2, 2)
    assert (cb["lower_bound"], cb["rigorous"], cb["status"], cb["certified"], cb["source"]) == (
        bv.value, bv.rigorous, bv.status, bv.certified, bv.source)
    (text,) = _text_labels(_run(capsys, args)[1])
    assert text[:2] == (bv.status, bv.rigorous) and text[3] == bv.source


def test_a_plug_in_function_is_one_part_never_rigorous_without_an_enclosure(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A plain ``f(d, rank, heads, N)`` is one conjectured part with no enclosure: not rigorous,
    nothing certified, in JSON and text alike, and its evaluation says the same."""
    spec = "tests.plugin_fixtures:bound_0_3"
    args = ["bounds", "lower", "--d", "6", "--rank", "1", "--heads", "1", "--bound", spec]
    p = _json(capsys, args)
    bv = plugins.get_bound(spec).evaluate(6, 1, 1, 2)
    assert (p["lower_bound"], p["rigorous"], p["status"], p["certified"]) == (
        0.3, False, "conjectured", 0.0) == (bv.value, bv.rigorous, bv.status, bv.certified)
    (text,) = _text_labels(_run(capsys, args)[1])
    assert text[:3] == ("conjectured", False, 0.0)
