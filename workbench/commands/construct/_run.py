"""Shared runner of ``workbench construct``: Monte Carlo error against the claimed error.

Verdicts are ``workbench.core.verdict.decide``, the rule ``workbench check`` uses: ``holds``,
``violated`` (exit 1) or ``inconclusive``, beyond the measured interval and the claim's own; an
equality claim holds only when the interval resolves it to ``--resolution``. Intervals are at
the one default level (95 %), Bonferroni-corrected over seeds where each seed is judged. Torch is
imported only after the arguments are validated.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from workbench.commands._common import (
    ERROR_MEANING,
    LEVEL,
    CheckFailed,
    common_options,
    emit,
    progress_bar,
)
from workbench.core.validation import (
    check_dim,
    check_float,
    check_int,
    check_orthonormal_keys,
    check_points,
)
from workbench.core.verdict import decide

if TYPE_CHECKING:
    import torch

    from workbench.constructions._montecarlo import ClaimedError
    from workbench.core.intervals import Estimate

    Built = tuple[
        Callable[..., torch.Tensor], Callable[..., torch.Tensor], ClaimedError, dict[str, Any]
    ]
else:
    Built = tuple

POINTS = ("orthonormal", "iid")  # workbench.core.sphere.POINT_LAWS


def check_basic(d: int, N: int, points: str, eval_samples: int, seeds: int, seed: int,
                min_seeds: int = 1, resolution: float = 0.01) -> None:
    """The checks every construction shares, done before torch is imported."""
    check_dim(d, "--d")
    check_orthonormal_keys(points, check_points(N, "--N"), d, "--N")
    check_int("--eval-samples", eval_samples, lo=2)
    check_int("--seeds", seeds, lo=min_seeds)
    check_int("--seed", seed, lo=0)
    check_float("--resolution", resolution, lo=0.0, lo_open=True)


def verdict(measured: Estimate, claim: ClaimedError, resolution: float) -> str:
    """The measured error against the claimed one: ``decide`` beyond both intervals."""
    return decide(measured.lo, measured.hi, claim.relation, (claim.lo, claim.hi),
                  resolution=resolution)


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
    resolution: float = 0.01,
) -> None:
    from workbench.constructions._montecarlo import model_error
    from workbench.core.intervals import Estimate, bonferroni_level, student_t, z_value

    level = bonferroni_level(seeds, LEVEL)  # Bonferroni over the seeds
    runs, claims, means = [], [], []
    outcome = "holds"
    with progress_bar(as_json, "samples") as bar:
        job = bar.add_task(f"construct {name}", total=seeds * eval_samples)
        for s in range(seed, seed + seeds):
            forward, target, claim, meta = build(s)

            def counted(X: Any, y: Any, forward: Any = forward) -> Any:
                out = forward(X, y)
                bar.advance(job, int(y.shape[0]))  # one Monte Carlo batch done
                return out

            est = model_error(
                counted, target, d, N, eval_samples, points, queries, generator=s + 10**6,
                level=level,
            )
            run: dict[str, Any] = {
                "seed": s,
                "measured": est.to_dict(),
                "claimed": claim.to_dict(),
                **meta,
            }
            if not ensemble:  # the claim is about this very model
                run["verdict"] = verdict(est, claim, resolution)
                outcome = _worst(outcome, run["verdict"])
            runs.append(run)
            claims.append(claim)
            means.append(est.mean)
    if ensemble:  # the claim averages over the random draw: pool the per-seed errors
        pool = student_t(means, level=LEVEL)
        outcome = verdict(pool, claims[0], resolution)
        how = f"Student-t over {seeds} independent draws"
    else:
        ses = [r["measured"]["std"] / math.sqrt(r["measured"]["n"]) for r in runs]
        se = math.sqrt(sum(x * x for x in ses)) / seeds
        m, n = sum(means) / seeds, eval_samples * seeds
        zz = z_value(LEVEL)
        pool = Estimate(m, m - zz * se, m + zz * se, LEVEL, n, se * math.sqrt(n), "normal")
        how = f"normal, {n} samples"
    measured = {**pool.to_dict(), "interval": how}
    payload = {
        "construction": name,
        "params": {**params, "eval_samples": eval_samples, "seeds": seeds, "seed": seed},
        "measured_error": measured,
        "claimed_error": claims[0].to_dict()
        if len(claims) == 1 or ensemble
        else {
            "value": sum(c.value for c in claims) / seeds,
            "relation": claims[0].relation,
            "method": claims[0].method,
            "statement": claims[0].statement,
        },
        "verdict": outcome,
        "level": LEVEL,
        "resolution": resolution,
        "error_meaning": ERROR_MEANING,
        "runs": runs,
    }
    emit(payload, as_json, _human)
    if outcome == "violated":
        raise CheckFailed(f"{name}: measured error contradicts the claimed error beyond the CI")


def _worst(a: str, b: str) -> str:
    order = ("violated", "inconclusive", "holds")
    return min(a, b, key=order.index)


def _human(p: dict[str, Any]) -> str:
    m, c = p["measured_error"], p["claimed_error"]
    lines = [
        f"construction: {p['construction']}",
        "params: " + ", ".join(f"{k}={v}" for k, v in p["params"].items()),
        ERROR_MEANING,
        f"measured error: {m['mean']:.6g}  CI [{m['lo']:.6g}, {m['hi']:.6g}] "
        f"({m['level']:.0%} CI, {m['interval']})",
        f"claimed error: {c['relation']} {c['value']:.6g}  ({c['method']}; {c['statement']})",
        f"verdict: {p['verdict']}",
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class Evaluation:
    """The options every construction shares: how its error is measured, judged and printed."""

    eval_samples: int
    seeds: int
    resolution: float
    as_json: bool
    seed: int

    def check(self, d: int, N: int, points: str, min_seeds: int = 1) -> None:
        """:func:`check_basic` of these options for ``(d, N, points)``."""
        check_basic(d, N, points, self.eval_samples, self.seeds, self.seed, min_seeds,
                    self.resolution)

    def measure(self, name: str, params: dict[str, Any], build: Callable[[int], Built], d: int,
                N: int, points: str, queries: str, ensemble: bool = False) -> None:
        """Measure, judge and print (:func:`_run`) with these options."""
        _run(name, params, build, d, N, points, queries, self.eval_samples, self.seeds, self.seed,
             ensemble, self.as_json, self.resolution)


def construct_options(
    seeds: int = 1, eval_samples: int = 20000
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options every ``construct`` command takes after its own (``--eval-samples``,
    ``--resolution``, ``--seeds``, ``--json``, ``--seed``), handed to the command as one
    :class:`Evaluation`, its first argument. Put it below the command's own options."""

    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def with_evaluation(*, eval_samples: int, seeds: int, resolution: float, as_json: bool,
                            seed: int, **options: Any) -> Any:
            return f(Evaluation(eval_samples, seeds, resolution, as_json, seed), **options)

        g = common_options(with_evaluation)
        g = click.option("--seeds", type=int, default=seeds, show_default=True,
                         help="Independent seeds seed..seed+K-1.")(g)
        g = click.option("--resolution", type=float, default=0.01, show_default=True,
                         help="Smallest departure from an exact claimed error the verdict must "
                         "resolve (> 0); a wider interval is inconclusive.")(g)
        return click.option("--eval-samples", type=int, default=eval_samples,
                            show_default=True, help="Fresh Monte Carlo samples per seed.")(g)

    return deco
