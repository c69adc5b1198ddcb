"""The sandwich beyond two keys: hardmax nearest neighbour on ``D_N``, 3 <= N <= d
(docs/derivations/witnesses_beyond_two.md, "The sandwich at N >= 3").

The lower side is a bound passed in as ``f(d, r, H) -> float`` (the registered ``certified-n``,
the largest sequence-length bound covering the point; this layer never resolves names). The
upper side is the best of

- ``uniform``: one head with uniform scores and ``M = I``, error ``1 - 1/N`` exactly;
- ``one_head_bayes`` (where ``N < d``): one head of key-rank ``min(r, d - N)`` with ``M = I``
  and the Bayes score ``p_j = Pr[i* = j | Z, y]`` (``workbench.constructions.nkeys_one_head``),
  its error measured now on a fresh ``D_N`` stream (empirical-Bernstein interval at 99.9 %);
- ``record``: the record's best trained witness at ``(d, r' <= r, H' <= H)`` for this N
  (``workbench.verifiers.witness_record.lookup``), with its recorded interval and the command
  that replays it.

``best`` is the candidate of least interval upper end; ``violated`` when a candidate's whole
interval lies below the bound.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.constructions.nkeys_one_head import nkeys_one_head_losses
from workbench.constructions.optimized import DELTA, bernstein_ci
from workbench.constructions.witness_setting import Setting
from workbench.core.validation import check_choice, check_int, check_layer
from workbench.verifiers.witness_record import Entry, lookup

__all__ = ["NKeysSandwich", "nkeys_sandwich"]

SAMPLES = {"quick": 5_000, "full": 50_000}  # the one-head Bayes witness's fresh samples


@dataclass
class NKeysSandwich:
    """Bound and witnesses at ``(d, r, H)`` with N keys; ``ratio = best.error / bound``."""

    d: int
    r: int
    heads: int
    N: int
    bound: float
    bound_name: str
    bound_rigorous: bool
    candidates: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def best(self) -> dict[str, Any]:
        return min(self.candidates, key=lambda c: c["ci"][1])

    @property
    def ratio(self) -> float | None:
        return self.best["error"] / self.bound if self.bound > 0 else None

    @property
    def violated(self) -> bool:
        return any(c["ci"][1] < self.bound for c in self.candidates)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        best = self.best
        out.update(best=best, best_source="record" if best["method"].startswith("record:")
                   else "computed", ratio=self.ratio, violated=self.violated)
        return out


def nkeys_sandwich(
    d: int, r: int, H: int, N: int, bound: Callable[[int, int, int], float], *,
    bound_name: str = "certified-n", bound_rigorous: bool = False, record: Sequence[Entry] = (),
    scale: str = "quick", seed: int = 0,
) -> NKeysSandwich:
    """The sandwich at ``(d, r, H)`` on ``D_N``: ``bound`` below, the witnesses above."""
    d, r, H = check_layer(d, r, H)
    N = check_int("N", N, lo=3, hi=d)
    scale = check_choice("scale", scale, tuple(SAMPLES))
    t0 = time.perf_counter()
    low = float(bound(d, r, H))
    cands: list[dict[str, Any]] = [
        {"method": "uniform", "error": 1 - 1 / N, "ci": [1 - 1 / N, 1 - 1 / N],
         "interval": "exact", "note": "uniform scores, M = I: 1 - 1/N"}]
    r1 = min(r, d - N)  # the keys fill every direction at N = d: no key-rank is left
    n = SAMPLES[scale]
    if r1 >= 1:
        loss = nkeys_one_head_losses(d, r1, N, n, seed + 7_000_000)
        lo, hi = bernstein_ci(loss, 2.0)
        cands.append({"method": "one_head_bayes", "error": float(loss.mean()), "ci": [lo, hi],
                      "interval": "bernstein", "level": 1 - DELTA, "samples": n, "rank": r1,
                      "note": f"one head of key-rank {r1}, M = I, Bayes score by 1024 inner "
                      "draws"})
    known = lookup(record, d, r, H, Setting(N))
    if known is not None:
        cands.append({"method": f"record:{known.method}", "error": known.error,
                      "ci": list(known.ci), "interval": known.interval,
                      "samples": known.n_eval, "from": list(known.point),
                      "replay": f"workbench witness verify {d},{r},{H},{N}"})
    return NKeysSandwich(d, r, H, N, low, bound_name, bound_rigorous, cands,
                         time.perf_counter() - t0)
