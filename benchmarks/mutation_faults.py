"""Planted faults for the mutation harness (``benchmarks/mutation.py``: the power of
``workbench check``).

Each fault is a small semantic change a real bug or a slip in a derivation could make. It wraps
or replaces one public name (``module:attr`` or ``module:Class.attr``) at run time through
``workbench.testing`` (the one fault mechanism): the name is replaced in its module and in every
loaded module that imported the same object. Nothing is edited on disk.

Use :func:`apply` in a fresh process, before running the check or the tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from workbench.testing import (
    Wrap,
    arg_mapped,
    arg_scaled,
    edited,
    mapped,
    plant_for_process,
    replaced,
    scaled,
)


@dataclass(frozen=True)
class Fault:
    id: str
    target: str  # "module:attr" or "module:Class.attr"
    layer: str  # core | constructions | verifiers | claims
    kind: str  # constant | sign | degree | normalisation | argument | dropped term | ...
    description: str
    wrap: Wrap


def _replay_low(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*a: Any, **k: Any) -> Any:
        mean, (lo, hi) = f(*a, **k)
        return 0.97 * mean, (0.97 * lo, 0.97 * hi)

    return g


# ------------------------------------------------------------------------------ core
def _dim_harmonics_binomial(f: Callable[[int, int], int]) -> Callable[[int, int], int]:
    def g(d: int, l: int) -> int:  # C(l+d-2, l-1) in place of C(l+d-3, l-1)
        return 1 if l == 0 else (2 * l + d - 2) * math.comb(l + d - 2, l - 1) // l

    return g


def _legendre_dim_off(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(d: int, max_degree: int, t: Any) -> Any:
        return f(d + 1, max_degree, t)  # the recurrence of the wrong dimension

    return g


def _uniform_sphere_unnormalised(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*shape: int, d: int, **k: Any) -> Any:
        from workbench.core.sphere import gaussian

        z = gaussian(*shape, d, generator=k.get("generator"), device=k.get("device"),
                     dtype=k.get("dtype") or __import__("torch").float64)
        return z / math.sqrt(d)  # E||z||^2 = 1, but not on the sphere

    return g


def _orthonormal_iid(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(batch: int, N: int, d: int, generator: Any = None, device: Any = None,
          dtype: Any = None) -> Any:
        import torch

        from workbench.core.sphere import gaussian

        z = gaussian(batch, N, d, generator=generator, device=device,
                     dtype=dtype or torch.float64)
        return z / z.norm(dim=-1, keepdim=True)  # forgot the orthogonalisation

    return g


def _biased_sign(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(X: Any, y: Any, bias: Any) -> Any:
        return f(X, y, -bias)

    return g


def _degree_off(f: Callable[[int, int, int], int]) -> Callable[[int, int, int], int]:
    def g(d: int, r: int, l: int) -> int:
        return f(d, r, max(0, l - 1))  # D_l read at degree l - 1

    return g


def _harmonic_bound_scaled(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*a: Any, **k: Any) -> Any:
        lb = f(*a, **k)
        s = 1.1
        return replace(lb, value=lb.value * s, enclosure=(lb.enclosure[0] * s, lb.enclosure[1] * s))

    return g


def _heads_minus_one(f: Callable[..., int]) -> Callable[..., int]:
    def g(*a: Any, **k: Any) -> int:
        return max(1, f(*a, **k) - 1)

    return g


def _sign_coefficients_scaled(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(d: int, max_degree: int) -> Any:
        return f(d, max_degree) * 1.02

    return g


def _sign_coefficients_next_odd(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(d: int, max_degree: int) -> Any:
        e = f(d, max_degree + 2).copy()
        e[1:-2:2] = e[3::2]  # eta_l reported for degree l + 2 (odd l)
        return e[: max_degree + 1]

    return g


def _agreement_flip(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(d: int, cos_qk: Any) -> Any:
        return f(d, cos_qk) * 0.98 + 0.01  # b pulled 2% towards 1/2

    return g


def _kernel_error_dropped(f: Callable[..., float]) -> Callable[..., float]:
    def g(a: Any, b: Any, C: Any) -> float:
        import torch

        a_t, b_t, C_t = (x.to(torch.float64) for x in (a, b, C))
        return float(1.0 - 2.0 * (a_t @ b_t) + a_t @ (C_t @ a_t) - (a_t * a_t).sum() * 0.05)

    return g


def _invariant_rank_off(f: Callable[..., int]) -> Callable[..., int]:
    def g(d: int, r: int, k: int, seed: int) -> int:
        return f(d, r, k, seed) + 1

    return g


# ---------------------------------------------------------------------- constructions
def _family_spacing(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(d: int, N: int = 2, spacing: float | None = None, coefficients: str = "alternating",
          generator: Any = 0) -> Any:
        return f(d, N, 2.0 / d**2 if spacing is None else spacing, coefficients, generator)

    return g


def _ensemble_ties(f: Callable[..., float]) -> Callable[..., float]:
    def g(d: int, H: int) -> float:
        return f(d, H + 1) if H % 2 == 0 else f(d, H)  # the tie rule lost: even H as H + 1

    return g


def _solve_ridge(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*a: Any, **k: Any) -> Any:
        res = f(*a, **k)
        return replace(res, error=res.error * 0.9)  # the solver reports a 10% smaller error

    return g


def _quarter(e: Any) -> Any:
    return replace(e, lo=e.mean - (e.mean - e.lo) / 4, hi=e.mean + (e.hi - e.mean) / 4)


def _mc_interval_quarter(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*a: Any, **k: Any) -> Any:  # every streamed interval a quarter of its width
        return [_quarter(e) for e in f(*a, **k)]

    return g


# -------------------------------------------------------------------------- verifiers
def _task_error_mean(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(self: Any, pred: Any, target: Any) -> Any:
        err = f(self, pred, target)
        return err / self.d if self.name == "nearest" else err  # mean over coordinates

    return g


def _estimate_scaled(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*a: Any, **k: Any) -> Any:
        out = f(*a, **k)
        return [replace(e, mean=e.mean * 0.9, lo=e.lo * 0.9, hi=e.hi * 0.9) for e in out]

    return g


def _low_rank_given_full_rank(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*a: Any, **k: Any) -> Any:  # every rank below d trained at rank d (H r kept)
        return [replace(r, spec=replace(r.spec, rank=r.task.d,
                                        heads=r.spec.rank * r.spec.heads // r.task.d))
                if r.spec.rank < r.task.d else r for r in f(*a, **k)]

    return g


def _lr_no_warmup(f: Callable[..., float]) -> Callable[..., float]:
    def g(step: int, steps: int, warmup: float) -> float:
        return f(step, steps, 0.0) * 0.1  # learning rate ten times too small

    return g


# ----------------------------------------------------------------------------- claims
def _reading_spacing(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(d: int, coefficients: str = "alternating") -> Any:
        tau, c = f(d, coefficients)
        return tau * 0.5, c

    return g


def _sample_mean_quarter(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*a: Any, **k: Any) -> Any:  # an interval a quarter of its width (z / 4 for CLT ones)
        return _quarter(f(*a, **k))

    return g


def _decompose_sign(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(X: Any, y: Any) -> Any:
        u, w, s = f(X, y)
        return u, w, -s

    return g


def _harmonic_count_off(f: Callable[[int, int], int]) -> Callable[[int, int], int]:
    def g(d: int, l: int) -> int:
        return f(d, l + 1) if l >= 1 else f(d, l)

    return g


def _fiber_vector_factor_dropped(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(m: int, c: Any) -> Any:
        from workbench.core.bounds import fiber

        vals, mult = f(m, c)
        vals = vals.copy()
        vals[1] = fiber._eigen(m, c)[1]  # lambda_1 without its factor (c + (1-c)/m)
        return vals, mult

    return g


def _fiber_multiplicity_short(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(m: int, c: Any) -> Any:
        vals, mult = f(m, c)
        return vals, [*mult[:2], *(k - 1 for k in mult[2:])]  # m(m+1)/2 - 2 traceless values

    return g


def _fiber_bound_2pct(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*a: Any, **k: Any) -> Any:
        b = f(*a, **k)
        lo, hi = b.enclosure
        return replace(b, value=1.02 * b.value, enclosure=(1.02 * lo, 1.02 * hi))

    return g


def _fiber_bound_10pct_two_heads(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(d: int, r: int, H: int, value_class: str = "eq2") -> Any:
        b = f(d, r, H, value_class)
        if H < 2:  # H = 1 stays exact: only the value at H >= 2 is off
            return b
        lo, hi = b.enclosure
        return replace(b, value=1.1 * b.value, enclosure=(1.1 * lo, 1.1 * hi))

    return g


def _fiber_query_class_eq2(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(d: int, r: int, H: int, value_class: str = "eq2") -> Any:
        return f(d, r, H, "eq2")  # the query-dependent class given the Eq. 2 (Ky Fan) number

    return g


def _combined_query_class_eq2(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(d: int, r: int, H: int, value_class: str = "eq2", **kw: Any) -> Any:
        return f(d, r, H, "eq2", **kw)  # the combined bound of every class from Eq. 2's parts

    return g


def _fiber_span_one_head(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(d: int, r_star: int, count: int) -> Any:
        return f(d, max(1, r_star // count), count)  # span r instead of H r (Eq. 2: count = H)

    return g


def _enclosure_traceless_short(f: Callable[..., Any]) -> Callable[..., Any]:
    def init(self: Any, d: int, r_star: int) -> None:
        f(self, d, r_star)
        self.mult[2] -= 1  # the rigorous enclosure takes m(m+1)/2 - 2 traceless values

    return init


def _enclosure_vector_factor_dropped(f: Callable[..., Any]) -> Callable[..., Any]:
    def init(self: Any, d: int, r_star: int) -> None:
        f(self, d, r_star)
        one = self.factors_at0[0]  # an exact ball 1
        self.factors_at0 = (one, one, self.factors_at0[2])  # lambda_1 without c + (1-c)/m
        self.factors_slope = (self.factors_slope[0], 0 * one, self.factors_slope[2])

    return init


def _enclosure_beta_shifted(f: Callable[..., Any]) -> Callable[..., Any]:
    def init(self: Any, d: int, r_star: int) -> None:
        f(self, d, r_star)
        from workbench.core import rigorous as rig

        self.r = r_star + 1  # c ~ Beta((r*+1)/2, m/2): the span's dimension one too large
        self.W = 2 / rig.beta(rig.arb(self.r) / 2, rig.arb(self.m) / 2)

    return init


def _series_ratio_off(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(self: Any, T: Any, k: int, n: int) -> Any:
        return f(self, T, k, n) * 1.001  # T_{k,n+1}/T_{k,n} 0.1 % high

    return g


# ------------------------------------------------ optimality, encodings, verdicts, registry
def _values_shrunk(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*a: Any, **k: Any) -> Any:  # values 2 % short of C a = b, their exact error reported
        res = f(*a, **k)
        return replace(res, a=res.a * 0.98)

    return g


def _fit_short(f: Callable[..., Any]) -> Callable[..., Any]:
    def g(model: Any, X: Any, y: Any) -> None:  # least-squares output maps 3 % short
        f(model, X, y)
        model.M.mul_(0.97)

    return g


def _encoding(bound_id: str, rhs: Callable[[Any], Any]) -> Wrap:
    """``get_bound`` with the encoding ``bound_id``'s right-hand side rewritten (its form)."""
    return mapped(lambda b: replace(b, rhs=rhs(b.rhs)) if b.id == bound_id else b)


def _eps_power(power: int) -> Callable[[Any], Any]:
    def change(rhs: Any) -> Any:
        from workbench.core.symbolic import eps

        return rhs.subs(eps, eps**power)

    return change


def _majority_eps_linear(rhs: Any) -> Any:
    from workbench.core.symbolic import eps

    return rhs.subs(eps**2, eps)  # H >= c d / eps: the error exponent -1 in place of -1/2


def _d_squared_as_d(rhs: Any) -> Any:
    from workbench.core.symbolic import d

    return rhs.subs(d**2, d)


def _flip(relation: str) -> str:
    return {">=": "<=", "<=": ">="}.get(relation, relation)


def _profile_eta_high(f: Callable[..., Any]) -> Callable[..., Any]:
    return lambda e: [x * 1.05**2 for x in f(e)]


def _ky_fan_one_more(f: Callable[..., Any]) -> Callable[..., Any]:
    return lambda fib, count, tol, cap: f(fib, count + 1, tol, cap)


FAULTS: tuple[Fault, ...] = (
    # core
    Fault("core.dim_harmonics_binomial", "workbench.core.harmonics:dim_harmonics", "core",
          "degree", "N(d,l) with C(l+d-2, l-1) in place of C(l+d-3, l-1)",
          _dim_harmonics_binomial),
    Fault("core.sign_coefficients_2pct", "workbench.core.harmonics:sign_coefficients", "core",
          "normalisation", "eta_l 2% too large (normalisation slip)", _sign_coefficients_scaled),
    Fault("core.sign_coefficients_next_odd", "workbench.core.harmonics:sign_coefficients",
          "core", "degree", "eta_l reported for the next odd degree l + 2",
          _sign_coefficients_next_odd),
    Fault("core.legendre_dim_off", "workbench.core.harmonics:legendre_d", "core", "degree",
          "Gegenbauer recurrence of dimension d + 1", _legendre_dim_off),
    Fault("core.density_at_zero_10pct", "workbench.core.harmonics:density_at_zero", "core",
          "constant", "density of <y,w> at 0 10% too large", scaled(1.1)),
    Fault("core.uniform_sphere_unnormalised", "workbench.core.sphere:uniform_sphere", "core",
          "normalisation", "Gaussian / sqrt(d) instead of projecting onto the sphere",
          _uniform_sphere_unnormalised),
    Fault("core.orthonormal_iid", "workbench.core.sphere:orthonormal_points", "core",
          "dropped term", "D_N keys not orthogonalised (i.i.d. uniform)", _orthonormal_iid),
    Fault("core.soft_nn_half_beta", "workbench.core.targets:soft_nearest_neighbour", "core",
          "constant", "soft target at beta/2 (temperature 2x off)", arg_scaled(2, "beta", 0.5)),
    Fault("core.biased_nn_bias_sign", "workbench.core.targets:biased_nearest_neighbour", "core",
          "sign", "bias added with the wrong sign", _biased_sign),
    Fault("core.degree_dimension_off_by_one",
          "workbench.core.bounds.harmonic:degree_dimension_bound",
          "core", "degree", "D_l evaluated at degree l - 1", _degree_off),
    Fault("core.harmonic_bound_10pct", "workbench.core.bounds.harmonic:trusted_harmonic_bound",
          "core",
          "bound", "harmonic count and its enclosure 10% too large", _harmonic_bound_scaled),
    Fault("core.heads_needed_minus_one", "workbench.core.bounds.harmonic:heads_needed", "core",
          "off-by-one", "heads_needed one too small", _heads_minus_one),
    Fault("core.fiber_kernel_5pct", "workbench.core.bounds.fiber:_eigen", "core", "constant",
          "fiber eigenvalues of the arcsine kernel 5 % low", scaled(0.95)),
    Fault("core.fiber_vector_factor_dropped", "workbench.core.bounds.fiber:_spectrum", "core",
          "dropped term", "vector fiber value lambda_1 without (c + (1-c)/m)",
          _fiber_vector_factor_dropped),
    Fault("core.fiber_multiplicity_short", "workbench.core.bounds.fiber:_spectrum", "core",
          "degree", "traceless multiplicity m(m+1)/2 - 2", _fiber_multiplicity_short),
    Fault("core.fiber_bound_2pct", "workbench.core.bounds.fiber:trusted_fiber_bound", "core",
          "bound", "fiber bound 2 % high", _fiber_bound_2pct),
    Fault("core.fiber_bound_10pct_two_heads", "workbench.core.bounds.fiber:fiber_bound", "core",
          "bound", "fiber bound 10 % too strong at H >= 2 only (H = 1 exact)",
          _fiber_bound_10pct_two_heads),
    Fault("core.fiber_query_class_eq2", "workbench.core.bounds.fiber:fiber_bound", "core",
          "bound", "query-dependent-values fiber bound given the Eq. 2 number",
          _fiber_query_class_eq2),
    Fault("core.combined_query_class_eq2",
          "workbench.core.bounds.certified:certified_lower_bound", "core", "bound",
          "the combination layer: the query-dependent class given the Eq. 2 numbers (both "
          "parts), each part's own code sound", _combined_query_class_eq2),
    Fault("core.fiber_span_one_head", "workbench.core.bounds.fiber:_captured", "core",
          "argument", "fiber span r instead of H r for H heads", _fiber_span_one_head),
    Fault("core.fiber_enclosure_traceless_short",
          "workbench.core.bounds.fiber_enclosure:_Fiber.__init__", "core", "degree",
          "rigorous enclosure: traceless multiplicity m(m+1)/2 - 2", _enclosure_traceless_short),
    Fault("core.fiber_enclosure_vector_factor",
          "workbench.core.bounds.fiber_enclosure:_Fiber.__init__", "core", "dropped term",
          "rigorous enclosure: lambda_1 without (c + (1-c)/m)", _enclosure_vector_factor_dropped),
    Fault("core.fiber_enclosure_beta_shifted",
          "workbench.core.bounds.fiber_enclosure:_Fiber.__init__", "core", "off-by-one",
          "rigorous enclosure: c ~ Beta((r*+1)/2, m/2)", _enclosure_beta_shifted),
    Fault("core.profile_fiber_eta_5pct", "workbench.core.bounds.profile_fiber:_eta_balls",
          "core", "constant", "profile fiber bound: the kernel's eta_l 5 % high",
          _profile_eta_high),
    Fault("core.profile_fiber_top_h_plus_one",
          "workbench.core.bounds.fiber_enclosure:ky_fan_average", "core", "off-by-one",
          "Ky Fan average: top-(H+1) fiber values instead of top-H", _ky_fan_one_more),
    Fault("core.soft_iid_no_key_gap", "workbench.core.bounds.profile_iid:effective_temperature",
          "core", "dropped term", "i.i.d. soft mixture: effective temperature beta, not "
          "beta sqrt(1 - t)", lambda f: lambda beta, t: f(beta, 0 * t)),
    Fault("core.fiber_series_ratio", "workbench.core.bounds.fiber_series:FiberSeries.next_term",
          "core", "constant", "eigenvalue series: term ratio 0.1 % high", _series_ratio_off),
    Fault("core.fiber_series_tail_dropped",
          "workbench.core.bounds.fiber_series:FiberSeries.tail_bound", "core", "dropped term",
          "eigenvalue series: the proved tail taken as 0", lambda f: lambda self, j, p: 0 * p[0]),
    Fault("core.head_agreement_shrunk", "workbench.core.head_kernels:head_target_agreement",
          "core", "constant", "b(c) pulled 2% towards 1/2", _agreement_flip),
    Fault("core.kernel_error_dropped_term", "workbench.core.head_kernels:kernel_error", "core",
          "dropped term", "error 1 - 2ab + aCa minus 0.05 |a|^2 (diagonal of C 5% off)",
          _kernel_error_dropped),
    Fault("core.invariant_rank_plus_one",
          "workbench.core.invariant_harmonics:invariant_harmonic_rank", "core", "off-by-one",
          "numerical rank of invariant harmonics one too large", _invariant_rank_off),
    # constructions
    Fault("constructions.beta_for_quarter", "workbench.constructions.full_rank:beta_for",
          "constructions", "temperature", "sufficient temperature 4x too small", scaled(0.25)),
    Fault("constructions.error_upper_bound_half",
          "workbench.constructions.full_rank:error_upper_bound",
          "constructions", "bound", "Fact 1's error upper bound 2x too small", scaled(0.5)),
    Fault("constructions.pointwise_bound_half", "workbench.constructions.full_rank:pointwise_bound",
          "constructions", "constant", "pointwise bound 2(1-p) written as (1-p)", scaled(0.5)),
    Fault("constructions.biased_spacing_half", "workbench.constructions.biased:theorem3_family",
          "constructions", "constant", "threshold spacing 2/d^2 instead of 4/d^2",
          _family_spacing),
    Fault("constructions.soft_bound_quarter", "workbench.constructions.biased:soft_bound_values",
          "constructions", "dropped term", "soft bound without the factor 2 (squared: 1/4)",
          scaled(0.25)),
    Fault("constructions.ensemble_ties", "workbench.constructions.majority_vote:ensemble_error",
          "constructions", "off-by-one", "even H evaluated as H + 1 (tie rule lost)",
          _ensemble_ties),
    Fault("constructions.hoeffding_half", "workbench.constructions.majority_vote:hoeffding_bound",
          "constructions", "constant", "Hoeffding bound 2x too small (exp(-2H..) as exp(-4H..))",
          scaled(0.5)),
    Fault("constructions.target_agreement_shrunk",
          "workbench.constructions.rank_one:target_agreement",
          "constructions", "constant", "b_h 2% towards 1/2 (random features)",
          lambda f: (lambda Q, K: f(Q, K) * 0.98 + 0.01)),
    Fault("constructions.solver_error_10pct",
          "workbench.constructions._kernel_solve:solve_value_weights",
          "constructions", "bound", "solver reports an error 10% too small", _solve_ridge),
    Fault("core.mc_interval_quarter", "workbench.core.montecarlo:estimate_mean", "core",
          "constant", "streamed Monte Carlo intervals a quarter of their width",
          _mc_interval_quarter),
    # verifiers
    Fault("verifiers.task_error_mean", "workbench.verifiers.tasks:Task.error", "verifiers",
          "normalisation", "nearest-neighbour error averaged over coordinates (divided by d)",
          _task_error_mean),
    Fault("verifiers.estimate_10pct_low", "workbench.verifiers.estimate:estimate_error",
          "verifiers", "normalisation", "estimated error and CI 10% too small", _estimate_scaled),
    Fault("core.z_value_half", "workbench.core.intervals:z_value", "core", "constant",
          "normal quantile halved (CIs 2x too narrow)", scaled(0.5)),
    Fault("verifiers.low_rank_given_full_rank", "workbench.verifiers.presets:encoder_grid",
          "verifiers", "argument", "the grids' low-rank models trained at full rank (H r kept)",
          _low_rank_given_full_rank),
    Fault("verifiers.lr_tenth", "workbench.verifiers.train:lr_factor", "verifiers", "constant",
          "learning-rate schedule 10x too small", _lr_no_warmup),
    # claims
    Fault("claims.bonferroni_none", "workbench.core.intervals:bonferroni_level", "claims",
          "constant", "no Bonferroni correction (level = family level)",
          lambda f: (lambda m, family=0.999: family)),
    Fault("claims.thm3_reading_spacing", "workbench.proofs.support.theorem3:reading", "claims",
          "constant", "reference thresholds at half the spacing", _reading_spacing),
    Fault("core.sample_mean_quarter", "workbench.core.montecarlo:sample_mean", "core",
          "constant", "intervals of drawn values a quarter of their width (z/4)",
          _sample_mean_quarter),
    Fault("claims.thm2_decompose_sign", "workbench.proofs.support.eq2_models:decompose",
          "claims", "sign", "s = sign<y,w> with the wrong sign", _decompose_sign),
    Fault("claims.harmonic_count_off", "workbench.proofs.support.exact_harmonics:harmonic_count",
          "claims", "degree", "independent N(d,l) at degree l + 1", _harmonic_count_off),
    # sharper versions of the former survivors
    Fault("constructions.hoeffding_2pct_low",
          "workbench.constructions.majority_vote:hoeffding_bound", "constructions", "constant",
          "Hoeffding bound 2 % low (still above the ensemble error)", scaled(0.98)),
    Fault("constructions.pointwise_bound_3pct",
          "workbench.constructions.full_rank:pointwise_bound", "constructions", "constant",
          "pointwise bound 3 % high", scaled(1.03)),
    Fault("claims.bonferroni_squared", "workbench.core.intervals:bonferroni_level", "claims",
          "constant", "Bonferroni by m^2 (valid, but not the family level)",
          lambda f: (lambda m, family=0.999: 1 - (1 - family) / m**2)),
    Fault("constructions.fact1_claim_3pct_low",
          "workbench.constructions.full_rank:claimed_bound_quadrature", "constructions",
          "constant", "Fact 1's claimed quadrature (N = 2) 3 % low", scaled(0.97)),
    Fault("constructions.ensemble_error_3pct",
          "workbench.constructions.majority_vote:ensemble_error", "constructions", "constant",
          "Theorem 5's exact ensemble error 3 % high (within the Monte Carlo resolution)",
          scaled(1.03)),
    # optimality of solved values
    Fault("constructions.values_2pct_short",
          "workbench.constructions._kernel_solve:solve_value_weights", "constructions",
          "optimality", "solved values 2 % short of C a = b (their own error reported)",
          _values_shrunk),
    Fault("constructions.solver_kernel_3pct", "workbench.constructions._kernel_solve:kernel_block",
          "constructions", "constant", "the solver's kernel C 3 % high", scaled(1.03)),
    Fault("claims.fit_output_maps_short", "workbench.proofs.support.eq2_models:fit_output_maps",
          "claims", "optimality", "least-squares output maps 3 % short of the fit", _fit_short),
    # the form of a sympy encoding
    Fault("core.encoding_pointwise_half", "workbench.core.symbolic.bounds:get_bound", "core",
          "encoding", "fact1.pointwise_error with factor 2 in place of 4",
          _encoding("fact1.pointwise_error", lambda rhs: rhs / 2)),
    Fault("core.encoding_majority_eps_linear", "workbench.core.symbolic.bounds:get_bound", "core",
          "encoding", "thm5.majority_vote_heads H >= c d / eps (eps^2 lost its square)",
          _encoding("thm5.majority_vote_heads", _majority_eps_linear)),
    Fault("core.encoding_high_dimensional_eps4", "workbench.core.symbolic.bounds:get_bound",
          "core", "encoding", "thm2.high_dimensional with (d/r)^(c/eps^4)",
          _encoding("thm2.high_dimensional", _eps_power(4))),
    Fault("core.encoding_high_dimensional_eps2", "workbench.core.symbolic.bounds:get_bound",
          "core", "encoding", "thm2.high_dimensional with (d/r)^(c/eps^2) (the "
          "harmonic count's data cannot refute it; the stated form does)",
          _encoding("thm2.high_dimensional", _eps_power(2))),
    Fault("core.encoding_full_rank_heads_linear", "workbench.core.symbolic.bounds:get_bound",
          "core", "encoding", "thm3.full_rank_heads H <= c d (d^2 as d)",
          _encoding("thm3.full_rank_heads", _d_squared_as_d)),
    # the verdict rule and the claims' relations
    Fault("claims.tolerance_dropped", "workbench.core.verdict:decide", "claims", "dropped term",
          "the verdict rule ignores the stated tolerance (floating-point rounding)",
          arg_mapped(4, "tolerance", lambda t: 0.0)),
    Fault("claims.estimate_relation_flipped", "workbench.proofs.claim:Evidence.estimate",
          "claims", "sign", "Monte Carlo evidence with its relation flipped (>= as <=)",
          arg_mapped(1, "relation", _flip)),
    # the sandwich's trained witnesses (docs/derivations/sandwich.md)
    Fault("models.mlp_score_scaled", "workbench.models.scores:MLPScore.forward", "core",
          "constant", "learned (MLP) attention scores 20 % too small (the trained witnesses)",
          scaled(0.8)),
    Fault("verifiers.witness_replay_scaled", "workbench.verifiers.trained_witness:replay_trained",
          "verifiers", "constant", "a replayed trained witness's measured error 3 % low",
          _replay_low),
    # the i.i.d. transfer (docs/derivations/iid_transfer.md)
    Fault("claims.iid_w_norm_d2", "workbench.proofs.support.iid_pairs:w_norm", "claims",
          "normalisation", "the D_2 factor |w| = 1 in place of sqrt(1 - t)",
          mapped(lambda v: v * 0 + 1)),
    Fault("claims.iid_pair_unnormalised", "workbench.proofs.support.iid_pairs:decompose",
          "claims", "normalisation", "u left unnormalised: the pair's law depends on t",
          edited("u_hat = u / u.norm(dim=-1, keepdim=True)", "u_hat = u")),
    Fault("claims.iid_kappa_dropped", "workbench.proofs.support.iid_pairs:G_t", "claims",
          "dropped term", "the u-term's factor kappa_t set to 1",
          edited("kappa = torch.sqrt((1 + t) / (1 - t))", "kappa = 1.0")),
    # targets beyond hardmax (docs/derivations/soft_targets.md)
    Fault("core.profile_energies_low", "workbench.core.bounds.profile_energy:profile_energies",
          "core", "normalisation", "every eta_l(psi)^2 enclosure 3 % low (a density constant off)",
          mapped(lambda e: replace(e, lo=tuple(0.97 * v for v in e.lo),
                                   hi=tuple(0.97 * v for v in e.hi)))),
    Fault("core.soft_profile_temperature", "workbench.core.profiles:tanh_profile", "core",
          "constant", "psi_beta = tanh(beta t/2) in place of tanh(beta t/sqrt2) (z/2 read as "
          "<y,w>/2)", arg_scaled(0, "beta", 1 / math.sqrt(2))),
    # the truncation rule (docs/derivations/lower_bound.md, Lemma 6, "The counted tail")
    Fault("core.harmonic_tail_dropped", "workbench.core.bounds.harmonic:_counted_tail", "core",
          "dropped term", "the degrees above L counted as captured energy (the tail dropped "
          "from the lower end)", mapped(lambda v: 0)),
    Fault("core.s6_distance_5pct_low", "workbench.core.bounds.soft_limit:distance_to_sign",
          "core", "constant", "step S6's ||psi_beta - sign|| 5 % too small",
          mapped(lambda iv: (0.9025 * iv[0], 0.9025 * iv[1]))),
    # the witnesses beyond two keys and for soft targets (docs/derivations/witnesses_beyond_two.md)
    Fault("constructions.profile_one_head_rank", "workbench.constructions.profile_one_head:"
          "profile_one_head_error", "constructions", "degree",
          "the invariant count C(l+r, r-1) in place of C(l+r-1, r-1) in the one-head error",
          edited("math.comb(l + r - 1, r - 1)", "math.comb(l + r, r - 1)")),
    Fault("core.profile_eta_five_percent", "workbench.core.bounds.profile_energy:_normalized_at",
          "core", "normalisation", "every eta_l(psi) 5 % high (the Gegenbauer normalisation)",
          scaled(1.05)),
    Fault("constructions.nkeys_unseen_dimension", "workbench.constructions.nkeys_one_head:"
          "inner_draws", "constructions", "argument",
          "the unseen block of the D_N one-head witness one dimension too large (m + 1)",
          arg_mapped(0, "m", lambda m: m + 1)),
    Fault("core.profile_bound_high", "workbench.core.bounds.profile_harmonic:profile_bound",
          "core", "constant", "the soft target's harmonic count 50 % high",
          mapped(lambda b: replace(b, value=1.5 * b.value,
                                   enclosure=(1.5 * b.enclosure[0], 1.5 * b.enclosure[1])))),
    # the bound beyond two keys (docs/derivations/beyond_two_keys.md)
    Fault("core.nkeys_fiber_dim", "workbench.core.bounds.n_keys_energy:fiber_dim", "core",
          "argument", "the fiber's dimension n = d - N in place of d - N + 1 (the pair "
          "direction's own dimension forgotten)", mapped(lambda n: n - 1)),
    Fault("core.nkeys_linear_forms_dropped", "workbench.core.bounds.n_keys:form_counts", "core",
          "dropped term", "the count D_l without the min(N-1, n) linear forms per head (the N = 2 "
          "count D'_l reused)", mapped(lambda ab: (ab[0], 0))),
    Fault("core.nkeys_energies_high", "workbench.core.bounds.n_keys_energy:energy_enclosures",
          "core", "normalisation", "every Gamma_l enclosure 5 % high",
          mapped(lambda e: tuple((1.05 * lo, 1.05 * hi) for lo, hi in e))),
    Fault("core.nkeys_pair_factor", "workbench.core.bounds.n_keys:pair_factor", "core",
          "constant", "the pairs' factor (N-1)/2 replaced by (N/2)/2",
          replaced(lambda N: Fraction(N, 4))),
)
BY_ID: dict[str, Fault] = {f.id: f for f in FAULTS}


def apply(fault_id: str, preload: bool = True) -> Fault:
    """Apply one fault in this process, for good (``workbench.testing.plant_for_process``).
    With ``preload``, import every claim module first so that names bound by
    ``from ... import`` are replaced too."""
    if fault_id not in BY_ID:
        raise ValueError(f"fault must be one of {sorted(BY_ID)} (got {fault_id!r})")
    fault = BY_ID[fault_id]
    if preload:
        from workbench.proofs.registry import load_claims

        load_claims()
    plant_for_process(fault.target, fault.wrap)
    return fault
