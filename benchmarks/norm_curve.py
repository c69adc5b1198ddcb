"""The norm curve against the record (docs/derivations/sandwich.md, "Bounded scores and the norm
of the value maps"): for every witness of the shipped record at a point with ``H r >= d``, its
form norm ``rho`` (``workbench.core.bounds.harmonic_count.norm_curve.form_norm``), ``sqrt(A)``
(where the curve
leaves the harmonic count), the curve's bound at ``rho`` and the witness's error with its
interval. The bound must lie below every witness's interval (a check of the derivation), and
the table says whether the witnesses work at norms where the curve is stronger than the count.

    python benchmarks/norm_curve.py   # writes benchmarks/results/norm_curve.json
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.constructions.optimized import STATE_PREFIX, Witness  # noqa: E402
from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound  # noqa: E402
from workbench.core.bounds.harmonic_count.norm_curve import captured_energy, form_norm, norm_curve  # noqa: E402
from workbench.verifiers.witness_record import RECORD_DIR, read_record  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "norm_curve.json"


def value_maps(w: Witness) -> np.ndarray:
    """The witness's value maps ``M_h`` (H, d, d): a trained model's ``M``; ``a_h I`` for the
    constructions (Bayes heads, rank-1 hardmax heads, random features)."""
    if w.method == "trained_generalized":
        return np.asarray(w.params[STATE_PREFIX + "M"], dtype=float)[0]
    return np.asarray(w.params["a"], dtype=float)[:, None, None] * np.eye(w.d)


def main() -> None:
    rows = []
    for e in read_record():
        if e.heads * e.r < e.d:
            continue
        w = Witness.load(RECORD_DIR / e.file)
        rho = form_norm(value_maps(w))
        A = captured_energy(e.d, e.r, e.heads)
        curve = norm_curve(A, rho)
        rows.append({"d": e.d, "r": e.r, "heads": e.heads, "method": e.method,
                     "error": e.error, "ci": list(e.ci), "rho": rho, "sqrt_A": math.sqrt(A),
                     "harmonic": harmonic_bound(e.d, e.r, e.heads).enclosure[0],
                     "curve_at_rho": curve, "curve_stronger": rho * rho < A,
                     "below_witness": curve <= e.ci[1]})
    summary = {"witnesses": len(rows),
               "all_below_their_witness": all(r["below_witness"] for r in rows),
               "curve_stronger_at_the_witness_norm": sum(r["curve_stronger"] for r in rows),
               "median_rho": statistics.median(r["rho"] for r in rows),
               "median_sqrt_A": statistics.median(r["sqrt_A"] for r in rows),
               "min_rho_over_sqrt_A": min(r["rho"] / r["sqrt_A"] for r in rows)}
    OUT.write_text(json.dumps({"summary": summary, "witnesses": rows}, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
