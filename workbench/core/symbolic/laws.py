"""Numbers a claim reads off a sympy encoding rather than writing them as literals
(docs/derivations/regimes.md; docs/derivations/constructions.md, Theorem 5's heuristic).

- :func:`power_exponent`: the exponent ``p`` of a power law ``expr ∝ symbol^p`` (``p = symbol
  d log expr / d symbol``, which must not depend on any symbol);
- :func:`numeric_rhs`: a bound's right-hand side as a numpy function of named symbols.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import sympy as sp

from workbench.core.symbolic.bounds import get_bound


def power_exponent(expr: sp.Expr, symbol: sp.Symbol) -> sp.Expr:
    """``p`` with ``expr = C symbol^p`` (``C`` free of ``symbol``); ``ValueError`` otherwise."""
    if symbol not in expr.free_symbols:
        raise ValueError(f"{expr} does not depend on {symbol}")
    p = sp.simplify(symbol * sp.diff(sp.log(expr), symbol))
    if p.free_symbols:
        raise ValueError(f"{expr} is not a power law in {symbol} (local exponent {p})")
    return p


def numeric_rhs(bound_id: str, symbols: Sequence[sp.Symbol]) -> Callable[..., np.ndarray]:
    """The right-hand side of the encoding ``bound_id`` as a numpy function of ``symbols`` (in
    that order); every free symbol of the right-hand side must be among them."""
    rhs = get_bound(bound_id).rhs
    missing = rhs.free_symbols - set(symbols)
    if missing:
        raise ValueError(f"{bound_id} also needs {sorted(map(str, missing))}")
    return sp.lambdify(tuple(symbols), rhs, "numpy")
