"""``workbench graph``: the claims graph as JSON, Graphviz dot or a PNG or SVG picture.

Nodes are coloured by the verdicts of the last ``workbench check --db`` in the store (``--db``,
default the sweep store) when there is one. A dependency cycle is bad input (exit 2).
"""

from __future__ import annotations

import json
import os

import click

from workbench.commands._common import (
    common_options,
    path_option,
)


@click.command(help="Draw the claims graph (json, dot, png or svg), coloured by the last check.")
@click.option("--format", "fmt", type=click.Choice(["json", "dot", "png", "svg"]), default="json",
              show_default=True)
@path_option("--out", "Write here (required for png and svg; json and dot go to stdout "
             "without it).")
@path_option("--db", "Store holding `workbench check --db` results (default: the sweep store).")
@common_options
def cli(fmt: str, out: str | None, db: str | None, as_json: bool, seed: int) -> None:
    from workbench.proofs import graph
    from workbench.proofs.registry import load_claims
    from workbench.verifiers.store import check_database, default_path, last_check

    if out is not None:
        parent = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
            raise ValueError(f"--out must be a file in an existing, writable folder (got {out!r})")
        if fmt in ("png", "svg") and not out.lower().endswith(f".{fmt}"):
            raise ValueError(f"--out must end in .{fmt} for --format {fmt} (got {out!r})")
    elif fmt in ("png", "svg"):
        raise ValueError(f"--out must be given for --format {fmt}")
    if db is not None:
        check_database(db)
    g = graph.claim_graph(load_claims())
    check = last_check(db if db is not None else default_path())
    verdicts = {c["id"]: c["verdict"] for c in check["claims"]} if check else {}
    if fmt in ("png", "svg"):
        assert out is not None
        graph.draw(g, out, verdicts)
        click.echo(f"wrote {out} ({len(g)} claims, {g.number_of_edges()} dependencies)")
        return
    text = (json.dumps(graph.to_json(g, verdicts), indent=2) + "\n" if fmt == "json"
            else graph.to_dot(g, verdicts))
    if out is None:
        click.echo(text, nl=False)
    else:
        tmp = f"{out}.tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, out)
