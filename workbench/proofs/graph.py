"""The claims graph (docs/architecture.md): a networkx DAG, impact analysis, its drawing.

An edge ``a -> b`` means claim ``b`` depends on claim ``a``. A graph with a cycle is rejected
with the cycle named. Nodes are coloured by verdict when a check result is given.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import networkx as nx

from workbench.proofs.claim import Claim

COLOURS: dict[str, str] = {
    "holds": "#4caf50", "violated": "#e53935", "inconclusive": "#fbc02d",
    "unsupported": "#8e24aa", "skipped": "#9e9e9e", "error": "#795548",
}
NO_VERDICT = "#e0e0e0"


def colour(verdict: str | None) -> str:
    return COLOURS.get(verdict or "", NO_VERDICT)
FORMATS: tuple[str, ...] = ("json", "dot", "png")


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


def draw_png(g: nx.DiGraph, path: str | os.PathLike[str],
             verdicts: Mapping[str, str] | None = None, dpi: int = 100) -> tuple[int, int]:
    """Draw ``g`` left to right by dependency depth; returns the image's ``(width, height)``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    v = verdicts or {}
    layers = list(nx.topological_generations(g))
    for depth, nodes in enumerate(layers):
        for n in nodes:
            g.nodes[n]["depth"] = depth
    tallest = max((len(x) for x in layers), default=1)
    width, height = max(8.0, 3.2 * len(layers)), max(4.0, 0.45 * tallest + 1.2)
    fig, ax = plt.subplots(figsize=(width, height), dpi=dpi)
    pos = nx.multipartite_layout(g, subset_key="depth") if len(g) else {}
    colours = [colour(v.get(n)) for n in g.nodes]
    nx.draw_networkx_edges(g, pos, ax=ax, arrows=True, edge_color="#777777", node_size=300)
    nx.draw_networkx_nodes(g, pos, ax=ax, node_color=colours, node_size=300,
                           edgecolors="#333333")
    nx.draw_networkx_labels(g, {n: (x, y + 0.02) for n, (x, y) in pos.items()}, ax=ax,
                            font_size=7, verticalalignment="bottom")
    shown = [k for k in COLOURS if k in set(v.values())]
    if shown:
        ax.legend(handles=[Patch(color=COLOURS[k], label=k) for k in shown], loc="lower right",
                  fontsize=8)
    ax.set_axis_off()
    ax.set_title("claims graph (edges: dependency -> dependent)")
    fig.tight_layout()
    fig.savefig(os.fspath(path), dpi=dpi)
    plt.close(fig)
    return int(round(width * dpi)), int(round(height * dpi))
