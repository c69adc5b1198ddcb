"""Build the shipped table of the n-keys energies (docs/derivations/beyond_two_keys.md,
"Rigorous evaluation"): for every ``5 <= N <= d - 2``, ``d <= TABLE_D`` (55; and the pairs of
d = 61-64 a second process reached), the proved enclosures of
``Gamma_l`` (odd ``l <= table_degree(d - N + 1)``) by the same code the library runs
(``n_keys_energy.compute_enclosures``), shipped in
``workbench/core/bounds/sequence_length/n_keys_table.json`` so that a settled ``bounds lower
--N`` answers without the nested integrals of the density (0.4 to 1.7 s per pair).
tests/core/test_settled_series.py recomputes sampled entries and holds them to the table.
Resumable: finished pairs are kept in ``benchmarks/results/n_keys_table.partialI.json`` (not
committed; a fresh run starts from the shipped table's pairs)
(shard I); ``--merge --shards K`` writes the package table: every finished pair, and it
refuses unless all of ``table_pairs`` (``d <= TABLE_D``) are among them.
Also writes benchmarks/results/n_keys_table.json (seconds per pair).

    python benchmarks/build_n_keys_table.py [--shard I --shards K] [--reverse]
    python benchmarks/build_n_keys_table.py --merge --shards K
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.core.bounds.sequence_length import n_keys_energy as ne  # noqa: E402

RESULTS = Path(__file__).with_name("results")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shard", type=int, default=0)
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--merge", action="store_true", help="write the package table from shards")
    ap.add_argument("--reverse", action="store_true",
                    help="largest d first (a second process meeting the first in the middle)")
    a = ap.parse_args()
    if a.merge:
        merge(a.shards)
        return
    part = RESULTS / f"n_keys_table.partial{a.shard}.json"
    done = json.loads(part.read_text()) if part.exists() else {"enclosures": {}, "seconds": {}}
    if not part.exists() and ne.TABLE_FILE.exists():  # resume from the shipped table
        done["enclosures"] = json.loads(ne.TABLE_FILE.read_text())["enclosures"]
    pairs = list(enumerate(ne.table_pairs()))
    for i, (d, N) in reversed(pairs) if a.reverse else pairs:
        key = f"{d} {N}"
        if (i % a.shards != a.shard and not a.reverse) or key in done["enclosures"]:
            continue
        t0 = time.perf_counter()
        enc = ne.compute_enclosures(d, N, ne.table_degree(ne.fiber_dim(d, N)))
        done["enclosures"][key] = [list(e) for e in enc]
        done["seconds"][key] = round(time.perf_counter() - t0, 3)
        part.write_text(json.dumps(done) + "\n")
        print(key, done["seconds"][key], flush=True)


def merge(shards: int) -> None:
    enc: dict[str, list[list[float]]] = {}
    seconds: dict[str, float] = {}
    for s in range(shards):
        one = json.loads((RESULTS / f"n_keys_table.partial{s}.json").read_text())
        enc.update(one["enclosures"])
        seconds.update(one["seconds"])
    keys = [f"{d} {N}" for d, N in ne.table_pairs()]
    missing = [k for k in keys if k not in enc]
    if missing:
        raise SystemExit(f"{len(missing)} pairs missing, e.g. {missing[:3]}")
    payload = {"what": "proved enclosures (lo, hi) of Gamma_l, odd l = 1, 3, ..., keyed 'd N'",
               "built_by": "benchmarks/build_n_keys_table.py",
               "enclosures": {k: enc[k] for k in sorted(enc, key=lambda k: tuple(map(int,
                                                                                k.split())))}}
    ne.TABLE_FILE.write_text(json.dumps(payload, separators=(",", ":")) + "\n")
    (RESULTS / "n_keys_table.json").write_text(json.dumps(
        {"pairs": len(enc), "total_seconds": round(sum(seconds.values()), 1),
         "max_seconds": max(seconds.values()), "cpus": os.cpu_count(), "seconds": seconds},
        indent=1) + "\n")


if __name__ == "__main__":
    main()
