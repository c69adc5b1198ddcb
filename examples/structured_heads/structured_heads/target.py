"""A target of the worked plug-in (docs/extending.md, "Adding a target"): the algebraic smooth
sign ``psi_k(t) = t / sqrt(1/k^2 + t^2)``, odd with ``|psi_k| < 1``, sharper as k grows (k -> inf
is hardmax). Its sympy form makes its harmonic count certified."""

from __future__ import annotations

from typing import Any

import numpy as np


def soft_sign(t: np.ndarray, k: float = 4.0) -> np.ndarray:
    """x / sqrt(1/k^2 + x^2) at x = t: a smooth sign of width 1/k."""
    t = np.asarray(t, dtype=float)
    return t / np.sqrt(1.0 / k**2 + t * t)


def _sympy_form(t: Any, k: float = 4.0) -> Any:
    import sympy as sp

    return t / sp.sqrt(1 / sp.Float(k) ** 2 + t**2)


soft_sign.sympy = _sympy_form  # type: ignore[attr-defined]
