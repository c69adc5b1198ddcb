"""The fiber's Funk-Hecke eigenvalues as rigorous enclosures: arb balls throughout
(docs/derivations/fiber_bound.md, "Evaluation", Lemma R1; docs/derivations/intervals.md,
"Rigorous enclosures").

With ``c = sin^2 phi`` the slopes ``G_j = d lambda_j / d phi`` are closed forms in Gauss's 2F1
(Lemma R1), and ``lambda_j(pi/2) = (1, 0, 0)``, so
``lambda_j(phi) = lambda_j(pi/2) - int_phi^{pi/2} G_j`` is one ``acb.integral`` per value: a
proved enclosure, sharing no code with the float path of
:mod:`workbench.core.bounds.fiber_bound.fiber`
(its check: tests/core/test_fiber_rigorous.py). The bound itself is enclosed by another closed
form, the series of :mod:`workbench.core.bounds.fiber_bound.fiber_series` (Lemma R2), which this
module
checks (tests/core/test_fiber_enclosure.py).
"""

from __future__ import annotations

from typing import Any

from workbench.core import rigorous as rig
from workbench.core.validation import check_float, check_int

__all__ = ["eigenvalue_enclosure"]

# integrand calls per value: past it the enclosure is still valid, only wider (at m >= 45 and
# c <= 0.3 the cancellation inside G_1, G_2 makes arb's ellipse bounds loose; see the derivation)
_EVAL_LIMIT = 4000


def _nan() -> Any:
    return rig.acb(rig.arb("nan"))


class _Fiber:
    """Closed forms for one m (the fiber's dimension); see Lemma R1."""

    def __init__(self, m: int) -> None:
        arb = rig.arb
        self.m = m
        half = arb(1) / 2
        if m >= 2:
            beta_half = rig.beta(half, arb(m - 1) / 2)
            k_m = arb(2) ** (m - 1) / (rig.pi() * beta_half)
            betas = [rig.beta(arb(m) / 2, arb(m - 1) / 2 + k) for k in range(3)]
            p = [
                [arb(1)],
                [arb(-1), arb(2)],
                [arb(1), arb(-4 * m) / (m - 1), arb(4 * m) / (m - 1)],
            ]
            self.coef = [[k_m * pk * betas[k] for k, pk in enumerate(pj)] for pj in p]

    def slopes(self, phi: Any, analytic: bool) -> list[Any] | None:
        """``[G_0, G_1, G_2](phi)`` on a complex ball; None if not analytic there."""
        acb = rig.acb
        if self.m == 1:  # lambda_0 = 2 phi / pi, lambda_1 = 1 - 2 phi / pi
            g = acb(2) / rig.pi()
            return [g, -g]
        z = phi.cos() ** 2
        if analytic and bool(z.imag.contains(0)) and not (z.real < 1):
            return None
        half = rig.arb(1) / 2
        b = rig.arb(self.m) / 2
        F = [z.hypgeom_2f1(half, b, 2 * b - half + k) for k in range(3)]
        two_sin = 2 * phi.sin()
        return [two_sin * sum((ck * F[k] for k, ck in enumerate(cj)), acb(0)) for cj in self.coef]


def eigenvalue_enclosure(m: int, c: float) -> list[tuple[float, float]]:
    """Outward-rounded enclosures of ``(lambda_0, lambda_1, lambda_2)(m, c)`` (Lemma R1; the
    float value is :func:`workbench.core.bounds.fiber_bound.fiber.fiber_eigenvalues`); ``lambda_2 =
    0`` when
    m = 1. ``c`` is taken exactly as the float given. Check the width: where the integrator hits
    its budget the enclosure is valid but wide."""
    m = check_int("m", m, lo=1)
    c = check_float("c", c, lo=0.0, hi=1.0)
    with rig.precision():
        fiber = _Fiber(m)
        phi = rig.arb(c).sqrt().asin()
        top = rig.pi() / 2
        out = []
        for j, start in enumerate((1, 0, 0)[: 2 if m == 1 else 3]):

            def g(x: Any, analytic: bool, j: int = j) -> Any:
                s = fiber.slopes(x, analytic)
                return _nan() if s is None else s[j]

            val = rig.integrate(g, phi, top, rel_tol=2.0**-60, eval_limit=_EVAL_LIMIT)
            out.append(rig.to_interval(rig.arb(start) - val))
    return out + [(0.0, 0.0)] * (3 - len(out))
