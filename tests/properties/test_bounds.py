"""The certified lower bound for N = 2 (docs/paper.md §3, Lemmas 1-6) and the symbolic bounds
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
from property_helpers import RF_DIMS, fewer

from constructions.random_features import random_features
from workbench import strategies as S
from workbench.core import lower_bound as lbm
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
    lb = lbm.lower_bound(a.d, a.r, a.H)
    lo, hi = lb.enclosure
    assert all(math.isfinite(v) for v in (lo, hi, lb.value, lb.tail))
    assert 0.0 <= lo <= lb.value <= hi <= 0.5
    assert hi - lo <= 1e-12 + 1e-9 * hi
    assert lb.tail >= 0
    if a.r >= a.d - 1:
        assert lb.enclosure == (0.0, 0.0)


@given(ARGS, st.integers(1, 1 << 12))
@example(S.BoundArgs(5, 1, 1, 1.0), 1)
def test_bound_is_non_increasing_in_heads(a: S.BoundArgs, more: int) -> None:
    small, large = lbm.lower_bound(a.d, a.r, a.H), lbm.lower_bound(a.d, a.r, a.H + more)
    assert large.enclosure[0] <= small.enclosure[1]
    assert large.value <= small.value


@given(ARGS)
@example(S.BoundArgs(6, 1, 1, 1.0))
def test_bound_is_non_increasing_in_rank(a: S.BoundArgs) -> None:
    assume(a.r < a.d)
    low, high = lbm.lower_bound(a.d, a.r, a.H), lbm.lower_bound(a.d, a.r + 1, a.H)
    assert high.enclosure[0] <= low.enclosure[1]
    assert high.value <= low.value


@fewer(2)
@given(S.bound_arguments(max_d=10, min_eps=0.005))
@example(S.BoundArgs(3, 1, 1, 0.005))
@example(S.BoundArgs(8, 2, 1, 1.0))
def test_heads_needed_is_the_least_certified_head_count(a: S.BoundArgs) -> None:
    Hs = lbm.heads_needed(a.d, a.r, a.eps)
    assert Hs >= 1
    assert lbm.lower_bound(a.d, a.r, Hs).enclosure[0] <= a.eps
    if Hs > 1:
        assert lbm.lower_bound(a.d, a.r, Hs - 1).enclosure[0] > a.eps


@cache
def _encoded_summand():
    """The summand of the sympy encoding with ``eta(d, l)^2`` replaced by a symbol ``E``."""
    rhs = sb.get_bound("n2.certified_lower_bound").rhs
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
    lb = lbm.lower_bound(a.d, a.r, a.H)
    f = _encoded_summand()
    eta = sign_coefficients(a.d, lb.degrees_summed)
    with mpmath.workdps(20):
        total = sum(f(a.d, a.r, a.H, l, mpmath.mpf(eta[l]) ** 2)
                    for l in range(1, lb.degrees_summed + 1, 2))
    assert float(total) / 2 == pytest.approx(lb.value, rel=1e-9, abs=1e-15)


@fewer(3)
@given(RF_DIMS, S.heads(40), S.seeds())
@example(3, 1, 0)
def test_random_features_never_beat_the_bound(d: int, H: int, seed: int) -> None:
    """A rank-1 hardmax construction is generalized attention: its exact error is above."""
    _, claim = random_features(d, H, generator=seed, build_model=False)
    assert claim.value >= lbm.lower_bound(d, 1, H).enclosure[0]


# (bound id, symbol, +1 non-decreasing / -1 non-increasing, strategy of the symbol's values)
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
    ("thm5.majority_vote_heads", "eps", -1), ("n2.certified_lower_bound", "H", -1),
    ("n2.certified_lower_bound", "r", -1),
]


@st.composite
def _bound_points(draw: st.DrawFn) -> tuple[str, str, int, dict, dict]:
    bid, name, sign = draw(st.sampled_from(DIRECTIONS))
    b = sb.get_bound(bid)
    names = {s.name for s in b.rhs.free_symbols}
    if bid == "n2.certified_lower_bound":
        names = {"d", "r", "H"}
    d = draw(st.integers(2, 12))
    p: dict = {}
    for n in sorted(names):
        p[n] = {
            "d": d, "r": draw(st.integers(1, d)), "H": draw(st.integers(1, 200)),
            "N": draw(st.integers(2, 9)), "eps": draw(st.floats(0.01, 1.0)),
            "beta": draw(st.floats(0.0, 50.0)), "gap": draw(st.floats(0.01, 2.0)),
            "V": draw(_POS),
        }.get(n, draw(_POS))  # unknown constants c_* > 0
    q = dict(p)
    if name in ("d", "r", "H", "N"):
        q[name] = p[name] + draw(st.integers(1, 3))
        assume(name != "r" or q["r"] <= q["d"])
    elif name == "eps":
        q[name] = min(1.0, p[name] * draw(st.floats(1.0, 3.0)))
    elif name == "gap":
        q[name] = min(2.0, p[name] * draw(st.floats(1.0, 3.0)))
    else:
        q[name] = p[name] * draw(st.floats(1.0, 3.0))
    return bid, name, sign, p, q


@given(_bound_points())
def test_symbolic_bounds_are_monotone_as_their_theorems_say(case) -> None:
    bid, name, sign, p, q = case
    b = sb.get_bound(bid)
    lo, hi = b.evaluate(**p), b.evaluate(**q)
    assert math.isfinite(lo) and math.isfinite(hi)
    tol = 1e-12 * max(1.0, abs(lo))
    assert sign * (hi - lo) >= -tol, (bid, name, p, q, lo, hi)
