"""Worker processes for ``workbench check --jobs N`` (the runner, ``workbench.proofs.runner``,
decides what runs when; this module starts the workers, hands them claims, and measures a
check the same way in any process: ``measure``, with ``CLAIM_THREADS`` torch threads).

On a Linux CPU run the workers are forked from the process that loaded the claims: they start at
once, inherit every claim (one made at run time too) and freeze what they inherited. Elsewhere,
and for CUDA (which a forked child cannot re-initialise), they are spawned and import the module
of each claim they run, so a claim defined at run time cannot go to them.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import multiprocessing
import os
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from workbench.proofs.claim import REGISTRY, CheckContext, Claim, Evidence
from workbench.verifiers.processes import can_fork, die_with_parent

Measured = tuple[list[Evidence], str | None, float]  # evidence, error message, seconds
CLAIM_THREADS = 1  # torch threads per claim, in every process (workbench.proofs.runner's note)


def measure(check: Callable[[CheckContext], list[Evidence]], ctx: CheckContext) -> Measured:
    """``check(ctx)``: its evidence, the message of what it raised (or None), its seconds."""
    t0 = time.perf_counter()
    try:
        return list(check(ctx)), None, time.perf_counter() - t0
    except Exception as e:  # a crashing check is reported, never hidden
        msg = traceback.format_exception_only(type(e), e)[-1].strip()
        return [], msg, time.perf_counter() - t0


@dataclass
class ClaimPool:
    """Worker processes for claims; ``forked`` ones inherit this process's claims."""

    executor: ProcessPoolExecutor
    jobs: int
    forked: bool

    def runs(self, claims: list[Claim]) -> bool:
        """Whether the workers can re-create every one of ``claims``."""
        return all(_INHERITED.get(c.id) is c for c in claims) if self.forked else all(
            _importable(c) for c in claims)

    def submit(self, c: Claim, ctx: CheckContext) -> Future[Measured]:
        if self.forked:
            return self.executor.submit(_run_inherited, c.id, ctx)
        return self.executor.submit(_run_in_worker, c.module, c.id, ctx)


_INHERITED: dict[str, Claim] = {}  # what forked workers run: set before they are forked


@contextmanager
def claim_pool(jobs: int, claims: Mapping[str, Claim], device: str) -> Iterator[ClaimPool]:
    """``jobs`` worker processes, started now. Forked ones (:func:`can_fork`) are created
    before this returns, from a process with no other thread yet, and inherit ``claims``;
    spawned ones import each claim's module when they run it."""
    forked = can_fork(device, CLAIM_THREADS)
    if forked:
        _INHERITED.clear()
        _INHERITED.update(claims)
    mp = multiprocessing.get_context("fork" if forked else "spawn")
    executor = ProcessPoolExecutor(jobs, mp_context=mp, initializer=_init_worker,
                                   initargs=(CLAIM_THREADS, forked, os.getpid()))
    try:
        if forked and jobs > 1:
            executor.submit(os.getpid).result()  # a fork context starts every worker at once
        yield ClaimPool(executor, jobs, forked)
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
        if forked:
            _INHERITED.clear()


def _importable(c: Claim) -> bool:
    """Whether a worker process re-creates ``c`` by importing its module."""
    if not c.module or c.module == "__main__" or REGISTRY.get(c.id) is not c:
        return False
    try:
        return importlib.util.find_spec(c.module) is not None
    except (ImportError, ValueError):
        return False


def _init_worker(threads: int, forked: bool, parent: int) -> None:
    """A worker ends with its parent (``die_with_parent``); its thread budget is set before
    torch starts its pools. A forked worker also freezes what it inherited (loaded modules, the
    claims): the collector then never walks it (a full collection would, at every claim), and
    the pages stay shared with the parent."""
    die_with_parent(parent)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    if forked:
        gc.freeze()
    import torch

    torch.set_num_threads(threads)


def _run_inherited(claim_id: str, ctx: CheckContext) -> Measured:
    """In a forked worker: measure a claim this process inherited."""
    return measure(_INHERITED[claim_id].check, ctx)


def _run_in_worker(module: str, claim_id: str, ctx: CheckContext) -> Measured:
    """In a spawned worker: import the claim's module (which registers it) and measure its
    check."""
    importlib.import_module(module)
    return measure(REGISTRY[claim_id].check, ctx)
