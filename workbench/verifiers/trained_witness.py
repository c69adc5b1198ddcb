"""Trained witnesses for the upper side of the sandwich (docs/derivations/sandwich.md):
generalized attention of Eq. 2 (key-rank r, H heads, full d x d value maps) with learned scores,
``mlp`` (docs/derivations/lower_bound.md: the bounds hold for every measurable score) or ``dot``.

Every ``(r, H)`` of one ``d`` that shares a :class:`TrainBudget` is trained in one call of
``workbench.verifiers.train.train`` (all seeds, learning rates and score kinds stacked); each
point's witness is the model of least held-out error (:func:`select_best`), then measured again
on a fresh evaluation stream in float64 (CLT interval at ``level``). The record of a witness
holds the budget, the seconds of its training call, the seeds and its convergence: the mean
training loss over the tenth of the run ending at 80 % of the steps against the last tenth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import torch

from workbench.constructions.optimized import Witness
from workbench.constructions.witness_setting import NEAREST_2, Setting
from workbench.core.validation import check_choice, check_int
from workbench.models.scores import SCORE_KINDS
from workbench.verifiers.estimate import estimate_error
from workbench.verifiers.tasks import Task
from workbench.verifiers.train import ModelResult, ModelSpec, TrainConfig, build_model, train

METHOD = "trained_generalized"


@dataclass(frozen=True)
class TrainBudget:
    """What one trained witness may spend: ``seeds`` x ``lrs`` x ``scores`` models of ``steps``
    AdamW steps of ``batch`` fresh samples (``hidden``: the MLP score's width)."""

    steps: int = 1500
    batch: int = 512
    lrs: tuple[float, ...] = (0.01,)
    seeds: int = 2
    scores: tuple[str, ...] = ("mlp", "dot")
    hidden: int = 16
    heldout: int = 20_000

    def __post_init__(self) -> None:
        check_int("steps", self.steps, lo=10)
        check_int("batch", self.batch, lo=1)
        check_int("seeds", self.seeds, lo=1)
        check_int("hidden", self.hidden, lo=1)
        for s in self.scores:
            check_choice("score", s, SCORE_KINDS)

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


@dataclass
class TrainedWitness:
    """A trained witness, its weights (``models=1`` state) and the record of its run."""

    witness: Witness
    state: dict[str, torch.Tensor]
    record: dict[str, Any]


def _task(d: int, setting: Setting = NEAREST_2) -> Task:
    """The task a witness is trained and replayed on: ``D_N`` (N orthonormal keys, uniform
    query) labelled by the setting's target (hardmax nearest, or soft-nearest at ``beta``)."""
    if setting.target == "nearest":
        return Task("nearest", d=d, N=setting.N, points="orthonormal")
    from workbench.core.targets import soft_nearest_neighbour
    from workbench.verifiers.tasks import TargetTask

    beta = setting.beta
    return TargetTask("nearest", d=d, N=setting.N, points="orthonormal", target=setting.target,
                      target_params=setting.params,
                      fn=lambda X, y: soft_nearest_neighbour(X, y, beta))


def _options(score: str, hidden: int) -> dict[str, Any]:
    wide = score in ("mlp", "set")
    return {"score": score, **({"score_options": {"hidden": hidden}} if wide else {})}


def score_of(state: dict[str, torch.Tensor]) -> dict[str, Any]:
    """The score options a saved state was trained with, read from its weights alone (an MLP
    score holds ``score.A`` of width ``hidden``, a set score also ``score.E``; a dot score holds
    ``score.Q``)."""
    if "score.A" in state:
        kind = "set" if "score.E" in state else "mlp"
        return _options(kind, int(state["score.A"].shape[-1]))
    return _options("dot", 0)


def replay_trained(
    d: int, r: int, H: int, state: dict[str, torch.Tensor], n_eval: int, seed: int,
    level: float = 0.999, setting: Setting = NEAREST_2,
) -> tuple[float, tuple[float, float]]:
    """The error of the saved weights on ``n_eval`` fresh samples of the setting's task
    (default ``D_2``, hardmax; stream ``seed``), float64, CLT interval at ``level``: the model is
    rebuilt from ``state`` alone."""
    spec = ModelSpec(arch="generalized", rank=r, heads=H, options=score_of(state))
    task = _task(d, setting)
    model = build_model(spec, task, models=1)
    model.load_state_dict(state)
    (est,) = estimate_error(model.double(), task, samples=n_eval, level=level,
                            generator=seed)
    return est.mean, (est.lo, est.hi)


def select_best(results: Sequence[ModelResult]) -> ModelResult:
    """The model of least held-out error (models without a held-out estimate never win)."""
    return min(results, key=lambda m: m.heldout.mean if m.heldout is not None else math.inf)


def _segment(m: ModelResult, frac: float) -> dict[str, float]:
    """The curve segment ending at ``frac`` of the steps (its mean training loss and SE)."""
    last = m.curve[-1][0]
    step, mean, se = min(m.curve, key=lambda c: abs(c[0] - frac * last))
    return {"step": step, "loss": mean, "se": se}


def _record(best: ModelResult, group: list[ModelResult], budget: TrainBudget, seconds: float,
            models: int) -> dict[str, Any]:
    at80, end = _segment(best, 0.8), _segment(best, 1.0)
    return {
        "budget": budget.to_dict(),
        "seconds": seconds,  # the whole training call, shared by ``models_in_call`` models
        "models_in_call": models,
        "seeds": sorted({m.spec.seed for m in group}),
        "chosen": {"seed": best.spec.seed, "lr": best.spec.lr, **best.spec.options},
        "convergence": {"loss_at_80pct": at80, "loss_end": end,
                        "relative_drop": (at80["loss"] - end["loss"]) / at80["loss"]},
        "heldout": [{"seed": m.spec.seed, "lr": m.spec.lr,
                     "score": m.spec.options["score"],
                     "mean": m.heldout.mean if m.heldout else None,
                     "ci": [m.heldout.lo, m.heldout.hi] if m.heldout else None}
                    for m in group],
    }


def train_witnesses(
    d: int,
    shapes: Sequence[tuple[int, int]],
    budget: TrainBudget,
    *,
    seed: int = 0,
    n_eval: int = 100_000,
    level: float = 0.999,
    setting: Setting = NEAREST_2,
) -> dict[tuple[int, int], TrainedWitness]:
    """One training call for every ``(r, H)`` of ``shapes`` at dimension ``d`` on the setting's
    task (default N = 2, hardmax); per shape the best model by held-out error, re-measured on
    the fresh stream ``seed + 202``."""
    specs = [ModelSpec(arch="generalized", rank=r, heads=H, seed=seed + s, lr=lr,
                       options=_options(score, budget.hidden))
             for r, H in shapes for s in range(budget.seeds) for lr in budget.lrs
             for score in budget.scores]
    cfg = TrainConfig(steps=budget.steps, batch=budget.batch, eval_samples=budget.heldout,
                      eval_seed=seed + 101)
    run = train(specs, _task(d, setting), cfg)
    out: dict[tuple[int, int], TrainedWitness] = {}
    for r, H in shapes:
        group = [m for m in run.results if (m.spec.rank, m.spec.heads) == (r, H)]
        best = select_best(group)
        state = {k: v.detach().clone() for k, v in best.state.items()}
        err, ci = replay_trained(d, r, H, state, n_eval, seed + 202, level, setting)
        w = Witness(METHOD, d, r, H, err, ci, {}, n_eval, seed + 202, setting)
        out[(r, H)] = TrainedWitness(w, state, _record(best, group, budget, run.seconds,
                                                       len(specs)))
    return out
