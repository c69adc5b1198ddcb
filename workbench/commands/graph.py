"""``workbench graph``: the claims graph as JSON, Graphviz dot or a PNG or SVG picture.

Nodes are coloured by the verdicts of the last ``workbench check`` recorded in the store
(``--db``, default the store check and sweep write) when there is one. A dependency cycle is
bad input (exit 2). With ``--json`` the output is always a JSON object: the graph itself for
``--format json``, else ``{"format", "path", "claims", "dependencies"}`` with the file written
(``path``), or the dot text under ``dot`` when there is no ``--out``. Every argument is checked
before the claim modules (and torch) are imported.
"""

from __future__ import annotations

import json
from typing import Any

import click

from workbench.commands._common import (
    emit,
    json_option,
    path_option,
    plural,
)
from workbench.core.safe_files import write_text


@click.command(help="Draw the claims graph (json, dot, png or svg), coloured by the last check.")
@click.option("--format", "fmt", type=click.Choice(["json", "dot", "png", "svg"]), default="json",
              show_default=True)
@path_option("--out", "Write here (required for png and svg; json and dot go to stdout "
             "without it).", access="write")
@path_option("--db", "Store holding `workbench check` results (default: the store check, "
             "sweep and report use).",
             access="read")
@json_option
def cli(fmt: str, out: str | None, db: str | None, as_json: bool) -> None:
    if out is None and fmt in ("png", "svg"):
        raise ValueError(f"--out must be given for --format {fmt} (a .{fmt} file to write)")
    if out is not None and fmt in ("png", "svg") and not out.lower().endswith(f".{fmt}"):
        raise ValueError(f"--out must end in .{fmt} for --format {fmt} (got {out!r})")
    from workbench.verifiers.store import check_database, default_path, last_check

    if db is not None:
        check_database(db)
    from workbench.proofs import graph
    from workbench.proofs.registry import load_claims

    g = graph.claim_graph(load_claims())
    check = last_check(db if db is not None else default_path())
    verdicts = {c["id"]: c["verdict"] for c in check["claims"]} if check else {}
    about: dict[str, Any] = {"format": fmt, "path": out, "claims": len(g),
                             "dependencies": g.number_of_edges()}
    if fmt in ("png", "svg"):
        assert out is not None
        graph.draw(g, out, verdicts, name="--out")
        emit(about, as_json, lambda p: f"wrote {p['path']} ({plural(p['claims'], 'claim')}, "
             f"{plural(p['dependencies'], 'dependency', 'dependencies')})")
        return
    text = (json.dumps(graph.to_json(g, verdicts), indent=2) + "\n" if fmt == "json"
            else graph.to_dot(g, verdicts))
    if out is None:
        if as_json and fmt == "dot":
            click.echo(json.dumps({**about, "dot": text}, indent=2))
        else:
            click.echo(text, nl=False)
        return
    write_text(out, text, "--out")
    if as_json:
        click.echo(json.dumps(about, indent=2))
