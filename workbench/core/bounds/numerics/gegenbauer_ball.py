"""The normalised Gegenbauer polynomials ``q_l = sqrt(N(d,l)) P_l`` of S^{d-1} as ball
polynomials with exact rational coefficients, and the constant ``rho_d`` of the law of
``t = <y, w>`` (docs/derivations/soft_targets.md, step S5): shared by the energies' adaptive
integrals (:mod:`profile_energy`) and their panel quadrature (:mod:`panel_energy`), with one cache.
"""

from __future__ import annotations

from typing import Any

from workbench.core import rigorous as rig
from workbench.core.harmonics import dim_harmonics

__all__ = ["CACHE", "legendre_exact", "node_precision", "normalized_at", "normalized_poly",
           "rho_ball"]

CACHE: dict[tuple[Any, ...], Any] = {}  # polynomials, node tables, (profile key, d, l) balls


def rho_ball(d: int) -> Any:
    """``rho_d = Gamma(d/2) / (sqrt(pi) Gamma((d-1)/2))``: the density of t is
    ``rho_d (1 - t^2)^{(d-3)/2}``."""
    return (rig.arb(d) / 2).gamma() / (rig.pi().sqrt() * (rig.arb(d - 1) / 2).gamma())


def legendre_exact(d: int, l: int) -> Any:
    """``P_l`` (the Legendre polynomial of dimension d, ``P_l(1) = 1``) with exact rational
    coefficients, by ``(k + d - 2) P_{k+1} = (2k + d - 2) z P_k - k P_{k-1}``; cached per d."""
    import flint

    polys = CACHE.setdefault(("legendre", d), [flint.fmpq_poly([1]), flint.fmpq_poly([0, 1])])
    while len(polys) <= l:
        k = len(polys) - 1
        polys.append((flint.fmpq_poly([0, 2 * k + d - 2]) * polys[k] - k * polys[k - 1])
                     / (k + d - 2))
    return polys[l]


def normalized_poly(d: int, l: int) -> Any:
    """The ball polynomial ``p`` with ``sqrt(N(d,l)) P_l(z) = z^(l mod 2) p(z^2)`` (``P_l`` has
    the parity of l) at the working precision, its rational coefficients rounded once per
    ``(d, l, precision)``: Horner's rule in ``z^2`` takes half the steps of the monomial form."""
    key = ("poly", d, l, rig.working_precision())
    if key not in CACHE:
        P = legendre_exact(d, l)
        root = rig.arb(dim_harmonics(d, l)).sqrt()
        CACHE[key] = rig.arb_poly([root * rig.arb(P[i].p) / rig.arb(P[i].q)
                                   for i in range(l % 2, l + 1, 2)])
    return CACHE[key]


def normalized_at(d: int, l: int, z: Any) -> Any:
    """``sqrt(N(d,l)) P_l(z)`` on a real or complex ball (:func:`normalized_poly`): the one
    evaluator of ``q_l``, where a planted fault in the polynomial is seen by every path."""
    value = normalized_poly(d, l)(z * z)
    return z * value if l % 2 else value


def node_precision(l: int) -> int:
    """Bits for evaluating ``q_l``: its monomial coefficients reach ``~2^{1.5 l}``, so the balls
    widen off the real line; measured to suffice."""
    return 128 + 2 * l
