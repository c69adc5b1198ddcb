"""The public runner of constructions (docs/extending.md, Construction): build the model, measure
its error by Monte Carlo on fresh samples with an interval, and judge the claimed error with the
one verdict rule of the workbench, ``workbench.core.verdict.decide``.

A construction's result is ``(model, claimed)`` or ``(model, claimed, target)``:

- ``model(X, y)`` maps keys ``(b, N, d)`` and queries ``(b, d)`` to ``(b, d)``, or to a stacked
  layer's ``(1, b, d)``; a ``torch.nn.Module`` gets its inputs in the dtype of its parameters;
- ``claimed`` is a number (relation ``<=``: the model must reach it), an ``Estimate`` (``<=``,
  with its interval) or a ``workbench.constructions.ClaimedError`` (taken as it is);
- ``target`` is the function the error is measured against (default: the nearest neighbour).

:func:`run_construction` returns the payload ``workbench construct`` prints. Each seed ``s`` is
built with ``build(s)`` and measured on the evaluation stream ``s + 10**6``. Intervals are at
``level`` (default ``core.verdict.VERDICT_LEVEL``, 99.9 %), Bonferroni-corrected over the seeds
where each seed is judged; a construction whose
claim averages over its random draw (``ensemble``) is judged on the per-seed errors pooled by a
Student-t interval instead. A construction's ``memory`` estimate (a byte count or
``workbench.verifiers.resources.Term`` list) is checked against the memory available before the
first build, so a size that cannot fit is refused (``ValueError`` naming its flag) before any
work.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from workbench.constructions._montecarlo import ClaimedError, model_error
from workbench.core.intervals import (
    NONNEGATIVE,
    Estimate,
    bonferroni_level,
    student_t,
    z_value,
)
from workbench.core.targets import nearest_neighbour
from workbench.core.verdict import VERDICT_LEVEL, decide, percent
from workbench.verifiers.resources import as_terms, check_fits, size_values

__all__ = ["EVAL_SEED_OFFSET", "Built", "as_forward", "normalise", "normalise_claimed",
           "run_construction", "verdict"]

EVAL_SEED_OFFSET = 10**6  # seed s is measured on the evaluation stream s + EVAL_SEED_OFFSET
Forward = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
STATED = "the construction's claimed error: an upper bound its model must reach"
ESTIMATED = "the construction's estimated claim: an upper bound its model must reach"
ORDER = ("violated", "inconclusive", "holds")  # worst first


@dataclass(frozen=True)
class Built:
    """A construction's result in one form: the model, its claim, the target it is measured
    against and what a run reports besides (``meta``, e.g. the model's size)."""

    model: Any
    claimed: ClaimedError
    target: Forward = nearest_neighbour
    meta: dict[str, Any] = field(default_factory=dict)


def normalise_claimed(claimed: Any, name: str = "construction") -> ClaimedError:
    """A number or an ``Estimate`` as a ``ClaimedError`` with relation ``<=``; a
    ``ClaimedError`` as it is."""
    if isinstance(claimed, ClaimedError):
        return claimed
    if isinstance(claimed, Estimate):
        return ClaimedError.from_estimate(claimed, "<=", ESTIMATED)
    real = isinstance(claimed, numbers.Real) or getattr(claimed, "ndim", None) == 0
    if real and not isinstance(claimed, bool) and math.isfinite(float(claimed)):
        return ClaimedError.exact(float(claimed), "<=", "stated", STATED)
    raise ValueError(f"{name} must claim a finite number, an Estimate or a ClaimedError as its "
                     f"error (got {type(claimed).__name__} {claimed!r:.60})")


def normalise(result: Any, name: str = "construction", target: Forward | None = None) -> Built:
    """``(model, claimed)``, ``(model, claimed, target)`` or a :class:`Built` as a ``Built``;
    ``target`` is used when the result names none (default: the nearest neighbour)."""
    if isinstance(result, Built):
        return result
    if not isinstance(result, tuple) or len(result) not in (2, 3):
        raise ValueError(f"{name} must return (model, claimed) or (model, claimed, target) "
                         f"(got {type(result).__name__})")
    model, claimed = result[0], normalise_claimed(result[1], name)
    if not callable(model):
        raise ValueError(f"{name} must return a callable model(X, y) (got "
                         f"{type(model).__name__})")
    tgt = result[2] if len(result) == 3 else (target or nearest_neighbour)
    if not callable(tgt):
        raise ValueError(f"{name} must return a callable target (got {type(tgt).__name__})")
    return Built(model, claimed, tgt)


def as_forward(model: Any, name: str = "construction") -> Forward:
    """``model`` as a function of float64 ``(X, y)`` returning float64 ``(b, d)``: inputs cast to
    a module's parameter dtype, a stacked ``(1, b, d)`` output unstacked, any other shape
    refused."""
    dtype = None
    if isinstance(model, torch.nn.Module):
        floats = [p for p in (*model.parameters(), *model.buffers()) if p.is_floating_point()]
        dtype = floats[0].dtype if floats else None

    def forward(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = model(X, y) if dtype in (None, X.dtype) else model(X.to(dtype), y.to(dtype))
        if isinstance(out, torch.Tensor) and out.ndim == 3 and out.shape[0] == 1:
            out = out[0]
        if not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(y.shape):
            got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
            raise ValueError(f"{name} must give a model whose output is (batch, d) = "
                             f"{tuple(y.shape)} or (1, batch, d) (got {got})")
        return out.to(torch.float64)

    return forward


def verdict(measured: Estimate, claim: ClaimedError, resolution: float) -> str:
    """The measured error against the claimed one: ``decide`` beyond both intervals."""
    return decide(measured.lo, measured.hi, claim.relation, (claim.lo, claim.hi),
                  resolution=resolution)


def inconclusive_reason(measured: Estimate, claim: ClaimedError, resolution: float,
                        how: str) -> str:
    """Why ``verdict(measured, claim, resolution)`` is ``inconclusive``, in one sentence."""
    iv = f"[{measured.lo:.4g}, {measured.hi:.4g}] ({percent(measured.level)} CI, {how})"
    b = f"{claim.lo:.4g}" if claim.lo == claim.hi else f"[{claim.lo:.4g}, {claim.hi:.4g}]"
    if claim.relation == "==" and (measured.lo <= claim.hi and measured.hi >= claim.lo):
        return (f"the measured interval {iv} is wider than the resolution {resolution:g} an "
                f"== claim must resolve (--resolution; more --eval-samples or --seeds narrow it)")
    return (f"the measured interval {iv} straddles the claimed {claim.relation} {b} "
            "(more --eval-samples or --seeds narrow it)")


def run_construction(
    name: str,
    build: Callable[[int], Any],
    *,
    d: int,
    N: int,
    points: str = "orthonormal",
    queries: str = "uniform",
    seeds: int = 1,
    seed: int = 0,
    eval_samples: int = 20_000,
    ensemble: bool = False,
    resolution: float = 0.01,
    level: float = VERDICT_LEVEL,
    params: dict[str, Any] | None = None,
    on_batch: Callable[[int], None] | None = None,
    memory: Any = None,
) -> dict[str, Any]:
    """Build (``build(s)``, a construction's result for seed ``s``), measure and judge seeds
    ``seed..seed+seeds-1``; the payload of ``workbench construct`` (``verdict``: ``holds``,
    ``violated`` or ``inconclusive``). ``on_batch(n)`` is called after each Monte Carlo batch of
    ``n`` samples (progress). ``memory``: the construction's estimate at these arguments (see
    the module note), checked first, blaming the largest of ``d``, ``N`` and ``params``."""
    if memory is not None:
        p = params or {}
        check_fits(as_terms(memory), size_values(d, int(p.get("rank", 0)),
                                                 int(p.get("heads", 0)), N, p))
    per_seed = bonferroni_level(seeds, level)  # Bonferroni over the seeds
    runs, claims, means = [], [], []
    outcome = "holds"
    for s in range(seed, seed + seeds):
        built = normalise(build(s), name)
        forward = as_forward(built.model, name)

        def counted(X: torch.Tensor, y: torch.Tensor, forward: Forward = forward) -> torch.Tensor:
            out = forward(X, y)
            if on_batch is not None:
                on_batch(int(y.shape[0]))  # one Monte Carlo batch done
            return out

        est = model_error(counted, built.target, d, N, eval_samples, points, queries,
                          generator=s + EVAL_SEED_OFFSET, level=per_seed)
        run: dict[str, Any] = {"seed": s, "measured": est.to_dict(),
                               "claimed": built.claimed.to_dict(), **built.meta}
        if not ensemble:  # the claim is about this very model
            run["verdict"] = verdict(est, built.claimed, resolution)
            if run["verdict"] == "inconclusive":
                run["reason"] = inconclusive_reason(est, built.claimed, resolution,
                                                    f"{est.method}, seed {s}")
            outcome = min(outcome, run["verdict"], key=ORDER.index)
        runs.append(run)
        claims.append(built.claimed)
        means.append(est.mean)
    if ensemble:  # the claim averages over the random draw: pool the per-seed errors
        pool = student_t(means, level=level, bounds=NONNEGATIVE)
        outcome = verdict(pool, claims[0], resolution)
        how = f"Student-t over {seeds} independent draws"
        reason = inconclusive_reason(pool, claims[0], resolution, how)
    else:
        ses = [r["measured"]["std"] / math.sqrt(r["measured"]["n"]) for r in runs]
        se = math.sqrt(sum(x * x for x in ses)) / seeds
        m, n = sum(means) / seeds, eval_samples * seeds
        zz = z_value(level)
        pool = Estimate(m, m - zz * se, m + zz * se, level, n, se * math.sqrt(n),
                        "normal").within(NONNEGATIVE)  # an error is never negative
        how = f"normal, {n} samples"
        reason = next((r["reason"] for r in runs if "reason" in r), "")  # the first seed's
    claimed = claims[0].to_dict() if len(claims) == 1 or ensemble else {
        "value": sum(c.value for c in claims) / seeds, "relation": claims[0].relation,
        "method": claims[0].method, "statement": claims[0].statement}
    return {
        "construction": name,
        "params": {**(params or {}), "eval_samples": eval_samples, "seeds": seeds, "seed": seed},
        "measured_error": {**pool.to_dict(), "interval": how},
        "claimed_error": claimed,
        "verdict": outcome,
        "reason": reason if outcome == "inconclusive" else None,  # why, when inconclusive
        "level": level,
        "resolution": resolution,
        "runs": runs,
    }
