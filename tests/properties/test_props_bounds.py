"""The harmonic count for N = 2 (docs/paper.md §3, Lemmas 1-6) and the symbolic bounds
(workbench/core/symbolic/bounds.py): range, monotonicity, consistency of ``heads_needed``, and
agreement with an independent float evaluation of the sympy encoding."""

from __future__ import annotations

import math
from functools import cache

import mpmath
import pytest
import sympy as sp
from hypothesis import assume, example, given
from hypothesis import strategies as st

from tests.properties.property_helpers import RF_DIMS, fewer
from workbench import strategies as S
from workbench.constructions.random_features import random_features
from workbench.core.bounds.harmonic_count import harmonic as lbm
from workbench.core.bounds.numerics.truncation import digits_tolerance
from workbench.core.harmonics import sign_coefficients
from workbench.core.symbolic import bounds as sb
from workbench.core.symbolic.symbols import H as H_
from workbench.core.symbolic.symbols import d as d_
from workbench.core.symbolic.symbols import r as r_

pytestmark = pytest.mark.properties

ARGS = S.bound_arguments(max_d=14, max_heads=1 << 14)


@given(ARGS)
@example(S.BoundArgs(2, 1, 1, 1.0))
@example(S.BoundArgs(3, 1, 1, 1.0))
@example(S.BoundArgs(5, 3, 1, 0.01))  # r = d - 2: the last rank with a non-zero bound
@example(S.BoundArgs(5, 4, 16384, 0.01))  # r = d - 1: zero
def test_bound_is_a_finite_number_in_0_half(a: S.BoundArgs) -> None:
    lb = lbm.harmonic_bound(a.d, a.r, a.H)
    lo, hi = lb.enclosure
    assert all(math.isfinite(v) for v in (lo, hi, lb.value, lb.tail))
    assert 0.0 <= lo <= lb.value <= hi <= 0.5
    # the width is the counted tail's open part, settled to the printed digits unless the
    # truncation says it matters (docs/derivations/lower_bound.md, Lemma 6)
    assert lb.truncation is not None and hi - lo <= lb.tail + 1e-15
    if lb.truncation.settled:
        assert hi - lo <= digits_tolerance(lo) + 1e-15
    assert lb.tail >= 0
    if a.r >= a.d - 1:
        assert lb.enclosure == (0.0, 0.0)


@given(ARGS, st.integers(1, 1 << 12))
@example(S.BoundArgs(5, 1, 1, 1.0), 1)
def test_bound_is_non_increasing_in_heads(a: S.BoundArgs, more: int) -> None:
    small, large = lbm.harmonic_bound(a.d, a.r, a.H), lbm.harmonic_bound(a.d, a.r, a.H + more)
    assert large.enclosure[0] <= small.enclosure[1]
    assert large.value <= small.value


@given(ARGS)
@example(S.BoundArgs(6, 1, 1, 1.0))
def test_bound_is_non_increasing_in_rank(a: S.BoundArgs) -> None:
    assume(a.r < a.d)
    low, high = lbm.harmonic_bound(a.d, a.r, a.H), lbm.harmonic_bound(a.d, a.r + 1, a.H)
    assert high.enclosure[0] <= low.enclosure[1]
    assert high.value <= low.value


@fewer(2)
@given(S.bound_arguments(max_d=10, min_eps=0.005))
@example(S.BoundArgs(3, 1, 1, 0.005))
@example(S.BoundArgs(8, 2, 1, 1.0))
def test_heads_needed_is_the_least_head_count_of_the_harmonic_count(a: S.BoundArgs) -> None:
    Hs = lbm.heads_needed(a.d, a.r, a.eps)
    assert Hs >= 1
    assert lbm.harmonic_bound(a.d, a.r, Hs).enclosure[0] <= a.eps
    if Hs > 1:
        assert lbm.harmonic_bound(a.d, a.r, Hs - 1).enclosure[0] > a.eps


@cache
def _encoded_summand():
    """The summand of the sympy encoding with ``eta(d, l)^2`` replaced by a symbol ``E``."""
    rhs = sb.get_bound("n2.harmonic_bound").rhs
    (total,) = [t for t in rhs.args if isinstance(t, sp.Sum)]
    l_ = total.limits[0][0]
    E = sp.Symbol("E")
    body = total.function.replace(lambda e: isinstance(e, sp.Function)
                                  and e.func.__name__ == "eta", lambda e: sp.sqrt(E))
    return sp.lambdify((d_, r_, H_, l_, E), body, modules="mpmath")


@fewer(2)
@given(ARGS)
@example(S.BoundArgs(4, 1, 1, 1.0))
@example(S.BoundArgs(9, 2, 37, 1.0))
def test_bound_equals_the_sympy_encoding_evaluated_in_floats(a: S.BoundArgs) -> None:
    """Independent evaluation: the encoded summand, float eta_l^2, over the summed degrees."""
    lb = lbm.harmonic_bound(a.d, a.r, a.H)
    f = _encoded_summand()
    eta = sign_coefficients(a.d, lb.degrees_summed)
    with mpmath.workdps(20):
        total = sum(f(a.d, a.r, a.H, l, mpmath.mpf(eta[l]) ** 2)
                    for l in range(1, lb.degrees_summed + 1, 2))
        rest = 1 - sum(mpmath.mpf(eta[l]) ** 2 for l in range(1, lb.degrees_summed + 1, 2))
    # plus the counted tail (Lemma 6): the rest of the energy, uncaptured in 1 - min(1, H g)
    num, den = lbm.tail_capture_ratio(a.d, a.r, lb.degrees_summed)
    kept = 0.0 if a.r >= a.d - 1 else max(0.0, 1 - a.H * num / den)
    want = float(total) / 2 + float(rest) / 2 * kept
    assert want == pytest.approx(lb.enclosure[0], rel=1e-9, abs=1e-15)


@fewer(3)
@given(RF_DIMS, S.heads(40), S.seeds())
@example(3, 1, 0)
def test_random_features_never_beat_the_bound(d: int, H: int, seed: int) -> None:
    """A rank-1 hardmax construction is generalized attention: its exact error is above."""
    _, claim = random_features(d, H, generator=seed, build_model=False)
    assert claim.value >= lbm.harmonic_bound(d, 1, H).enclosure[0]


# (bound id, symbol, +1 non-decreasing / -1 non-increasing in that symbol)
_POS = st.floats(0.05, 3.0)
DIRECTIONS = [
    ("fact1.pointwise_error", "beta", -1), ("fact1.pointwise_error", "gap", -1),
    ("fact1.pointwise_error", "N", +1),
    ("fact1.sufficient_temperature", "eps", -1), ("fact1.sufficient_temperature", "gap", -1),
    ("fact1.sufficient_temperature", "N", +1),
    ("thm2.high_dimensional", "d", +1), ("thm2.high_dimensional", "r", -1),
    ("thm2.high_dimensional", "eps", -1), ("thm2.high_accuracy", "d", +1),
    ("thm3.rank_r_norm_condition", "r", -1), ("thm3.rank_r_norm_condition", "V", -1),
    ("thm3.full_rank_heads", "d", +1), ("remark4.norm_needed", "H", -1),
    ("remark4.norm_needed", "r", -1), ("thm5.majority_vote_heads", "d", +1),
    ("thm5.majority_vote_heads", "eps", -1), ("n2.harmonic_bound", "H", -1),
    ("n2.harmonic_bound", "r", -1),
]


@cache
def _rhs_lambda(rhs: sp.Expr):
    """Keyed by the expression itself, so a patched bound is never served from the cache."""
    syms = sorted(rhs.free_symbols, key=lambda s: s.name)
    return [s.name for s in syms], sp.lambdify(syms, rhs, modules="mpmath")


def _rhs(bid: str):
    """The encoded right-hand side as a function of a parameter dict: the lambdified sympy
    expression (fast), or the bound's own numeric evaluation where it has one."""
    b = sb.get_bound(bid)
    if b.numeric is not None:
        return lambda p: b.evaluate(d=p["d"], r=p["r"], H=p["H"])
    names, f = _rhs_lambda(b.rhs)
    return lambda p: float(f(*(p[n] for n in names)))


@st.composite
def _bound_points(draw: st.DrawFn) -> tuple[dict, dict[str, dict]]:
    """A base point of every symbol, and for each varied symbol a point further along it."""
    d = draw(st.integers(2, 12))
    p: dict = {
        "d": d, "r": draw(st.integers(1, d)), "H": draw(st.integers(1, 200)),
        "N": draw(st.integers(2, 9)), "eps": draw(st.floats(0.01, 1.0)),
        "beta": draw(st.floats(0.0, 50.0)), "gap": draw(st.floats(0.01, 2.0)), "V": draw(_POS),
    }
    for c in ("c_2a", "c_2b", "c_2c", "c_2d", "c_3", "c_3u", "c_5"):  # unknown constants > 0
        p[c] = draw(_POS)
    moved: dict[str, dict] = {}
    for name in ("d", "r", "H", "N"):
        moved[name] = {**p, name: p[name] + draw(st.integers(1, 3))}
    for name, cap in (("eps", 1.0), ("gap", 2.0), ("beta", None), ("V", None)):
        v = p[name] * draw(st.floats(1.0, 3.0))
        moved[name] = {**p, name: v if cap is None else min(cap, v)}
    if p["beta"] == 0:
        moved["beta"]["beta"] = draw(st.floats(0.0, 5.0))
    return p, moved


@fewer(2)
@given(_bound_points())
@example(({"d": 5, "r": 2, "H": 3, "N": 2, "eps": 0.5, "beta": 1.0, "gap": 0.5, "V": 1.0,
           "c_2a": 1.0, "c_2b": 1.0, "c_2c": 1.0, "c_2d": 1.0, "c_3": 1.0, "c_3u": 1.0,
           "c_5": 1.0}, {}))
def test_symbolic_bounds_are_monotone_as_their_theorems_say(case) -> None:
    p, moved = case
    for bid, name, sign in DIRECTIONS:
        q = moved.get(name)
        if q is None or q["r"] > q["d"]:
            continue
        f = _rhs(bid)
        lo, hi = f(p), f(q)
        assert math.isfinite(lo) and math.isfinite(hi)
        tol = 1e-12 * max(1.0, abs(lo))
        assert sign * (hi - lo) >= -tol, (bid, name, p, q, lo, hi)
