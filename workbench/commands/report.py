"""``workbench report``: Markdown plus PNG and SVG figures from the results store (docs/paper.md
§7; docs/sweeps.md, "Reports and the graph").

One figure per preset in the store (``workbench.verifiers.figures``: the quantity, settings and
a named interval stated, the 0.5 line, random features with Theorem 2's certified lower bound),
each followed by the table of numbers behind it; the sandwich from the stored sandwich points
(``workbench.verifiers.sandwich_figure``); then the last ``workbench check`` in the same
store: claims, verdicts, key evidence and the claims graph.

A preset's axes and description come from the preset registry (``workbench.plugins``: the
built-ins and those of installed packages); runs of a preset registered nowhere here (a sweep of
``module:attr``) are still reported, with the axes read off their labels (``preset_for``).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from workbench.commands._common import (
    emit,
    json_option,
    path_option,
    plural,
)
from workbench.commands._paths import writable_path
from workbench.core.safe_files import write_text


@click.command(help="Write a Markdown report with PNG and SVG figures from the results store.")
@path_option("--db", "Results store (default: runs.sqlite under the user's data directory).")
@click.option("--out", type=click.Path(file_okay=False), required=True,
              help="Folder for report.md and the figures (created if missing).")
@json_option
def cli(db: str | None, out: str, as_json: bool) -> None:
    from workbench.verifiers.store import Store, check_database, default_path, last_check

    path = check_database(Path(db) if db is not None else default_path())
    out_dir = Path(writable_path("--out", out, folder=True))
    with Store(path, readonly=True) as st:  # a report never writes to the store
        rows = st.rows()
    check = last_check(path)
    from workbench.verifiers.sandwich_store import best_witnesses, read_points

    cells = best_witnesses(read_points(path))
    created = not out_dir.exists()
    out_dir.mkdir(exist_ok=True)
    try:
        written = write_report(rows, check, out_dir, str(path), cells)
    except BaseException:  # a full disk, a signal: a folder made here is not left half-filled
        if created:
            shutil.rmtree(out_dir, ignore_errors=True)
        raise
    emit({"out": str(out_dir), "files": written, "runs": len(rows),
          "check": None if check is None else check["summary"]}, as_json,
         lambda p: f"wrote {', '.join(p['files'])} to {p['out']} ({plural(p['runs'], 'run')})")


def _latest(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Rows per (preset, scale), keeping the newest code version of each."""
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["preset"], r["scale"]), []).append(r)
    out = {}
    for k, rs in sorted(by.items()):
        newest = max(rs, key=lambda r: r["created"] or 0)["code_version"]
        out[k] = [r for r in rs if r["code_version"] == newest]
    return out


def write_report(rows: list[dict[str, Any]], check: dict[str, Any] | None, out: Path,
                 db: str, sandwich: Sequence[Any] = ()) -> list[str]:
    """Write ``report.md`` and its figures (PNG and SVG) into ``out``: one per stored preset,
    the sandwich (``sandwich``: ``SandwichCell`` records) and the claims graph; the file names
    written."""
    from workbench.plugins import available
    from workbench.verifiers.figure_rows import band_label
    from workbench.verifiers.figures import draw_preset
    from workbench.verifiers.sweep import best_of_seeds

    md = ["# Reproduction report", "", f"Results store: `{db}` ({plural(len(rows), 'run')}).", ""]
    files: list[str] = []
    known = available("preset")
    for (preset, scale), rs in _latest(rows).items():
        best = best_of_seeds(rs)
        if not best:
            continue
        p = known.get(preset) or preset_for(preset, best)
        n_bound = _certified_n_bound()
        names = draw_preset(p, rs, out / f"{preset}_{scale}", scale, n_bound)
        files += names
        md += [f"## {p.sweeps[0].upper() + p.sweeps[1:]} ({preset}, {scale})", "",
               f"Model class: **{p.model_class}** ({p.why}). {band_label(rs)}.", "",
               f"![{preset} ({scale})]({names[0]})", "", *_laws(p, rs, n_bound),
               *_table(p, best), "", *_findings(p, rs),
               *(_no_bound(rs, n_bound) if p.x == "N" else [])]
    if len(files) == 0:
        md += ["No sweep runs in this store yet (`workbench sweep PRESET --db ...`).", ""]
    md += _sandwich_section(sandwich, out, files)
    md += _check_section(check, out, files)
    write_text(out / "report.md", "\n".join(md) + "\n", "--out")
    return ["report.md", *files]


def _no_bound(rows: list[dict[str, Any]], bound: Any) -> list[str]:
    """Under runs against N that no lower bound covers: the sentence saying so."""
    from workbench.verifiers.n_figure import sweep_bound_line

    line = sweep_bound_line(rows, bound)
    return [] if line is None else [line[0].upper() + line[1:] + ".", ""]


def _certified_n_bound() -> Any:
    """The registered certified bound at N >= 3 (``certified-n``), or ``None`` where none is
    registered."""
    from workbench.core.bounds.sequence_length.certified_n import NAME
    from workbench.plugins import get_bound

    try:
        return get_bound(NAME)
    except ValueError:
        return None


def _laws(p: Any, rows: list[dict[str, Any]], bound: Any) -> list[str]:
    """Under an error-against-N figure: the law each trained curve is under, and what the bound
    drawn with it is (``n_figure.bound_note``)."""
    if p.x != "N" or not rows or rows[0].get("kind") == "random_features":
        return []
    from workbench.verifiers.n_figure import bound_note, law_of

    laws = ", ".join(sorted({law_of(r) for r in rows}))
    return [f"Trained curves: {laws}. {bound_note(rows, bound)}.", ""]


def preset_for(name: str, best: list[dict[str, Any]]) -> Any:
    """A stand-in ``Preset`` for runs of a preset that is not registered: the x axis is the
    label with the most distinct values (the later one on ties), the curves the others
    (logarithmic when every x is a positive number)."""
    from workbench.verifiers.presets import Preset

    labels = list(dict.fromkeys(k for b in best for k in b["labels"]))
    spread = [len({repr(b["labels"].get(k)) for b in best}) for k in labels]
    x = labels[max(range(len(labels)), key=lambda i: (spread[i], i))] if labels else "seed"
    xs = [b["labels"].get(x) for b in best]
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in xs)
    classes = sorted({b["model_class"] for b in best})
    return Preset(name, f"runs of the preset {name}, which is not registered here (axes read off "
                  "its labels)", "/".join(classes), "as recorded with the runs", x,
                  tuple(k for k in labels if k != x), numeric, lambda scale, seed: [])


def _has_bound(best: list[dict[str, Any]]) -> bool:
    """Whether the runs carry Theorem 2's certified lower bound (random-features runs do)."""
    return all("lower_bound" in (b.get("extra") or {}) for b in best)


def _curve_key(p: Any, labels: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(labels.get(c) for c in p.curves)


def _table(p: Any, best: list[dict[str, Any]]) -> list[str]:
    rf = _has_bound(best)
    head = [*p.curves, p.x, "class", "seeds", "best held-out", "95% CI", "worst seed",
            *(["lower bound"] if rf else [])]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for b in sorted(best, key=lambda b: (str(_curve_key(p, b["labels"])), b["labels"][p.x])):
        cells = [*(str(b["labels"].get(c)) for c in p.curves), str(b["labels"][p.x]),
                 b["model_class"], str(b["seeds"]), f"{b['heldout']:.4g}",
                 f"[{b['heldout_lo']:.4g}, {b['heldout_hi']:.4g}]", f"{b['worst']:.4g}"]
        if rf:
            cells.append(f"{b['extra']['lower_bound']:.4g}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _findings(p: Any, rows: list[dict[str, Any]]) -> list[str]:
    """Under an error-against-N figure: both findings of docs/paper.md §6 as orderings beyond
    the seeds' spread and the stored intervals (``workbench.verifiers.orderings``)."""
    from workbench.verifiers.orderings import findings_lines

    lines = findings_lines(rows) if p.x == "N" and "r" in p.curves else []
    if not lines:
        return []
    head = lines[0][0].upper() + lines[0][1:].rstrip(":")
    return [head + ". `section7.low_rank_grows_with_n` decides the same orderings at "
            "Bonferroni-corrected levels.", "",
            *(f"- {line.rsplit(': ', 1)[0]}: **{line.rsplit(': ', 1)[1]}**" for line in lines[1:]),
            ""]


def _sandwich_section(cells: Sequence[Any], out: Path, files: list[str]) -> list[str]:
    from workbench.verifiers.sandwich_figure import draw_sandwich

    md = ["## The sandwich", ""]
    if not cells:
        return md + ["No sandwich points in this store (`workbench bounds sandwich --db ...`, "
                     "`benchmarks/sandwich.py --db ...`).", ""]
    names = draw_sandwich(cells, out / "sandwich")
    files += names
    inherited = sum(c.inherited_from is not None for c in cells)
    bounds = sorted({c.bound for c in cells}, key=lambda b: (b != "certified", b))
    targets = sorted({c.task for c in cells if c.task != "nearest"})
    against = f" (and of the targets {', '.join(f'`{t}`' for t in targets)}: the error " \
        "against the target, below its profile's harmonic count)" if targets else ""
    md += [f"{len(cells)} points (d, r, H) on D_2, N = 2, against the lower bound "
           f"{', '.join(f'`{b}`' for b in bounds)}{against}; {inherited} of them inherit their "
           "best witness from fewer heads or a lower rank (hollow markers).", "",
           f"![the sandwich]({names[0]})", "",
           "| bound | d | r | H | lower bound | certified | best witness | CI | method | "
           "inherited from (r, H) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        src = "" if c.inherited_from is None else f"({c.inherited_from[0]}, {c.inherited_from[1]})"
        bound, cert = (c.bound, f"{c.certified:.4g}") if c.task == "nearest" else \
            (f"{c.bound} ({c.task})", "—")  # the hardmax bound does not apply to a target
        md.append(f"| {bound} | {c.d} | {c.r} | {c.heads} | {c.lower:.4g} | "
                  f"{cert} | {c.best_error:.4g} | "
                  f"[{c.best_ci[0]:.4g}, {c.best_ci[1]:.4g}] | {c.method} | {src} |")
    return md + [""]


def _md_cell(text: str) -> str:
    """``text`` for a Markdown table cell: norms ``||x||^2`` as ``‖x‖²`` (with a minus sign
    inside), any other ``|`` escaped."""
    text = re.sub(r"\|\|(.+?)\|\|(\^2)?",
                  lambda m: "‖" + m.group(1).replace(" - ", " − ") + "‖"
                  + ("²" if m.group(2) else ""), text)
    return text.replace("|", "\\|")


def _key_evidence(claim: dict[str, Any]) -> str:
    """The key row of a stored claim result, by the rule ``check`` prints it with."""
    from workbench.proofs.claim import key_evidence

    key = key_evidence(claim.get("evidence") or [],
                       claim.get("statement") or claim.get("title") or "")
    if key is None:
        return claim.get("error") or claim.get("reason") or "no evidence"
    return str(key["text"])


def _check_section(check: dict[str, Any] | None, out: Path, files: list[str]) -> list[str]:
    from workbench.proofs import graph
    from workbench.proofs.registry import load_claims

    verdicts = {c["id"]: c["verdict"] for c in check["claims"]} if check else {}
    g = graph.claim_graph(load_claims())
    for name in ("graph.png", "graph.svg"):
        graph.draw(g, out / name, verdicts, "--out")
        files.append(name)
    md = ["## Last `workbench check`", ""]
    if check is None:
        md += ["No `workbench check` result in this store (`workbench check` records one); "
               "the graph is uncoloured.", ""]
    else:
        s = check["summary"]
        md += [f"Scale {check['scale']}, seed {check['seed']}, device {check['device']}: "
               f"{s.get('holds', 0)} holds, {s.get('violated', 0)} violated, "
               f"{s.get('inconclusive', 0)} inconclusive, {s.get('unsupported', 0)} "
               f"unsupported.", "", "| claim | kind | verdict | key evidence |",
               "|---|---|---|---|"]
        for c in check["claims"]:
            text = _md_cell(_key_evidence(c))
            md.append(f"| `{c['id']}` | {c['kind']} | {c['verdict']} | {text} |")
        md.append("")
    return md + ["![claims graph](graph.png)", ""]
