"""The claim registry and the selection behind ``workbench check``.

Claims register through the ``@claim`` decorator in ``workbench.proofs.paper`` modules, or from
third-party packages through the ``workbench.claims`` entry-point group (each entry point names a
module to import). :func:`run_claims` selects the claims to run and hands them to
``workbench.proofs.runner``, which runs them in dependency order and marks a claim whose
dependency was violated as ``unsupported``. A claim whose ``depends_on`` names an unknown claim
(or closes a cycle) is reported as an error and skipped, and so is an entry point that fails to
import (``LOAD_ERRORS``); the other claims still run.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import importlib
import traceback
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import entry_points

from workbench.proofs.claim import REGISTRY as _REGISTRY  # the table workers look claims up in
from workbench.proofs.claim import CheckContext, CheckFn, Claim, Evidence
from workbench.proofs.runner import ClaimResult, run_ordered
from workbench.proofs.workers import ClaimPool

LOAD_ERRORS: dict[str, str] = {}  # entry-point name -> why its claims could not be loaded
BUILTIN_MODULES: tuple[str, ...] = (
    "workbench.proofs.paper.setting",
    "workbench.proofs.paper.fact1",
    "workbench.proofs.paper.harmonics",
    "workbench.proofs.paper.kernels",
    "workbench.proofs.paper.thm2",
    "workbench.proofs.paper.thm2.regimes",
    "workbench.proofs.paper.thm3_lower",
    "workbench.proofs.paper.remark4",
    "workbench.proofs.paper.ci_coverage",
    "workbench.proofs.paper.soft_targets",
    "workbench.proofs.paper.beyond_two_keys",
    "workbench.proofs.paper.long_contexts",
    "workbench.proofs.paper.soft_fiber",
    "workbench.proofs.paper.soft_parts",
    "workbench.proofs.paper.profile_iid",
    "workbench.proofs.paper.witnesses",
    "workbench.proofs.paper.thm3",
    "workbench.proofs.paper.thm5",
    "workbench.proofs.paper.conjecture6",
    "workbench.proofs.paper.experiments",
    "workbench.proofs.paper.section7",
)


def claim(
    id: str,
    title: str,
    kind: str,
    depends_on: Iterable[str] = (),
    statement: str = "",
    ref: str = "",
    mark: str = "",
    *,
    threads: int | None = None,
    no_grad: bool = False,
) -> Callable[[CheckFn], CheckFn]:
    """Register the decorated ``check(ctx)`` as the check of a new claim.

    ``ref`` is the statement's anchor in docs/ (``"paper.md#fact-1-one-full-rank-head-suffices"``)
    and ``mark`` how sure we are of it (``paper``, ``ours`` or ``reading``; docs/paper.md).
    ``threads=1`` runs the check with one torch thread on the CPU (its kernels are small: with
    several threads on a shared machine OpenMP waits dominate), ``no_grad=True`` under
    ``torch.no_grad()``; the function itself is returned unchanged.
    """
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be an integer >= 1 (got {threads})")

    def deco(fn: CheckFn) -> CheckFn:
        check = _with_runtime(fn, threads, no_grad) if threads or no_grad else fn
        c = Claim(id, title, kind, check, tuple(depends_on), statement, ref, mark, fn.__module__)
        old = _REGISTRY.get(id)
        if old is not None and getattr(old.check, "__wrapped__", old.check) is not fn:
            raise ValueError(f"claim id {id!r} is registered twice")
        _REGISTRY[id] = c
        return fn

    return deco


def _with_runtime(fn: CheckFn, threads: int | None, no_grad: bool) -> CheckFn:
    """``fn`` run with ``threads`` torch threads on the CPU and, if asked, without autograd."""

    @functools.wraps(fn)
    def check(ctx: CheckContext) -> list[Evidence]:
        import torch

        before = torch.get_num_threads()
        if threads is not None and ctx.device == "cpu":
            torch.set_num_threads(threads)
        try:
            with torch.no_grad() if no_grad else contextlib.nullcontext():
                return fn(ctx)
        finally:
            torch.set_num_threads(before)

    return check


def load_claims() -> dict[str, Claim]:
    """Import the built-in claim modules and the ``workbench.claims`` entry points."""
    for mod in BUILTIN_MODULES:
        importlib.import_module(mod)
    for ep in entry_points(group="workbench.claims"):
        try:
            importlib.import_module(ep.value.split(":")[0])
            LOAD_ERRORS.pop(ep.name, None)
        except Exception as e:  # a broken third-party package must not stop the others
            why = traceback.format_exception_only(type(e), e)[-1].strip()
            LOAD_ERRORS[ep.name] = f"entry point {ep.name!r} ({ep.value}) failed to load: {why}"
    return dict(_REGISTRY)


def builtin_claims() -> dict[str, Claim]:
    """The workbench's own claims only (``BUILTIN_MODULES``), whatever plug-ins are installed."""
    for mod in BUILTIN_MODULES:
        importlib.import_module(mod)
    return {k: c for k, c in _REGISTRY.items() if c.module.startswith("workbench.proofs.")}


def select(claims: dict[str, Claim], names: Iterable[str]) -> list[str]:
    """The claim ids ``names`` selects: an exact id, or a prefix (``thm2``, ``structured``) that
    selects every id under it (``thm2.*``). A name that selects nothing raises ``ValueError``."""
    out: list[str] = []
    for name in names:
        hit = [c for c in claims if c == name or c.startswith(name.rstrip(".") + ".")]
        if not hit:
            raise ValueError(f"--only must name known claims or an id prefix (got {name!r}; "
                             "see --list)")
        out += [c for c in sorted(hit) if c not in out]
    return out


def dependency_order(claims: dict[str, Claim]) -> list[str]:
    """Claim ids in an order where every dependency comes first: of the claims ready at each
    step, the least id (the lexicographic topological order, so it never varies)."""
    for c in claims.values():
        for dep in c.depends_on:
            if dep not in claims:
                raise ValueError(f"claim {c.id!r} depends on unknown claim {dep!r}")
    after = _dependents(claims)
    waiting = {cid: len(set(c.depends_on)) for cid, c in claims.items()}
    ready = [cid for cid, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        cid = heapq.heappop(ready)
        order.append(cid)
        for nxt in after[cid]:
            waiting[nxt] -= 1
            if waiting[nxt] == 0:
                heapq.heappush(ready, nxt)
    if len(order) < len(claims):
        raise ValueError("claims must not depend on each other in a cycle")
    return order


def _dependents(claims: dict[str, Claim]) -> dict[str, list[str]]:
    """Each claim's direct dependents among ``claims`` (each once)."""
    after: dict[str, list[str]] = {cid: [] for cid in claims}
    for c in claims.values():
        for dep in dict.fromkeys(c.depends_on):
            if dep in claims:
                after[dep].append(c.id)
    return after


def broken_dependencies(claims: dict[str, Claim]) -> dict[str, str]:
    """Claims that cannot run, with the reason: an unknown id in ``depends_on``, or a cycle,
    and every claim that depends on one of those."""
    broken: dict[str, str] = {}
    for c in claims.values():
        unknown = [d for d in c.depends_on if d not in claims]
        if unknown:
            names = ", ".join(repr(d) for d in unknown)
            broken[c.id] = f"depends_on names unknown claim(s) {names} (mistyped id?)"
    after = _dependents(claims)
    below = {cid: _reachable(after, cid) for cid in claims}  # everything that waits for cid
    for cid in claims:
        if cid in below[cid]:  # cid waits for itself: it lies on a cycle
            comp = sorted(m for m in below[cid] if cid in below[m])
            broken.setdefault(cid, f"depends_on forms a cycle through {comp}")
    for cid in list(broken):
        for desc in sorted(below[cid] - {cid}):
            broken.setdefault(desc, f"depends on {cid!r}, which cannot run")
    return broken


def _reachable(after: dict[str, list[str]], start: str) -> set[str]:
    """The claims reached from ``start`` by one or more dependent edges (``start`` itself only
    when it lies on a cycle)."""
    seen: set[str] = set()
    stack = list(after[start])
    while stack:
        n = stack.pop()
        if n not in seen:
            seen.add(n)
            stack += after[n]
    return seen


def run_claims(
    ctx: CheckContext,
    only: Iterable[str] | None = None,
    claims: dict[str, Claim] | None = None,
    on_start: Callable[[Claim], None] | None = None,
    on_result: Callable[[ClaimResult], None] | None = None,
    *,
    with_deps: bool = True,
    jobs: int = 1,
    costs: Mapping[str, float] | None = None,
    pool: ClaimPool | None = None,
) -> list[ClaimResult]:
    """Run the selected claims in dependency order (``workbench.proofs.runner``); ``only``
    holds ids or id prefixes (:func:`select`), and ``with_deps`` adds what they depend on.

    ``on_start(claim)`` is called before a claim runs and ``on_result(result)`` as soon as it has
    a verdict, so a front end can show progress. Claims with broken dependencies (see
    ``broken_dependencies``) get verdict ``skipped`` and an ``error`` naming the problem.
    ``jobs`` worker processes run independent claims side by side, with the same results;
    ``costs`` (seconds per claim id, from an earlier run) lets the longest chains start first;
    ``pool`` is a started ``workers.claim_pool`` to run them in.
    """
    claims = load_claims() if claims is None else claims
    broken = broken_dependencies(claims)
    runnable = {k: v for k, v in claims.items() if k not in broken}
    order = sorted(broken) + dependency_order(runnable)
    if only:
        picked = select(claims, only)
        wanted = set(picked)
        if with_deps:
            for cid in picked:
                wanted |= _ancestors(claims, cid)
        order = [c for c in order if c in wanted]
    return run_ordered(ctx, [claims[c] for c in order], broken, jobs, costs, on_start,
                       on_result, pool)


def _ancestors(claims: dict[str, Claim], cid: str) -> set[str]:
    out: set[str] = set()
    stack = list(claims[cid].depends_on)
    while stack:
        d = stack.pop()
        if d not in out and d in claims:
            out.add(d)
            stack.extend(claims[d].depends_on)
    return out
