"""Trained rank-r biased attention on Theorem 3's biased target, the models Remark 4 records
(docs/paper.md#remark-4, docs/derivations/biased_lower_bound.md#what-the-claims-assert).

The task is the documented reading of Theorem 3's target (``support.theorem3.reference_target``:
Gaussian queries, ``D_2`` keys). The models are generalized attention (Eq. 2) with
``score="bias"`` (rank-r keys plus a learned bias per key position, the class Theorem 3 speaks
of), trained by ``workbench.verifiers.train`` (batched, fresh samples, held-out errors with CIs).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

import torch

from workbench.core.intervals import bonferroni_level
from workbench.core.sphere import sample_instances
from workbench.proofs.claim import CheckContext
from workbench.proofs.support.theorem3 import reference_target
from workbench.verifiers.train import ModelResult, ModelSpec, TrainConfig, train

D_TRAIN = 6
SHAPES_QUICK: tuple[tuple[int, int], ...] = ((1, 8), (3, 8))
SHAPES_FULL: tuple[tuple[int, int], ...] = ((1, 4), (2, 4), (3, 4), (1, 16), (2, 16), (3, 16))


@dataclass(frozen=True)
class BiasedTrainTask:
    """Gaussian queries, ``D_2`` keys, target ``f*`` (float32; a ``TaskLike`` for the trainer)."""

    d: int
    N: int = 2
    name: str = "biased"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def sample(
        self, batch: int, generator: torch.Generator | None, device: Any = None
    ) -> tuple[tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
        X, y = sample_instances(batch, self.N, self.d, "orthonormal", "gaussian", generator,
                                device, torch.float32)
        return (X, y), reference_target(X, y)

    def error(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        diff = pred - (target.unsqueeze(0) if pred.ndim == target.ndim + 1 else target)
        err = diff.square().sum(-1)
        return err if err.ndim == 2 else err.unsqueeze(0)


@lru_cache(maxsize=4)
def trained_biased(ctx: CheckContext) -> tuple[list[ModelResult], int, float]:
    """``(results, steps, level)``: one model per (rank, heads) shape, seeded by ``ctx.seed`` and
    trained on ``ctx.device``, held-out CIs at a level Bonferroni-corrected over the models."""
    seed, device = ctx.seed, ctx.device
    shapes = ctx.pick(SHAPES_QUICK, SHAPES_FULL)
    steps, n = ctx.pick((250, 10_000), (3000, 100_000))
    level = bonferroni_level(len(shapes))
    specs = [
        ModelSpec("generalized", rank=r, heads=H, seed=seed, lr=0.02,
                  options={"score": "bias", "score_options": {"max_len": 2}})
        for r, H in shapes
    ]
    cfg = TrainConfig(steps=steps, batch=256, eval_samples=n, eval_batch=4096, level=level,
                      eval_seed=seed, device=device)
    run = train(specs, BiasedTrainTask(D_TRAIN), cfg)  # type: ignore[arg-type]
    return run.results, steps, level
