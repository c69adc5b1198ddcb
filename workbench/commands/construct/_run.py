"""Shared runner of ``workbench construct``: Monte Carlo error against the claimed error."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click
import torch
from scipy.stats import norm

from constructions._montecarlo import ClaimedError, Estimate, model_error, pooled
from workbench.commands._common import CheckFailed, emit
from workbench.core.validation import check_int

Built = tuple[
    Callable[..., torch.Tensor], Callable[..., torch.Tensor], ClaimedError, dict[str, Any]
]


def _verdict(measured: Estimate, claim: ClaimedError) -> str:
    if claim.relation == "<=":
        return "violated" if measured.lo > claim.hi else "holds"
    overlap = measured.lo <= claim.hi and claim.lo <= measured.hi
    return "holds" if overlap else "violated"


def _run(
    name: str,
    params: dict[str, Any],
    build: Callable[[int], Built],
    d: int,
    N: int,
    points: str,
    queries: str,
    eval_samples: int,
    seeds: int,
    seed: int,
    ensemble: bool,
    as_json: bool,
) -> None:
    eval_samples = check_int("eval_samples", eval_samples, lo=2)
    seeds = check_int("seeds", seeds, lo=1)
    seed = check_int("seed", seed, lo=0)
    z = float(norm.ppf(1 - 0.005 / seeds))
    runs, claims, means = [], [], []
    verdict = "holds"
    for s in range(seed, seed + seeds):
        forward, target, claim, meta = build(s)
        est = model_error(
            forward, target, d, N, eval_samples, points, queries, generator=s + 10**6, z=z
        )
        run: dict[str, Any] = {
            "seed": s,
            "measured": est.to_dict(),
            "claimed": claim.to_dict(),
            **meta,
        }
        if not ensemble:  # the claim is about this very model
            run["verdict"] = _verdict(est, claim)
            verdict = "violated" if run["verdict"] == "violated" else verdict
        runs.append(run)
        claims.append(claim)
        means.append(est.mean)
    if ensemble:  # the claim averages over the random draw: pool the per-seed errors
        if seeds >= 2:
            pool = pooled(means, level=0.99)
            verdict = _verdict(pool, claims[0])
        else:
            pool, verdict = Estimate(means[0], math.nan, math.nan, math.nan, 1), "not_checked"
    else:
        ses = [r["measured"]["stderr"] for r in runs]
        se = math.sqrt(sum(x * x for x in ses)) / seeds
        m = sum(means) / seeds
        zz = float(norm.ppf(0.995))
        pool = Estimate(m, se, m - zz * se, m + zz * se, eval_samples * seeds, zz)
    payload = {
        "construction": name,
        "params": {**params, "eval_samples": eval_samples, "seeds": seeds, "seed": seed},
        "measured_error": pool.to_dict(),
        "claimed_error": claims[0].to_dict()
        if len(claims) == 1 or ensemble
        else {
            "value": sum(c.value for c in claims) / seeds,
            "relation": claims[0].relation,
            "method": claims[0].method,
            "statement": claims[0].statement,
        },
        "verdict": verdict,
        "runs": runs,
    }
    emit(payload, as_json, _human)
    if verdict == "violated":
        raise CheckFailed(f"{name}: measured error contradicts the claimed error beyond the CI")


def _human(p: dict[str, Any]) -> str:
    m, c = p["measured_error"], p["claimed_error"]
    lines = [
        f"construction: {p['construction']}",
        "params: " + ", ".join(f"{k}={v}" for k, v in p["params"].items()),
    ]
    lines.append(f"measured error: {m['mean']:.6g}  CI [{m['lo']:.6g}, {m['hi']:.6g}]")
    lines.append(
        f"claimed error: {c['relation']} {c['value']:.6g}  ({c['method']}; {c['statement']})"
    )
    lines.append(f"verdict: {p['verdict']}")
    return "\n".join(lines)


def _eval_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--seeds", type=int, default=1, show_default=True, help="Independent seeds.")(
        f
    )
    f = click.option(
        "--eval-samples",
        type=int,
        default=20000,
        show_default=True,
        help="Fresh Monte Carlo samples per seed.",
    )(f)
    return f
