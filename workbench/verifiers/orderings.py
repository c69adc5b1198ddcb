"""Orderings between trained configurations, decided beyond the seeds' spread and the held-out
intervals (docs/sweeps.md, "Section 7 as claims"): what the Section 7 claims assert and what
``workbench report`` states under the error-against-N figure.

"A beats B" compares the *worst* seed of A with the *best* seed of B; the difference of their
held-out errors gets the interval-arithmetic interval of their two Monte Carlo intervals
(``[lo_A - hi_B, hi_A - lo_B]``), which covers the difference whenever both intervals cover
their errors. The ordering *holds* when that whole interval lies below 0, is *contradicted* when
it lies above 0, and is *unresolved* otherwise.

The two findings of the error-against-N sweep (docs/paper.md §6):

- low-rank error rises with N: for each pair of consecutive lengths ``N_k < N_{k+1}``, the
  low-rank model at ``N_k`` beats the one at ``N_{k+1}``;
- full-rank error stays small: at every N, the full-rank model beats the low-rank model at the
  *shortest* N (the whole full-rank curve lies below the lowest point of the low-rank curve).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Ordering:
    """``winner (worst seed) - loser (best seed)`` of held-out error and its interval."""

    finding: str
    note: str
    params: dict[str, Any]
    difference: float
    ci: tuple[float, float]
    level: float | None
    interval: str
    winner_worst: float
    loser_best: float
    seeds: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        if self.ci[1] < 0:
            return "holds"
        return "contradicted" if self.ci[0] > 0 else "unresolved"


def select(rows: Rows, **labels: Any) -> Rows:
    """The rows whose labels include ``labels`` (a ``ValueError`` naming them when none do)."""
    out = [r for r in rows if all(r["labels"].get(k) == v for k, v in labels.items())]
    if not out:
        raise ValueError(f"no runs with labels {labels}")
    return out


def beats(win: Rows, lose: Rows, finding: str, params: dict[str, Any], note: str) -> Ordering:
    """The worst seed of ``win`` against the best seed of ``lose`` (see the module docstring)."""
    w = max(win, key=lambda r: r["heldout"])
    b = min(lose, key=lambda r: r["heldout"])
    extra = w.get("extra") or {}
    return Ordering(finding, note, params, w["heldout"] - b["heldout"],
                    (w["heldout_lo"] - b["heldout_hi"], w["heldout_hi"] - b["heldout_lo"]),
                    extra.get("ci_level"), extra.get("interval") or "normal", w["heldout"],
                    b["heldout"], len(win))


def vary_n_orderings(rows: Rows) -> list[Ordering]:
    """The two findings of the error-against-N sweep on ``rows`` (labels ``N`` and ``r``): the
    lowest rank rising between consecutive N, and the highest rank at every N below the lowest
    rank at the shortest N."""
    Ns = sorted({r["labels"]["N"] for r in rows})
    ranks = sorted({r["labels"]["r"] for r in rows})
    if len(Ns) < 2 or len(ranks) < 2:
        raise ValueError(f"rows must hold at least two N and two ranks (got N {Ns}, r {ranks})")
    low, full = ranks[0], ranks[-1]
    out = []
    for a, b in zip(Ns, Ns[1:]):
        out.append(beats(select(rows, N=a, r=low), select(rows, N=b, r=low), "rises",
                         {"r": low, "N_short": a, "N_long": b},
                         f"rank {low}: error at N = {a} (worst seed) minus at N = {b} (best "
                         "seed)"))
    floor = select(rows, N=Ns[0], r=low)
    for n in Ns:
        out.append(beats(select(rows, N=n, r=full), floor, "full rank small",
                         {"r": full, "N": n, "r_low": low, "N_low": Ns[0]},
                         f"full rank {full} at N = {n} (worst seed) minus rank {low} at N = "
                         f"{Ns[0]} (best seed)"))
    return out


def findings_lines(rows: Rows) -> list[str]:
    """Both findings of the error-against-N sweep on stored ``rows`` in words, one line per
    ordering (empty when the rows hold fewer than two N or two ranks): what ``workbench sweep``
    prints and ``workbench report`` writes under the figure."""
    try:
        orderings = vary_n_orderings([r for r in rows if r.get("heldout") is not None])
    except (ValueError, KeyError):
        return []
    levels = sorted({o.level for o in orderings if o.level is not None})
    lvl = f"{', '.join(f'{x:.4g}' for x in levels)} " if levels else ""
    head = ("findings (each: the winner's worst seed minus the loser's best seed, with the "
            f"interval-arithmetic interval of their two {lvl}held-out intervals; it holds when "
            "the whole interval is below 0):")
    return [head, *(f"{o.finding}: {o.note}: {o.difference:+.4f} [{o.ci[0]:+.4f}, "
                    f"{o.ci[1]:+.4f}]: {o.verdict}" for o in orderings)]
