"""The multi-level bound M_N for long contexts, ``3 <= N <= d`` on D_N (the statement:
docs/derivations/long_contexts.md; its evaluation: docs/derivations/long_contexts_evaluation.md).

With levels ``2 = k_0 < ... < k_J`` (every k with ``n_k = d - k + 1 >= 3``, :func:`levels`), the
increments ``Delta_j t`` are orthogonal and, per degree, ``err >= (N-1)/2 sum_j sum_l
Gamma_l^(j) (1 - m_l^(j))``, ``m_l^(j) = min(1, H D_l / N(n_{k_j}, l))``. Two parts:

- ``multi-level`` (rigorous, exact rationals): each level loses at least ``(1 - mu_j)
  ||Delta_j t||^2``, ``mu_j = max_l m_l^(j)`` (exact for ``l <= L``, the counted tail ``tau_L``
  above); with ``c_j`` the running minimum of ``1 - mu_j`` (non-increasing, a valid smaller
  weight), Abel summation needs only lower bounds on the cumulative energies ``A_k >= 2/(2N-k)``
  (:func:`~.multi_level_energy.cumulative_energy_lower`):
  ``sum_j c_j ||Delta_j t||^2 = sum_{j<J} (c_j - c_{j+1}) A_{k_j} + c_J A_{k_J}``.
- ``multi-level estimate`` (statistical): degrees >= 3 as above with ``nu_j = max_{l>=3} m_l``,
  degree 1 by ``Gamma_1^(j)``'s one-sided empirical Bernstein limit at total level 99.95 %
  (:func:`~.multi_level_energy.degree_one_estimate`, fixed seeds, from the shipped table
  ``multi_level_table.json`` or computed on the spot for small d):
  ``loss_j >= (1 - nu_j) ||Delta_j t||^2 - (m_1^(j) - nu_j)^+ Gamma_1^(j)``, or the rigorous
  part's ``(1 - mu_j) ||Delta_j t||^2`` where that is larger (chosen per level).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Any

from workbench.core import rigorous as rig
from workbench.core.bounds import EQ2, VALUE_CLASSES
from workbench.core.bounds.numerics.truncation import truncation_of
from workbench.core.bounds.sequence_length.multi_level_energy import (
    DegreeOneEstimate,
    cumulative_energy_lower,
    degree_one_estimate,
)
from workbench.core.bounds.sequence_length.multi_level_law import (
    level_degree_count,
    level_fiber_dim,
    linear_forms,
)
from workbench.core.bounds.value import MULTI_LEVEL, MULTI_LEVEL_ESTIMATE, BoundValue, Part
from workbench.core.harmonics import dim_harmonics
from workbench.core.validation import check_choice, check_int, check_layer

__all__ = ["NAME", "DEFAULT_DEGREE", "DELTA", "covered", "level_capture", "levels",
           "multi_level_bound", "rigorous_value"]

NAME = "multi-level"
DEFAULT_DEGREE = 21  # odd degrees whose m_l are computed exactly; a counted bound above
MAX_DEGREE = 201
DELTA = 5e-4  # the estimate's total error probability (Bonferroni over the levels)
ON_THE_SPOT_D = 5  # the estimate is computed on the spot up to this d (else: the table)
ON_THE_SPOT_SAMPLES = 2000
TABLE = "multi_level_table.json"


def covered(d: int, N: int) -> str | None:
    """Why ``(d, N)`` is outside the bound (``3 <= N <= d``, ``d >= 5``), or ``None``."""
    if N < 3:
        return f"N must lie in [3, d] for {NAME} (got {N}; N = 2 has its own bounds)"
    if N > d:
        return f"N must lie in [3, d] = [3, {d}] for {NAME} (got {N}): D_N needs N <= d"
    if d < 5:
        return f"d must be >= 5 for {NAME} (got {d})"
    return None


def _check(d: int, r: int, H: int, N: int) -> tuple[int, int, int, int]:
    d, r, H = check_layer(d, r, H)
    N = check_int("N", N, lo=1)
    why = covered(d, N)
    if why is not None:
        raise ValueError(why)
    return d, r, H, N


def levels(d: int, r: int, H: int, N: int) -> tuple[int, ...]:
    """The levels: every ``2 <= k <= N`` whose fiber has dimension ``n_k >= 3`` (those with
    ``n_k <= 2`` are dropped, which is what reaches N = d - 1 and N = d)."""
    d, r, H, N = _check(d, r, H, N)
    return tuple(range(2, min(N, d - 2) + 1))


def _inv(r: int, j: int) -> int:
    return math.comb(j + r - 1, r - 1) if j >= 0 else 0


def _tail(d: int, r: int, H: int, N: int, k: int, L: int, value_class: str) -> Fraction:
    """``tau_L >= m_l`` for every odd ``l > L`` at level k: ``D_l <= (3A + 2B) I(l+2)``,
    ``N(n, l) >= C(l+n-3, n-2)``, and their ratio does not increase in l for ``r <= n - 1``."""
    n = level_fiber_dim(d, k)
    if r > n - 1:
        return Fraction(1)
    a, b = (1, linear_forms(d, r, N, k)) if value_class == EQ2 else (n * (n + 1) // 2, n)
    return min(Fraction(1), Fraction(H * (3 * a + 2 * b) * _inv(r, L + 4),
                                     math.comb(L + n - 1, n - 2)))


def level_capture(d: int, r: int, H: int, N: int, k: int, L: int = DEFAULT_DEGREE,
                  value_class: str = EQ2) -> tuple[Fraction, Fraction]:
    """``(m_1, nu)`` at level k: the share of degree 1 a layer may capture, and a number
    ``>= m_l`` for every odd ``l >= 3`` (exact for ``l <= L``, ``tau_L`` above)."""
    d, r, H, N = _check(d, r, H, N)
    n = level_fiber_dim(d, k)

    def m(l: int) -> Fraction:
        return min(Fraction(1), Fraction(H * level_degree_count(d, r, N, k, l, value_class),
                                         dim_harmonics(n, l)))

    nu = _tail(d, r, H, N, k, L, value_class)
    for l in range(3, L + 1, 2):
        nu = max(nu, m(l))
    return m(1), nu


def _abel(N: int, ks: tuple[int, ...], weights: list[Fraction], d: int) -> Fraction:
    """``sum_j c_j ||Delta_j t||^2 >=`` its value with the cumulative energies at their lower
    bounds (``c_j`` made non-increasing and >= 0 by a running minimum)."""
    c: list[Fraction] = []
    for w in weights:
        c.append(max(Fraction(0), min([w, *c[-1:]])))
    total = c[-1] * cumulative_energy_lower(d, N, ks[-1])
    for j in range(len(ks) - 1):
        total += (c[j] - c[j + 1]) * cumulative_energy_lower(d, N, ks[j])
    return total


def rigorous_value(d: int, r: int, H: int, N: int, value_class: str = EQ2,
                   max_degree: int = DEFAULT_DEGREE) -> Fraction:
    """The rigorous part's number, an exact rational (module docstring)."""
    ks = levels(d, r, H, N)
    mus = [max(level_capture(d, r, H, N, k, max_degree, value_class)) for k in ks]
    return Fraction(N - 1, 2) * _abel(N, ks, [1 - mu for mu in mus], d)


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    text = resources.files("workbench.core.bounds.sequence_length").joinpath(TABLE).read_text()
    return dict(json.loads(text)["levels"])


def _degree_one(d: int, N: int, ks: tuple[int, ...]) -> list[DegreeOneEstimate] | None:
    """``Gamma_1`` of every increment: from the table, else on the spot for ``d <=
    ON_THE_SPOT_D``, else ``None``."""
    rows = _table().get(f"{d},{N}")
    if rows is not None and [row["k"] for row in rows] == list(ks):
        return [DegreeOneEstimate(row["mean"], row["var"], row["samples"], row["range"])
                for row in rows]
    if d > ON_THE_SPOT_D:
        return None
    return [degree_one_estimate(d, N, k, ks[j - 1] if j else None, ON_THE_SPOT_SAMPLES,
                                seed=1000 * d + k) for j, k in enumerate(ks)]


def _jensen_increment(d: int, N: int, ks: tuple[int, ...], j: int) -> Fraction:
    """A proxy for ``||Delta_j t||^2`` (differences of the Jensen bounds), used only to choose
    how each level is counted (either choice is a valid bound)."""
    below = cumulative_energy_lower(d, N, ks[j - 1]) if j else Fraction(0)
    return cumulative_energy_lower(d, N, ks[j]) - below


def _estimate(d: int, r: int, H: int, N: int, value_class: str, L: int,
              ks: tuple[int, ...]) -> Part | None:
    ests = _degree_one(d, N, ks)
    if ests is None:
        return None
    caps = [level_capture(d, r, H, N, k, L, value_class) for k in ks]
    delta = DELTA / len(ks)
    weights, lost = [], 0.0
    for j, ((m1, nu), e) in enumerate(zip(caps, ests)):
        penalty = max(0.0, float(m1 - nu)) * e.upper(delta)
        gain = float(max(m1, nu) - nu) * float(_jensen_increment(d, N, ks, j))
        if penalty < gain:  # degree 1 by its limit; else the level as in the rigorous part
            weights.append(1 - nu)
            lost += penalty
        else:
            weights.append(1 - max(m1, nu))
    value = float(Fraction(N - 1, 2) * _abel(N, ks, weights, d)) - (N - 1) / 2 * lost
    method = (f"levels {ks[0]}..{ks[-1]}: degrees >= 3 counted exactly, level energies by "
              f"Jensen (2/(2N-k)); Gamma_1 per level a one-sided empirical Bernstein limit "
              f"(Monte Carlo over the scalars, Gauss-Legendre in c, fixed seeds), total level "
              f"{1 - DELTA:.2%}: a statistical number, not certified")
    # the rigorous part's number is also a valid lower end: never report less
    value = max(0.0, value, float(rigorous_value(d, r, H, N, value_class, L)))
    return MULTI_LEVEL_ESTIMATE.at((value, value), method, truncation_of(L, 0.0, True))


def multi_level_bound(d: int, r: int, H: int, N: int, value_class: str = EQ2, *,
                      max_degree: int | None = None) -> BoundValue:
    """M_N at ``(d, r, H, N)``: the rigorous part ``multi-level`` and, where ``Gamma_1`` is
    available (table or small d), the statistical part ``multi-level estimate`` (module
    docstring). ``value_class="query-dependent-values"`` counts every quadratic and linear form
    of w per head (the space no longer depends on the query only through its union)."""
    d, r, H, N = _check(d, r, H, N)
    value_class = check_choice("value_class", value_class, VALUE_CLASSES)
    L = DEFAULT_DEGREE if max_degree is None else check_int("max_degree", max_degree, lo=1,
                                                               hi=MAX_DEGREE)
    L = L if L % 2 else L - 1
    ks = levels(d, r, H, N)
    exact = rigorous_value(d, r, H, N, value_class, L)
    with rig.precision(128):
        ball = rig.arb(exact.numerator) / rig.arb(exact.denominator)
        lo, hi = rig.to_interval(ball)
    method = (f"exact rationals: levels {ks[0]}..{ks[-1]}, each losing (1 - max_l m_l) of its "
              f"energy (degrees <= {L} exact, above counted), cumulative energies >= 2/(2N-k) "
              f"(Jensen)")
    parts = [MULTI_LEVEL.at((max(0.0, lo), max(0.0, hi)), method, truncation_of(L, 0.0, True))]
    est = _estimate(d, r, H, N, value_class, L, ks)
    if est is not None:
        parts.append(est)
    return BoundValue(parts=tuple(parts))
