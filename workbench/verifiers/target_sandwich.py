"""The sandwich for a target other than hardmax (docs/derivations/soft_targets.md, "Evidence
against models"): the harmonic count of the target's profile below, the best explicit model
found above, N = 2 on D_2.

Witnesses: the *midpoint* model ``A = (x1 + x2)/2`` (error ``E psi^2 / 2`` exactly, from the
profile's energy enclosure); the *one-head Bayes* witness (one head of key-rank ``r``, ``M = I``,
score ``E[psi(<y,w>) | P w, y]``; its exact error, ``workbench.constructions.profile_one_head``,
docs/derivations/witnesses_beyond_two.md); Eq. 2 layers (generalized attention, dot scores, full
value maps) trained on the target by the workbench trainer, scored on fresh held-out samples
with a normal CI; and the record's best trained witness for the target at ``(d, r' <= r,
H' <= H)`` (``record``), with the command that replays it. Names are resolved by the caller:
this layer never imports ``workbench.plugins``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.constructions.profile_one_head import profile_one_head_error
from workbench.constructions.witness_setting import Setting
from workbench.core.bounds.profiles.profile_energy import profile_energies
from workbench.core.profiles import Profile
from workbench.core.validation import check_int
from workbench.verifiers.tasks import TargetTask
from workbench.verifiers.witness_record import Entry, lookup

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
        return min(self.candidates, key=lambda c: c.ci[1])

    @property
    def ratio(self) -> float | None:
        return self.best.error / self.bound if self.bound > 0 else None

    @property
    def violated(self) -> bool:
        return self.bound_rigorous and any(c.ci[1] < self.bound for c in self.candidates)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(best=asdict(self.best), ratio=self.ratio, violated=self.violated,
                   best_source="record" if self.best.method.startswith("record:")
                   else "computed")
        return out


def _setting(task: TargetTask) -> Setting | None:
    """The record's setting of the task's target (soft-nearest at finite beta), else None."""
    beta = dict(task.target_params).get("beta")
    if task.target != "soft-nearest" or beta is None or math.isinf(float(beta)):
        return None
    return Setting(2, "soft-nearest", (("beta", float(beta)),))


def target_sandwich(
    task: TargetTask, profile: Profile, r: int, H: int, bound: float, bound_rigorous: bool, *,
    steps: int = 400, seeds: int = 2, lr: float = 0.02, batch: int = 512,
    eval_samples: int = 20_000, level: float = 0.999, device: str = "cpu", seed: int = 0,
    record: Sequence[Entry] = (),
) -> TargetSandwich:
    """Bound and witnesses at ``(task.d, r, H)`` for the target of ``task`` (N = 2, D_2);
    ``record``: the known witnesses, the best of them for this target a candidate."""
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
    if r < task.d:
        one = profile_one_head_error(profile, task.d, r)
        cands.append(Candidate("one_head_bayes", one.value, one.enclosure,
                               f"one head, M = I, Bayes score: 1/2 (E psi^2 - sum_l eta_l^2 "
                               f"C(l+r-1,r-1)/N(d,l)), degrees <= {one.degrees_summed}, "
                               + ("exact" if one.rigorous else "quadrature energies")))
    setting = _setting(task)
    known = None if setting is None else lookup(record, task.d, r, H, setting)
    if known is not None:
        beta = dict(task.target_params)["beta"]
        cands.append(Candidate(f"record:{known.method}", known.error, known.ci,
                               f"the record's witness at (d, r, H) = {known.point}; replay: "
                               f"workbench witness verify {task.d},{r},{H} --target "
                               f"soft-nearest --target-param beta={beta:g}"))
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
