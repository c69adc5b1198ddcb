"""One Eq. 2 layer trained on the soft-nearest target (docs/derivations/soft_targets.md): the
held-out error the soft-target claims compare with their bounds (the harmonic count on
orthonormal keys, the i.i.d. mixture bound on i.i.d. keys)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.core.intervals import Estimate


def soft_nearest_heldout(d: int, r: int, H: int, beta: float, points: str, *, seed: int,
                         steps: int, eval_seed: int) -> Estimate:
    """Held-out error (99.9 % CLT interval on 20,000 fresh samples) of an Eq. 2 layer (dot
    scores of key-rank ``r``, ``H`` heads, full value maps) trained ``steps`` steps on the
    soft-nearest target of inverse temperature ``beta`` over N = 2 keys drawn by ``points``."""
    from workbench.core.targets import soft_nearest_neighbour
    from workbench.verifiers.tasks import TargetTask
    from workbench.verifiers.train import ModelSpec, TrainConfig, train

    cfg = TrainConfig(steps=steps, batch=512, eval_samples=20_000, level=0.999,
                      eval_seed=eval_seed)
    task = TargetTask("nearest", d=d, N=2, points=points, target="soft-nearest",
                      target_params=(("beta", beta),),
                      fn=lambda X, y: soft_nearest_neighbour(X, y, beta))
    spec = ModelSpec("generalized", r, H, seed=seed, lr=0.02, options={"score": "dot"})
    est = train([spec], task, cfg).results[0].heldout
    assert est is not None
    return est
