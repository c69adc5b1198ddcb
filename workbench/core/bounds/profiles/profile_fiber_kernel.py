"""The fiber values of a profile's kernel ``k_psi = sum_l eta_l^2 P_l`` as cosine series in
``phi`` (``c = sin^2 phi``), in arb balls (docs/derivations/soft_targets.md, step F, Lemmas
P1-P3).

For odd ``l`` the Funk-Hecke eigenvalues ``lambda_{l,j}(m, c)`` of ``P_l(c + (1-c) t)`` on
``S^{m-1}`` (j = 0, 1, 2; m = 1: the two-point sphere) are polynomials in ``z = 1 - c = cos^2
phi`` with exact rational coefficients (Lemma P1), so each is a finite cosine series
``sum_n A_j[l, n] cos(2 n phi)`` with exact rational ``A_j`` (:func:`kernel_table`, built once
per ``(d, m, L)`` in exact arithmetic). Each ``lambda_{l,j}`` lies in ``[0, 1]`` (Lemma P2), so
the profile's values ``v_j = a_j(c) sum_l eta_l^2 lambda_{l,j}`` are a positive combination:
the balls of ``eta_l^2`` enter linearly, never through a cancelling monomial expansion.
:class:`ProfileFiber` gives the cell enclosures and piece averages that
:func:`workbench.core.bounds.fiber_bound.fiber_enclosure.ky_fan_average` needs (Lemma P3).
"""

from __future__ import annotations

from functools import lru_cache
from math import comb
from typing import Any

from workbench.core import rigorous as rig
from workbench.core.bounds.fiber_bound.fiber_enclosure import SinCosChain, sin_cos_integral

__all__ = ["ProfileFiber", "kernel_table", "value_multiplicities"]

_BITS = 128


def _fmpq(p: int, q: int = 1) -> Any:
    import flint

    return flint.fmpq(p, q)


def _moments(m: int, count: int) -> list[Any]:
    """``E_mu (1 - t)^i`` for ``i < count`` under the law ``mu_m`` of one coordinate of a uniform
    point of ``S^{m-1}`` (m = 1: mass 1/2 at each of +-1): ``2^i (a)_i / (2a)_i``,
    ``a = (m-1)/2`` (``(1-t)/2`` is Beta(a, a))."""
    if m == 1:
        return [_fmpq(1)] + [_fmpq(2 ** (i - 1)) for i in range(1, count)]
    a = _fmpq(m - 1, 2)
    out = [_fmpq(1)]
    for i in range(count - 1):
        out.append(out[-1] * 2 * (a + i) / (2 * a + i))
    return out


def value_multiplicities(m: int) -> list[int]:
    """How often each fiber value counts (Lemma F3): scalar, vector, traceless."""
    return [1, 1] if m == 1 else [1, m, m * (m + 1) // 2 - 1]


@lru_cache(maxsize=64)
def _built(d: int, m: int) -> dict[int, tuple[Any, ...]]:
    """The tables built for ``(d, m)``, by L (emptied with the other caches)."""
    return {}


def kernel_table(d: int, m: int, L: int) -> tuple[Any, ...]:
    """Exact ``fmpq_mat`` s ``V_j`` (rows: odd ``l <= L``; columns ``n = 0..L+1``): the cosine
    coefficients of the fiber value ``a_j(c) lambda_{l,j}(m, c)`` in ``cos(2 n phi)``, with
    ``a_0 = 1``, ``a_1 = c + (1-c)/m``, ``a_2 = 2 (1-c)/(m+2)`` (Lemmas F3, P1). The row of
    degree l has no column past ``l + 1``, so the table for L is the top-left block of any
    larger one: where a larger table is built (the i.i.d. mixture's cells), it is cut from it."""
    import flint

    built = _built(d, m)
    if L not in built:
        larger = [k for k in built if k > L]
        if larger:
            rows, cols = (L + 1) // 2, L + 2
            built[L] = tuple(flint.fmpq_mat(rows, cols, [V[i, n] for i in range(rows)
                                                         for n in range(cols)])
                             for V in built[min(larger)])
        else:
            built[L] = _table(d, m, L)
    return built[L]


@lru_cache(maxsize=256)
def _table_balls(d: int, m: int, L: int, prec: int) -> tuple[Any, ...]:
    """:func:`kernel_table` as ball matrices at ``prec`` bits (each rational rounded once)."""
    import flint

    with rig.precision(prec):
        return tuple(flint.arb_mat(V) for V in kernel_table(d, m, L))


def _table(d: int, m: int, L: int) -> tuple[Any, ...]:
    """Each value ``a_j(c) lambda_{l,j}`` as a polynomial in ``z = 1 - c = cos^2 phi``
    (Lemma P1: ``sum_i tau_{l,i} E_mu[s^i P_j] z^i``, times ``a_0 = 1``, ``a_1 = 1 - (m-1) z/m``,
    ``a_2 = 2 z/(m+2)``), then in ``cos(2 n phi)`` by ``z^i = 4^-i sum_n B[i, n] cos(2 n phi)``
    with the integers ``B[i, 0] = C(2i, i)``, ``B[i, n] = 2 C(2i, i-n)``: one exact product."""
    import flint

    n_cols = L + 2
    es = _moments(m, L + 3)
    moments = [es[:L + 1], [es[i] - es[i + 1] for i in range(L + 1)]]  # E s^i P_j, s = 1 - t
    factors = [(_fmpq(1), _fmpq(0)), (_fmpq(1), _fmpq(1 - m, m))]  # a_j = a_j0 + a_j1 z
    if m >= 2:
        moments.append([es[i] - _fmpq(2 * m, m - 1) * es[i + 1] + _fmpq(m, m - 1) * es[i + 2]
                        for i in range(L + 1)])
        factors.append((_fmpq(0), _fmpq(2, m + 2)))
    half = _fmpq(d - 1, 2)
    taylor = []  # P_l(x) = sum_i taylor[l][i] (1 - x)^i = 2F1(-l, l+d-2; (d-1)/2; (1-x)/2)
    for l in range(1, L + 1, 2):
        row, c = [], _fmpq(1)
        for i in range(l + 1):  # the factor (i - l) ends the series at i = l
            row.append(c)
            c = c * (i - l) * (l + d - 2 + i) / ((half + i) * (i + 1) * 2)
        taylor.append(row)
    B = flint.fmpq_mat(flint.fmpz_mat(n_cols, n_cols, [
        (comb(2 * i, i) if n == 0 else 2 * comb(2 * i, i - n)) if n <= i else 0
        for i in range(n_cols) for n in range(n_cols)]))
    quarter = [_fmpq(1, 4 ** i) for i in range(n_cols)]
    zero = _fmpq(0)
    out = []
    for mom, (a0, a1) in zip(moments, factors):
        entries = []
        for row in taylor:
            p = [zero] + [row[i] * mom[i] for i in range(len(row))] + [zero]  # p[i + 1]: z^i
            q = [a0 * p[i + 1] + a1 * p[i] for i in range(len(p) - 1)]  # times a0 + a1 z
            entries += [x * y for x, y in zip(q, quarter)] + [zero] * (n_cols - len(q))
        out.append(flint.fmpq_mat(len(taylor), n_cols, entries) * B)
    return tuple(out)


@lru_cache(maxsize=64)
def _shifted_chebyshev(n_max: int) -> Any:
    """``fmpz_mat`` T with ``cos(2 n phi) = T_n(2z - 1) = sum_i T[n, i] z^i``, ``z = cos^2 phi``."""
    import flint

    polys = [flint.fmpz_poly([1]), flint.fmpz_poly([-1, 2])]
    while len(polys) <= n_max:
        polys.append(flint.fmpz_poly([-2, 4]) * polys[-1] - polys[-2])
    T = flint.fmpz_mat(n_max + 1, n_max + 1)
    for n in range(n_max + 1):
        for i, c in enumerate(polys[n].coeffs()):
            T[n, i] = c
    return T


@lru_cache(maxsize=64)
def _shifted_chebyshev_balls(n_max: int, prec: int) -> Any:
    """:func:`_shifted_chebyshev` as a ball matrix (exact integers) for products at ``prec``."""
    import flint

    with rig.precision(prec):
        return flint.arb_mat(_shifted_chebyshev(n_max))


class ProfileFiber:
    """One ``(d, r*)`` and one profile's energies: the fiber values on cells and their Beta
    averages on pieces (the interface of ``fiber_enclosure``'s Ky Fan average). No Lemma R5:
    ``r5`` is False (the scalar/traceless order is proved on each cell like any other pair)."""

    r5 = False

    def __init__(self, d: int, r_star: int, energies: list[Any], L: int) -> None:
        import flint

        self.m = m = d - r_star
        self.r = r_star
        self.mult = value_multiplicities(m)
        self.W = 2 / rig.beta(rig.arb(r_star) / 2, rig.arb(m) / 2)
        self.n_cols = L + 2
        eta = flint.arb_mat(1, len(energies), list(energies))
        self.coeffs: list[list[Any]] = []
        self._polys: list[Any] = []
        self.curvature = []  # sup |v_j''(phi)| <= sum_n |b_n| (2n)^2
        for V in _table_balls(d, m, L, rig.working_precision()):
            row = eta * V
            b = [row[0, n] for n in range(self.n_cols)]
            self.coeffs.append(b)
            self._polys.append(flint.acb_poly(b))
            self.curvature.append(sum((abs(bn) * (2 * n) ** 2 for n, bn in enumerate(b)),
                                      rig.arb(0)))
        self._at: dict[Any, list[Any]] = {}

    def _point(self, phi: Any) -> list[Any]:
        """``v_j(phi)`` at one (float or ball) end: ``Re sum_n b_n w^n``, ``w = e^{2 i phi}``, by
        Horner's rule on complex balls (``|w| = 1``: the radii grow linearly in n, unlike
        Clenshaw's rule on real balls, whose radii grow geometrically)."""
        key = float(rig.arb(phi).mid()), float(rig.arb(phi).rad())
        if key not in self._at:
            w = (rig.acb(0, 2 * rig.arb(phi))).exp()
            self._at[key] = [poly(w).real for poly in self._polys]
        return self._at[key]

    def values(self, lo: Any, hi: Any) -> list[Any]:
        """Balls containing ``v_j(phi)`` for every phi in ``[lo, hi]``: the hull of the end
        values widened by the linear-interpolation error ``h^2/8 sup|v_j''|``."""
        a, b = self._point(lo), self._point(hi)
        h = rig.arb(rig.arb(hi).upper()) - rig.arb(rig.arb(lo).lower())
        out = []
        for j in range(len(a)):
            pad = rig.arb((h * h * self.curvature[j] / 8).upper())
            out.append(a[j].union(b[j]) + rig.ball(0, pad))
        return out

    def mass(self, lo: Any, hi: Any) -> Any:
        """Beta(r*/2, m/2) probability of ``lo <= phi <= hi``."""
        return self.W * sin_cos_integral(self.r - 1, self.m - 1, lo, hi)

    def averages(self, lo: Any, hi: Any, tol: float = 0.0, cap: int = 0) -> list[Any]:
        """Balls containing ``int_lo^hi v_j dBeta`` exactly (finite series: no tail; ``tol`` and
        ``cap`` are not needed): ``sum_n b_{j,n} J_n`` with ``J_n = int cos(2 n phi) dBeta``
        from the moments ``int sin^{r*-1} cos^{m-1+2i}`` (Lemma R3's recurrence) and the exact
        shifted Chebyshev coefficients."""
        import flint

        n = self.n_cols
        with rig.precision(_BITS + 3 * n):
            # the moments' radii are multiplied by the Chebyshev coefficients (~2^{2.6 n}): the
            # one ball end, pi/2, is recomputed at this precision
            lo, hi = (e if isinstance(e, float) else rig.pi() / 2 for e in (lo, hi))
            chain = SinCosChain(self.r - 1, self.m - 1, lo, hi)
            moments = []
            for _ in range(n):
                moments.append(chain.value)
                chain.step()
            col = _shifted_chebyshev_balls(n - 1, rig.working_precision()) * flint.arb_mat(
                n, 1, moments)
            J = [self.W * col[k, 0] for k in range(n)]
        return [sum((bn * J[k] for k, bn in enumerate(b)), rig.arb(0)) for b in self.coeffs]
