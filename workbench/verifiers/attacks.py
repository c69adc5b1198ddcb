"""The falsifier's attacks by name (``workbench.verifiers.falsify``), in a module that imports
nothing, so that ``workbench falsify`` offers and checks them before torch is imported.

``train``: standard rank-r multi-head attention trained by gradient; ``generalized``: Eq. 2
heads with full value maps and MLP scores, trained; ``random_features``: random rank-1 hardmax
heads with least-squares values (N = 2, r = 1 only).
"""

from __future__ import annotations

ATTACKS: tuple[str, ...] = ("train", "generalized", "random_features")
# Eq. 2 models with full value maps and learned (MLP) scores first: the class the bounds cover
DEFAULT_ATTACKS: tuple[str, ...] = ("generalized", "train")
