"""Measurement layer (docs/architecture.md): Monte Carlo errors with CIs, trainer, falsifier.

Imports ``workbench.core`` and ``constructions`` only, never ``workbench.commands``/``proofs``.
"""

from verifiers.estimate import Estimate, estimate_error, estimate_mean
from verifiers.falsify import Attempt, Domain, FalsifyReport, falsify, replay
from verifiers.tasks import Task
from verifiers.train import ModelResult, ModelSpec, TrainConfig, TrainRun, train

__all__ = [
    "Attempt", "Domain", "Estimate", "FalsifyReport", "ModelResult", "ModelSpec", "Task",
    "TrainConfig", "TrainRun", "estimate_error", "estimate_mean", "falsify", "replay", "train",
]
