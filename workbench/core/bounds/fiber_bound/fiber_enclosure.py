"""The fiber bound's Beta average ``E_c KyFan(c)`` as a rigorous enclosure, in arb balls
(docs/derivations/fiber_bound.md, "Rigorous evaluation", Lemmas R2-R4).

``[0, pi/2]`` (``c = sin^2 phi``) is cut into cells. On each cell the three fiber values are
enclosed by Lemma R2's series (:mod:`workbench.core.bounds.fiber_bound.fiber_series`); where those
balls
prove which values the Ky Fan sum takes (every value taken is at least every value not fully
taken), the sum is one fixed combination ``sum_j n_j v_j`` there, and adjacent such cells are
merged into a *piece*. A piece's integral is a series of integrals ``int sin^p cos^q`` with an
exact recurrence and a proved tail (Lemma R3). Cells where the order is not proved (around a
crossing, at the ends where two values meet) are enclosed crudely by their Beta mass times the
range of the Ky Fan sum over the cell (Lemma R4), after bisecting until that is negligible.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from workbench.core import rigorous as rig
from workbench.core.bounds.fiber_bound.fiber_series import FiberSeries, fiber_series
from workbench.core.safe_files import reading
from workbench.core.validation import check_int

__all__ = ["TABLE_FILE", "TABLE_TERMS", "TABLE_TOL", "captured_enclosure",
           "compute_table_entry", "ky_fan_average", "scalar_enclosure", "SinCosChain",
           "sin_cos_integral", "table_entries"]

_BITS = 128
_TOL = 1e-13  # target absolute error of E_c KyFan, spread over the pieces and cells
_TOL_SCALAR = 1e-20  # E_c lambda_0 (the exact one-head error): far tighter than any bound
_CELLS = 16  # initial cells of [0, pi/2]
_DEPTH = 60  # bisections of a cell at most (past it the cell is enclosed crudely, still proved)
_EVAL_TERMS = 2048  # most series terms for a cell's values (the tail is a radius beyond)
_PIECE_TERMS = 20000  # most series terms for a piece's average: near phi = 0 the series
# converges like N^{-d/2}, so at d <= 4 the enclosure is wider than _TOL (still proved); those
# few cases are computed once with many more terms and shipped in TABLE_FILE
TABLE_FILE = Path(__file__).with_name("fiber_table.json")
TABLE_TERMS = 6_000_000  # series terms at most for the table (about a minute a piece at d = 3)
TABLE_TOL = 4e-11


def _greedy(vals: list[Any], mult: list[int], count: int, r5: bool = True) -> list[int]:
    """The Ky Fan selection ``n_j`` for the order of the values' midpoints, with ``v_0`` before
    ``v_2`` where Lemma R5 (``v_2 <= v_0`` everywhere) holds (``r5``)."""
    order = sorted(range(len(vals)), key=lambda j: -float(vals[j].mid()))
    if r5 and len(vals) == 3 and order.index(2) < order.index(0):
        order.remove(2)
        order.insert(order.index(0) + 1, 2)
    n, left = [0] * len(vals), count
    for j in order:
        n[j] = min(mult[j], left)
        left -= n[j]
    return n


def _proved(vals: list[Any], mult: list[int], n: list[int], r5: bool = True) -> bool:
    """Lemma R4's test: ``n`` is the Ky Fan selection at every point of the cell (the pair
    ``v_0 >= v_2`` needs no test where Lemma R5 holds: ``r5``)."""
    return all(vals[i].lower() >= vals[j].upper()
               for i in range(len(vals)) if n[i] > 0
               for j in range(len(vals))
               if j != i and n[j] < mult[j] and not (r5 and (i, j) == (0, 2)))


def _ky_fan(vals: list[Any], mult: list[int], count: int) -> Any:
    """Sum of the ``count`` largest of the exact values ``vals`` (arb), with multiplicity:
    non-decreasing in each value, which is what encloses a cell (Lemma R4)."""
    total, left = rig.arb(0), count
    for j in sorted(range(len(vals)), key=lambda i: -float(vals[i].mid())):
        k = min(left, mult[j])
        total += k * vals[j]
        left -= k
    return total


class _Fiber:
    """One ``(d, r*)``: the fiber values on cells and their Beta averages on pieces."""

    def __init__(self, d: int, r_star: int) -> None:
        self.m = m = d - r_star
        self.r = r_star
        self.series: FiberSeries = fiber_series(m, _BITS)
        self.mult = [1, m, m * (m + 1) // 2 - 1]
        self.W = 2 / rig.beta(rig.arb(r_star) / 2, rig.arb(m) / 2)
        self.factors_slope = (rig.arb(0), 1 - rig.arb(1) / m, -2 / rig.arb(m + 2))
        self.factors_at0 = (rig.arb(1), rig.arb(1) / m, 2 / rig.arb(m + 2))

    def values(self, lo: Any, hi: Any) -> list[Any]:
        """Balls containing ``v_j(phi)`` for every phi in ``[lo, hi]``."""
        phi = rig.arb(lo).union(rig.arb(hi))
        z_hi = float(rig.arb(lo).cos().upper()) ** 2
        terms = _EVAL_TERMS if z_hi >= 1 else min(_EVAL_TERMS, 16 + int(45 / -math.log(z_hi)))
        lam = self.series.eigenvalues(phi, terms)
        c = phi.sin() * phi.sin()  # (flint's x ** 2 of a ball centred at 0 is nan)
        return [(self.factors_at0[j] + self.factors_slope[j] * c) * lam[j] for j in range(3)]

    def mass(self, lo: Any, hi: Any) -> Any:
        """Beta(r*/2, m/2) probability of ``lo <= phi <= hi``."""
        return self.W * sin_cos_integral(self.r - 1, self.m - 1, lo, hi)

    def averages(self, lo: Any, hi: Any, tol: float, cap: int = _PIECE_TERMS) -> list[Any]:
        """Balls containing ``int_lo^hi v_j dBeta`` (Lemma R3), each to ``tol`` or better, or
        with at most ``cap`` terms. The series terms are streamed, not stored."""
        s, m, p = self.series, self.m, self.r - 1
        low = SinCosChain(p, m, lo, hi)  # I(p, m + 2n), one step ahead for v_2
        high = SinCosChain(p + 2, m, lo, hi)  # I(p + 2, m + 2n)
        inv_m = rig.arb(1) / m
        acc = [rig.arb(0)] * 3
        scale = 2 * s.K * self.W  # what multiplies the series in the average
        T = [rig.arb(1)] * 3  # T_{k,n}
        partial = [rig.arb(0)] * 3  # sum_{n' < n} T_{k,n'}
        n = 0
        while True:
            i_now, i_next, i_high = low.value, low.peek(), high.value
            X = (i_now, inv_m * i_now + (1 - inv_m) * i_high, 2 * i_next / (m + 2))
            if n % 32 == 0:
                tails = [s.tail_bound(j, partial) * X[j] for j in range(3)]
                if n >= cap or all(float((scale * t).upper()) <= tol for t in tails):
                    break
            for j in range(3):
                acc[j] += s.coeff_from(j, T) * X[j]
            for k in range(3):
                partial[k] += T[k]
                T[k] = s.next_term(T[k], k, n)
            low.step()
            high.step()
            n += 1
        sums = [acc[j] + rig.ball(0, tails[j].upper()) for j in range(3)]
        base = (self.mass(lo, hi) / self.W, 0, 0)
        return [self.W * (base[j] - 2 * s.K * sums[j]) for j in range(3)]


class SinCosChain:
    """``I(p, q) = int_lo^hi sin^p cos^q dphi`` for ``q = q0, q0 + 2, ...`` by the exact
    recurrence ``I(p, q) = ([sin^{p+1} cos^{q-1}] + (q - 1) I(p, q - 2)) / (p + q)``."""

    def __init__(self, p: int, q0: int, lo: Any, hi: Any) -> None:
        self.p = p
        self.sin_lo, self.sin_hi = rig.arb(lo).sin(), rig.arb(hi).sin()
        self.cos_lo, self.cos_hi = rig.arb(lo).cos(), rig.arb(hi).cos()
        q = q0 % 2
        self.q = q
        self.value = sin_cos_integral(p, q, lo, hi)
        self.ends = (self.sin_lo ** (p + 1) * self.cos_lo ** (q + 1),
                     self.sin_hi ** (p + 1) * self.cos_hi ** (q + 1))  # at q + 2
        self._next: Any = None
        while self.q < q0:
            self.step()

    def peek(self) -> Any:
        if self._next is None:
            q = self.q + 2
            self._next = ((self.ends[1] - self.ends[0]) + (q - 1) * self.value) / (self.p + q)
        return self._next

    def step(self) -> None:
        self.value = self.peek()
        self._next = None
        self.q += 2
        self.ends = (self.ends[0] * self.cos_lo ** 2, self.ends[1] * self.cos_hi ** 2)


def sin_cos_integral(p: int, q: int, lo: Any, hi: Any) -> Any:
    """``int_lo^hi sin^p cos^q`` for ``q`` in {0, 1} (or by :class:`SinCosChain`)."""
    lo, hi = rig.arb(lo), rig.arb(hi)
    if q >= 2:
        chain = SinCosChain(p, q, lo, hi)
        return chain.value
    if q == 1:
        return (hi.sin() ** (p + 1) - lo.sin() ** (p + 1)) / (p + 1)
    vals = [hi - lo, lo.cos() - hi.cos()]  # int sin^0, int sin^1
    for k in range(2, p + 1):
        ends = hi.sin() ** (k - 1) * hi.cos() - lo.sin() ** (k - 1) * lo.cos()
        vals.append((-ends + (k - 1) * vals[k - 2]) / k)
    return vals[p]


@lru_cache(maxsize=4096)
def captured_enclosure(d: int, r_star: int, count: int) -> tuple[float, float]:
    """``(lo, hi)`` floats enclosing ``E_{c ~ Beta(r*/2, m/2)}`` of the sum of the ``count``
    largest fiber values (Lemma F4), ``m = d - r* >= 1``: a proved enclosure."""
    _check(d, r_star)
    count = min(check_int("count", count, lo=1), _total(d - r_star))
    shipped = _table().get(f"captured {d} {r_star} {count}")
    return shipped if shipped is not None else _compute_captured(d, r_star, count, _TOL,
                                                                 _PIECE_TERMS)


def _compute_captured(d: int, r_star: int, count: int, tol: float,
                      cap: int) -> tuple[float, float]:
    with rig.precision(_BITS):
        if d - r_star == 1:
            return rig.to_interval(_line_fiber(r_star, count))
        return rig.to_interval(_captured(_Fiber(d, r_star), count, tol, cap))


def _check(d: int, r_star: int) -> None:
    check_int("d", d, lo=2)
    check_int("r_star", r_star, lo=1, hi=d - 1)


def _total(m: int) -> int:
    """How many fiber values there are, with multiplicity (the trace's count)."""
    return 2 if m == 1 else m + m * (m + 1) // 2


def table_entries() -> list[tuple[str, int, int, int]]:
    """The slow cases (``d <= 4``, ``m >= 2``): ``("captured", d, r*, count)`` for every H
    with ``H r = r*`` and the trace, and ``("scalar", d, r*, 0)`` for the one-head energy."""
    out: list[tuple[str, int, int, int]] = []
    for d in (3, 4):
        for r_star in range(1, d - 1):
            counts = sorted({h for h in range(1, r_star + 1) if r_star % h == 0}
                            | {_total(d - r_star)})
            out += [("captured", d, r_star, c) for c in counts]
            out.append(("scalar", d, r_star, 0))
    return out


def compute_table_entry(kind: str, d: int, r_star: int, count: int, cap: int = TABLE_TERMS,
                        tol: float = TABLE_TOL) -> tuple[float, float]:
    """One enclosure of :func:`table_entries` with up to ``cap`` series terms per piece (what
    ``benchmarks/build_fiber_table.py`` writes to :data:`TABLE_FILE`)."""
    if kind == "captured":
        return _compute_captured(d, r_star, count, tol, cap)
    return _compute_scalar(d, r_star, tol, cap)


@lru_cache(maxsize=1)
def _table() -> dict[str, tuple[float, float]]:
    """The shipped enclosures (empty if the file is missing: everything is then computed)."""
    if not TABLE_FILE.is_file():
        return {}
    with reading("the fiber table", TABLE_FILE, "the table of enclosures the workbench ships"):
        raw = json.loads(TABLE_FILE.read_text())
        return {k: (float(v[0]), float(v[1])) for k, v in raw["enclosures"].items()}


@lru_cache(maxsize=1024)
def scalar_enclosure(d: int, r_star: int) -> tuple[float, float]:
    """``(lo, hi)`` floats enclosing ``E_c lambda_0(c)``, ``c ~ Beta(r*/2, m/2)``: the energy the
    Bayes head with M = I captures (the one-head identity of docs/derivations/fiber_bound.md)."""
    _check(d, r_star)
    shipped = _table().get(f"scalar {d} {r_star} 0")
    return shipped if shipped is not None else _compute_scalar(d, r_star, _TOL_SCALAR,
                                                               _PIECE_TERMS)


def _compute_scalar(d: int, r_star: int, tol: float, cap: int) -> tuple[float, float]:
    with rig.precision(_BITS):
        if d - r_star == 1:
            return rig.to_interval(_line_average(r_star, up=True))
        fib = _Fiber(d, r_star)
        return rig.to_interval(fib.averages(0.0, rig.pi() / 2, tol, cap)[0])


def _line_average(r_star: int, up: bool) -> Any:
    """m = 1: ``E v_0 = E 2 phi/pi`` (``up``) or ``E v_1``."""
    return _line_integral(r_star, up, 0.0, math.pi / 2)


def _line_fiber(r_star: int, count: int) -> Any:
    """m = 1: two or more values sum to 1; one takes ``max(v_0, v_1)``, which switches from
    ``v_1`` to ``v_0`` at pi/4, here the float pi/4: on the sliver between it and the true pi/4
    the wrong one of the two is taken, off by at most ``4 gap / pi`` (added as a radius)."""
    if count >= 2:
        return rig.arb(1)
    quarter = math.pi / 4
    sliver = abs(rig.pi() / 4 - quarter)
    rad = 2 / rig.beta(rig.arb(r_star) / 2, rig.arb(1) / 2) * sliver * 4 * sliver / rig.pi()
    return (_line_integral(r_star, False, 0.0, quarter)
            + _line_integral(r_star, True, quarter, math.pi / 2) + rig.ball(0, rad.upper()))


def _line_integral(r_star: int, up: bool, lo: float, hi: float) -> Any:
    """m = 1: ``int_lo^hi v dBeta`` for ``v = 2 phi/pi`` (``up``) or ``1 - 2 phi/pi`` (Lemma R1)
    under the weight ``W sin^{r*-1} phi``, by ``acb.integral`` between float ends; an end at the
    float pi/2 adds the sliver to the true pi/2 as a radius (the integrand is at most W there)."""
    W = 2 / rig.beta(rig.arb(r_star) / 2, rig.arb(1) / 2)
    two_pi = 2 / rig.pi()

    def f(x: Any, analytic: bool) -> Any:
        lin = two_pi * x
        return (lin if up else 1 - lin) * x.sin() ** (r_star - 1)

    rad = W * abs(rig.pi() / 2 - hi) if hi == math.pi / 2 else rig.arb(0)
    return W * rig.integrate(f, lo, hi) + rig.ball(0, rad.upper())


def _captured(fib: _Fiber, count: int, tol: float, cap: int) -> Any:
    return ky_fan_average(fib, count, tol, cap)


def ky_fan_average(fib: Any, count: int, tol: float, cap: int) -> Any:
    """A ball containing ``E_c KyFan_count(c)`` (Lemma R4) for any fiber object with ``values``,
    ``mass``, ``averages``, ``mult`` and ``r5`` (whether Lemma R5 orders ``v_0, v_2``): the
    arcsine kernel's :class:`_Fiber` or a profile's (:mod:`.profile_fiber_kernel`)."""
    r5 = getattr(fib, "r5", True)
    top = rig.pi() / 2
    if count >= sum(fib.mult):  # the trace: every value, no order to prove
        avg = fib.averages(0.0, top, tol / 3, cap)
        return sum((k * v for k, v in zip(fib.mult, avg)), rig.arb(0))
    grid: list[Any] = [k * (math.pi / 2) / _CELLS for k in range(_CELLS)] + [top]
    cells = [(grid[k], grid[k + 1], 0) for k in range(_CELLS)][::-1]  # popped left to right
    pieces: list[tuple[Any, Any, list[int]]] = []
    run: tuple[Any, Any, list[int]] | None = None
    crude = rig.arb(0)
    while cells:
        lo, hi, depth = cells.pop()
        vals = fib.values(lo, hi)
        n = _greedy(vals, fib.mult, count, r5)
        if _proved(vals, fib.mult, n, r5):
            run = (run[0], hi, n) if run is not None and run[2] == n else _flush(pieces, run, (
                lo, hi, n))
            continue
        lows = [max(v.lower(), rig.arb(0)) for v in vals]
        kf_lo, kf_hi = _ky_fan(lows, fib.mult, count), _ky_fan(
            [v.upper() for v in vals], fib.mult, count)
        mass = fib.mass(lo, hi)
        if depth >= _DEPTH or float((mass * (kf_hi - kf_lo)).upper()) <= tol / 64:
            crude += mass * kf_lo.union(kf_hi)
            run = _flush(pieces, run, None)
            continue
        mid = _midpoint(lo, hi)
        cells += [(mid, hi, depth + 1), (lo, mid, depth + 1)]
    _flush(pieces, run, None)
    out = crude
    for lo, hi, n in pieces:
        avg = fib.averages(lo, hi, tol / (3 * len(pieces)), cap)
        out += sum((k * v for k, v in zip(n, avg)), rig.arb(0))
    return out


def _flush(pieces: list[tuple[Any, Any, list[int]]], run: tuple[Any, Any, list[int]] | None,
           new: tuple[Any, Any, list[int]] | None) -> tuple[Any, Any, list[int]] | None:
    """Close the current run of proved cells (one piece) and start ``new``."""
    if run is not None:
        pieces.append(run)
    return new


def _midpoint(lo: Any, hi: Any) -> float:
    """A float strictly inside ``(lo, hi)`` (the cells' ends are floats, the last one the ball
    pi/2, whose float midpoint lies below it)."""
    a, b = float(lo), float(rig.arb(hi).mid())
    return a + (b - a) / 2
