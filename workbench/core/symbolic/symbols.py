"""Named sympy symbols of the workbench and their domains (docs/architecture.md, core/symbolic)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import SupportsInt, cast

import sympy as sp

d = sp.Symbol("d", integer=True, positive=True)  # ambient dimension
r = sp.Symbol("r", integer=True, positive=True)  # key rank of a head
H = sp.Symbol("H", integer=True, positive=True)  # number of heads
N = sp.Symbol("N", integer=True, positive=True)  # number of keys
L = sp.Symbol("L", integer=True, positive=True)  # number of layers
eps = sp.Symbol("eps", positive=True)  # target error
beta = sp.Symbol("beta", nonnegative=True)  # inverse temperature
gap = sp.Symbol("gap", positive=True)  # top-1 minus top-2 inner product
V = sp.Symbol("V", positive=True)  # bound on the value-weight norms max_h ||V_h|| (Thm 3)
err = sp.Symbol("err", nonnegative=True)  # squared error E||f - A||^2

# symbol -> (sympy set, text). r in 1..d is checked jointly in ``check_params``.
DOMAINS: dict[sp.Symbol, tuple[sp.Set, str]] = {
    d: (sp.Range(2, sp.oo), "an integer >= 2"),
    r: (sp.Range(1, sp.oo), "an integer in 1..d"),
    H: (sp.Range(1, sp.oo), "an integer >= 1"),
    N: (sp.Range(1, sp.oo), "an integer >= 1"),
    L: (sp.Range(1, sp.oo), "an integer >= 1"),
    eps: (sp.Interval.Lopen(0, 1), "a number in (0, 1]"),
    beta: (sp.Interval(0, sp.oo), "a finite number >= 0"),
    gap: (sp.Interval.Lopen(0, 2), "a number in (0, 2]"),
    V: (sp.Interval.open(0, sp.oo), "a finite number > 0"),
    err: (sp.Interval(0, sp.oo), "a finite number >= 0"),
}


def check_params(values: Mapping[sp.Symbol, object]) -> dict[sp.Symbol, sp.Expr]:
    """Validate numeric values against DOMAINS; raise ValueError naming the parameter."""
    out: dict[sp.Symbol, sp.Expr] = {}
    for sym, val in values.items():
        if isinstance(val, bool) or not isinstance(val, numbers.Real) or not math.isfinite(val):
            raise ValueError(f"{sym} must be a finite real number (got {val!r})")
        if sym in DOMAINS:
            dom, text = DOMAINS[sym]
            if sym.is_integer and int(cast(SupportsInt, val)) != val:
                raise ValueError(f"{sym} must be {text} (got {val!r})")
            if sp.nsimplify(val) not in dom:
                raise ValueError(f"{sym} must be {text} (got {val!r})")
        out[sym] = sp.Integer(int(cast(SupportsInt, val))) if sym.is_integer else sp.Float(val, 30)
    if r in out and d in out and out[r] > out[d]:
        raise ValueError(f"r must be an integer in 1..d = 1..{out[d]} (got {out[r]})")
    return out
