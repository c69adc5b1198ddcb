"""What every ``workbench construct`` command shares: its options, their checks, the progress
bar and the output. The measurement and the verdict are the public runner's,
``workbench.verifiers.construct.run_construction``: the Monte Carlo error against the claimed
error, judged by ``workbench.core.verdict.decide`` (``holds``, ``violated``: exit 1, or
``inconclusive``), at the one verdict level (``core.verdict.VERDICT_LEVEL``, 99.9 %),
Bonferroni-corrected over seeds where each
seed is judged; an equality claim holds only when the interval resolves it to ``--resolution``.
Torch is imported only after the arguments are validated.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from workbench.commands._arguments import MAX_SEEDS, IntIn
from workbench.commands._common import (
    CheckFailed,
    common_options,
    emit,
    progress_bar,
)
from workbench.commands._error_meaning import error_meaning
from workbench.commands._target import choose_target, target_options
from workbench.core.validation import (
    check_dim,
    check_float,
    check_int,
    check_orthonormal_keys,
    check_points,
)
from workbench.core.verdict import percent

POINTS = ("orthonormal", "iid")  # workbench.core.sphere.POINT_LAWS


def check_basic(d: int, N: int, points: str, eval_samples: int, seeds: int, seed: int,
                min_seeds: int = 1, resolution: float = 0.01) -> None:
    """The checks every construction shares, done before torch is imported."""
    check_dim(d, "--d")
    check_orthonormal_keys(points, check_points(N, "--N"), d, "--N")
    check_int("--eval-samples", eval_samples, lo=2)
    check_int("--seeds", seeds, lo=min_seeds)
    check_float("--resolution", resolution, lo=0.0, lo_open=True)


def _human(p: dict[str, Any]) -> str:
    m, c = p["measured_error"], p["claimed_error"]
    lines = [
        f"construction: {p['construction']}",
        "params: " + ", ".join(f"{k}={v}" for k, v in p["params"].items()),
        *([f"target: {p['target']['name']} ({p['target']['profile']}); {p['target_note']}"]
          if "target_note" in p else []),
        p["error_meaning"],
        f"measured error: {m['mean']:.6g}  CI [{m['lo']:.6g}, {m['hi']:.6g}] "
        f"({percent(m['level'])} CI, {m['interval']})",
        f"claimed error: {c['relation']} {c['value']:.6g}  ({c['method']}; {c['statement']})",
        f"verdict: {p['verdict']}" + (f" ({p['reason']})" if p.get("reason") else ""),
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
    target: str = "nearest"
    target_params: tuple[str, ...] = ()

    def check(self, d: int, N: int, points: str, min_seeds: int = 1) -> None:
        """:func:`check_basic` of these options for ``(d, N, points)``."""
        check_basic(d, N, points, self.eval_samples, self.seeds, self.seed, min_seeds,
                    self.resolution)
        chosen = choose_target(self.target, self.target_params)  # before anything is built
        if chosen.target.N is not None and N not in chosen.target.N:
            raise ValueError(f"--N must lie in {list(chosen.target.N)} for --target "
                             f"{self.target} (got {N})")

    def measure(self, name: str, params: dict[str, Any], build: Callable[[int], Any], d: int,
                N: int, points: str, queries: str, ensemble: bool = False,
                memory: Any = None) -> None:
        """Measure and judge with ``workbench.verifiers.construct.run_construction`` (``build(s)``
        returns a construction's result for seed ``s``; ``memory``: its estimate, checked
        first), with a progress bar; print the payload and exit 1 (``CheckFailed``) when the
        claim is violated."""
        from workbench.verifiers.construct import run_construction

        chosen = choose_target(self.target, self.target_params)
        if self.target != "nearest":
            own = build

            def build(s: int) -> Any:  # the model measured against the chosen target
                result = own(s)
                if isinstance(result, tuple) and len(result) == 3:
                    raise ValueError(f"--target applies to constructions measured against "
                                     f"nearest; {name} has a target of its own")
                return (result[0], result[1], chosen.map())
        with progress_bar(self.as_json, "samples") as bar:
            job = bar.add_task(f"construct {name}", total=self.seeds * self.eval_samples)
            p = run_construction(name, build, d=d, N=N, points=points, queries=queries,
                                 seeds=self.seeds, seed=self.seed, eval_samples=self.eval_samples,
                                 ensemble=ensemble, resolution=self.resolution,
                                 params=params, on_batch=lambda n: bar.advance(job, n),
                                 memory=memory)
        payload = {k: v for k, v in p.items() if k != "runs"}
        payload.update(error_meaning=error_meaning("nearest", N, points, self.target),
                       target=chosen.describe(), runs=p["runs"])
        if self.target != "nearest":
            payload["target_note"] = ("the error is measured against --target; the claimed "
                                      "error is the construction's own (against nearest)")
        emit(payload, self.as_json, _human)
        if payload["verdict"] == "violated":
            raise CheckFailed(f"{name}: measured error contradicts the claimed error beyond the "
                              "CI")


def construct_options(
    seeds: int | None = 1, eval_samples: int = 20000
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options every ``construct`` command takes after its own (``--eval-samples``,
    ``--resolution``, ``--seeds``, ``--json``, ``--seed``), handed to the command as one
    :class:`Evaluation`, its first argument. Put it below the command's own options.
    ``seeds=None``: the command chooses (``Evaluation.seeds`` is ``None`` until it does)."""

    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def with_evaluation(*, eval_samples: int, seeds: int, resolution: float, as_json: bool,
                            seed: int, target: str, target_params: tuple[str, ...],
                            **options: Any) -> Any:
            return f(Evaluation(eval_samples, seeds, resolution, as_json, seed, target,
                                target_params), **options)

        g = common_options(target_options(with_evaluation))
        g = click.option("--seeds", type=IntIn(1, MAX_SEEDS), default=seeds,
                         show_default=seeds is not None,
                         help="Independent seeds seed..seed+K-1." + ("" if seeds is not None else
                         " Default: 1, or 8 where the claim averages over the construction's "
                         "random draw."))(g)
        g = click.option("--resolution", type=float, default=0.01, show_default=True,
                         help="Smallest departure from an exact claimed error the verdict must "
                         "resolve (> 0); a wider interval is inconclusive.")(g)
        return click.option("--eval-samples", type=IntIn(2), default=eval_samples,
                            show_default=True, help="Fresh Monte Carlo samples per seed.")(g)

    return deco
