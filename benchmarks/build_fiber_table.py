"""Build the shipped table of slow fiber enclosures (docs/derivations/fiber_bound.md,
"Rigorous evaluation"): at d <= 4 the eigenvalue series converges like N^{-d/2} near phi = 0,
so those few enclosures are computed once with up to 6 million series terms per piece and
shipped in ``workbench/core/bounds/fiber_bound/fiber_table.json``. Every entry is a proved
enclosure by the
same code the library runs (``fiber_enclosure.compute_table``); tests/core/test_fiber_enclosure.py
recomputes each with the library's default budget and holds the shipped one inside it.
Also writes benchmarks/results/fiber_table.json (the time taken per entry).

    python benchmarks/build_fiber_table.py
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.core.bounds.fiber_bound import fiber_enclosure as fe  # noqa: E402


def main() -> None:
    enclosures, seconds = {}, {}
    for kind, d, r_star, count in fe.table_entries():
        t0 = time.perf_counter()
        one = fe.compute_table_entry(kind, d, r_star, count)
        key = f"{kind} {d} {r_star} {count}"
        enclosures[key], seconds[key] = list(one), round(time.perf_counter() - t0, 2)
        print(key, one, f"width {one[1] - one[0]:.3g}", f"{seconds[key]} s", flush=True)
    payload = {"what": "proved enclosures of E_c KyFan (captured) and E_c lambda_0 (scalar), "
               "keyed 'kind d r* count'", "series_terms_cap": fe.TABLE_TERMS,
               "tolerance": fe.TABLE_TOL, "enclosures": enclosures}
    fe.TABLE_FILE.write_text(json.dumps(payload, indent=1) + "\n")
    out = Path(__file__).with_name("results") / "fiber_table.json"
    out.write_text(json.dumps({"seconds": seconds, "machine": platform.processor() or
                               platform.machine(), "cpus": os.cpu_count(),
                               "widths": {k: v[1] - v[0] for k, v in enclosures.items()}},
                              indent=1) + "\n")


if __name__ == "__main__":
    main()
