"""The soft-nearest bound on i.i.d. keys: a mixture over effective temperatures
(docs/derivations/soft_targets.md, step T and Lemma T1).

On i.i.d. uniform keys with ``t = <x1, x2>`` (density ``∝ (1 - t^2)^{(d-3)/2}``), every model
has ``err >= E_t[(1 - t) B(psi_{beta sqrt(1-t)})]``, ``B`` the D_2 bound of the profile
(:func:`~workbench.core.bounds.profiles.profile_fiber.profile_lower_bound`). The integral is bounded
below on a finite partition of ``t = sin(theta)``: on a cell, ``1 - t >= 1 - t_hi``, the
effective beta lies in ``[b_lo, b_hi]``, and ``B(psi_b) >= B(psi_b') - ||psi_b' - psi_b''||``
for the float ends ``b', b''`` around the cell, times ``||psi_b'||`` for the harmonic count
and the direct fiber part (Lemmas S6 and P5: ``|B(a) - B(b)| <= 1/2 ||a - b|| ||a + b||``;
``tanh`` grows with beta, so ``|psi_b - psi_b'| <= psi_b' - psi_b''`` pointwise).
Cells outside the central mass add 0 (a valid lower bound).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from workbench.core import rigorous as rig
from workbench.core.bounds import EQ2, VALUE_CLASSES
from workbench.core.bounds.fiber_bound.fiber_enclosure import sin_cos_integral
from workbench.core.bounds.profiles.profile_fiber import (
    DIRECT_FROM,
    FIBER_TOL,
    distance_to_sign,
    profile_distance,
    profile_lower_bound,
)
from workbench.core.bounds.profiles.profile_harmonic import profile_degree
from workbench.core.bounds.value import BoundValue, Part
from workbench.core.profiles import ZERO_PROFILE, Profile, tanh_profile
from workbench.core.validation import check_choice, check_float, check_int, check_layer

__all__ = ["CELLS", "ZERO_PROFILE", "CellRule", "bins_of", "cell_terms", "check_cell_args",
           "effective_temperature", "mixture_value", "soft_iid_bins", "soft_iid_bound", "t_mass",
           "tanh_cell", "weighted_mass"]

CELLS = 24  # cells of the central range of theta (t = sin theta)
TRUNCATION_SHARE = 0.02  # a cell's series stops where its tail is below this share of its drop
_EDGE = 1e-4  # the mass of t left out at each end (it adds 0)


def t_mass(d: int, lo: float, hi: float) -> Any:
    """``P(sin lo <= t <= sin hi)`` for ``t = <x1, x2>``: ``int cos^{d-2} / B(1/2, (d-1)/2)``."""
    return sin_cos_integral(0, d - 2, lo, hi) / rig.beta(rig.arb(1) / 2, rig.arb(d - 1) / 2)


def weighted_mass(d: int, lo: float, hi: float) -> Any:
    """``E[(1 - t) 1{sin lo <= t <= sin hi}]``: ``t_mass`` less ``int sin cos^{d-2} / B`` with
    ``int_lo^hi sin cos^q = (cos^{q+1} lo - cos^{q+1} hi)/(q + 1)``."""
    a, b = rig.arb(lo), rig.arb(hi)
    first = (a.cos() ** (d - 1) - b.cos() ** (d - 1)) / (d - 1)
    return t_mass(d, lo, hi) - first / rig.beta(rig.arb(1) / 2, rig.arb(d - 1) / 2)


def effective_temperature(beta: Any, t: Any) -> Any:
    """``beta sqrt(1 - t)``: the soft head's temperature on keys at ``<x1, x2> = t`` (step T)."""
    return beta * (1 - t).sqrt()


def _central_range(d: int) -> tuple[float, float]:
    """Float ``theta`` ends leaving at most ``_EDGE`` of the mass of t outside on each side
    (float bisection; only the split points depend on it, the masses are proved)."""
    lo, hi = 0.0, math.pi / 2
    for _ in range(50):
        mid = (lo + hi) / 2
        tail = float(t_mass(d, mid, math.pi / 2).mid())
        lo, hi = (lo, mid) if tail < _EDGE else (mid, hi)
    return -hi, hi


# One cell's reference: the D_2 bound of a reference profile, an upper bound ``gap`` of
# ``||psi_t - psi_ref||`` for every t of the cell, and an upper bound ``half_sum`` of
# ``||psi_t + psi_ref|| / 2``; and whether the bound is rigorous.
CellRule = Callable[[Any, Any], tuple[BoundValue, float, float]]


def _cell_degree(profile: Profile, d: int, drop: float) -> int | None:
    """The fiber part's degree for a cell: the least whose tail is below
    ``max(FIBER_TOL, TRUNCATION_SHARE drop)`` (so truncating costs the cell at most a fiftieth
    of what its width already costs, ``drop``), rounded up to ``2^k - 1`` or ``3 2^(k-1) - 1``
    so that the cells share a few kernel tables (more degrees only raise the bound, Lemma P4);
    None (the default rule) where the direct series is skipped."""
    if distance_to_sign(profile, d)[0] < DIRECT_FROM:
        return None
    share = TRUNCATION_SHARE * drop if math.isfinite(drop) else 0.0
    L = profile_degree(profile, d, max(FIBER_TOL, share))
    return next((x for x in (7, 11, 15, 23, 31, 47, 63, 95, 127, 151) if x >= L), L)


def tanh_cell(beta: float, d: int, r: int, H: int, value_class: str) -> CellRule:
    """Lemma T1's cell for soft-nearest: reference psi_mid at the midpoint ``b_mid`` of the
    cell's effective temperatures ``[b'', b']``. ``tanh`` grows with b, so for every b of the cell
    ``|psi_b - psi_mid| <= psi_b' - psi_mid`` (b >= b_mid) or ``psi_mid - psi_b''`` (b <= b_mid)
    pointwise on ``s >= 0``, and ``|psi_b| <= |psi_b'|``."""
    def rule(t_lo: Any, t_hi: Any) -> tuple[BoundValue, float, float]:
        b_small = max(rig.lower_float(effective_temperature(rig.arb(beta), t_hi)), 1e-300)
        b_big = rig.upper_float(effective_temperature(rig.arb(beta), t_lo))
        b_mid = (b_small + b_big) / 2
        big, mid = tanh_profile(b_big), tanh_profile(b_mid)
        gap = max(profile_distance(big, mid, d)[1],
                  profile_distance(mid, tanh_profile(b_small), d)[1])
        half_sum = (profile_distance(big, ZERO_PROFILE, d)[1]
                    + profile_distance(mid, ZERO_PROFILE, d)[1]) / 2
        degree = _cell_degree(mid, d, gap * half_sum)
        bv = profile_lower_bound(mid, d, r, H, value_class, max_degree=degree)
        return bv, gap, half_sum

    return rule


def cell_terms(rule: CellRule, d: int, cells: int
               ) -> tuple[list[tuple[float, float, Any, Any]], bool]:
    """Per cell ``[theta_lo, theta_hi]`` of the central range: its float ends, the ball
    ``P(cell)`` and the ball ``E[(1 - t) 1{cell}] max(0, B(psi_ref) - drop)``, a lower bound of
    ``int_cell (1 - t) B(psi_t) dP(t)`` (Lemma T1: the bracket bounds B on the whole cell, and
    ``1 - t >= 0``); and whether every B is rigorous. Each
    harmonic or direct fiber part drops by at most ``1/2 ||a - b|| ||a + b|| <= gap half_sum``
    (S6, P5), the hardmax route by ``gap`` (triangle inequality)."""
    a, b = _central_range(d)
    ends = [a + (b - a) * k / cells for k in range(cells + 1)]
    out, rigorous = [], True
    with rig.precision(128):
        for lo, hi in zip(ends, ends[1:]):
            t_lo, t_hi = rig.arb(lo).sin(), rig.arb(hi).sin()
            bv, gap, half_sum = rule(t_lo, t_hi)
            rigorous = rigorous and bv.rigorous and not math.isnan(gap + half_sum)
            at_cell = max((rig.arb(q.lower) - rig.arb(gap) * (
                1 if q.name == "fiber via hardmax" else rig.arb(half_sum)) for q in bv.parts),
                key=lambda x: float(x.lower()))
            mass = t_mass(d, lo, hi)
            term = weighted_mass(d, lo, hi) * at_cell if at_cell > 0 else rig.arb(0)
            out.append((lo, hi, mass, term))
    return out, rigorous


def check_cell_args(d: int, r: int, H: int, value_class: str, cells: int
                    ) -> tuple[int, int, int, str, int]:
    """The layer, value class and cell count of a mixture bound, validated."""
    d, r, H = check_layer(d, r, H)
    return (d, r, H, check_choice("value_class", value_class, VALUE_CLASSES),
            check_int("cells", cells, lo=1, hi=4096))


def _check_beta(beta: float) -> float:
    beta = check_float("beta", beta, lo=0.0, lo_open=True)
    if math.isinf(beta):
        raise ValueError("beta must be finite (beta = inf is hardmax: --target nearest)")
    return beta


def bins_of(terms: list[tuple[float, float, Any, Any]], bins: int
            ) -> list[tuple[float, float, float]]:
    """``(t_lo, t_hi, lower)`` per bin: ``bins`` runs of consecutive cells of about equal mass
    (only the cut points use floats), ``lower`` the bin's cell terms over the upper end of its
    mass: a proved lower bound of ``E[(1 - t) B(psi_t) | t in bin]``."""
    cells = len(terms)
    bins = check_int("bins", bins, lo=1, hi=cells)
    masses = [float(m.mid()) for _, _, m, _ in terms]
    cum = [sum(masses[:i + 1]) for i in range(cells)]
    cuts = [0]
    for k in range(1, bins):
        first = next(i for i in range(cells) if cum[i] >= k * cum[-1] / bins) + 1
        cuts.append(min(max(first, cuts[-1] + 1), cells - (bins - k)))
    cuts.append(cells)
    out = []
    with rig.precision(128):
        for k in range(bins):
            run = terms[cuts[k]:cuts[k + 1]]
            num, mass = rig.arb(0), rig.arb(0)
            for _, _, m, term in run:
                num, mass = num + term, mass + m
            lower = max(0.0, rig.lower_float(num / rig.arb(rig.upper_float(mass))))
            out.append((math.sin(run[0][0]), math.sin(run[-1][1]), lower))
    return out


def mixture_value(terms: list[tuple[float, float, Any, Any]], rigorous: bool, method: str
                  ) -> BoundValue:
    """The sum of the cell terms as the one part ``i.i.d. mixture``."""
    with rig.precision(128):
        total = rig.arb(0)
        for _, _, _, term in terms:
            total += term
        lo_f, hi_f = rig.to_interval(total)
    a, b = terms[0][0], terms[-1][1]
    method += (f": {len(terms)} cells of t = sin(theta) in [{math.sin(a):.4f}, "
               f"{math.sin(b):.4f}], each E[(1 - t); cell] (B(psi_ref) - drop), outer mass "
               "counted as 0")
    return BoundValue((Part("i.i.d. mixture", (max(0.0, lo_f), max(0.0, hi_f)), rigorous,
                            method),))


def soft_iid_bins(beta: float, d: int, r: int, H: int, value_class: str = EQ2, *,
                  bins: int = 6, cells: int = CELLS) -> list[tuple[float, float, float]]:
    """Per bin of t (:func:`bins_of`, six by default): ``(t_lo, t_hi, lower)`` with ``lower``
    a proved lower bound of ``E[(1 - t) B(psi_{beta sqrt(1-t)}) | t in bin]``, the conditional
    error every model of the class pays on those keys (step T holds at each fixed t:
    docs/derivations/iid_transfer.md, step 6)."""
    d, r, H, value_class, cells = check_cell_args(d, r, H, value_class, cells)
    beta = _check_beta(beta)
    return bins_of(cell_terms(tanh_cell(beta, d, r, H, value_class), d, cells)[0], bins)


def soft_iid_bound(beta: float, d: int, r: int, H: int, value_class: str = EQ2, *,
                   cells: int = CELLS) -> BoundValue:
    """A proved lower bound on the error of every model of the class on i.i.d. keys for the
    soft-nearest target at inverse temperature ``beta`` (N = 2), one part ``i.i.d. mixture``."""
    d, r, H, value_class, cells = check_cell_args(d, r, H, value_class, cells)
    beta = _check_beta(beta)
    terms, rigorous = cell_terms(tanh_cell(beta, d, r, H, value_class), d, cells)
    return mixture_value(terms, rigorous, "mixture over effective temperatures beta sqrt(1-t)")
