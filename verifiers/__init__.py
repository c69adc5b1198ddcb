"""Measurement layer (docs/architecture.md): Monte Carlo errors with CIs, trainer, falsifier.

Imports ``workbench.core`` and ``constructions`` only, never ``workbench.commands``/``proofs``.
"""

from workbench.core.intervals import Estimate
from workbench.core.montecarlo import estimate_mean
from workbench.verifiers.estimate import estimate_error
from workbench.verifiers.falsify import Attempt, Domain, FalsifyReport, falsify, replay
from workbench.verifiers.tasks import Task
from workbench.verifiers.train import ModelResult, ModelSpec, TrainConfig, TrainRun, train

__all__ = [
    "Attempt", "Domain", "Estimate", "FalsifyReport", "ModelResult", "ModelSpec", "Task",
    "TrainConfig", "TrainRun", "estimate_error", "estimate_mean", "falsify", "replay", "train",
]
