"""``workbench report``: Markdown plus PNG figures from the results store (docs/paper.md §7).

One figure per preset in the store, in the style of the paper's figures (best-of-seeds held-out
error on a log scale, the seeds' spread shaded; random features with Theorem 2's certified lower
bound beside them), each followed by the table of numbers behind it. Then the last
``workbench check --db`` in the same store: claims, verdicts, key evidence and the claims graph.

A preset's axes and description come from the preset registry (``workbench.plugins``: the
built-ins and those of installed packages); runs of a preset registered nowhere here (a sweep of
``module:attr``) are still reported, with the axes read off their labels (``preset_for``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from workbench.commands._common import (
    common_options,
    emit,
    path_option,
)

FIG_SIZE, DPI = (6.4, 4.0), 100  # every figure is 640 x 400 pixels
_ORDER = {"violated": 0, "inconclusive": 1, "unsupported": 2, "skipped": 3, "holds": 4}


@click.command(help="Write a Markdown report with PNG figures from the results store.")
@path_option("--db", "Results store (default: runs.sqlite under the user's data directory).")
@click.option("--out", type=click.Path(file_okay=False), required=True,
              help="Folder for report.md and the figures (created if missing).")
@common_options
def cli(db: str | None, out: str, as_json: bool, seed: int) -> None:
    from workbench.verifiers.store import Store, check_database, default_path, last_check

    path = check_database(Path(db) if db is not None else default_path())
    out_dir = Path(out)
    parent = out_dir.resolve().parent
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"--out must be a folder (got {out!r})")
    if not out_dir.exists() and (not parent.is_dir() or not os.access(parent, os.W_OK)):
        raise ValueError(f"--out must be a folder in an existing, writable folder (got {out!r})")
    with Store(path, readonly=True) as st:  # a report never writes to the store
        rows = st.rows()
    check = last_check(path)
    out_dir.mkdir(exist_ok=True)
    written = write_report(rows, check, out_dir, str(path))
    emit({"out": str(out_dir), "files": written, "runs": len(rows),
          "check": None if check is None else check["summary"]}, as_json,
         lambda p: f"wrote {', '.join(p['files'])} to {p['out']} ({p['runs']} runs)")


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
                 db: str) -> list[str]:
    """Write ``report.md`` and its PNGs into ``out``; the file names written."""
    from workbench.plugins import available
    from workbench.verifiers.sweep import best_of_seeds

    md = ["# Reproduction report", "", f"Results store: `{db}` ({len(rows)} runs).", ""]
    files: list[str] = []
    known = available("preset")
    for (preset, scale), rs in _latest(rows).items():
        best = best_of_seeds(rs)
        if not best:
            continue
        p = known.get(preset) or preset_for(preset, best)
        name = f"{preset}_{scale}.png"
        _figure(p, best, out / name, scale)
        files.append(name)
        md += [f"## {preset} ({scale})", "", f"{p.sweeps}. Model class: **{p.model_class}** "
               f"({p.why}). Best of seeds by held-out error; the band spans the seeds.", "",
               f"![{preset} ({scale})]({name})", "", *_table(p, best), ""]
    if len(files) == 0:
        md += ["No sweep runs in this store yet (`workbench sweep PRESET --db ...`).", ""]
    md += _check_section(check, out, files)
    (out / "report.md").write_text("\n".join(md) + "\n")
    return ["report.md", *files]


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


def _figure(p: Any, best: list[dict[str, Any]], path: Path, scale: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=FIG_SIZE, dpi=DPI)
    curves: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for b in best:
        curves.setdefault(_curve_key(p, b["labels"]), []).append(b)
    for key, bs in sorted(curves.items(), key=lambda kv: str(kv[0])):
        bs = sorted(bs, key=lambda b: b["labels"][p.x])
        xs = [b["labels"][p.x] for b in bs]
        label = ", ".join(f"{c}={v}" for c, v in zip(p.curves, key)) or p.name
        line = ax.plot(xs, [b["heldout"] for b in bs], marker="o", label=label)[0]
        ax.fill_between(xs, [b["heldout"] for b in bs], [b["worst"] for b in bs],
                        color=line.get_color(), alpha=0.2)
        if _has_bound(bs):
            ax.plot(xs, [max(b["extra"]["lower_bound"], 1e-12) for b in bs], linestyle="--",
                    color=line.get_color(), label=f"lower bound, {label}")
    ax.set_yscale("log")
    if p.log_x:
        ax.set_xscale("log", base=2 if p.x in ("r", "N", "d") else 10)
    ax.set_xlabel({"r": "rank r", "N": "sequence length N", "d": "dimension d",
                   "H": "heads H"}.get(p.x, p.x))
    ax.set_ylabel("held-out error (best of seeds)")
    ax.set_title(f"{p.name} ({scale})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


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


def _key_evidence(claim: dict[str, Any]) -> str:
    """The key row of a stored claim result, by the rule ``check`` prints it with."""
    from workbench.proofs.claim import key_evidence

    key = key_evidence(claim.get("evidence") or [])
    if key is None:
        return claim.get("error") or claim.get("reason") or "no evidence"
    note = claim["evidence"][key["index"]].get("note")
    return f"{key['text']}" + (f" ({note})" if note else "")


def _check_section(check: dict[str, Any] | None, out: Path, files: list[str]) -> list[str]:
    from workbench.proofs import graph
    from workbench.proofs.registry import load_claims

    verdicts = {c["id"]: c["verdict"] for c in check["claims"]} if check else {}
    graph.draw_png(graph.claim_graph(load_claims()), out / "graph.png", verdicts)
    files.append("graph.png")
    md = ["## Last `workbench check`", ""]
    if check is None:
        md += ["No `workbench check --db` result in this store; the graph is uncoloured.", ""]
    else:
        s = check["summary"]
        md += [f"Scale {check['scale']}, seed {check['seed']}, device {check['device']}: "
               f"{s.get('holds', 0)} holds, {s.get('violated', 0)} violated, "
               f"{s.get('inconclusive', 0)} inconclusive, {s.get('unsupported', 0)} "
               f"unsupported.", "", "| claim | kind | verdict | key evidence |",
               "|---|---|---|---|"]
        for c in check["claims"]:
            text = _key_evidence(c).replace("|", "/")
            md.append(f"| `{c['id']}` | {c['kind']} | {c['verdict']} | {text} |")
        md.append("")
    return md + ["![claims graph](graph.png)", ""]
