"""Theorem 2's two regimes as log-linear laws (docs/paper.md §3; docs/derivations/regimes.md).

Taking logarithms of the sympy encodings ``thm2.high_dimensional`` and ``thm2.high_accuracy``
(:mod:`.bounds`) gives laws linear in one regressor each:

    log H >= log c_2a + c_2b * (1/eps) * log(d/r)        (high-dimensional regime)
    log H >= log c_2c + c_2d * (d - r * log(d/r))        (high-accuracy regime)

``regressor(bound_id)`` extracts that regressor from the encoding (so a change to the encoding
changes what the claims fit), and ``regressor_values`` evaluates it on a grid. ``stated_form_match``
compares the encoding's law with the paper's stated one (``Bound.stated_law``): the data of the
harmonic count cannot tell ``1/eps`` from ``1/eps^2`` (docs/derivations/regimes.md), the paper's
statement can.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sp

from workbench.core.symbolic.bounds import get_bound
from workbench.core.symbolic.symbols import d, eps, r

REGIMES: tuple[str, ...] = ("thm2.high_dimensional", "thm2.high_accuracy")


def log_law(bound_id: str) -> tuple[sp.Expr, sp.Expr]:
    """``(intercept, slope * regressor)`` of ``log rhs`` for a Theorem 2 regime bound."""
    return _log_law(get_bound(_check_regime(bound_id)).rhs)


def _check_regime(bound_id: str) -> str:
    if bound_id not in REGIMES:
        raise ValueError(f"bound_id must be one of {REGIMES} (got {bound_id!r})")
    return bound_id


@lru_cache(maxsize=16)
def _log_law(rhs: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """Memoised on the encoding's expression itself (simplify costs a few tenths of a second):
    an encoding that changes is a new key."""
    logged = sp.expand_log(sp.log(rhs), force=True)
    const = sum((t for t in sp.Add.make_args(logged) if not t.free_symbols & {d, r, eps}),
                sp.Integer(0))
    return const, sp.simplify(logged - const)


def regressor(bound_id: str) -> sp.Expr:
    """The regressor ``x(d, r, eps)`` of a regime: ``log rhs = const + c * x``."""
    b = get_bound(_check_regime(bound_id))
    return _regressor(b.rhs, frozenset(b.constants), bound_id)


@lru_cache(maxsize=16)
def _regressor(rhs: sp.Expr, constants: frozenset[sp.Symbol], bound_id: str) -> sp.Expr:
    _, varying = _log_law(rhs)
    unknown = [s for s in varying.free_symbols if s in constants]
    if len(unknown) != 1:
        raise ValueError(f"{bound_id}: expected one unknown slope constant, got {unknown}")
    x = sp.simplify(varying / unknown[0])
    if x.free_symbols & constants:
        raise ValueError(f"{bound_id}: the law is not linear in its slope constant")
    return x


def regressor_values(
    bound_id: str, ds: Sequence[int], rs: Sequence[int], epss: Sequence[float]
) -> np.ndarray:
    """``x(d_i, r_i, eps_i)`` in float64 for aligned sequences."""
    if not len(ds) == len(rs) == len(epss):
        raise ValueError("ds, rs and epss must have equal lengths")
    f = sp.lambdify((d, r, eps), regressor(bound_id), "numpy")
    out = [float(f(float(a), float(b), float(c))) for a, b, c in zip(ds, rs, epss)]
    return np.asarray(out, dtype=np.float64)


@dataclass(frozen=True)
class FormMatch:
    """The encoding's law against the paper's: ``log rhs = const + factor * log(stated)``."""

    encoded: sp.Expr  # log rhs less its constant term
    stated: sp.Expr  # log of the stated law
    factor: sp.Expr  # encoded / stated, simplified

    @property
    def depends_on(self) -> tuple[str, ...]:
        """The symbols among d, r, eps the factor depends on: none when the laws agree."""
        return tuple(sorted(s.name for s in self.factor.free_symbols & {d, r, eps}))

    @property
    def positive(self) -> bool:
        """Whether the factor is positive for every value of the unknown (positive) constants."""
        return bool(self.factor.is_positive)

    @property
    def matches(self) -> bool:
        return not self.depends_on and self.positive


def stated_form_match(bound_id: str) -> FormMatch:
    """The encoding of a Theorem 2 regime against the law the paper states (``Bound.stated_law``):
    they agree up to the unknown constants when ``log rhs = const + k log(stated)`` with ``k``
    a positive expression in the constants alone."""
    b = get_bound(_check_regime(bound_id))
    return _form_match(b.rhs, b.stated_law)


@lru_cache(maxsize=16)
def _form_match(rhs: sp.Expr, stated: sp.Expr) -> FormMatch:
    _, encoded = _log_law(rhs)
    _, law = _log_law(stated)
    return FormMatch(encoded, law, sp.simplify(encoded / law))
