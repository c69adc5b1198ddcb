"""Sympy encodings of the paper's targets and bounds (docs/paper.md §3-5; docs/architecture.md).

Named symbols ``d, r, H, N, eps, L, beta`` (plus ``gap``, ``V``, ``err``) live in
:mod:`.symbols` with their domains; every bound is a :class:`~.bounds.Bound` offering
``evaluate(**params)``, ``solve_for(symbol)`` and ``latex()``.
"""

from workbench.core.symbolic.bounds import ALL_BOUNDS, Bound, get_bound
from workbench.core.symbolic.laws import numeric_rhs, power_exponent
from workbench.core.symbolic.symbols import DOMAINS, H, L, N, beta, d, eps, gap, r
from workbench.core.symbolic.targets import (
    nn2_biased,
    nn2_sign,
    nn2_soft,
    nn2_soft_biased,
    softmax_head,
    vector_symbols,
)

__all__ = [
    "ALL_BOUNDS", "Bound", "get_bound", "DOMAINS", "H", "L", "N", "beta", "d", "eps", "gap",
    "r", "numeric_rhs", "power_exponent", "nn2_biased", "nn2_sign", "nn2_soft",
    "nn2_soft_biased", "softmax_head", "vector_symbols",
]
