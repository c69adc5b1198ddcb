"""Sympy encodings of the paper's bounds (docs/paper.md §3-3).

Each :class:`Bound` is ``lhs REL rhs`` over the named symbols. Constants the paper does not give
are named symbols (``c_*``) listed in ``constants`` with a note; :meth:`Bound.evaluate` needs them
as keyword arguments. Tags follow docs/paper.md: ``stated``, ``derived``, ``inferred``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import sympy as sp

from workbench.core.bounds.fiber_bound.fiber import fiber_bound
from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound
from workbench.core.symbolic.fiber import fiber_bound_expr
from workbench.core.symbolic.n_keys import bound_rhs as n_keys_rhs
from workbench.core.symbolic.symbols import H, N, V, beta, check_params, d, eps, err, gap, r

c_2a, c_2b, c_2c, c_2d = sp.symbols("c_2a c_2b c_2c c_2d", positive=True)
c_3, c_3u, c_5 = sp.symbols("c_3 c_3u c_5", positive=True)

_UNKNOWN = "unknown constant: not in our copy of the paper"
# Theorem 2's stated laws H = Omega(f), as docs/paper.md quotes them (``^`` there, ``**`` here).
_HIGH_DIMENSIONAL = "(d/r)**(1/eps)"
_HIGH_ACCURACY = "exp(d - r*log(d/r))"


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
    stated_form: str = ""  # the paper's law inside Omega(...), sympy syntax; "" where none

    @property
    def stated_law(self) -> sp.Expr:
        """The paper's stated growth law ``stated_form`` as a sympy expression over the named
        symbols (Theorem 2's regimes: the ``f`` of ``H = Omega(f)``); ``ValueError`` if none."""
        if not self.stated_form:
            raise ValueError(f"{self.id} has no stated form")
        return _parse_form(self.stated_form)

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


@lru_cache(maxsize=8)
def _parse_form(text: str) -> sp.Expr:
    names = {s.name: s for s in (H, N, V, beta, d, eps, gap, r)}
    expr = sp.sympify(text, locals=names)
    unknown = expr.free_symbols - set(names.values())
    if unknown:
        raise ValueError(f"stated form {text!r} uses unknown symbols {sorted(map(str, unknown))}")
    return expr


def degree_count(value_class: str = "eq2") -> sp.Expr:
    """``D_l`` of the harmonic count: ``D'_l`` (Eq. 2) or ``d(d+1)/2 D'_l`` (query-dependent
    value maps), as a sympy expression in ``d, r, l`` (docs/derivations/lower_bound.md, Lemma 5)."""
    l_ = sp.Symbol("l", integer=True, positive=True)
    low = sp.Piecewise((sp.binomial(l_ + r - 3, r - 1), l_ >= 2), (0, True))  # degree l-2 >= 0
    dprime = low + sp.binomial(l_ + r - 1, r - 1) + sp.binomial(l_ + r + 1, r - 1)
    return dprime if value_class == "eq2" else d * (d + 1) / 2 * dprime


def _harmonic_rhs(value_class: str) -> sp.Expr:
    """``1/2 sum_l eta_l^2 (1 - min(1, H D_l / N(d,l)))`` over l >= 1 (Lemma 6)."""
    l_ = sp.Symbol("l", integer=True, positive=True)
    Nl = (2 * l_ + d - 2) / l_ * sp.binomial(l_ + d - 3, l_ - 1)
    lost = 1 - sp.Min(1, H * degree_count(value_class) / Nl)
    return sp.Rational(1, 2) * sp.Sum(sp.Function("eta")(d, l_) ** 2 * lost, (l_, 1, sp.oo))


def _numeric(bound_fn: Callable[..., Any], **options: str) -> Callable[..., float]:
    """``evaluate`` of a bound the library computes: the lower end of its enclosure."""

    def numeric(**p: float) -> float:
        return float(bound_fn(int(p["d"]), int(p["r"]), int(p["H"]), **options).enclosure[0])

    return numeric


_HARMONIC_NOTE = ("Evaluated rigorously by workbench.core.bounds.harmonic_count.harmonic "
                  "(truncated conservatively; the sum runs over odd l, eta_l of sign). The "
                  "harmonic count alone: the certified bound is the larger of it and the fiber "
                  "bound (n2.fiber_bound for Eq. 2).")

# The bounds, one row each: Bound(id, title, tag, lhs, relation, rhs, constants, note, numeric).
BOUNDS: tuple[Bound, ...] = (
    Bound("fact1.pointwise_error",
          "Fact 1: error of the beta head at a point with score gap `gap`", "derived",
          err, "<=", 4 * sp.Min(1, (N - 1) ** 2 * sp.exp(-2 * beta * gap)),
          note="||Xp - x*|| <= 2(1-p*) and 1-p* <= (N-1) exp(-beta gap); the expected error is "
          "E of this over the data."),
    Bound("fact1.sufficient_temperature",
          "Fact 1: a temperature that makes the pointwise error at most eps", "derived",
          beta, ">=", sp.log(4 * (N - 1) ** 2 / eps) / (2 * gap),
          note="Solves 4 (N-1)^2 exp(-2 beta gap) = eps; for N = 1 any beta works."),
    Bound("thm2.high_dimensional",
          "Theorem 2: heads needed by rank r < d, high-dimensional regime", "stated",
          H, ">=", c_2a * (d / r) ** (c_2b / eps),
          {c_2a: _UNKNOWN, c_2b: _UNKNOWN + " (the eps range too)"},
          f"Omega({_HIGH_DIMENSIONAL}), N = 2, D_2, generalized attention, d >= 5.",
          stated_form=_HIGH_DIMENSIONAL),
    Bound("thm2.high_accuracy",
          "Theorem 2: heads needed by rank r < d, high-accuracy regime", "stated",
          H, ">=", c_2c * sp.exp(c_2d * (d - r * sp.log(d / r))),
          {c_2c: _UNKNOWN, c_2d: _UNKNOWN}, f"Omega({_HIGH_ACCURACY}).",
          stated_form=_HIGH_ACCURACY),
    Bound("thm3.rank_r_norm_condition",
          "Theorem 3: rank-r heads needed to beat constant error (given norm bound V)", "stated",
          H, ">=", sp.exp(c_3 * (d - r)) / (d * V**2), {c_3: _UNKNOWN},
          "Constant error persists while d H max_h ||V_h||^2 < exp(c (d - r)); Gaussian y, "
          "biased targets (definitions partly inferred)."),
    Bound("thm3.full_rank_heads",
          "Theorem 3: full-rank biased attention represents the target with O(d^2) heads",
          "stated", H, "<=", c_3u * d**2,
          {c_3u: _UNKNOWN + " (the target has 2 d^2 + 1 biased terms)"}),
    Bound("remark4.norm_needed", "Remark 4: the weight norm needed by H rank-r heads", "stated",
          V**2, ">=", sp.exp(c_3 * (d - r)) / (d * H), {c_3: _UNKNOWN},
          "Theorem 3 read as a norm condition; whether the norm dependence can be removed "
          "is open (Yehudai & Shamir 2019, Kamath et al. 2020)."),
    Bound("thm5.majority_vote_heads",
          "Theorem 5: heads for two rank-1 layers with majority voting", "derived heuristic",
          H, ">=", c_5 * d / eps**2,
          {c_5: "unknown constant of the derived heuristic H ~ d/eps^2 (to verify)"},
          "DERIVED HEURISTIC, not the paper's statement: error falls like sqrt(d/H)."),
    Bound("n2.harmonic_bound",
          "Harmonic count for N = 2 on D_2, Eq. 2 (fixed value maps; count D'_l)", "derived",
          err, ">=", _harmonic_rhs("eq2"), note=_HARMONIC_NOTE,
          numeric=_numeric(harmonic_bound, value_class="eq2")),
    Bound("n2.harmonic_bound_query_values",
          "Harmonic count for N = 2 on D_2, query-dependent value maps M_h(y)", "derived",
          err, ">=", _harmonic_rhs("query-dependent-values"), note=_HARMONIC_NOTE,
          numeric=_numeric(harmonic_bound, value_class="query-dependent-values")),
    Bound("n2.fiber_bound",
          "Fiber bound for N = 2 on D_2, Eq. 2 (fixed value maps; needs H r < d)", "derived",
          err, ">=", fiber_bound_expr(),
          note="Evaluated by workbench.core.bounds.fiber_bound.fiber as a rigorous enclosure "
          "(arb series and recurrences); 0 when H r >= d. docs/derivations/fiber_bound.md. The "
          "fiber bound alone: the certified bound is the larger of this and n2.harmonic_bound.",
          numeric=_numeric(fiber_bound)),
)
def _n_keys_numeric(value_class: str) -> Callable[..., float]:
    """``evaluate`` of the bound beyond two keys: the lower end of its enclosure."""

    def numeric(**p: float) -> float:
        from workbench.core.bounds.sequence_length.n_keys import n_keys_bound

        return n_keys_bound(int(p["d"]), int(p["r"]), int(p["H"]), int(p["N"]),
                            value_class).value

    return numeric


_N_KEYS_NOTE = ("3 <= N <= d-2 on D_N (orthonormal keys); Gamma_l = E gamma_l(kappa)^2 "
                "enclosed rigorously by workbench.core.bounds.sequence_length.n_keys (the tail "
                "counted by sum Gamma_l = 2/N). docs/derivations/beyond_two_keys.md.")
BOUNDS = (*BOUNDS,
          Bound("nkeys.bound", "The bound beyond two keys, Eq. 2 (3 <= N <= d-2, D_N)",
                "derived", err, ">=", n_keys_rhs("eq2"), note=_N_KEYS_NOTE,
                numeric=_n_keys_numeric("eq2")),
          Bound("nkeys.bound_query_values",
                "The bound beyond two keys, query-dependent value maps (3 <= N <= d-2, D_N)",
                "derived", err, ">=", n_keys_rhs("query-dependent-values"), note=_N_KEYS_NOTE,
                numeric=_n_keys_numeric("query-dependent-values")))
ALL_BOUNDS: dict[str, Bound] = {b.id: b for b in BOUNDS}


def get_bound(bound_id: str) -> Bound:
    """Look a bound up by id."""
    if bound_id not in ALL_BOUNDS:
        ids = ", ".join(sorted(ALL_BOUNDS))
        raise ValueError(f"bound_id must be one of {ids} (got {bound_id!r})")
    return ALL_BOUNDS[bound_id]
