"""``workbench check``: run every registered claim in dependency order and report verdicts.

Each claim's line appears as soon as that claim finishes; on a terminal a live indicator on
stderr names the claim that is running (never with ``--json``). A row shows the claim's statement
in a few words and its key evidence (the row closest to failing) with the margin; ``--verbose``
lists every evidence row, ``--list`` lists the claims and their dependencies without running them.
"""

from __future__ import annotations

import math
import time
from contextlib import nullcontext
from typing import Any

import click

from workbench.commands._common import (
    ERROR_MEANING,
    CheckFailed,
    common_options,
    device_option,
    emit,
    path_option,
    plural,
    resolve_device,
    status_line,
    to_jsonable,
)
from workbench.commands._paths import writable_path

VERDICT_ORDER = {"violated": 0, "inconclusive": 1, "unsupported": 2, "skipped": 3, "holds": 4}
CONJECTURE_REASON = (
    "inconclusive by design: a conjecture only collects evidence and is never marked holds"
)


@click.command(help="Run the paper's claims in dependency order and report a verdict for each.")
@click.option("--scale", type=click.Choice(["quick", "full"]), default="quick", show_default=True)
@click.option("--only", "only", multiple=True, metavar="ID|PREFIX",
              help="Run only these claims (an id, or a prefix such as thm2), and what they "
              "depend on.")
@click.option("--builtin", is_flag=True,
              help="Only the workbench's own claims: leave out installed plug-ins' claims.")
@click.option("--list", "list_only", is_flag=True, help="List the claims and their dependencies.")
@click.option("--verbose", "-v", is_flag=True, help="Show every evidence row of every claim.")
@device_option()
@path_option("--db", "Also record the run in this SQLite file.")
@common_options
def cli(
    scale: str,
    only: tuple[str, ...],
    builtin: bool,
    list_only: bool,
    verbose: bool,
    device: str,
    db: str | None,
    as_json: bool,
    seed: int,
) -> None:
    if seed < 0:
        raise ValueError(f"--seed must be an integer >= 0 (got {seed})")
    if db is not None:  # the results store sweep writes too: fail before any claim runs
        from workbench.verifiers.store import check_writable

        check_writable(writable_path("--db", db))
    _check_only(only, builtin)
    from workbench.proofs.registry import (
        LOAD_ERRORS,
        broken_dependencies,
        builtin_claims,
        load_claims,
        select,
    )

    claims = builtin_claims() if builtin else load_claims()
    load_errors = [] if builtin else sorted(LOAD_ERRORS.values())
    only = tuple(select(claims, only)) if only else ()
    if list_only:
        _list(claims, broken_dependencies(claims), only, load_errors, as_json)
        return
    dev = resolve_device(device)
    from workbench.proofs.claim import CheckContext
    from workbench.proofs.registry import run_claims

    ctx = CheckContext(scale=scale, seed=seed, device=dev)
    head = {"scale": scale, "seed": seed, "device": dev}
    if not as_json:
        click.echo(f"workbench check (scale={scale}, seed={seed}, device={dev}); {ERROR_MEANING}")
        for msg in load_errors:
            click.echo(f"  ERROR        {msg}")
    status = status_line(as_json)
    with status if status is not None else nullcontext():
        rows: list[dict[str, Any]] = []

        def started(c: Any) -> None:
            if status is not None:
                status.update(f"running {c.id} ({len(rows)} done)")

        def finished(res: Any) -> None:
            row = _row(res.to_dict(), head)
            rows.append(row)
            if not as_json:
                click.echo(_human_row(row, verbose))

        run_claims(ctx, only=only or None, claims=claims, on_start=started, on_result=finished)
    summary = _summary(rows)
    summary["errors"] += len(load_errors)
    payload = {**head, "claims": rows, "load_errors": load_errors, "summary": summary}
    if db is not None:
        _record(db, payload)
    emit(payload, as_json, lambda p: _human_summary(p["summary"]))
    if summary["violated"] or summary["errors"]:
        raise CheckFailed(
            f"{plural(summary['violated'], 'claim')} violated, "
            f"{plural(summary['errors'], 'check')} failed to run"
        )


def _check_only(only: tuple[str, ...], builtin: bool) -> None:
    """``--only`` names that select no built-in claim, answered before the claim modules (and
    torch) are imported when nothing else can have declared them: no installed package's entry
    point, and no claim registered in this process already (the registry not yet imported)."""
    import sys

    from workbench.commands._declared import builtin_claim_ids, has_entry_points, selects

    if not only or "workbench.proofs.registry" in sys.modules:
        return
    if not builtin and has_entry_points("workbench.claims"):
        return
    ids = builtin_claim_ids()
    for name in only:
        if not selects(ids, name):
            raise ValueError(f"--only must name known claims or an id prefix (got {name!r}; "
                             "see --list)")


def _list(
    claims: dict[str, Any],
    broken: dict[str, str],
    only: tuple[str, ...],
    load_errors: list[str],
    as_json: bool,
) -> None:
    from workbench.proofs.registry import dependency_order

    ok = {k: v for k, v in claims.items() if k not in broken}
    order = [c for c in dependency_order(ok) + sorted(broken) if not only or c in only]
    items = [
        {
            "id": c,
            "kind": claims[c].kind,
            "title": claims[c].title,
            "depends_on": list(claims[c].depends_on),
            "ref": claims[c].ref,
            "mark": claims[c].mark,
            "error": broken.get(c),
        }
        for c in order
    ]
    emit({"claims": items, "total": len(items), "load_errors": load_errors}, as_json, _human_list)


def _human_list(p: dict[str, Any]) -> str:
    lines = [f"{plural(p['total'], 'claim')} (dependency order):"]
    lines += [f"  ERROR: {msg}" for msg in p["load_errors"]]
    for c in p["claims"]:
        lines.append(f"  {c['id']:<40} {c['kind']:<11} {_short(c['title'], 70)}")
        if c["depends_on"]:
            lines.append(f"  {'':<40} needs: {', '.join(c['depends_on'])}")
        if c["error"]:
            lines.append(f"  {'':<40} ERROR: {c['error']}")
    return "\n".join(lines)


def _key_index(evidence: list[dict[str, Any]]) -> int | None:
    """The evidence row closest to failing: worst verdict first, then the smallest ratio margin."""
    if not evidence:
        return None

    def rank(i: int) -> tuple[int, float, int]:
        e = evidence[i]
        v, b = e["value"], e["bound"]
        ratio = math.inf
        if e["relation"] != "==" and _finite(v) and _finite(b) and v > 0 and b > 0:
            ratio = v / b if e["relation"] == ">=" else b / v
        return (VERDICT_ORDER.get(e["verdict"], 1), ratio, i)

    return min(range(len(evidence)), key=rank)


def _finite(x: Any) -> bool:
    return isinstance(x, int | float) and math.isfinite(x)


def _row(c: dict[str, Any], head: dict[str, Any]) -> dict[str, Any]:
    """The claim's JSON record plus what a reader needs: key evidence, reason, replay command."""
    from workbench.proofs.claim import describe_evidence

    ev = c["evidence"]
    k = _key_index(ev)
    c["key_evidence"] = None if k is None else {"index": k, "text": describe_evidence(ev[k])}
    c["reason"] = None
    if c["kind"] == "conjecture" and c["verdict"] == "inconclusive" and not c["error"]:
        c["reason"] = CONJECTURE_REASON
    elif c["verdict"] == "unsupported":
        c["reason"] = "a claim it depends on was violated or unsupported, so it was not run"
    elif c["error"]:
        c["reason"] = c["error"]
    c["replay"] = None
    if c["verdict"] in ("violated", "inconclusive") or c["error"]:
        c["replay"] = (
            f"workbench check --only {c['id']} --scale {head['scale']} --seed {head['seed']} "
            f"--device {head['device']} --verbose"
        )
    return c


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _human_row(c: dict[str, Any], verbose: bool) -> str:
    from workbench.proofs.claim import describe_evidence

    n = len(c["evidence"])
    lines = [f"  {c['verdict']:<12} {c['id']:<40} {c['seconds']:>6.2f}s  {_short(c['title'], 64)}"]
    pad = " " * 15
    if verbose and c.get("statement"):
        lines.append(f"{pad}statement: {c['statement']}")
    if c["error"]:
        lines.append(f"{pad}ERROR: {c['error']}")
    elif c["key_evidence"] is not None and not verbose:
        more = f"  [key row {c['key_evidence']['index'] + 1} of {n}]" if n > 1 else ""
        lines.append(f"{pad}{c['key_evidence']['text']}{more}")
    if c["reason"] and not c["error"]:
        lines.append(f"{pad}why: {c['reason']}")
    shown = range(n) if verbose else [i for i, e in enumerate(c["evidence"])
                                      if e["verdict"] == "violated"]
    if not verbose and c["key_evidence"] is not None:
        shown = [i for i in shown if i != c["key_evidence"]["index"]]
    for i in shown:
        e = c["evidence"][i]
        params = ", ".join(f"{k}={v}" for k, v in e["params"].items())
        note = f"  — {e['note']}" if e.get("note") else ""
        lines.append(f"{pad}{i + 1:>3}. {describe_evidence(e)}  ({params}){note}")
    if c["replay"] and (c["verdict"] == "violated" or c["error"]):
        lines.append(f"{pad}replay: {c['replay']}")
    return "\n".join(lines)


def _human_summary(s: dict[str, Any]) -> str:
    return (
        f"summary: {s['holds']} holds, {s['violated']} violated, {s['inconclusive']} "
        f"inconclusive, {s['unsupported']} unsupported, {s['skipped']} skipped, "
        f"{plural(s['errors'], 'error')} ({plural(s['total'], 'claim')}, {s['seconds']}s)"
    )


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    counts: dict[str, int | float] = {
        v: 0 for v in ("holds", "violated", "inconclusive", "unsupported", "skipped")
    }
    for r in rows:
        counts[r["verdict"]] += 1
    counts["errors"] = sum(r["error"] is not None for r in rows)
    counts["total"] = len(rows)
    counts["seconds"] = round(sum(r["seconds"] for r in rows), 3)
    return counts


def _record(db: str, payload: dict[str, Any]) -> None:
    """Write the whole run in one transaction, so nothing is half-written (the store checks the
    file is a workbench store first: docs/sweeps.md, "The store")."""
    from workbench.verifiers.store import Store

    head = {k: payload[k] for k in ("scale", "seed", "device")}
    with Store(db) as st:
        st.record_check(time.time(), head, payload["summary"],
                        [to_jsonable(c) for c in payload["claims"]])
