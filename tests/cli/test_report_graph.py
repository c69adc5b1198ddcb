"""``workbench report`` (Markdown + PNG and SVG figures from the store), ``workbench graph``
and ``workbench bounds sandwich --db``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import matplotlib.image as mpimg
import pytest

from tests.plugin_registry import fresh_registry
from workbench.cli import main
from workbench.proofs import graph
from workbench.proofs.claim import Claim
from workbench.proofs.registry import load_claims
from workbench.testing import edited, plant, replaced
from workbench.verifiers import presets, sweep
from workbench.verifiers.store import Store, last_check

FAST_CLAIM = "setting.sphere_law"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the one-layer tiny runs, two random-features draws, one check run and one
    sandwich point (``bounds sandwich --db``)."""
    path = tmp_path_factory.mktemp("store") / "runs.sqlite"
    tiny = [r for r in presets.plan("tiny", "quick") if r.label_dict()["L"] == 1]
    rf = [r for r in presets.plan("random_features", "quick")
          if r.label_dict()["d"] == 8 and r.label_dict()["H"] <= 4 and r.seed == 0]
    with Store(path) as st:
        sweep.run_sweep("tiny", "quick", st, runs=tiny, threads=1)
        sweep.run_sweep("random_features", "quick", st, runs=rf, threads=1)
    assert main(["check", "--only", FAST_CLAIM, "--db", str(path), "--json"]) == 0
    assert main(["bounds", "sandwich", "--d", "3", "--rank", "1", "--heads", "1", "--db",
                 str(path), "--json"]) == 0
    return path


def _report(db: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``workbench report`` of ``db`` into ``out`` (it must succeed): the Markdown it wrote."""
    assert main(["report", "--db", str(db), "--out", str(out)]) == 0
    capsys.readouterr()
    return (out / "report.md").read_text()


def test_report_names_its_figures_and_each_png_is_real(db: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rep"
    md = _report(db, out, capsys)
    named = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    pngs = sorted(p.name for p in out.glob("*.png"))
    figures = ["graph", "random_features_quick", "sandwich", "tiny_quick"]
    assert sorted(named) == pngs == [f"{f}.png" for f in figures]
    assert sorted(p.name for p in out.glob("*.svg")) == [f"{f}.svg" for f in figures]
    for name in figures:
        img = mpimg.imread(out / f"{name}.png")
        assert img.shape[0] >= 400 and img.shape[1] >= 800  # a talk's slide, not a thumbnail
        assert img[..., :3].std() > 0.05  # not a blank canvas
        svg = (out / f"{name}.svg").read_text()
        assert svg.startswith("<?xml") and "<dc:date>" not in svg
    assert "Smoke preset (seconds)" in (out / "tiny_quick.svg").read_text()
    assert "certified lower bound, d = 8" in (out / "random_features_quick.svg").read_text()
    assert "## The sandwich" in md and "| 3 | 1 | 1 |" in md
    # the numbers behind each figure: one table row per (L, c, r) and per (d, H)
    assert md.count("| standard |") == 6 and md.count("| generalized |") == 2
    assert "| lower bound |" in md
    # the last check: its claims with verdicts and key evidence
    assert f"`{FAST_CLAIM}`" in md and "holds" in md


def test_report_table_matches_store(db: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    md = _report(db, tmp_path / "rep", capsys)
    with Store(db) as st:
        best = sweep.best_of_seeds(st.rows("tiny"))
    for b in best:  # best of seeds: the lower held-out error of the two seeds
        lab = b["labels"]
        assert f"| {lab['L']} | {lab['c']} | {lab['r']} | standard | 2 | {b['heldout']:.4g} |" in md


@pytest.mark.parametrize("command", [["report", "--out", "{tmp}/o"], ["graph"]])
@pytest.mark.parametrize("db", ["none.sqlite", "junk.sqlite"])
def test_report_and_graph_bad_db(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 command: list[str], db: str) -> None:
    (tmp_path / "junk.sqlite").write_text("not a database " * 100)
    argv = [a.format(tmp=tmp_path) for a in command] + ["--db", str(tmp_path / db)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--db must be" in err
    assert [p.name for p in tmp_path.iterdir()] == ["junk.sqlite"]


def test_graph_json_and_dot_follow_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    claims = load_claims()
    assert main(["graph", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {n["id"] for n in data["nodes"]} == set(claims)
    edges = {(e["from"], e["to"]) for e in data["edges"]}
    assert edges == {(d, c.id) for c in claims.values() for d in c.depends_on}
    order = [n["id"] for n in data["nodes"]]
    assert all(order.index(a) < order.index(b) for a, b in edges)
    assert main(["graph", "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith("digraph claims {") and dot.count(" -> ") == len(edges)


def test_graph_colours_by_last_check(db: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", "--format", "json", "--db", str(db)]) == 0
    nodes = {n["id"]: n["verdict"] for n in json.loads(capsys.readouterr().out)["nodes"]}
    check = last_check(db)
    assert check is not None
    assert nodes[FAST_CLAIM] == "holds" and sum(v is not None for v in nodes.values()) == len(
        check["claims"])
    png = tmp_path / "g.png"
    assert main(["graph", "--format", "png", "--out", str(png), "--db", str(db)]) == 0
    assert mpimg.imread(png).shape[2] in (3, 4)


def test_old_claim_ids_in_a_store_read_under_their_current_ids(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A store written before thm2.certified_bound was renamed thm2.harmonic_bound (it checks
    the harmonic count alone) still colours the graph: ``last_check`` maps the old id."""
    import sqlite3

    from workbench.verifiers.store import RENAMED_CLAIMS

    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    with con:
        con.execute("CREATE TABLE check_runs (id INTEGER PRIMARY KEY, started REAL, scale TEXT, "
                    "seed INTEGER, device TEXT, summary TEXT)")
        con.execute("CREATE TABLE claim_results (run_id INTEGER, claim_id TEXT, verdict TEXT, "
                    "seconds REAL, payload TEXT)")
        con.execute("INSERT INTO check_runs VALUES (1, 0.0, 'quick', 0, 'cpu', '{}')")
        for cid, deps in (("thm2.certified_bound", []),
                          ("thm2.regime_high_accuracy", ["thm2.certified_bound"])):
            payload = {"id": cid, "kind": "theorem", "verdict": "holds", "depends_on": deps}
            con.execute("INSERT INTO claim_results VALUES (1, ?, 'holds', 0.1, ?)",
                        (cid, json.dumps(payload)))
    con.close()
    assert RENAMED_CLAIMS == {"thm2.certified_bound": "thm2.harmonic_bound"}
    check = last_check(path)
    assert check is not None
    assert [(c["id"], c["depends_on"]) for c in check["claims"]] == [
        ("thm2.harmonic_bound", []), ("thm2.regime_high_accuracy", ["thm2.harmonic_bound"])]
    assert main(["graph", "--format", "json", "--db", str(path)]) == 0
    nodes = {n["id"]: n["verdict"] for n in json.loads(capsys.readouterr().out)["nodes"]}
    assert nodes["thm2.harmonic_bound"] == "holds" and "thm2.certified_bound" not in nodes


def _claim(cid: str, deps: tuple[str, ...]) -> Claim:
    return Claim(cid, cid, "lemma", lambda ctx: [], deps)


def test_cycles_are_rejected(monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cyc = {c.id: c for c in (_claim("a", ("c",)), _claim("b", ("a",)), _claim("c", ("b",)),
                             _claim("d", ()))}
    with pytest.raises(ValueError, match="cycle: .*a.*b.*c|cycle: .*b.*c.*a|cycle: .*c.*a.*b"):
        graph.claim_graph(cyc)
    monkeypatch.setattr("workbench.proofs.registry.load_claims", lambda: cyc)
    out = tmp_path / "g.png"
    assert main(["graph", "--format", "png", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cycle" in err and not out.exists()
    acyclic = {c.id: c for c in (_claim("a", ()), _claim("b", ("a",)), _claim("c", ("b",)))}
    g = graph.claim_graph(acyclic)
    assert graph.impact(g, "a") == ["b", "c"] and graph.impact(g, "c") == []


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_graph_picture_needs_out_of_its_format(fmt: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", "--format", fmt]) == 2
    assert "--out must be given" in capsys.readouterr().err
    assert main(["graph", "--format", fmt, "--out", str(tmp_path / "g.pdf")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--out must end in .{fmt}" in err
    assert list(tmp_path.iterdir()) == []


def _crossings(g: Any, cols: list[list[str]]) -> int:
    """Edge crossings between adjacent columns, for the order ``cols``."""
    at = {n: (k, i) for k, col in enumerate(cols) for i, n in enumerate(col)}
    es = [(at[a], at[b]) for a, b in g.edges if at[b][0] == at[a][0] + 1]
    return sum(1 for i, (a, b) in enumerate(es) for c, e in es[i + 1:]
               if a[0] == c[0] and (a[1] - c[1]) * (b[1] - e[1]) < 0)


def _check_layout(g: Any) -> None:
    import networkx as nx

    from workbench.proofs import graph_figure

    cols = graph_figure.layers(g)
    assert [sorted(c) for c in cols] == [sorted(c) for c in nx.topological_generations(g)]
    assert _crossings(g, cols) < _crossings(g, [sorted(c) for c in cols])
    pos = graph_figure.positions(g)
    assert all(pos[a][0] < pos[b][0] for a, b in g.edges)  # dependencies to the left


def test_graph_layout_is_layered_and_reduces_crossings() -> None:
    _check_layout(graph.claim_graph(load_claims()))


def test_graph_layout_check_fails_without_the_barycentre_order() -> None:
    with plant("workbench.proofs.graph_figure:_reorder", replaced(lambda cols, k, nb: None)):
        with pytest.raises(AssertionError):
            _check_layout(graph.claim_graph(load_claims()))


def test_graph_picture_is_the_same_every_run_and_encodes_kind_and_verdict(
        db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.proofs import graph_figure

    svgs = []
    for name in ("a.svg", "b.svg"):
        assert main(["graph", "--format", "svg", "--out", str(tmp_path / name), "--db",
                     str(db)]) == 0
        svgs.append((tmp_path / name).read_text())
    assert svgs[0] == svgs[1]
    g = graph.claim_graph(load_claims())
    fig = graph_figure.figure(g, {FAST_CLAIM: "holds"})
    ax = fig.axes[0]
    labels = {t.get_text(): t for t in ax.texts}
    assert set(g) <= set(labels) and all(labels[n].get_fontsize() >= 11 for n in g)
    pos = graph_figure.positions(g)
    assert all(labels[n].get_position()[0] > pos[n][0] for n in g)  # beside, not on top
    legends = [[t.get_text() for t in lg.get_texts()] for lg in
               [a for a in ax.artists if hasattr(a, "get_texts")] + [ax.get_legend()]]
    assert sorted(map(tuple, legends)) == sorted([
        tuple(k for k in graph_figure.SHAPES if k in {g.nodes[n]["kind"] for n in g}),
        ("holds", "not checked")])
    markers = {ln.get_marker() for ln in ax.get_lines()}
    assert markers == {graph_figure.SHAPES[g.nodes[n]["kind"]] for n in g}


def test_report_labels_the_runs_of_a_plug_in_preset(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Runs of a preset from a package (registered) are labelled by its Preset; runs of one
    registered nowhere here get their axes from their labels; both carry the lower bound."""
    from workbench import plugins

    runs = [r for r in presets.random_features_runs("rf_tied", "quick", 0, law="tied")
            if r.task.d == 8 and r.spec.heads <= 4]
    mine = presets.Preset("rf_tied", "random features with tied heads", "generalized",
                          "a plug-in's grid", "H", ("d", "law"), True, lambda scale, seed: runs)
    path = tmp_path / "plug.sqlite"
    with Store(path) as st:
        sweep.run_sweep("rf_tied", "quick", st, runs=runs, threads=1)
    fresh_registry(monkeypatch)
    plugins.register("preset", mine)
    md = _report(path, tmp_path / "a", capsys)
    assert "## Random features with tied heads (rf_tied, quick)" in md
    assert "| d | law | H | class |" in md and "| lower bound |" in md
    assert md.count("| 8 | tied |") == 2 and (tmp_path / "a" / "rf_tied_quick.png").is_file()
    fresh_registry(monkeypatch)
    md = _report(path, tmp_path / "b", capsys)  # registered nowhere: axes from the labels
    assert "(rf_tied, quick)" in md and "not registered here" in md
    assert "| d | law | H | class |" in md and md.count("| 8 | tied | 1 |") == 1
    assert (tmp_path / "b" / "rf_tied_quick.png").is_file()


@pytest.mark.parametrize("bad", ["folder", "missing/x.sqlite", "junk.sqlite"])
def test_sandwich_db_bad_input(bad: str, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    """An unusable ``--db`` is refused before any witness is measured; nothing is written."""
    (tmp_path / "folder").mkdir()
    (tmp_path / "junk.sqlite").write_text("not a database " * 100)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    argv = ["bounds", "sandwich", "--d", "3", "--rank", "1", "--heads", "1", "--db",
            str(tmp_path / bad)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--db" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_report_draws_a_sandwich_point_of_any_bound_and_names_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``bounds sandwich --bound NAME --db S`` then ``report --db S``: the point is drawn, in a
    panel titled with its bound, and its table row names the bound and its value."""
    db = tmp_path / "s.sqlite"
    assert main(["bounds", "sandwich", "--d", "3", "--rank", "1", "--heads", "2", "--bound",
                 "harmonic", "--db", str(db), "--json"]) == 0
    point = json.loads(capsys.readouterr().out)
    md = _report(db, tmp_path / "rep", capsys)
    assert "No sandwich points" not in md and "(sandwich.png)" in md
    row = next(line for line in md.splitlines() if line.startswith("| harmonic | 3 | 1 | 2 |"))
    assert f"| {point['bound_value']:.4g} |" in row
    assert "lower side: harmonic" in (tmp_path / "rep" / "sandwich.svg").read_text()
    # the store's reader back to the certified points alone: the point is lost again
    only_certified = "\"WHERE bound = 'certified' ORDER BY created, key\""
    with plant("workbench.verifiers.sandwich_store:read_points",
               edited('"ORDER BY created, key"', only_certified)):
        md = _report(db, tmp_path / "rep2", capsys)
    assert "No sandwich points" in md


def test_check_without_db_reaches_the_report(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The README's main job: ``check`` and then ``report``, neither given ``--db``, meet in the
    default store (here the test's own data directory), so the report's claims graph is
    coloured by the check's verdicts; a second check is recorded beside the first."""
    from workbench.proofs.graph_figure import COLOURS, NO_VERDICT
    from workbench.verifiers.store import default_path

    store = default_path()
    assert not store.exists() and str(tmp_path.parent) != str(store)  # a fresh, private store
    assert main(["check", "--only", FAST_CLAIM, "--jobs", "1"]) == 0
    assert f"recorded in {store}" in capsys.readouterr().out
    check = last_check(store)
    assert check is not None and [c["id"] for c in check["claims"]] == [FAST_CLAIM]
    assert main(["report", "--out", str(tmp_path / "r")]) == 0
    capsys.readouterr()
    svg = (tmp_path / "r" / "graph.svg").read_text()
    assert COLOURS["holds"] in svg and NO_VERDICT in svg  # the one claim run, the rest not
    assert FAST_CLAIM in (tmp_path / "r" / "report.md").read_text()
    assert main(["check", "--only", FAST_CLAIM, "--jobs", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["db"] == str(store)
    with Store(store, readonly=True) as st:
        assert st.con.execute("SELECT COUNT(*) FROM check_runs").fetchone()[0] == 2


def test_a_soft_sandwich_is_stored_by_target_and_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``bounds sandwich --target soft-nearest --db`` stores its point keyed by the target and
    its parameters: two temperatures and the hardmax point at the same (d, r, H) are three
    points, none inheriting another's witness (their errors are against different targets),
    each drawn in a panel of its own with its bound, and named in the report's table."""
    from workbench.verifiers.sandwich_store import best_witnesses, point_task, read_points

    db = tmp_path / "s.sqlite"
    base = ["bounds", "sandwich", "--d", "4", "--rank", "1", "--heads", "1", "--db", str(db),
            "--json"]
    printed = {}
    for beta in ("4", "8"):
        assert main([*base, "--target", "soft-nearest", "--target-param", f"beta={beta}"]) == 0
        printed[beta] = json.loads(capsys.readouterr().out)
    assert main(base) == 0
    hard = json.loads(capsys.readouterr().out)
    points = read_points(db)
    tasks = [point_task(p) for p in points]
    assert tasks == ["soft-nearest(beta=4.0)", "soft-nearest(beta=8.0)", "nearest"]
    cells = {c.task: c for c in best_witnesses(points)}
    assert len(cells) == 3 and all(c.inherited_from is None for c in cells.values())
    for beta in ("4", "8"):
        c, p = cells[f"soft-nearest(beta={beta}.0)"], printed[beta]
        assert (c.lower, c.best_error, c.method) == (p["bound"], p["best"]["error"],
                                                    p["best"]["method"])
    assert cells["nearest"].best_error == hard["best_error"]
    md = _report(db, tmp_path / "rep", capsys)
    assert "| certified bound of the target (soft-nearest(beta=4.0)) | 4 | 1 | 1 |" in md
    assert "target soft-nearest(beta=8.0)" in (tmp_path / "rep" / "sandwich.svg").read_text()


def test_every_sandwich_panel_draws_its_bound_even_at_one_point() -> None:
    """A panel of one (d, r, H) shows the bound (a visible marker at its value), not only the
    witness; so does every point of a longer curve."""
    import math as _math

    from workbench.verifiers.sandwich_figure import sandwich_figure
    from workbench.verifiers.sandwich_store import SandwichCell

    one = [SandwichCell(6, 1, 2, 0.31, 0.42, (0.41, 0.43), "bayes_heads", None)]
    two = [SandwichCell(6, 1, H, b, 0.42, (0.41, 0.43), "bayes_heads", None)
           for H, b in ((1, 0.35), (4, 0.2))]
    for cells in (one, two):
        ax = sandwich_figure(cells).axes[0]
        drawn = [ln for ln in ax.get_lines()
                 if [float(y) for y in ln.get_ydata()] == [c.lower for c in cells]]
        assert drawn, "the bound is not drawn"
        assert all(ln.get_marker() not in (None, "", "None", " ") and ln.get_markersize() > 0
                   and ln.get_visible() for ln in drawn)
        assert not any(_math.isnan(float(y)) for y in drawn[0].get_ydata())
