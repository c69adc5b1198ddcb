"""The one truncation rule for the series bounds (docs/derivations/lower_bound.md, Lemma 6,
"The truncation rule").

A series bound sums its degrees up to some L and encloses the rest: its evaluation at L gives an
enclosure ``[lower, upper]`` of the *full* series. The rule: raise L along a fixed schedule
(``start``, then ``growth * L + 1``, up to a cost cap) until the truncation is *settled*:

- for a value (``bounds lower``): the printed digits, ``upper - lower`` at most half a unit in
  the last of the ``PRINTED_DIGITS`` significant digits of ``lower`` (:func:`digits_settled`);
- for a question ``bound > eps`` (``heads-needed``): ``lower > eps`` or ``upper <= eps``
  (:func:`question_settled`).

Where the cap is reached first the truncation *matters*: the result says so
(``Truncation.settled`` false) and names the flag that lifts it (``--max-degree``). Every series
bound (the harmonic count for hardmax and for any profile, and any bound that follows) calls
:func:`settle_degrees` and reports :class:`~workbench.core.bounds.value.Truncation`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

from workbench.core.bounds.value import Truncation

__all__ = ["PRINTED_DIGITS", "DEGREE_FLAG", "digits_tolerance", "digits_settled",
           "question_settled", "settle_degrees", "truncation_of"]

PRINTED_DIGITS = 6  # significant digits a command prints of a bound
DEGREE_FLAG = "--max-degree"  # the option that sets the truncation by hand

T = TypeVar("T")


def digits_tolerance(value: float, digits: int = PRINTED_DIGITS) -> float:
    """Half a unit in the last of ``digits`` significant digits of ``value`` (0 for 0: a zero
    is settled only by an exact zero)."""
    if value == 0 or not math.isfinite(value):
        return 0.0
    return 0.5 * 10.0 ** (math.floor(math.log10(abs(value))) - digits + 1)


def digits_settled(lower: float, upper: float, digits: int = PRINTED_DIGITS) -> bool:
    """Whether the full series, somewhere in ``[lower, upper]``, agrees with ``lower`` to its
    printed digits (within half a unit of the last one)."""
    return upper - lower <= digits_tolerance(lower, digits)


def question_settled(lower: float, upper: float, eps: float) -> bool:
    """Whether ``[lower, upper]`` answers ``bound > eps`` (``lower > eps``: yes; ``upper <=
    eps``: no)."""
    return lower > eps or upper <= eps


def settle_degrees(evaluate: Callable[[int], T], settled: Callable[[T], bool], start: int,
                   cap: int, growth: int = 4,
                   next_degree: Callable[[int, T], int] | None = None) -> tuple[int, T, bool]:
    """The truncation rule: ``evaluate(L)`` at ``L = start, growth L + 1, ...`` (odd), never
    above ``max(start, cap)``, until ``settled``; returns ``(L, evaluate(L), settled)``.

    A bound that can predict from ``evaluate(L)`` the degree its tail needs (an exact tail
    factor) passes ``next_degree(L, res)``: the next L is then that prediction, kept within
    ``[L + 2, growth L + 1]``, so the schedule stays this one rule, only shorter."""
    L = start
    while True:
        res = evaluate(L)
        ok = settled(res)
        if ok or L >= cap:
            return L, res, ok
        step = growth * L + 1
        if next_degree is not None:
            step = max(L + 2, min(step, next_degree(L, res)))
        nxt = min(step, cap)
        nxt = nxt if nxt % 2 == 1 else nxt - 1
        if nxt <= L:  # an even cap: its odd degree below was the last one
            return L, res, ok
        L = nxt


def truncation_of(degrees_summed: int, tail: float, settled: bool) -> Truncation:
    """The :class:`Truncation` a series part reports (its flag: ``--max-degree``)."""
    return Truncation(degrees_summed, float(tail), bool(settled), DEGREE_FLAG)
