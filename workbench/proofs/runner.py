"""Running claims for ``workbench check``: one at a time, or in worker processes.

Claims run in dependency order: a claim starts once every dependency in the run has a verdict,
and one whose dependency was violated (or unsupported) is ``unsupported`` without running. A
check that raises is ``error``, with its message; one that returns no evidence is
``inconclusive``, with that reason. A claim whose dependencies are not in the run is checked on
its own evidence, and its result names them (``deps_not_run``).

With ``jobs > 1`` the claims run in worker processes (``workbench.proofs.workers``: forked
on a Linux CPU run, spawned elsewhere). Every claim runs with
``CLAIM_THREADS`` torch thread(s) on the CPU, whatever ``jobs`` is: torch splits a reduction
by its thread count, so a count that followed ``jobs`` would change the last bits of the
numbers; the parallelism is the workers'. MKL is asked for alignment-independent results
(:func:`reproducible_blas`), since a least-squares solve otherwise differs in its last bit
with what ran before in the process. Every check seeds itself from ``ctx.seed``
(docs/architecture.md, Claims and verdicts), so what a claim measures does not depend on which
process runs it or when either. Among the claims that are ready, the one heading the
longest chain of remaining work starts first (its recorded seconds, when a previous run's are
given, else one unit per claim). A claim the workers cannot re-create (one defined at run time,
for spawned workers) makes the whole run serial.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from workbench.proofs.claim import CheckContext, Claim, Evidence, combine
from workbench.proofs.workers import CLAIM_THREADS, ClaimPool, Measured, claim_pool, measure


def reproducible_blas() -> None:
    """Ask MKL for results that do not depend on memory alignment (its conditional numerical
    reproducibility, best code path for the CPU), unless the user chose a mode. MKL reads it
    before its first call, so a front end calls this first; workers inherit it."""
    os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")

NO_EVIDENCE = "the check returned no evidence, so nothing was compared with the claim"


@dataclass
class ClaimResult:
    claim: Claim
    verdict: str
    evidence: list[Evidence] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    deps_not_run: tuple[str, ...] = ()  # dependencies left out of the run (``--only``)
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.claim.id,
            "title": self.claim.title,
            "statement": self.claim.statement,
            "ref": self.claim.ref,
            "mark": self.claim.mark,
            "kind": self.claim.kind,
            "depends_on": list(self.claim.depends_on),
            "deps_not_run": list(self.deps_not_run),
            "verdict": self.verdict,
            "seconds": round(self.seconds, 4),
            "error": self.error,
            "reason": self.reason,
            "evidence": [e.to_dict() for e in self.evidence],
        }


def judged(c: Claim, evidence: list[Evidence], error: str | None, seconds: float,
           deps_not_run: tuple[str, ...]) -> ClaimResult:
    """The result of a claim that ran: ``error`` if it raised, else its evidence combined."""
    if error is not None:
        return ClaimResult(c, "error", [], seconds, error, deps_not_run, error)
    reason = NO_EVIDENCE if not evidence else None
    return ClaimResult(c, combine(evidence, c.kind), evidence, seconds, None, deps_not_run,
                       reason)


def run_ordered(
    ctx: CheckContext,
    order: list[Claim],
    broken: Mapping[str, str],
    jobs: int = 1,
    costs: Mapping[str, float] | None = None,
    on_start: Callable[[Claim], None] | None = None,
    on_result: Callable[[ClaimResult], None] | None = None,
    pool: ClaimPool | None = None,
) -> list[ClaimResult]:
    """Run ``order`` (claims in dependency order); the results come back in that order, and
    ``on_result`` sees each as soon as it has a verdict. ``broken`` maps the claims that cannot
    run to the reason (they are ``skipped``). ``pool`` is one :func:`claim_pool` already started
    (a front end starts it before its own threads, so that forking is safe); without it, one is
    started here when ``jobs > 1``."""
    in_run = {c.id for c in order}
    results: dict[str, ClaimResult] = {}

    def settle(c: Claim) -> ClaimResult | None:
        """The verdict a claim gets without running, or None when it must run."""
        if c.id in broken:
            return ClaimResult(c, "skipped", error=broken[c.id], reason=broken[c.id])
        if any(results[d].verdict in ("violated", "unsupported")
               for d in c.depends_on if d in results):
            return ClaimResult(c, "unsupported", deps_not_run=_left_out(c, in_run))
        return None

    def done(res: ClaimResult) -> None:
        results[res.claim.id] = res
        if on_result is not None:
            on_result(res)

    runnable = [c for c in order if c.id not in broken]
    if (pool.jobs if pool is not None else jobs) > 1 and len(runnable) > 1:
        with nullcontext(pool) if pool is not None else claim_pool(
                jobs, {c.id: c for c in runnable}, ctx.device) as workers:
            if workers.runs(runnable):
                _run_pool(ctx, order, in_run, workers, costs or {}, settle, done, on_start)
                return [results[c.id] for c in order]
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(CLAIM_THREADS)
    try:
        for c in order:
            res = settle(c)
            if res is None:
                if on_start is not None:
                    on_start(c)
                res = judged(c, *measure(c.check, ctx), _left_out(c, in_run))
            done(res)
    finally:
        torch.set_num_threads(before)
    return [results[c.id] for c in order]


def _left_out(c: Claim, in_run: set[str]) -> tuple[str, ...]:
    return tuple(d for d in c.depends_on if d not in in_run)


def _run_pool(
    ctx: CheckContext,
    order: list[Claim],
    in_run: set[str],
    pool: ClaimPool,
    costs: Mapping[str, float],
    settle: Callable[[Claim], ClaimResult | None],
    done: Callable[[ClaimResult], None],
    on_start: Callable[[Claim], None] | None,
) -> None:
    waiting = list(order)
    finished: set[str] = set()
    priority = _critical_path(order, costs)
    running: dict[Future[Measured], Claim] = {}
    jobs = pool.jobs
    while waiting or running:
        ready = [c for c in waiting if all(d in finished or d not in in_run
                                           for d in c.depends_on)]
        settled = False
        for c in sorted(ready, key=lambda c: -priority[c.id]):
            res = settle(c)
            if res is not None:
                waiting.remove(c)
                finished.add(c.id)
                done(res)
                settled = True
            elif len(running) < jobs:
                waiting.remove(c)
                if on_start is not None:
                    on_start(c)
                running[pool.submit(c, ctx)] = c
        if settled:
            continue  # a settled claim may have made others ready
        if not running:
            raise RuntimeError(f"no claim can start: {[c.id for c in waiting]}")
        for fut in wait(running, return_when=FIRST_COMPLETED)[0]:
            c = running.pop(fut)
            try:
                ev, err, secs = fut.result()
            except Exception as e:  # the worker died (killed, out of memory)
                ev, err, secs = [], f"the worker process failed: {e!r}", 0.0
            finished.add(c.id)
            done(judged(c, ev, err, secs, _left_out(c, in_run)))


def _critical_path(order: list[Claim], costs: Mapping[str, float]) -> dict[str, float]:
    """Each claim's cost plus the costliest chain of claims in the run that wait for it."""
    after: dict[str, list[str]] = {c.id: [] for c in order}
    for c in order:
        for d in c.depends_on:
            if d in after:
                after[d].append(c.id)
    path: dict[str, float] = {}
    for c in reversed(order):  # dependents come later in dependency order
        path[c.id] = costs.get(c.id, 1.0) + max((path[a] for a in after[c.id]), default=0.0)
    return path
