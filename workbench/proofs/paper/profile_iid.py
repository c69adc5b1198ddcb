"""The i.i.d. bound for a profile target without soft-nearest's monotone scale
(docs/derivations/soft_targets.md, step T, "Any profile"), against computations that share no
code with its cells: the mixture ``E_t[(1 - t) B(psi(sqrt(1-t) .))]`` and its bins by scipy's
Gauss-Jacobi and Gauss-Legendre rules in t, with the profile at each scale written out from its
sympy form (not through ``scaled_profile``), B the library's D_2 bound (checked by
``targets.profile_fiber_value`` and ``targets.soft_harmonic_bound``); the scale gap against
the largest numeric distance over 41 scales of the cell.

Its test: ``tests/claims/test_profile_iid.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from workbench.core.profiles import Profile
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

REF = "derivations/soft_targets.md"


def soft_sign(k: float, c: float = 1.0) -> Profile:
    """``psi(c t)`` for ``psi(u) = u / sqrt(1/k^2 + u^2)`` (the worked plug-in's smooth sign;
    its scale is not a temperature of tanh), from its sympy form."""
    import sympy as sp

    def numeric(t: Any) -> Any:
        u = c * np.asarray(t, dtype=float)
        return u / np.sqrt(1.0 / k**2 + u * u)

    def form(t: Any) -> Any:
        return (c * t) / sp.sqrt(1 / sp.Float(k) ** 2 + (c * t) ** 2)

    return Profile(f"soft_sign(k={k:g}) at scale {c:g}", numeric, sympy=form,
                   key=("claim-soft-sign", k, c))


def _density(d: int, t: Any) -> Any:
    return (1 - t * t) ** ((d - 3) / 2)


def _bound_at(k: float, d: int, r: int, H: int, t: float) -> float:
    from workbench.core.bounds.profiles.profile_fiber import profile_lower_bound

    return (1 - t) * profile_lower_bound(soft_sign(k, math.sqrt(1 - t)), d, r, H).value


def mixture(k: float, d: int, r: int, H: int, nodes: int = 12) -> float:
    """``E_t[(1 - t) B]`` by Gauss-Jacobi in t (weight ``(1 - t^2)^{(d-3)/2}``)."""
    from scipy.special import roots_jacobi

    t, w = roots_jacobi(nodes, (d - 3) / 2, (d - 3) / 2)
    return float(sum(wi * _bound_at(k, d, r, H, ti) for ti, wi in zip(t, w)) / w.sum())


def bin_mixture(k: float, d: int, r: int, H: int, lo: float, hi: float) -> float:
    """``E[(1 - t) B | t in [lo, hi]]`` by 8-node Gauss-Legendre in t over scipy's mass."""
    from scipy import integrate

    x, w = np.polynomial.legendre.leggauss(8)
    t = (hi - lo) / 2 * x + (hi + lo) / 2
    num = (hi - lo) / 2 * sum(wi * _density(d, ti) * _bound_at(k, d, r, H, ti)
                              for ti, wi in zip(t, w))
    return float(num / integrate.quad(lambda u: _density(d, u), lo, hi)[0])


def largest_distance(k: float, d: int, c_lo: float, c_hi: float, c_ref: float) -> float:
    """``max_c ||psi(c .) - psi(c_ref .)||`` over 41 scales of ``[c_lo, c_hi]`` (400-node
    Gauss-Legendre in s): a value the proved gap must not undercut."""
    x, w = np.polynomial.legendre.leggauss(400)
    s = (x + 1) / 2
    rho = math.exp(math.lgamma(d / 2) - math.lgamma((d - 1) / 2)) / math.sqrt(math.pi)
    wt = w * rho * _density(d, s)
    ref = soft_sign(k, c_ref).psi(s)
    return max(math.sqrt(float(wt @ (soft_sign(k, c).psi(s) - ref) ** 2))
               for c in np.linspace(c_lo, c_hi, 41))


@claim(
    "targets.profile_iid_mixture",
    "On i.i.d. keys a profile target's bound is the mixture over its scales "
    "E_t[(1-t) B(psi(sqrt(1-t) .))], also without a monotone scale: the proved lower sum lies "
    "below a quadrature of the mixture and within 1 % of it, in each of three bins of t within "
    "3 %, "
    "each cell's scale gap is at least the largest distance it must cover, and a layer trained "
    "on i.i.d. keys stays above it, in six bins of t",
    "lemma",
    depends_on=("targets.soft_iid_mixture",),
    statement="profile_iid_bound(psi) <= E_t[(1-t) B(psi(sqrt(1-t) .))]; gap >= "
    "sup_c ||psi(c .) - psi(c_ref .)||",
    ref=f"{REF}#step-t-the-iid-transfer-it-becomes-a-mixture",
    mark="ours",
)
def profile_iid_mixture_claim(ctx: CheckContext) -> list[Evidence]:
    from workbench.core.bounds.profiles.profile_iid import bins_of, mixture_value
    from workbench.core.bounds.profiles.profile_iid_scale import profile_iid_cells, scale_gap

    out = []
    for k, d, r, H in ctx.pick(((4.0, 6, 1, 2),), ((4.0, 6, 1, 2), (16.0, 8, 1, 1))):
        params = {"psi": f"soft_sign(k={k:g})", "d": d, "r": r, "H": H, "points": "iid"}
        terms, rigorous = profile_iid_cells(soft_sign(k), d, r, H)
        lower = mixture_value(terms, rigorous, "").value
        quad = mixture(k, d, r, H)
        out.append(Evidence(lower, quad * (1 + 1e-3), "<=", "identity", params,
                            note="proved lower sum vs a 12-node quadrature of the mixture"))
        out.append(Evidence(lower, 0.99 * quad, ">=", "identity", params,
                            note="the lower sum loses at most 1 % (chords, curvature)"))
        for lo, hi, low in bins_of(terms, 3):
            q = bin_mixture(k, d, r, H, lo, hi)
            at = {**params, "t_bin": f"[{lo:.3f}, {hi:.3f})"}
            out.append(Evidence(low, q * (1 + 1e-3), "<=", "identity", at,
                                note="the bin's proved number vs its 8-node quadrature"))
            out.append(Evidence(low, 0.97 * q, ">=", "identity", at,
                                note="the bin's number loses at most 3 %"))
        out += _trained(k, d, r, H, terms, lower, ctx)
        for c_lo, c_hi in ((0.5, 0.52), (1.3, 1.32)):
            c_ref = (c_lo + c_hi) / 2
            gap, _ = scale_gap(soft_sign(k), c_lo, c_hi, c_ref, d)
            far = largest_distance(k, d, c_lo, c_hi, c_ref)
            at = {**params, "scales": f"[{c_lo}, {c_hi}]"}
            out.append(Evidence(gap, far, ">=", "identity", at,
                                note="the proved scale gap covers the largest distance"))
            out.append(Evidence(gap, 2 * far, "<=", "identity", at,
                                note="and is within 2x of it"))
    return out


def _trained(k: float, d: int, r: int, H: int, terms: list[Any], lower: float,
             ctx: CheckContext) -> list[Evidence]:
    """An Eq. 2 layer (dot scores of key-rank r, full value maps) trained on the profile target
    with i.i.d. keys: its error over all keys and in six bins of t against the proved
    numbers."""
    from workbench.core.bounds.profiles.profile_iid import bins_of
    from workbench.core.targets import profile_target
    from workbench.proofs.support.soft_training import binned_evidence, target_task

    psi = soft_sign(k).psi
    task = target_task(d, "iid", f"soft_sign(k={k:g})", (("k", k),),
                       lambda X, y: profile_target(X, y, psi))
    steps = ctx.pick(150, 600)
    params = {"psi": f"soft_sign(k={k:g})", "d": d, "r": r, "H": H, "steps": steps,
              "points": "iid"}
    return binned_evidence(task, r, H, bins_of(terms, 6), lower, params, "profile's",
                           seed=ctx.seed, steps=steps, samples=ctx.pick(200_000, 400_000),
                           eval_seed=ctx.seed + 5)
