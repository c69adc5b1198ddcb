"""Bad ``(d, r, H)`` arguments, shared by the tests of everything built from H heads of rank r
in R^d: each must be refused with an error that names the parameter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def bad_layer_arguments(make: Callable[[int, int, int], Any], d: int,
                        r: int) -> list[tuple[Callable[[], Any], str]]:
    """``(call, name)`` pairs: ``make(d, r, H)`` with ``d = 1``, ``r = 0``, ``r = d + 1`` or
    ``H = 0`` (the other arguments valid: ``d``, ``r``, one head), and the parameter named."""
    return [
        (lambda: make(1, 1, 1), "d"),
        (lambda: make(d, 0, 1), "r"),
        (lambda: make(d, d + 1, 1), "r"),
        (lambda: make(d, r, 0), "H"),
    ]
