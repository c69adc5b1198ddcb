"""The claims graph (docs/architecture.md): a networkx DAG, impact analysis, its drawing.

An edge ``a -> b`` means claim ``b`` depends on claim ``a``. A graph with a cycle is rejected
with the cycle named. Nodes are coloured by verdict when a check result is given; the picture
(``draw``) is drawn by ``graph_figure``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import networkx as nx

from workbench.proofs import graph_figure
from workbench.proofs.claim import Claim
from workbench.proofs.graph_figure import colour  # the verdict colours are the figure's

FORMATS: tuple[str, ...] = ("json", "dot", "png", "svg")


def claim_graph(claims: Mapping[str, Claim]) -> nx.DiGraph:
    """The dependency DAG of ``claims``; ``ValueError`` names an unknown dependency or a cycle."""
    g = nx.DiGraph()
    for c in claims.values():
        g.add_node(c.id, title=c.title, kind=c.kind)
    for c in claims.values():
        for dep in c.depends_on:
            if dep not in claims:
                raise ValueError(f"claims must depend on known claims: {c.id!r} depends on "
                                 f"unknown {dep!r}")
            g.add_edge(dep, c.id)
    try:
        cycle = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        return g
    path = " -> ".join([a for a, _ in cycle] + [cycle[0][0]])
    raise ValueError(f"claims must not depend on each other in a cycle: {path}")


def impact(g: nx.DiGraph, claim_id: str) -> list[str]:
    """Every claim that depends, directly or not, on ``claim_id`` (what a failure would hit)."""
    if claim_id not in g:
        raise ValueError(f"claim must be a known claim id (got {claim_id!r})")
    return sorted(nx.descendants(g, claim_id))


def to_json(g: nx.DiGraph, verdicts: Mapping[str, str] | None = None) -> dict[str, Any]:
    v = verdicts or {}
    return {
        "nodes": [{"id": n, "title": g.nodes[n]["title"], "kind": g.nodes[n]["kind"],
                   "verdict": v.get(n)} for n in nx.lexicographical_topological_sort(g)],
        "edges": [{"from": a, "to": b} for a, b in sorted(g.edges)],
    }


def to_dot(g: nx.DiGraph, verdicts: Mapping[str, str] | None = None) -> str:
    """Graphviz source: one box per claim, filled with its verdict's colour."""
    v = verdicts or {}
    lines = ["digraph claims {", "  rankdir=LR;", '  node [shape=box, style="rounded,filled"];']
    for n in nx.lexicographical_topological_sort(g):
        label = f"{n}\n{v.get(n) or g.nodes[n]['kind']}"
        lines.append(f"  {json.dumps(n)} [label={json.dumps(label)}, "
                     f"fillcolor={json.dumps(colour(v.get(n)))}];")
    lines += [f"  {json.dumps(a)} -> {json.dumps(b)};" for a, b in sorted(g.edges)]
    return "\n".join(lines + ["}"]) + "\n"


def draw(g: nx.DiGraph, path: str | os.PathLike[str],
             verdicts: Mapping[str, str] | None = None, name: str = "path") -> tuple[int, int]:
    """Draw ``g`` (a layered, deterministic layout: ``graph_figure``) to ``path``, a ``.png``
    or ``.svg`` file (errors name ``name``); the picture's ``(width, height)`` in pixels."""
    return graph_figure.draw(g, path, verdicts, name)
