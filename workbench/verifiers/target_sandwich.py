"""The sandwich for a target other than hardmax (docs/derivations/soft_targets.md, "Evidence
against models"): the harmonic count of the target's profile below, the best explicit model
found above, N = 2 on D_2.

Witnesses: the *midpoint* model ``A = (x1 + x2)/2`` (error ``E psi^2 / 2`` exactly, from the
profile's energy enclosure), and Eq. 2 layers (generalized attention, dot scores, full value
maps) trained on the target by the workbench trainer, scored on fresh held-out samples with a
normal CI. Names are resolved by the caller: this layer never imports ``workbench.plugins``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.core.bounds.profile_energy import profile_energies
from workbench.core.profiles import Profile
from workbench.core.validation import check_int
from workbench.verifiers.tasks import TargetTask

__all__ = ["Candidate", "TargetSandwich", "target_sandwich"]


@dataclass(frozen=True)
class Candidate:
    """One witness: its error, the interval, how it was obtained."""

    method: str
    error: float
    ci: tuple[float, float]
    note: str = ""


@dataclass(frozen=True)
class TargetSandwich:
    """``bound <= optimum <= best.ci[1]``; ``ratio = best.error / bound`` (None for a 0 bound);
    ``violated``: a witness's whole CI lies below a rigorous bound."""

    d: int
    r: int
    heads: int
    target: str
    bound: float
    bound_rigorous: bool
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def best(self) -> Candidate:
        return min(self.candidates, key=lambda c: c.error)

    @property
    def ratio(self) -> float | None:
        return self.best.error / self.bound if self.bound > 0 else None

    @property
    def violated(self) -> bool:
        return self.bound_rigorous and any(c.ci[1] < self.bound for c in self.candidates)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(best=asdict(self.best), ratio=self.ratio, violated=self.violated)
        return out


def target_sandwich(
    task: TargetTask, profile: Profile, r: int, H: int, bound: float, bound_rigorous: bool, *,
    steps: int = 400, seeds: int = 2, lr: float = 0.02, batch: int = 512,
    eval_samples: int = 20_000, level: float = 0.999, device: str = "cpu", seed: int = 0,
) -> TargetSandwich:
    """Bound and witnesses at ``(task.d, r, H)`` for the target of ``task`` (N = 2, D_2)."""
    if task.N != 2 or task.points != "orthonormal" or task.queries != "uniform":
        raise ValueError("the target sandwich needs N = 2 on D_2 (orthonormal keys, uniform "
                         f"queries; got N = {task.N}, {task.points} keys, {task.queries})")
    steps = check_int("steps", steps, lo=1)
    seeds = check_int("seeds", seeds, lo=0)
    from workbench.verifiers.train import ModelSpec, TrainConfig, train

    lo, hi = profile_energies(profile, task.d, 1).total
    cands = [Candidate("midpoint", hi / 2, (lo / 2, hi / 2),
                       "A = (x1 + x2)/2: error E psi^2/2, exact"
                       + ("" if profile.has_exact_form else " (quadrature)"))]
    if seeds:
        specs = [ModelSpec("generalized", r, H, seed=seed + s, lr=lr, options={"score": "dot"})
                 for s in range(seeds)]
        cfg = TrainConfig(steps=steps, batch=batch, eval_samples=eval_samples, level=level,
                          eval_seed=seed, device=device)
        for res in train(specs, task, cfg).results:
            est = res.heldout
            assert est is not None
            cands.append(Candidate("trained_generalized", est.mean, (est.lo, est.hi),
                                   f"Eq. 2 layer, {steps} steps, seed {res.spec.seed}"))
    return TargetSandwich(task.d, r, H, task.target, bound, bound_rigorous, cands)
