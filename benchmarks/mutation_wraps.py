"""The wraps of the planted faults (``benchmarks/mutation_faults.py``): each takes the public
name it replaces and returns the faulty version (a constant, a sign, a degree or a dropped term
off), through the one fault mechanism, ``workbench.testing``."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from workbench.testing import Wrap, mapped


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
        from workbench.core.bounds.fiber_bound import fiber

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


def _multilevel_degree_one_short(f: Callable[..., int]) -> Callable[..., int]:
    """The multi-level degree-1 count ``2r + lambda_k`` slipped to ``r + lambda_k``."""

    def g(d: int, r: int, N: int, k: int, l: int, value_class: str = "eq2") -> int:
        full = f(d, r, N, k, l, value_class)
        return full - r if l == 1 and value_class == "eq2" else full

    return g
