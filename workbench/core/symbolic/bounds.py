"""Sympy encodings of the paper's bounds (docs/paper.md §3-3).

Each :class:`Bound` is ``lhs REL rhs`` over the named symbols. Constants the paper does not give
are named symbols (``c_*``) listed in ``constants`` with a note; :meth:`Bound.evaluate` needs them
as keyword arguments. Tags follow docs/paper.md: ``stated``, ``derived``, ``inferred``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import sympy as sp

from workbench.core.symbolic.symbols import H, N, V, beta, check_params, d, eps, err, gap, r

c_2a, c_2b, c_2c, c_2d = sp.symbols("c_2a c_2b c_2c c_2d", positive=True)
c_3, c_3u, c_5 = sp.symbols("c_3 c_3u c_5", positive=True)

_UNKNOWN = "unknown constant: not in our copy of the paper"


@dataclass(frozen=True)
class Bound:
    """A bound ``lhs REL rhs`` with named symbols, unknown constants and provenance."""

    id: str
    title: str
    tag: str  # stated | derived | inferred | derived heuristic
    lhs: sp.Expr
    relation: str  # "<=" or ">="
    rhs: sp.Expr
    constants: dict[sp.Symbol, str] = field(default_factory=dict)
    note: str = ""
    numeric: Callable[..., float] | None = None

    @property
    def statement(self) -> sp.Rel:
        """The sympy relational ``lhs <= rhs`` or ``lhs >= rhs``."""
        return sp.Le(self.lhs, self.rhs) if self.relation == "<=" else sp.Ge(self.lhs, self.rhs)

    @property
    def free_symbols(self) -> set[sp.Symbol]:
        return set(self.rhs.free_symbols) | set(self.lhs.free_symbols)

    def evaluate(self, **params: float) -> float:
        """Numeric value of ``rhs`` at ``params`` (symbol names; constants included)."""
        if self.numeric is not None:
            return float(self.numeric(**params))
        by_name = {s.name: s for s in self.rhs.free_symbols}
        unknown = set(params) - set(by_name)
        if unknown:
            raise ValueError(f"{sorted(unknown)[0]} is not a parameter of {self.id}")
        missing = set(by_name) - set(params)
        if missing:
            name = sorted(missing)[0]
            why = f" ({self.constants[by_name[name]]})" if by_name[name] in self.constants else ""
            raise ValueError(f"{name} must be given to evaluate {self.id}{why}")
        plain = {by_name[k]: v for k, v in params.items() if by_name[k] not in self.constants}
        subs = check_params(plain)
        for k, v in params.items():
            if by_name[k] in self.constants:
                subs[by_name[k]] = sp.Float(v, 30)
        val = self.rhs.subs(subs).evalf(30)
        if not val.is_real:
            raise ValueError(f"{self.id} is not real at {params}")
        return float(val)

    def solve_for(self, symbol: sp.Symbol | str) -> sp.Expr:
        """The threshold of ``symbol`` at equality ``lhs = rhs`` (e.g. least H for a given eps)."""
        syms = {s.name: s for s in self.free_symbols}
        sym = syms.get(symbol) if isinstance(symbol, str) else symbol
        if sym not in self.free_symbols:
            raise ValueError(f"symbol must be one of {sorted(syms)} (got {symbol!r})")
        sols = sp.solve(sp.Eq(self.lhs, self.rhs), sym)
        real = [s for s in sols if s.is_real is not False]
        if not real:
            raise ValueError(f"{self.id}: no closed-form solution for {sym}")
        return sp.simplify(real[0])

    def latex(self) -> str:
        """LaTeX of the statement."""
        return sp.latex(self.statement)


def _pointwise_fact1() -> Bound:
    return Bound(
        id="fact1.pointwise_error",
        title="Fact 1: error of the beta head at a point with score gap `gap`",
        tag="derived",
        lhs=err,
        relation="<=",
        rhs=4 * sp.Min(1, (N - 1) ** 2 * sp.exp(-2 * beta * gap)),
        note="||Xp - x*|| <= 2(1-p*) and 1-p* <= (N-1) exp(-beta gap); the expected error is "
        "E of this over the data.",
    )


def _fact1_temperature() -> Bound:
    return Bound(
        id="fact1.sufficient_temperature",
        title="Fact 1: a temperature that makes the pointwise error at most eps",
        tag="derived",
        lhs=beta,
        relation=">=",
        rhs=sp.log(4 * (N - 1) ** 2 / eps) / (2 * gap),
        note="Solves 4 (N-1)^2 exp(-2 beta gap) = eps; for N = 1 any beta works.",
    )


def _thm2_high_dim() -> Bound:
    return Bound(
        id="thm2.high_dimensional",
        title="Theorem 2: heads needed by rank r < d, high-dimensional regime",
        tag="stated",
        lhs=H,
        relation=">=",
        rhs=c_2a * (d / r) ** (c_2b / eps),
        constants={c_2a: _UNKNOWN, c_2b: _UNKNOWN + " (the eps range too)"},
        note="Omega((d/r)^(1/eps)), N = 2, D_2, generalized attention, d >= 5.",
    )


def _thm2_high_acc() -> Bound:
    return Bound(
        id="thm2.high_accuracy",
        title="Theorem 2: heads needed by rank r < d, high-accuracy regime",
        tag="stated",
        lhs=H,
        relation=">=",
        rhs=c_2c * sp.exp(c_2d * (d - r * sp.log(d / r))),
        constants={c_2c: _UNKNOWN, c_2d: _UNKNOWN},
        note="Omega(exp(d - r log(d/r))).",
    )


def _thm3() -> Bound:
    return Bound(
        id="thm3.rank_r_norm_condition",
        title="Theorem 3: rank-r heads needed to beat constant error (given norm bound V)",
        tag="stated",
        lhs=H,
        relation=">=",
        rhs=sp.exp(c_3 * (d - r)) / (d * V**2),
        constants={c_3: _UNKNOWN},
        note="Constant error persists while d H max_h ||V_h||^2 < exp(c (d - r)); Gaussian y, "
        "biased targets (definitions partly inferred).",
    )


def _thm3_upper() -> Bound:
    return Bound(
        id="thm3.full_rank_heads",
        title="Theorem 3: full-rank biased attention represents the target with O(d^2) heads",
        tag="stated",
        lhs=H,
        relation="<=",
        rhs=c_3u * d**2,
        constants={c_3u: _UNKNOWN + " (the target has 2 d^2 + 1 biased terms)"},
    )


def _remark4() -> Bound:
    return Bound(
        id="remark4.norm_needed",
        title="Remark 4: the weight norm needed by H rank-r heads",
        tag="stated",
        lhs=V**2,
        relation=">=",
        rhs=sp.exp(c_3 * (d - r)) / (d * H),
        constants={c_3: _UNKNOWN},
        note="Theorem 3 read as a norm condition; whether the norm dependence can be removed "
        "is open (Yehudai & Shamir 2019, Kamath et al. 2020).",
    )


def _thm5() -> Bound:
    return Bound(
        id="thm5.majority_vote_heads",
        title="Theorem 5: heads for two rank-1 layers with majority voting",
        tag="derived heuristic",
        lhs=H,
        relation=">=",
        rhs=c_5 * d / eps**2,
        constants={c_5: "unknown constant of the derived heuristic H ~ d/eps^2 (to verify)"},
        note="DERIVED HEURISTIC, not the paper's statement: error falls like sqrt(d/H).",
    )


def degree_count(value_class: str = "eq2") -> sp.Expr:
    """``D_l`` of the certified bound: ``D'_l`` (Eq. 2) or ``d(d+1)/2 D'_l`` (query-dependent
    value maps), as a sympy expression in ``d, r, l`` (docs/derivations/lower_bound.md, Lemma 5)."""
    l_ = sp.Symbol("l", integer=True, positive=True)
    low = sp.Piecewise((sp.binomial(l_ + r - 3, r - 1), l_ >= 2), (0, True))  # degree l-2 >= 0
    dprime = low + sp.binomial(l_ + r - 1, r - 1) + sp.binomial(l_ + r + 1, r - 1)
    return dprime if value_class == "eq2" else d * (d + 1) / 2 * dprime


def _certified(value_class: str = "eq2") -> Bound:
    from workbench.core.lower_bound import lower_bound

    l_ = sp.Symbol("l", integer=True, positive=True)
    eta2 = sp.Function("eta")(d, l_) ** 2
    Dl = degree_count(value_class)
    Nl = (2 * l_ + d - 2) / l_ * sp.binomial(l_ + d - 3, l_ - 1)
    rhs = sp.Rational(1, 2) * sp.Sum(eta2 * (1 - sp.Min(1, H * Dl / Nl)), (l_, 1, sp.oo))

    def numeric(**p: float) -> float:
        return lower_bound(
            int(p["d"]), int(p["r"]), int(p["H"]), value_class=value_class
        ).enclosure[0]

    eq2 = value_class == "eq2"
    return Bound(
        id="n2.certified_lower_bound" if eq2 else "n2.certified_lower_bound_query_values",
        title=(
            "Certified lower bound for N = 2 on D_2, Eq. 2 (fixed value maps; count D'_l)"
            if eq2
            else "Certified lower bound for N = 2 on D_2, query-dependent value maps M_h(y)"
        ),
        tag="derived",
        lhs=err,
        relation=">=",
        rhs=rhs,
        note="Evaluated rigorously by workbench.core.lower_bound (truncated conservatively; "
        "the sum runs over odd l, eta_l of sign).",
        numeric=numeric,
    )


def _fiber() -> Bound:
    from workbench.core.fiber_bound import fiber_lower_bound
    from workbench.core.symbolic.fiber import fiber_bound_expr

    def numeric(**p: float) -> float:
        return fiber_lower_bound(int(p["d"]), int(p["r"]), int(p["H"])).enclosure[0]

    return Bound(
        id="n2.fiber_lower_bound",
        title="Fiber bound for N = 2 on D_2, Eq. 2 (fixed value maps; needs H r < d)",
        tag="derived",
        lhs=err,
        relation=">=",
        rhs=fiber_bound_expr(),
        note="Evaluated by workbench.core.fiber_bound (Gauss-Legendre in the half-angle and in "
        "phi with c = sin^2 phi); 0 when H r >= d. docs/derivations/fiber_bound.md.",
        numeric=numeric,
    )


ALL_BOUNDS: dict[str, Bound] = {
    b.id: b
    for b in (
        _pointwise_fact1(),
        _fact1_temperature(),
        _thm2_high_dim(),
        _thm2_high_acc(),
        _thm3(),
        _thm3_upper(),
        _remark4(),
        _thm5(),
        _certified(),
        _certified("query-dependent-values"),
        _fiber(),
    )
}


def get_bound(bound_id: str) -> Bound:
    """Look a bound up by id."""
    if bound_id not in ALL_BOUNDS:
        ids = ", ".join(sorted(ALL_BOUNDS))
        raise ValueError(f"bound_id must be one of {ids} (got {bound_id!r})")
    return ALL_BOUNDS[bound_id]
