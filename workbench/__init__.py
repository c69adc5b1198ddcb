"""Symbolic-numeric proof-checking workbench for rank and heads in attention layers.

Built around Amsel, Yehudai and Bruna, *On the Benefits of Rank in Attention Layers*
(ICLR 2025: *Quality over Quantity in Attention Layers*).
"""

__version__ = "0.1.0"
__all__ = ["__version__"]

# The built-in bounds, constructions and presets join the registry (workbench.plugins), which
# imports none of them: registering is cheap, and each object imports its mathematics when used.
from workbench.plugins import builtin as _builtin_plugins  # noqa: E402, F401
