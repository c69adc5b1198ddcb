"""The fiber's Funk-Hecke eigenvalues as power series in ``z = cos^2 phi = 1 - c`` with a proved
tail, in arb balls (docs/derivations/fiber_bound.md, "Rigorous evaluation", Lemma R2).

For ``m >= 2``,

    lambda_j(c) = [j = 0] - 2 K sqrt(z) sum_k p_{j,k} B_k sum_n T_{k,n} z^n,
    T_{k,n} = (1/2)_n (m/2)_n / ((m - 1/2 + k)_n n! (2n + 1)),

with ``K = 2^{m-1} / (pi B(1/2, (m-1)/2))``, ``B_k = B(m/2, (m-1)/2 + k)`` and the coefficients
``p_{j,k}`` of ``P_j(2u - 1) = sum_k p_{j,k} u^k``. The ``T_{k,n}`` are positive, and their sums
are known in closed form (``sum_n T_{k,n} = (Lambda_k(1) - Lambda_k(0)) / (2 K B_k)``), so the
tail past any N is a ball computed exactly, not estimated: ``sum_{n >= N} |t_{j,n}| z^n <=
z^N tau_j(N)``. :mod:`workbench.core.bounds.fiber_bound.fiber_rigorous` encloses the same
eigenvalues by
another formula (Lemma R1, an ``acb.integral`` of 2F1); the tests hold the two together.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from workbench.core import rigorous as rig

__all__ = ["FiberSeries", "fiber_series"]


class FiberSeries:
    """Lemma R2's series for one fiber dimension ``m >= 2``, grown on demand; balls at the
    working precision of the caller (:func:`workbench.core.rigorous.precision`)."""

    def __init__(self, m: int) -> None:
        if m < 2:
            raise ValueError(f"m must be >= 2 for the series (got {m})")
        arb = rig.arb
        self.m = m
        half = arb(1) / 2
        self.K = arb(2) ** (m - 1) / (rig.pi() * rig.beta(half, arb(m - 1) / 2))
        B = [rig.beta(arb(m) / 2, arb(m - 1) / 2 + k) for k in range(3)]
        p = [[arb(1)], [arb(-1), arb(2)], [arb(1), arb(-4 * m) / (m - 1), arb(4 * m) / (m - 1)]]
        self.weights = [[pk * B[k] for k, pk in enumerate(pj)] for pj in p]  # p_{j,k} B_k
        # sum_n T_{k,n} from Lambda_k(c) = int k(c + (1-c) t) ((1+t)/2)^k dmu_m (Lemma R2, step 4)
        lam1_at0 = 2 * rig.beta(half, arb(m) / 2) / (
            rig.pi() * (m - 1) * rig.beta(half, arb(m - 1) / 2))
        ends = [(arb(1), arb(0)), (half, lam1_at0 / 2), ((1 + arb(1) / m) / 4, lam1_at0 / 2)]
        self.totals = [(top - bottom) / (2 * self.K * B[k]) for k, (top, bottom) in enumerate(ends)]
        self._T: list[list[Any]] = [[arb(1)] for _ in range(3)]
        self._partial: list[list[Any]] = [[arb(0)] for _ in range(3)]  # sum_{n < N} T_{k,n}
        self._coeffs: list[list[Any]] = [[self.coeff_from(j, [arb(1)] * 3)] for j in range(3)]
        self._polys: dict[tuple[int, int], Any] = {}

    def grow(self, n_terms: int) -> None:
        """Make ``T_{k,n}`` and ``t_{j,n}`` available for ``n < n_terms``."""
        for k in range(3):
            T, S = self._T[k], self._partial[k]
            while len(T) < n_terms:
                T.append(self.next_term(T[-1], k, len(T) - 1))
            while len(S) <= n_terms:
                S.append(S[-1] + T[len(S) - 1])
        for j, c in enumerate(self._coeffs):
            while len(c) < n_terms:
                c.append(self.coeff_from(j, [T[len(c)] for T in self._T]))

    def next_term(self, T: Any, k: int, n: int) -> Any:
        """``T_{k,n+1}`` from ``T = T_{k,n}``: the ratio
        ``(2n+1)^2 (2n+m) / (2 (2n+2m-1+2k) (n+1) (2n+3))`` (exact integers)."""
        m = self.m
        return T * ((2 * n + 1) ** 2 * (2 * n + m)) / (
            2 * (2 * n + 2 * m - 1 + 2 * k) * (n + 1) * (2 * n + 3))

    def coeff_from(self, j: int, T: list[Any]) -> Any:
        """``t_{j,n} = sum_k p_{j,k} B_k T_{k,n}`` from ``T = (T_{0,n}, T_{1,n}, T_{2,n})``."""
        return sum((wk * T[k] for k, wk in enumerate(self.weights[j])), rig.arb(0))

    def tail(self, j: int, n_terms: int) -> Any:
        """An upper bound of ``sum_{n >= n_terms} |t_{j,n}|`` (exact tails of positive series)."""
        self.grow(n_terms)
        return self.tail_bound(j, [self._partial[k][n_terms] for k in range(3)])

    def tail_bound(self, j: int, partial: list[Any]) -> Any:
        """``sum_{n >= N} |t_{j,n}|`` bounded by ``sum_k |p_{j,k} B_k| (total_k - partial_k)``,
        ``partial_k = sum_{n < N} T_{k,n}`` (the T are positive: the tails are exact)."""
        out = rig.arb(0)
        for k, wk in enumerate(self.weights[j]):
            out += abs(wk) * rig.arb(max((self.totals[k] - partial[k]).upper(), rig.arb(0)))
        return rig.arb(out.upper())

    def sums(self, z: Any, n_terms: int) -> list[Any]:
        """Balls containing ``S_j(z) = sum_n t_{j,n} z^n`` for every z in the ball ``0 <= z <= 1``
        (``n_terms`` terms by Horner, the tail as a radius)."""
        self.grow(n_terms)
        z_hi = rig.arb(z.upper())
        bound = z_hi ** n_terms
        out = []
        for j in range(3):
            key = (j, n_terms)
            if key not in self._polys:
                self._polys[key] = rig.arb_poly(self._coeffs[j][:n_terms])
            err = bound * self.tail(j, n_terms)
            out.append(self._polys[key](z) + rig.ball(0, err.upper()))
        return out

    def eigenvalues(self, phi: Any, n_terms: int) -> list[Any]:
        """``(lambda_0, lambda_1, lambda_2)`` on the ball ``phi`` (c = sin^2 phi)."""
        cos = phi.cos()
        S = self.sums(cos * cos, n_terms)
        return [(1 if j == 0 else 0) - 2 * self.K * cos * S[j] for j in range(3)]


@lru_cache(maxsize=64)
def fiber_series(m: int, bits: int) -> FiberSeries:
    """The cached series for ``m`` at ``bits`` of precision (build it inside that precision)."""
    with rig.precision(bits):
        return FiberSeries(m)
