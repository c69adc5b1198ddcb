"""A conjectured bound that imports torch when its module loads."""

from __future__ import annotations

import torch

from workbench.plugins import Bound


def _half_of_the_rest(d: int, rank: int, heads: int, N: int) -> float:
    """Half the share of directions a head's keys miss: a guess, not a theorem."""
    return float(torch.tensor(0.5 * (1.0 - rank / d)))


HALF = Bound("every-kind-half", _half_of_the_rest, status="conjectured", law="any",
             value_class="unspecified", N=None, source="every_kind",
             description="a test plug-in's conjectured bound (imports torch)")
