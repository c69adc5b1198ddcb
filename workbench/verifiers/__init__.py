"""Measurement layer (docs/architecture.md): Monte Carlo errors with CIs, trainer, falsifier.

Never imports ``workbench.commands`` or ``workbench.proofs``.
The names below are imported on first use, so that importing a torch-free submodule (the results
store, the presets' descriptions) does not import torch.

Layering: imports workbench.core, workbench.native, workbench.models, workbench.constructions.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOME = {
    "Estimate": "workbench.core.intervals", "estimate_mean": "workbench.core.montecarlo",
    "estimate_error": "workbench.verifiers.estimate", "Attempt": "workbench.verifiers.falsify",
    "Domain": "workbench.verifiers.falsify", "FalsifyReport": "workbench.verifiers.falsify",
    "falsify": "workbench.verifiers.falsify", "replay": "workbench.verifiers.falsify",
    "Task": "workbench.verifiers.tasks", "ModelResult": "workbench.verifiers.train",
    "ModelSpec": "workbench.verifiers.train", "TrainConfig": "workbench.verifiers.train",
    "TrainRun": "workbench.verifiers.train", "train": "workbench.verifiers.train",
}
__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)
