"""The soft-nearest bound on i.i.d. keys: a mixture over effective temperatures
(docs/derivations/soft_targets.md, step T and Lemma T1).

On i.i.d. uniform keys with ``t = <x1, x2>`` (density ``∝ (1 - t^2)^{(d-3)/2}``), every model
has ``err >= E_t[(1 - t) B(psi_{beta sqrt(1-t)})]``, ``B`` the D_2 bound of the profile
(:func:`~workbench.core.bounds.profiles.profile_fiber.profile_lower_bound`). The integral is bounded
below on a partition of ``t = sin(theta)``, B computed at the cells' end temperatures: on a cell
the larger of the chord between its ends (the full harmonic count and fiber bound are concave
and l1-Lipschitz in the energies ``eta_l^2``, whose curvature in the temperature is bounded)
integrated exactly in t, and an end's parts less the Lipschitz drop of S6/P5
(``|B(a) - B(b)| <= 1/2 ||a - b|| ||a + b||``; ``tanh`` grows with beta, so
``|psi_b - psi_ref| <= psi_b' - psi_b''``). Cells outside the central mass add 0.
"""

from __future__ import annotations

import math
from typing import Any

from workbench.core import rigorous as rig
from workbench.core.bounds import EQ2, VALUE_CLASSES
from workbench.core.bounds.fiber_bound.fiber_enclosure import sin_cos_integral
from workbench.core.bounds.numerics.gegenbauer_ball import rho_ball
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

__all__ = ["CELLS", "ZERO_PROFILE", "bins_of", "check_cell_args",
           "effective_temperature", "mixture_value", "soft_iid_bins", "soft_iid_bound", "t_mass",
           "tanh_terms", "weighted_mass", "chord_terms", "grid"]

CELLS = 24  # cells of the central range of theta (t = sin theta)
TRUNCATION_SHARE = 0.1  # a point's series stops where its tail is below this share of its drop
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




def _cell_degree(profile: Profile, d: int, drop: float) -> int | None:
    """The fiber part's degree at a grid point: the least whose tail is below
    ``max(FIBER_TOL, TRUNCATION_SHARE drop)`` (so truncating costs at most a tenth of the
    Lipschitz drop ``drop`` of half a cell), rounded up to ``2^k - 1`` or ``3 2^(k-1) - 1``
    so that the cells share a few kernel tables (more degrees only raise the bound, Lemma P4);
    None (the default rule) where the direct series is skipped."""
    if distance_to_sign(profile, d)[0] < DIRECT_FROM:
        return None
    share = TRUNCATION_SHARE * drop if math.isfinite(drop) else 0.0
    L = profile_degree(profile, d, max(FIBER_TOL, share))
    return next((x for x in (7, 11, 15, 23, 31, 47, 63, 95, 127, 151) if x >= L), L)


def grid(beta: float, d: int, cells: int) -> tuple[list[float], list[tuple[float, float]]]:
    """Lemma T1's grid for soft-nearest: float temperatures ``b_0 >= ... >= b_K`` at equal
    steps of theta in the central range, and per cell float theta ends ``[lo, hi]``, moved
    inward by a few ulps where needed, so that ``b_{k+1} <= beta sqrt(1 - sin theta) <= b_k``
    on the cell (the slivers left between cells add 0)."""
    a, b = _central_range(d)
    thetas = [a + (b - a) * k / cells for k in range(cells + 1)]
    with rig.precision(128):
        bb = rig.arb(beta)

        def temp(th: float) -> Any:
            return effective_temperature(bb, rig.arb(th).sin())

        temps = [float(temp(th).mid()) for th in thetas]
        ends = []
        for k in range(cells):
            lo, hi = thetas[k], thetas[k + 1]
            for _ in range(64):  # the temperature decreases with theta
                if rig.upper_float(temp(lo)) <= temps[k]:
                    break
                lo = math.nextafter(lo, math.inf)
            for _ in range(64):
                if rig.lower_float(temp(hi)) >= temps[k + 1]:
                    break
                hi = math.nextafter(hi, -math.inf)
            ok = (rig.upper_float(temp(lo)) <= temps[k]
                  and rig.lower_float(temp(hi)) >= temps[k + 1])
            ends.append((lo, hi) if ok else (lo, lo))  # an empty cell adds 0
    return temps, ends


_SECH4: dict[int, Any] = {}


def _sech4_integral(k: int) -> Any:
    """``int_0^inf x^k sech^4 x dx`` as a ball (arb integral to 40, the rest below
    ``int_40^inf x^k 16 e^{-4x} < 1e-58`` for k <= 6, counted as 1e-50)."""
    if k not in _SECH4:
        with rig.precision(128):
            val = rig.integrate(lambda x, analytic: x**k / x.cosh() ** 4, 0, 40)
            _SECH4[k] = val + rig.ball(0, rig.arb(10) ** -50)
    return _SECH4[k]


def _sech4_moment(k: int, b: float, d: int) -> Any:
    """An upper bound of ``E[s^k sech^4(b s/sqrt2)]`` (k = 2, 4, 6; s with density
    ``rho_d (1 - s^2)^{(d-3)/2}``): the moment ``E s^k`` (sech <= 1), and for d >= 3 also
    ``2 rho_d (sqrt2/b)^{k+1} int_0^inf x^k sech^4 x`` (the weight is at most 1)."""
    moment = {2: rig.arb(1) / d, 4: rig.arb(3) / (d * (d + 2)),
              6: rig.arb(15) / (d * (d + 2) * (d + 4))}[k]
    if d < 3:
        return rig.upper_float(moment)
    scale = 2 * rho_ball(d) * (rig.arb(2).sqrt() / rig.arb(b)) ** (k + 1) * _sech4_integral(k)
    return min(rig.upper_float(moment), rig.upper_float(scale))


def _curvature(b_small: float, b_big: float, norm_big: float, d: int) -> Any:
    """``M >= sup_b sum_l |d^2 eta_l(psi_b)^2 / db^2|`` over ``b in [b_small, b_big]``:
    ``2 (||d_b psi||^2 + ||psi|| ||d_b^2 psi||)`` (Cauchy-Schwarz and Bessel), with
    ``d_b psi = s/sqrt2 sech^2``, ``d_b^2 psi = -s^2 sech^2 tanh``, sech decreasing in b and
    ``tanh^2 x <= min(1, x^2)``."""
    first = rig.arb(_sech4_moment(2, b_small, d)) / 2
    second = min(_sech4_moment(4, b_small, d),
                 rig.upper_float(rig.arb(b_big) ** 2 / 2 * rig.arb(_sech4_moment(6, b_small,
                                                                                  d))))
    return 2 * (first + rig.arb(norm_big) * rig.arb(second).sqrt())


def _cell_moments(d: int, lo: float, hi: float) -> tuple[Any, Any]:
    """``J = E[(1 - t)^{3/2}; cell]`` and ``W2 = E[(1 - t)^2; cell]`` (arb integrals of entire
    integrands: ``1 - sin theta = (cos theta/2 - sin theta/2)^2``)."""
    norm = rig.beta(rig.arb(1) / 2, rig.arb(d - 1) / 2)

    def j(th: Any, analytic: bool) -> Any:
        return ((th / 2).cos() - (th / 2).sin()) ** 3 * th.cos() ** (d - 2)

    def w2(th: Any, analytic: bool) -> Any:
        return (1 - th.sin()) ** 2 * th.cos() ** (d - 2)

    return rig.integrate(j, lo, hi) / norm, rig.integrate(w2, lo, hi) / norm


def _family_lower(bv: BoundValue, names: tuple[str, ...]) -> Any:
    """The best lower end among ``bv``'s parts named ``names`` (0 if none): a lower bound of
    the full harmonic count or of the full fiber bound at that temperature."""
    return rig.arb(max([q.lower for q in bv.parts if q.name in names], default=0.0))


_FAMILIES = ((("harmonic count", "harmonic count via hardmax (S6)"), 1),
             (("fiber", "fiber via hardmax"), 2))  # (parts, 2 x Lipschitz constant in l1)


def tanh_terms(beta: float, d: int, r: int, H: int, value_class: str, cells: int
               ) -> tuple[list[tuple[float, float, Any, Any]], bool]:
    """Lemma T1's cell terms for soft-nearest (``(theta_lo, theta_hi, P(cell), term)`` per
    cell), the D_2 bound at each of the ``cells + 1`` grid temperatures (:func:`chord_terms`);
    the Lipschitz route with either end as reference (``tanh`` grows with b:
    ``|psi_b - psi_ref| <= psi_{b_k} -
    psi_{b_{k+1}}`` and ``|psi_b| <= |psi_{b_k}|`` on ``s >= 0``)."""
    temps, ends = grid(beta, d, cells)
    profiles = [tanh_profile(b) for b in temps]
    norms = [profile_distance(p, ZERO_PROFILE, d)[1] for p in profiles]
    gaps = [profile_distance(p, q, d)[1] for p, q in zip(profiles, profiles[1:])]
    bvs = []
    for k, p in enumerate(profiles):
        near = min(gaps[max(k - 1, 0)], gaps[min(k, cells - 1)])
        bvs.append(profile_lower_bound(p, d, r, H, value_class,
                                       max_degree=_cell_degree(p, d, near * norms[k] / 2)))
    rigorous = all(bv.rigorous for bv in bvs) and all(map(math.isfinite, gaps + norms))
    with rig.precision(128):  # the drops rounded up
        refs = [[(bvs[k], rig.upper_float(rig.arb(gaps[k]) * rig.arb(norms[k]))),
                 (bvs[k + 1], rig.upper_float(rig.arb(gaps[k]) * (
                     rig.arb(norms[k]) + rig.arb(norms[k + 1])) / 2))] for k in range(cells)]
    curvatures = [_curvature(temps[k + 1], temps[k], norms[k], d) for k in range(cells)]
    return chord_terms(beta, temps, ends, bvs, refs, curvatures, d), rigorous


def chord_terms(alpha: float, scales: list[float], ends: list[tuple[float, float]],
                bvs: list[BoundValue], refs: list[list[tuple[BoundValue, float]]],
                curvatures: list[Any], d: int) -> list[tuple[float, float, Any, Any]]:
    """Lemma T1's cell terms on a grid of scales ``x_0 >= ... >= x_K`` of a profile family
    along ``x = alpha sqrt(1 - t)`` (cell k, theta in ``ends[k]``, has ``x_{k+1} <= x <= x_k``),
    with the D_2 bounds ``bvs`` at the grid scales. Per cell the largest of (a) the chord of
    each family (the full harmonic count and the full fiber bound are concave in the energies
    ``e_l = eta_l^2`` and Lipschitz in l1, 1/2 and 1: Lemma P2), at
    ``x = lam x_{k+1} + (1 - lam) x_k`` at least ``lam P_{k+1} + (1 - lam) P_k`` less
    ``Lip (x_k - x)(x - x_{k+1})/2 M`` (``M = curvatures[k]`` bounds
    ``sum_l |d^2 e_l/dx^2|`` on the cell; None: no chord), integrated exactly in t; (b) each
    ``(bv, drop)`` of ``refs[k]``: every part of ``bv`` less ``drop`` (the Lipschitz route of
    S6/P5); and 0."""
    out = []
    with rig.precision(128):
        for k, (lo, hi) in enumerate(ends):
            if not lo < hi:
                continue
            mass, w = t_mass(d, lo, hi), weighted_mass(d, lo, hi)
            terms = [w * (rig.arb(q.lower) - rig.arb(drop)) for bv, drop in refs[k]
                     for q in bv.parts if math.isfinite(drop)]
            if scales[k] > scales[k + 1] and curvatures[k] is not None:
                j, w2 = _cell_moments(d, lo, hi)
                x0, x1, a = rig.arb(scales[k]), rig.arb(scales[k + 1]), rig.arb(alpha)
                lam = (x0 * w - a * j) / (x0 - x1)  # E[(1 - t) lam(t); cell]
                q = (x0 + x1) * a * j - x0 * x1 * w - a * a * w2  # E[(1-t)(x0-x)(x-x1)]
                for names, lip2 in _FAMILIES:
                    p0, p1 = _family_lower(bvs[k], names), _family_lower(bvs[k + 1], names)
                    terms.append(p0 * w + (p1 - p0) * lam - lip2 * curvatures[k] * q / 4)
            term = max(terms, key=lambda x: float(x.lower()), default=rig.arb(0))
            out.append((lo, hi, mass, term if term.lower() > 0 else rig.arb(0)))
    return out


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
               f"{math.sin(b):.4f}], each the chord of the D_2 bounds at its ends less its "
               "curvature, or an end's bound less its Lipschitz drop, integrated in t; outer "
               "mass counted as 0")
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
    return bins_of(tanh_terms(beta, d, r, H, value_class, cells)[0], bins)


def soft_iid_bound(beta: float, d: int, r: int, H: int, value_class: str = EQ2, *,
                   cells: int = CELLS) -> BoundValue:
    """A proved lower bound on the error of every model of the class on i.i.d. keys for the
    soft-nearest target at inverse temperature ``beta`` (N = 2), one part ``i.i.d. mixture``."""
    d, r, H, value_class, cells = check_cell_args(d, r, H, value_class, cells)
    beta = _check_beta(beta)
    terms, rigorous = tanh_terms(beta, d, r, H, value_class, cells)
    return mixture_value(terms, rigorous, "mixture over effective temperatures beta sqrt(1-t)")
