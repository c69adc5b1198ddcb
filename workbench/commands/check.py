"""``workbench check``: run every registered claim in dependency order and report verdicts.

Claims run in ``--jobs`` worker processes (``workbench.proofs.runner``); each claim's line
appears as soon as that claim finishes, and the final summary and JSON list the claims in
dependency order whatever the order they finished in. On a terminal a live indicator on stderr
names the claims that are running (never with ``--json``). A row shows the claim's title (cut to
the width only on a terminal) and its key evidence (``workbench.proofs.claim.key_evidence``, the
rule the store and ``report`` share) with the margin; ``--verbose`` lists every evidence row,
``--list`` lists the claims and their dependencies without running them.
"""

from __future__ import annotations

import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import click

from workbench.commands._arguments import IntIn
from workbench.commands._common import (
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
from workbench.commands._error_meaning import error_meaning
from workbench.commands._interrupts import saying_what_was_stored
from workbench.commands._paths import writable_path

COUNTED = ("holds", "violated", "inconclusive", "unsupported", "skipped", "error")
CONJECTURE_REASON = (
    "inconclusive by design: a conjecture only collects evidence and is never marked holds"
)


@click.command(help="Run the paper's claims in dependency order and report a verdict for each.")
@click.option("--scale", type=click.Choice(["quick", "full"]), default="quick", show_default=True)
@click.option("--only", "only", multiple=True, metavar="ID|PREFIX",
              help="Run only these claims (an id, or a prefix such as thm2). Their dependencies "
              "do not run unless --with-deps is given: a claim is then checked on its own "
              "evidence, and its row names the dependencies that did not run.")
@click.option("--with-deps", is_flag=True,
              help="With --only: also run what the named claims depend on, first.")
@click.option("--jobs", type=IntIn(1), default=None, metavar="N",
              help="Worker processes that run independent claims side by side (default: the "
              "number of cores). The verdicts and numbers are the same for every N.")
@click.option("--builtin", is_flag=True,
              help="Only the workbench's own claims: leave out installed plug-ins' claims.")
@click.option("--list", "list_only", is_flag=True, help="List the claims and their dependencies.")
@click.option("--verbose", "-v", is_flag=True, help="Show every evidence row of every claim.")
@device_option()
@path_option("--db", "Record the run in this results store (default: runs.sqlite under the "
             "user's data directory, the store sweep and report use).")
@common_options
def cli(
    scale: str,
    only: tuple[str, ...],
    with_deps: bool,
    jobs: int | None,
    builtin: bool,
    list_only: bool,
    verbose: bool,
    device: str,
    db: str | None,
    as_json: bool,
    seed: int,
) -> None:
    store = _store_path(db, list_only)  # the results store sweep writes: checked before a claim
    _check_only(only, builtin)  # answered before the runner (scipy, torch) is imported
    from workbench.proofs.runner import reproducible_blas
    from workbench.proofs.workers import claim_pool
    from workbench.verifiers.processes import available_cores, check_jobs

    reproducible_blas()  # before any claim module loads torch and MKL
    cores = available_cores()
    if jobs is not None:
        check_jobs("--jobs", jobs, cores)
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
    from workbench.verifiers.store import Store

    try:
        store.parent.mkdir(parents=True, exist_ok=True)  # the default store's folder
    except OSError as e:
        raise ValueError(f"--db must be a file in a folder the workbench can create "
                         f"({str(store.parent)!r}: {e.strerror}); name another with --db") \
            from None
    Store(store).close()  # created now, whole or not at all: a full disk fails before any claim
    from workbench.proofs.claim import CheckContext
    from workbench.proofs.registry import run_claims

    ctx = CheckContext(scale=scale, seed=seed, device=dev)
    head = {"scale": scale, "seed": seed, "device": dev}
    if not as_json:
        click.echo(f"workbench check (scale={scale}, seed={seed}, device={dev}); "
                   f"{error_meaning()}")
        for msg in load_errors:
            click.echo(f"  ERROR        {msg}")
    costs = _recorded_costs(db, scale)
    status = status_line(as_json)
    n_jobs = cores if jobs is None else jobs
    # the workers start before the live indicator's thread: a forked worker gets no thread
    unrecorded = f"nothing was recorded in {store} (a check is recorded when it finishes)"
    with saying_what_was_stored(lambda: unrecorded), \
            claim_pool(n_jobs, claims, dev) if n_jobs > 1 else nullcontext() as pool, \
            status if status is not None else nullcontext():
        rows: dict[str, dict[str, Any]] = {}
        running: list[str] = []

        def started(c: Any) -> None:
            running.append(c.id)
            if status is not None:
                status.update(f"running {', '.join(running)} ({len(rows)} done)")

        def finished(res: Any) -> None:
            if res.claim.id in running:
                running.remove(res.claim.id)
            row = _row(res.to_dict(), head)
            rows[row["id"]] = row
            if not as_json:
                click.echo(_human_row(row, verbose))

        results = run_claims(ctx, only=only or None, claims=claims, on_start=started,
                             on_result=finished, with_deps=with_deps, jobs=n_jobs,
                             costs=costs, pool=pool)
    ordered = [rows[r.claim.id] for r in results]  # dependency order, however they finished
    from workbench.proofs import claim_seconds

    claim_seconds.remember(scale, {r.claim.id: r.seconds for r in results
                                   if r.verdict not in ("skipped", "unsupported")})
    summary = _summary(ordered)
    summary["errors"] += len(load_errors)
    payload = {**head, "claims": ordered, "load_errors": load_errors, "summary": summary,
               "db": str(store)}
    _record(store, payload)
    emit(payload, as_json, lambda p: f"{_human_summary(p['summary'])}\nrecorded in {p['db']} "
         "(workbench report draws it)")
    if summary["violated"] or summary["errors"]:
        raise CheckFailed(
            f"{plural(summary['violated'], 'claim')} violated, "
            f"{plural(summary['errors'], 'check')} failed to run"
        )


def _store_path(db: str | None, listing: bool) -> Path:
    """The results store the run is recorded in: ``--db``, else the default store of ``sweep``
    and ``report`` (``workbench.verifiers.store.default_path``), checked before any claim runs
    (errors name ``--db``; ``--list`` checks only a store it is given); its folder is created
    later, when the claims are about to run."""
    from workbench.verifiers.store import check_writable, default_path

    path = Path(writable_path("--db", db)) if db is not None else default_path()
    if db is not None or (path.parent.is_dir() and not listing):
        check_writable(writable_path("--db", str(path)))
    return path


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


def _recorded_costs(db: str | None, scale: str) -> dict[str, float]:
    """Seconds per claim of the last check recorded in ``db`` (what lets long chains start
    first); without one, those of the last checks at ``scale`` on this machine
    (``workbench.proofs.claim_seconds``)."""
    if db is None:
        from workbench.proofs import claim_seconds

        return claim_seconds.recorded(scale)
    from workbench.verifiers.store import last_check

    try:
        last = last_check(db)
    except ValueError:  # a damaged store: _record says so after the run
        return {}
    return {} if last is None else {c["id"]: float(c.get("seconds") or 0.0)
                                    for c in last["claims"]}


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


def _row(c: dict[str, Any], head: dict[str, Any]) -> dict[str, Any]:
    """The claim's JSON record plus what a reader needs: key evidence, reason, replay command."""
    from workbench.proofs.claim import key_evidence

    c["key_evidence"] = key_evidence(c["evidence"], c.get("statement") or c["title"])
    why = [c["reason"]] if c.get("reason") else []
    if c["kind"] == "conjecture" and c["verdict"] == "inconclusive" and c["evidence"]:
        why.append(CONJECTURE_REASON)
    elif c["verdict"] == "unsupported":
        why.append("a claim it depends on was violated or unsupported, so it was not run")
    if c.get("deps_not_run") and c["verdict"] != "skipped":
        why.append(f"checked on its own evidence: {', '.join(c['deps_not_run'])} did not run "
                   "(--with-deps runs them first)")
    c["reason"] = "; ".join(why) or None
    c["replay"] = None
    if c["verdict"] in ("violated", "inconclusive") or c["error"]:
        c["replay"] = (
            f"workbench check --only {c['id']} --scale {head['scale']} --seed {head['seed']} "
            f"--device {head['device']} --verbose"
        )
    return c


def _short(text: str, n: int) -> str:
    """``text`` cut to ``n`` characters on a terminal; whole when the output is piped or a file."""
    if len(text) <= n or not sys.stdout.isatty():
        return text
    return text[: n - 1] + "…"


def _human_row(c: dict[str, Any], verbose: bool) -> str:
    from workbench.proofs.claim import evidence_row

    n = len(c["evidence"])
    lines = [f"  {c['verdict']:<12} {c['id']:<40} {c['seconds']:>6.2f}s  {_short(c['title'], 64)}"]
    pad = " " * 15
    if verbose and c.get("statement"):
        lines.append(f"{pad}statement: {c['statement']}")
    if c["error"]:
        lines.append(f"{pad}ERROR: {c['error']}")
    # what a row without a note checks: the statement, else the title (cut as the title is)
    about = c.get("statement") or _short(c["title"], 64)
    if not c["error"] and c["key_evidence"] is not None and not verbose:
        k = c["key_evidence"]["index"]
        more = (f"  [row {k + 1} of {n}, the closest to failing; --verbose lists every row]"
                if n > 1 else "")
        lines.append(f"{pad}{evidence_row(c['evidence'][k], about)}{more}")
    if c["reason"] and not c["error"]:
        lines.append(f"{pad}why: {c['reason']}")
    shown = range(n) if verbose else [i for i, e in enumerate(c["evidence"])
                                      if e["verdict"] == "violated"]
    if not verbose and c["key_evidence"] is not None:
        shown = [i for i in shown if i != c["key_evidence"]["index"]]
    for i in shown:
        lines.append(f"{pad}{i + 1:>3}. {evidence_row(c['evidence'][i], about)}")
    if c["replay"] and (c["verdict"] == "violated" or c["error"]):
        lines.append(f"{pad}replay: {c['replay']}")
    return "\n".join(lines)


def _human_summary(s: dict[str, Any]) -> str:
    counts = ", ".join(f"{s[v]} {v}" + ("s" if v == "error" and s[v] != 1 else "")
                       for v in COUNTED)
    return f"summary: {counts} ({plural(s['total'], 'claim')}, {s['seconds']}s of checks)"


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    counts: dict[str, int | float] = {v: 0 for v in COUNTED}
    for r in rows:
        counts[r["verdict"]] += 1
    counts["errors"] = sum(r["error"] is not None for r in rows)
    counts["total"] = len(rows)
    counts["seconds"] = round(sum(r["seconds"] for r in rows), 3)
    return counts


def _record(db: Path, payload: dict[str, Any]) -> None:
    """Write the whole run in one transaction, so nothing is half-written (the store checks the
    file is a workbench store first: docs/sweeps.md, "The store")."""
    from workbench.verifiers.store import Store

    head = {k: payload[k] for k in ("scale", "seed", "device")}
    with Store(db) as st:
        st.record_check(time.time(), head, payload["summary"],
                        [to_jsonable(c) for c in payload["claims"]])
