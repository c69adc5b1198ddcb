"""Claims that a worker process of ``workbench check --jobs N`` re-creates by importing this
module (``tests/cli/test_cli_check.py``): one of each outcome the runner must report, and one
that says which process measured it."""

from __future__ import annotations

import os

from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

IDS = ("pool.violated", "pool.after_violated", "pool.raises", "pool.after_raise",
       "pool.empty", "pool.where")


@claim("pool.violated", "2 <= 1, which is false", "lemma")
def violated(ctx: CheckContext) -> list[Evidence]:
    return [Evidence(2.0, 1.0, "<=", "exact")]


@claim("pool.after_violated", "needs the false claim", "lemma", depends_on=("pool.violated",))
def after_violated(ctx: CheckContext) -> list[Evidence]:
    return [Evidence(0.0, 1.0, "<=", "exact")]


@claim("pool.raises", "a check that raises", "lemma")
def raises(ctx: CheckContext) -> list[Evidence]:
    raise RuntimeError("this check always raises")


@claim("pool.after_raise", "needs the raising claim, and holds", "lemma",
       depends_on=("pool.raises",))
def after_raise(ctx: CheckContext) -> list[Evidence]:
    return [Evidence(0.0, 1.0, "<=", "exact")]


@claim("pool.empty", "a check that returns no evidence", "lemma")
def empty(ctx: CheckContext) -> list[Evidence]:
    return []


@claim("pool.where", "names the process that measured it", "lemma")
def where(ctx: CheckContext) -> list[Evidence]:
    return [Evidence(0.0, 1.0, "<=", "exact", note=f"pid {os.getpid()}")]
