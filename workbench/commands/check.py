"""``workbench check``: run every registered claim in dependency order and report verdicts."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from typing import Any

import click

from workbench.commands._common import CheckFailed, common_options, emit, resolve_device
from workbench.proofs.claim import CheckContext
from workbench.proofs.registry import ClaimResult, run_claims


@click.command(help="Run the paper's claims in dependency order and report a verdict for each.")
@click.option("--scale", type=click.Choice(["quick", "full"]), default="quick", show_default=True)
@click.option("--only", "only", multiple=True, metavar="ID", help="Run only these claims.")
@click.option(
    "--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also record the run in this SQLite file.",
)
@common_options
def cli(
    scale: str, only: tuple[str, ...], device: str, db: str | None, as_json: bool, seed: int
) -> None:
    if seed < 0:
        raise ValueError(f"--seed must be an integer >= 0 (got {seed})")
    dev = resolve_device(device)
    if db is not None:
        _check_db(db)
    ctx = CheckContext(scale=scale, seed=seed, device=dev)
    results = run_claims(ctx, only=only or None)
    summary = _summary(results)
    payload = {
        "scale": scale,
        "seed": seed,
        "device": dev,
        "claims": [r.to_dict() for r in results],
        "summary": summary,
    }
    if db is not None:
        _record(db, payload)
    emit(payload, as_json, _human)
    if summary["violated"] or summary["errors"]:
        raise CheckFailed(
            f"{summary['violated']} claim(s) violated, {summary['errors']} check(s) failed to run"
        )


def _check_db(db: str) -> None:
    """Fail before any claim runs if the results file cannot be used."""
    parent = os.path.dirname(os.path.abspath(db))
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
        raise ValueError(f"--db must be a file in an existing, writable folder (got {db!r})")
    if os.path.exists(db):
        try:
            con = sqlite3.connect(db)
            try:
                con.execute("PRAGMA schema_version").fetchone()
            finally:
                con.close()
        except sqlite3.DatabaseError as e:
            raise ValueError(f"--db must be an SQLite database file ({db!r}: {e})") from None


def _summary(results: list[ClaimResult]) -> dict[str, Any]:
    counts: dict[str, int | float] = {
        v: 0 for v in ("holds", "violated", "inconclusive", "unsupported", "skipped")
    }
    for r in results:
        counts[r.verdict] += 1
    counts["errors"] = sum(r.error is not None for r in results)
    counts["total"] = len(results)
    counts["seconds"] = round(sum(r.seconds for r in results), 3)
    return counts


def _human(payload: dict[str, Any]) -> str:
    lines = [
        f"workbench check (scale={payload['scale']}, seed={payload['seed']}, "
        f"device={payload['device']})"
    ]
    for c in payload["claims"]:
        n_ev = len(c["evidence"])
        line = f"  {c['verdict']:<12} {c['id']:<42} {n_ev:>3} evidence  {c['seconds']:.2f}s"
        if c["error"]:
            line += f"  error: {c['error']}"
        lines.append(line)
        for e in c["evidence"]:
            if e["verdict"] != "holds":
                lines.append(
                    f"      {e['verdict']}: value={e['value']:.6g} {e['relation']} "
                    f"bound={e['bound']:.6g} ci={e['ci']} params={e['params']}"
                )
    s = payload["summary"]
    lines.append(
        f"summary: {s['holds']} holds, {s['violated']} violated, {s['inconclusive']} "
        f"inconclusive, {s['unsupported']} unsupported, {s['skipped']} skipped "
        f"({s['total']} claims, {s['seconds']}s)"
    )
    return "\n".join(lines)


def _record(db: str, payload: dict[str, Any]) -> None:
    """Write the whole run in one transaction, so nothing is half-written."""
    con = sqlite3.connect(db)
    try:
        with con:
            con.execute(
                "CREATE TABLE IF NOT EXISTS check_runs (id INTEGER PRIMARY KEY, "
                "started REAL, scale TEXT, seed INTEGER, device TEXT, summary TEXT)"
            )
            con.execute(
                "CREATE TABLE IF NOT EXISTS claim_results (run_id INTEGER, claim_id TEXT, "
                "verdict TEXT, seconds REAL, payload TEXT)"
            )
            cur = con.execute(
                "INSERT INTO check_runs (started, scale, seed, device, summary) VALUES (?,?,?,?,?)",
                (
                    time.time(),
                    payload["scale"],
                    payload["seed"],
                    payload["device"],
                    json.dumps(payload["summary"]),
                ),
            )
            rows = [
                (cur.lastrowid, c["id"], c["verdict"], c["seconds"], json.dumps(c, default=str))
                for c in payload["claims"]
            ]
            con.executemany("INSERT INTO claim_results VALUES (?,?,?,?,?)", rows)
    finally:
        con.close()
