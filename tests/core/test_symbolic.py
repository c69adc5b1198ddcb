"""Symbolic targets and bounds (docs/paper.md §2-3) against numeric computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch

from workbench.core import symbolic as sym
from workbench.core import targets
from workbench.core.bounds.fiber_bound.fiber import fiber_bound
from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound
from workbench.core.sphere import sample_instances
from workbench.core.symbolic import ALL_BOUNDS, DOMAINS, get_bound
from workbench.core.symbolic.symbols import beta

D = 3
x1, x2, y = sym.vector_symbols("x1", D), sym.vector_symbols("x2", D), sym.vector_symbols("y", D)
b1, b2 = sp.symbols("b1 b2", real=True)


def test_swap_symmetry() -> None:
    for f in (sym.nn2_sign(x1, x2, y), sym.nn2_soft(x1, x2, y, beta),
              sym.nn2_biased(x1, x2, y, b1, b2)):
        swapped = f.subs({**dict(zip(x1, x2)), **dict(zip(x2, x1)), b1: b2, b2: b1},
                         simultaneous=True)
        assert sp.simplify(f - swapped) == sp.zeros(D, 1)


def test_full_rank_head_represents_soft_target_exactly() -> None:
    diff = sym.softmax_head(x1, x2, y, beta) - sym.nn2_soft(x1, x2, y, beta)
    assert all(sp.simplify(sp.expand(e.rewrite(sp.exp))) == 0 for e in diff)
    diffb = sym.softmax_head(x1, x2, y, beta, b1, b2) - sym.nn2_soft_biased(x1, x2, y, b1, b2, beta)
    assert all(sp.simplify(sp.expand(e.rewrite(sp.exp))) == 0 for e in diffb)


def test_beta_to_infinity_limit_is_the_sign_target() -> None:
    zp, zn = sp.Symbol("zp", positive=True), sp.Symbol("zn", negative=True)
    assert sp.limit(sp.tanh(beta * zp / 2), beta, sp.oo) == sp.sign(zp)
    assert sp.limit(sp.tanh(beta * zn / 2), beta, sp.oo) == sp.sign(zn)


def test_symbolic_targets_match_numeric_targets() -> None:
    g = torch.Generator().manual_seed(4)
    X, yy = sample_instances(64, 2, D, points="iid", generator=g)
    bias = torch.randn(2, generator=g, dtype=torch.float64) * 0.3
    syms = [*x1, *x2, *y]
    f_hard = sp.lambdify(syms, sym.nn2_sign(x1, x2, y), "numpy")
    f_soft = sp.lambdify([*syms, beta], sym.nn2_soft(x1, x2, y, beta), "numpy")
    f_bias = sp.lambdify([*syms, b1, b2], sym.nn2_biased(x1, x2, y, b1, b2), "numpy")
    f_sb = sp.lambdify([*syms, b1, b2, beta], sym.nn2_soft_biased(x1, x2, y, b1, b2, beta), "numpy")
    args = [*X[:, 0].T.numpy(), *X[:, 1].T.numpy(), *yy.T.numpy()]
    bb = [float(bias[0]), float(bias[1])]
    np.testing.assert_allclose(f_hard(*args)[:, 0].T, targets.nearest_neighbour(X, yy), atol=1e-12)
    np.testing.assert_allclose(f_soft(*args, 3.0)[:, 0].T,
                               targets.soft_nearest_neighbour(X, yy, 3.0), atol=1e-12)
    np.testing.assert_allclose(f_bias(*args, *bb)[:, 0].T,
                               targets.biased_nearest_neighbour(X, yy, bias), atol=1e-12)
    np.testing.assert_allclose(f_sb(*args, *bb, 2.0)[:, 0].T,
                               targets.soft_biased_nearest_neighbour(X, yy, bias, 2.0), atol=1e-12)


def test_fact1_temperature_makes_pointwise_error_small() -> None:
    temp, point = get_bound("fact1.sufficient_temperature"), get_bound("fact1.pointwise_error")
    b = temp.evaluate(N=4, eps=0.01, gap=0.1)
    assert point.evaluate(N=4, beta=b, gap=0.1) == pytest.approx(0.01, rel=1e-12)
    inner = [a for a in sp.preorder_traversal(point.rhs) if isinstance(a, sp.Min)][0].args
    expo = [a for a in inner if a != 1][0]
    assert sp.simplify(4 * expo.subs(beta, temp.rhs) - sp.Symbol("eps", positive=True)) == 0
    # numeric check of the pointwise bound with the workbench targets (N = 4, iid points)
    g = torch.Generator().manual_seed(9)
    X, yy = sample_instances(2000, 4, 6, points="iid", generator=g)
    scores = torch.einsum("bnd,bd->bn", X, yy).sort(dim=-1, descending=True).values
    gaps = scores[:, 0] - scores[:, 1]
    err = ((targets.soft_nearest_neighbour(X, yy, 5.0) - targets.nearest_neighbour(X, yy)) ** 2)
    bound = 4 * torch.clamp(9 * torch.exp(-2 * 5.0 * gaps), max=1.0)
    assert torch.all(err.sum(-1) <= bound + 1e-12)


def test_solve_for_and_evaluate() -> None:
    t2 = get_bound("thm2.high_dimensional")
    h = t2.evaluate(d=64, r=1, eps=0.5, c_2a=1, c_2b=1)
    assert h == pytest.approx(64.0**2)
    e_sol = t2.solve_for("eps")
    e_val = float(e_sol.subs({sp.Symbol("d", integer=True, positive=True): 64,
                              sp.Symbol("r", integer=True, positive=True): 1,
                              sp.Symbol("H", integer=True, positive=True): 4096,
                              sp.Symbol("c_2a", positive=True): 1,
                              sp.Symbol("c_2b", positive=True): 1}))
    assert e_val == pytest.approx(0.5)
    t5 = get_bound("thm5.majority_vote_heads")
    assert "derived" in t5.tag and t5.evaluate(d=64, eps=0.1, c_5=1) == pytest.approx(6400)
    t3 = get_bound("thm3.rank_r_norm_condition")
    r4 = get_bound("remark4.norm_needed")
    assert sp.simplify(t3.solve_for("V") ** 2 - r4.rhs.subs(sp.Symbol("H", integer=True,
                                                                      positive=True), t3.lhs)) == 0
    hi = get_bound("thm2.high_accuracy")
    assert hi.evaluate(d=10, r=10, c_2c=1, c_2d=1) == pytest.approx(math.e**10)


def test_latex_and_metadata() -> None:
    for b in ALL_BOUNDS.values():
        assert isinstance(b.latex(), str) and "\\" in b.latex()
        assert b.tag in {"stated", "derived", "inferred", "derived heuristic"}
        for c, note in b.constants.items():
            assert c.name.startswith("c_") and note
    assert set(DOMAINS) >= {sp.Symbol(n, integer=True, positive=True) for n in "drHNL"}


def test_harmonic_bound_delegates_to_interval_evaluation() -> None:
    b = get_bound("n2.harmonic_bound")
    assert b.evaluate(d=16, r=2, H=8) == harmonic_bound(16, 2, 8).enclosure[0]
    assert "Sum" in sp.srepr(b.rhs)
    q = get_bound("n2.harmonic_bound_query_values")
    wide = harmonic_bound(16, 2, 8, value_class="query-dependent-values").enclosure[0]
    assert q.evaluate(d=16, r=2, H=8) == wide
    fiber = fiber_bound(12, 2, 4).enclosure[0]
    assert get_bound("n2.fiber_bound").evaluate(d=12, r=2, H=4) == fiber


def test_bounds_are_one_table_with_one_name_each() -> None:
    from workbench.core.symbolic.bounds import BOUNDS

    assert [b.id for b in BOUNDS] == list(ALL_BOUNDS) and len(set(ALL_BOUNDS)) == len(BOUNDS)
    assert all(ALL_BOUNDS[b.id] is b for b in BOUNDS)
    old = {"n2.certified_lower_bound", "n2.certified_lower_bound_query_values",
           "n2.fiber_lower_bound"}
    assert not old & set(ALL_BOUNDS)


def test_domain_errors_name_the_parameter() -> None:
    t2 = get_bound("thm2.high_dimensional")
    with pytest.raises(ValueError, match="eps"):
        t2.evaluate(d=64, r=1, eps=1.5, c_2a=1, c_2b=1)
    with pytest.raises(ValueError, match="r must"):
        t2.evaluate(d=8, r=9, eps=0.5, c_2a=1, c_2b=1)
    with pytest.raises(ValueError, match="c_2a"):
        t2.evaluate(d=8, r=2, eps=0.5)
    with pytest.raises(ValueError, match="d must"):
        t2.evaluate(d=2.5, r=1, eps=0.5, c_2a=1, c_2b=1)
    with pytest.raises(ValueError, match="symbol"):
        t2.solve_for("beta")
    with pytest.raises(ValueError, match="bound_id"):
        get_bound("nope")
