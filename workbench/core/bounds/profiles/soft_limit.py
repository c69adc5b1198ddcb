"""Step S6 of docs/derivations/soft_targets.md: the soft harmonic count from the hardmax one.

For ``psi_beta(t) = tanh(beta t/sqrt2)`` and ``delta = ||psi_beta - sign||`` (L^2 under the law
of ``t = <y, w>``), with ``x = LB(sign)`` the full hardmax harmonic count at the same point,

    x - sqrt(2 x) delta  <=  LB(psi_beta)  <=  x + sqrt(2 x) delta + delta^2 / 2,

for every H, r and value class. :func:`distance_to_sign` encloses ``delta^2`` rigorously (an
arb integral up to ``t_c`` plus a proved bound on the rest, or from beta = 8 the panel
quadrature of Lemma Q when its proved error is below 2^-50), and :func:`s6_enclosure` turns a
hardmax enclosure into the soft one; the soft bound is the larger of this and its own series
(:mod:`.profile_harmonic`).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from workbench.core.validation import check_dim, check_float

__all__ = ["distance_to_sign", "s6_enclosure", "s6_gap", "S6_CUT"]

S6_CUT = 48.0  # the integral runs to beta sin(th_c)/sqrt2 = S6_CUT; the rest is below e^-190


@lru_cache(maxsize=256)
def distance_to_sign(beta: float, d: int) -> tuple[float, float]:
    """Floats ``lo <= ||psi_beta - sign||^2 <= hi`` (rigorous):
    ``2 rho_d int_0^{pi/2} (1 - tanh(beta sin th/sqrt2))^2 cos(th)^(d-2) dth``, by ``acb.integral``
    on ``[0, th_c]`` with ``beta sin(th_c)/sqrt2 = S6_CUT`` (when that is below ``pi/2``) and, on
    the rest, ``0 <= 1 - tanh(x) = 2/(1 + e^{2x}) <= 2 e^{-2x}``, so the rest is at most
    ``2 rho_d (pi/2 - th_c) 4 e^{-4 S6_CUT}``."""
    beta = check_float("beta", beta, lo=0.0, lo_open=True)
    d = check_dim(d)
    from workbench.core.bounds.numerics.gegenbauer_ball import rho_ball
    from workbench.core.bounds.profiles import panel_energy
    from workbench.core.profiles import sign_profile, tanh_profile
    from workbench.core.rigorous import (
        arb,
        ball,
        integrate,
        lower_float,
        pi,
        precision,
        upper_float,
    )

    soft = tanh_profile(beta)
    if panel_energy.panels_pay(soft):  # the soft energies' panel quadrature, when it is tight
        got = panel_energy.panel_gap_sq(soft, sign_profile(), d)
        if got is not None:
            return max(0.0, lower_float(got)), upper_float(got)
    with precision(160):
        b = arb(beta) / arb(2).sqrt()
        half_pi = pi() / 2
        s_c = arb(S6_CUT) / b
        cut = s_c < 1
        th_c = s_c.asin() if cut else half_pi

        def f(th: Any, analytic: bool) -> Any:
            gap = 2 / (1 + (2 * b * th.sin()).exp())
            return gap * gap * th.cos() ** (d - 2)

        val = integrate(f, 0, th_c, eval_limit=10**6)
        if cut:
            rest = (half_pi - th_c) * 4 * (-4 * arb(S6_CUT)).exp()
            val = val + rest * ball(0.5, 0.5)  # somewhere in [0, rest]
        val = 2 * rho_ball(d) * val
        return max(0.0, lower_float(val)), upper_float(val)


def s6_enclosure(beta: float, d: int, hard: tuple[float, float]) -> tuple[float, float]:
    """The enclosure of ``LB(psi_beta)`` that step S6 gives from an enclosure ``hard`` of the
    full hardmax series at the same point (outward rounded; the lower end is at least 0, the
    upper end at most 1/2: ``LB(psi) <= E psi^2 / 2 <= 1/2`` as ``|psi| <= 1``)."""
    from workbench.core.rigorous import arb, lower_float, upper_float

    x_lo, x_hi = hard
    delta = arb(distance_to_sign(beta, d)[1]).sqrt()
    lo_x, hi_x = arb(x_lo), arb(x_hi)
    lo = lo_x - (2 * lo_x).sqrt() * delta
    hi = hi_x + (2 * hi_x).sqrt() * delta + delta * delta / 2
    return max(0.0, lower_float(lo)), min(0.5, upper_float(hi))


def s6_gap(beta: float, d: int) -> float:
    """``delta`` itself (upper end): how far the S6 part can be below hardmax, at most
    ``sqrt(2 x) delta`` with ``x <= 1/2``."""
    return math.sqrt(distance_to_sign(beta, d)[1]) * (1 + 1e-15)
