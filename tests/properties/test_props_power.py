"""Power of the property suite: each planted fault below is realistic (a
constant, sign, degree, normalisation or tie rule a few percent or a few times off, or a lost
seed), and the named properties must find a counterexample to it. A property that never fails
on a broken implementation would prove nothing.

Each case patches the library (and the property module's own reference where it holds one), then
runs the property under the active profile without shrinking or the example database, and
expects hypothesis to report an ``AssertionError`` (the property's own check, not a crash).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch
from hypothesis import Phase, settings

import workbench.constructions._kernel_solve as ks
import workbench.core.sphere as sphere
from workbench import strategies as S
from workbench.constructions import biased as bz
from workbench.constructions import full_rank as fr
from workbench.constructions import majority_vote as mv
from workbench.constructions import random_features as rf
from workbench.core import harmonics as hm
from workbench.core import head_kernels as hk
from workbench.core import montecarlo as est
from workbench.core import targets
from workbench.core.bounds import fiber as fbm
from workbench.core.bounds import harmonic as lbm
from workbench.core.symbolic import bounds as sb
from workbench.models import attention as att
from workbench.models import scores as sc

# the package exports a function `train`
vtrain = importlib.import_module("workbench.verifiers.train")

pytestmark = pytest.mark.properties

Patch = Callable[[pytest.MonkeyPatch], None]


@dataclass(frozen=True)
class Fault:
    name: str
    patch: Patch
    caught_by: tuple[str, ...]  # "module::property"


# --- the planted faults -----------------------------------------------------------------------


def _mutate(mp: pytest.MonkeyPatch, module: ModuleType, name: str, old: str, new: str) -> None:
    """Replace ``module.name`` by its own source (decorators included) with ``old`` edited to
    ``new``: one mutation, compiled in a copy of the module's namespace."""
    tree = ast.parse(inspect.getsource(module))
    (node,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    lines = inspect.getsource(module).splitlines()
    start = min([node.lineno] + [dec.lineno for dec in node.decorator_list]) - 1
    src = textwrap.dedent("\n".join(lines[start:node.end_lineno]))
    assert src.count(old) == 1, f"{name}: the mutated text must occur once"
    ns = dict(vars(module))
    exec(compile(src.replace(old, new), f"<mutant of {module.__name__}.{name}>", "exec"), ns)
    mp.setattr(module, name, ns[name])


def _rank_off_by_one(mp: pytest.MonkeyPatch) -> None:  # r in 1..d+1
    mp.setattr(S, "ranks", lambda d: __import__("hypothesis").strategies.integers(1, d + 1))


def _tie_axis_mismatch(mp: pytest.MonkeyPatch) -> None:  # zero y_0 but flip x_{d-1}
    _mutate(mp, S, "tie_instances", "y[:, -1] = 0.0", "y[:, 0] = 0.0")


def _hardmax_of_abs(mp: pytest.MonkeyPatch) -> None:  # argmax |s| (a lost sign)
    orig = att.normalize
    mp.setattr(att, "normalize", lambda s, n: orig(s.abs() if n == "hardmax" else s, n))


def _upper_bound_beta_misplaced(mp: pytest.MonkeyPatch) -> None:  # / (2 beta) -> * (2 beta)
    _mutate(mp, fr, "error_upper_bound", "np.log(A / u[1:-1]) / (2 * beta)",
            "np.log(A / u[1:-1]) * (2 * beta)")


def _condorcet_threshold(mp: pytest.MonkeyPatch) -> None:  # N - 2 -> N - 3
    _mutate(mp, mv, "_tournament_model", "Q3[i, L.one] = 1.0, -(N - 2.0)",
            "Q3[i, L.one] = 1.0, -(N - 3.0)")


def _ensemble_p_constant(mp: pytest.MonkeyPatch) -> None:  # arcsin/pi -> arcsin/(2 pi)
    _mutate(mp, mv, "_ensemble_error", "math.asin(math.cos(phi)) / math.pi",
            "math.asin(math.cos(phi)) / (2 * math.pi)")


def _heads_seed_ignored(mp: pytest.MonkeyPatch) -> None:
    orig = rf.as_generator
    mp.setattr(rf, "as_generator", lambda g: None if isinstance(g, int) else orig(g))


def _chan_update_without_shift(mp: pytest.MonkeyPatch) -> None:  # merge drops delta^2 n b/(n+b)
    _mutate(mp, est, "estimate_mean", "m2 = m2 + bm2 + delta.square() * n * b / (n + b)",
            "m2 = m2 + bm2")


def _half_width_without_sqrt(mp: pytest.MonkeyPatch) -> None:
    _mutate(mp, est, "estimate_mean", "half = z * std / math.sqrt(n)", "half = z * std / n")


def _early_stop_twice_the_tolerance(mp: pytest.MonkeyPatch) -> None:
    _mutate(mp, est, "estimate_mean", ".max()) <= tol:", ".max()) <= 2 * tol:")


def _frames_off(mp: pytest.MonkeyPatch) -> None:  # normalisation 1 % off
    orig = S.orthonormal_points
    mp.setattr(S, "orthonormal_points", lambda *a, **k: 1.01 * orig(*a, **k))


def _instances_float64(mp: pytest.MonkeyPatch) -> None:  # models vs inputs dtype
    orig = S.sample_instances
    mp.setattr(S, "sample_instances", lambda *a, **k: orig(*a, **{**k, "dtype": torch.float64}))


def _nearest_drops_last_coordinate(mp: pytest.MonkeyPatch) -> None:  # off-by-one slice
    def nn(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        s = torch.einsum("bnd,bd->bn", X[..., :-1], y[..., :-1])
        return targets._gather(X, s.argmax(-1))

    mp.setattr(targets, "nearest_neighbour", nn)


def _gather_offsets_off_by_one(mp: pytest.MonkeyPatch) -> None:
    def gather(X: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        batch, N, d = X.shape
        off = torch.arange(batch).mul_(max(N - 1, 1)).view(-1, *([1] * (idx.ndim - 1)))
        return X.reshape(batch * N, d).index_select(0, (idx + off).reshape(-1)).view(*idx.shape, d)

    mp.setattr(targets, "_gather", gather)


def _softmax_position_ramp(mp: pytest.MonkeyPatch) -> None:  # a stray positional term
    orig = att.normalize

    def normalize(s: torch.Tensor, normalizer: str) -> torch.Tensor:
        ramp = 0.05 * torch.arange(s.shape[-1], dtype=s.dtype)
        return orig(s + ramp, normalizer)

    mp.setattr(att, "normalize", normalize)


def _hardmax_ties_to_last(mp: pytest.MonkeyPatch) -> None:  # tie rule flipped
    orig = att.normalize

    def normalize(s: torch.Tensor, normalizer: str) -> torch.Tensor:
        if normalizer == "softmax":
            return orig(s, normalizer)
        return orig(s.flip(-1), normalizer).flip(-1)

    mp.setattr(att, "normalize", normalize)


def _project_centres_features(mp: pytest.MonkeyPatch) -> None:  # a stray mean-centering
    orig = sc.project

    def project(Z: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        return orig(Z - Z.mean(-1, keepdim=True), W)

    mp.setattr(sc, "project", project)
    mp.setattr(att, "project", project)


def _heads_from_the_cube(mp: pytest.MonkeyPatch) -> None:  # uniform cube, not Gaussian
    def cube(*shape: int, d: int, generator=None, **_: object) -> torch.Tensor:
        z = torch.rand(*shape, d, generator=generator, dtype=torch.float64) * 2 - 1
        return z / z.norm(dim=-1, keepdim=True)

    mp.setattr(rf, "uniform_sphere", cube)


def _kernel_rows_l1_normalised(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(ks, "_unit", lambda M: M.to(torch.float64) / M.to(torch.float64).abs().sum(-1,
                                                                                  keepdim=True))


def _soft_target_half_beta(mp: pytest.MonkeyPatch) -> None:  # temperature 2x off
    orig = targets.soft_nearest_neighbour
    mp.setattr(targets, "soft_nearest_neighbour", lambda X, y, beta: orig(X, y, beta / 2))


def _fact1_constant_2(mp: pytest.MonkeyPatch) -> None:  # 4 -> 2 in the pointwise bound
    orig = fr.pointwise_bound
    mp.setattr(fr, "pointwise_bound", lambda X, y, beta: orig(X, y, beta) / 2)


def _beta_for_too_small(mp: pytest.MonkeyPatch) -> None:
    orig = fr.beta_for
    mp.setattr(fr, "beta_for", lambda *a, **k: orig(*a, **k) / 1.5)


def _degree_bound_constant(mp: pytest.MonkeyPatch) -> None:  # D'_l loses its C(l+r+1, r-1) term
    orig = lbm._tables.__wrapped__

    def tables(d: int, r: int, L: int, value_class: str = "eq2"):
        degrees, Ns, Ds, e2_iv, e2_f = orig(d, r, L, value_class)
        q = lbm._class_factor(d, value_class)
        Ds = [D - q * math.comb(l + r + 1, r - 1) for l, D in zip(degrees, Ds)]
        return degrees, Ns, Ds, e2_iv, e2_f

    mp.setattr(lbm, "_tables", tables)


def _bound_sum(d: int, r: int, H: int, L: int, vc: str, term) -> tuple:
    degrees, Ns, Ds, e2_iv, _ = lbm._tables(d, r, L, vc)
    with lbm._iv_prec():
        total = lbm.iv.mpf(0)
        for i in range(len(degrees)):
            total += term(e2_iv[i], Ns[i], H * Ds[i])
        total = total / 2
        return lbm.mpmath.mpf(total.a), lbm.mpmath.mpf(total.b)


def _loss_factor_forgotten(mp: pytest.MonkeyPatch) -> None:  # (1 - min(1, H D/N)) dropped
    mp.setattr(lbm, "_bound_interval",
               lambda d, r, H, L, vc="eq2": _bound_sum(d, r, H, L, vc, lambda e, n, hd: e))


def _lost_energy_sign(mp: pytest.MonkeyPatch) -> None:  # |N - H D| for max(0, N - H D)
    mp.setattr(lbm, "_bound_interval", lambda d, r, H, L, vc="eq2": _bound_sum(
        d, r, H, L, vc, lambda e, n, hd: e * lbm.iv.mpf(abs(n - hd)) / lbm.iv.mpf(n)))


def _heads_needed_off_by_one(mp: pytest.MonkeyPatch) -> None:
    orig = lbm.heads_needed
    mp.setattr(lbm, "heads_needed", lambda *a, **k: orig(*a, **k) + 1)


def _thm5_degree_of_eps(mp: pytest.MonkeyPatch) -> None:  # d / eps^2 -> d eps^2
    b = sb.get_bound("thm5.majority_vote_heads")
    wrong = sb.Bound(b.id, b.title, b.tag, b.lhs, b.relation, b.rhs.subs(sb.eps, 1 / sb.eps),
                     b.constants, b.note)
    mp.setitem(sb.ALL_BOUNDS, b.id, wrong)


def _eta_two_percent_high(mp: pytest.MonkeyPatch) -> None:
    orig = hm.sign_coefficients
    mp.setattr(hm, "sign_coefficients", lambda d, L: orig(d, L) * 1.02)


def _eta_sign_pattern_lost(mp: pytest.MonkeyPatch) -> None:  # (-1)^m dropped
    orig = hm.sign_coefficients
    mp.setattr(hm, "sign_coefficients", lambda d, L: np.abs(orig(d, L)))


def _dim_harmonics_forgets_the_subtraction(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(hm, "dim_harmonics", lambda d, l: math.comb(l + d - 1, d - 1))


def _legendre_recurrence_denominator(mp: pytest.MonkeyPatch) -> None:  # (l+d-2) -> (l+d-1)
    def legendre(d: int, L: int, t: object) -> np.ndarray:
        x = np.asarray(t, dtype=np.float64)
        out = np.empty((L + 1, *x.shape))
        out[0] = 1.0
        if L >= 1:
            out[1] = x
        for l in range(1, L):
            out[l + 1] = ((2 * l + d - 2) * x * out[l] - l * out[l - 1]) / (l + d - 1)
        return out

    mp.setattr(hm, "legendre_d", legendre)


def _gegenbauer_norm_off(mp: pytest.MonkeyPatch) -> None:
    orig = hm.normalized_gegenbauer
    mp.setattr(hm, "normalized_gegenbauer", lambda d, L, t: orig(d, L, t) * 1.03)


def _b_kappa_three_percent(mp: pytest.MonkeyPatch) -> None:
    orig = hk.head_target_agreement
    mp.setattr(hk, "head_target_agreement", lambda d, c: 0.5 + 1.03 * (orig(d, c) - 0.5))


def _b_sign_lost(mp: pytest.MonkeyPatch) -> None:  # sign(c) dropped from b(c)
    orig = hk.head_target_agreement
    mp.setattr(hk, "head_target_agreement", lambda d, c: orig(d, c.abs() if isinstance(
        c, torch.Tensor) else abs(c)))


def _C_sign_flipped(mp: pytest.MonkeyPatch) -> None:
    orig = hk.agreement_kernel_cross
    mp.setattr(hk, "agreement_kernel_cross", lambda *a: 1.0 - orig(*a))


def _suboptimal_values(mp: pytest.MonkeyPatch) -> None:  # values 30 % too large
    orig = rf.solve_heads

    def solve(*a: object, **k: object):
        s = orig(*a, **k)
        return type(s)(**{**s.__dict__, "a": s.a * 1.3})

    mp.setattr(rf, "solve_heads", solve)


def _kernel_error_factor(mp: pytest.MonkeyPatch) -> None:  # 1 - 2 a.b -> 1 - a.b
    orig = rf.solve_value_weights

    def solve(Q: torch.Tensor, K: torch.Tensor, b: torch.Tensor, *a: object, **k: object):
        s = orig(Q, K, b, *a, **k)
        C = ks.dense_kernel(Q, K)
        err = float(1.0 - s.a @ b + s.a @ (C @ s.a))
        return type(s)(**{**s.__dict__, "error": err})

    mp.setattr(rf, "solve_value_weights", solve)


def _fact1_model_ignores_beta(mp: pytest.MonkeyPatch) -> None:  # Wq = I instead of beta I
    orig = fr.full_rank_model
    mp.setattr(fr, "full_rank_model", lambda d, beta, dtype=torch.float64: orig(
        d, min(beta, 1.0), dtype))


def _votes_of_one_over_H(mp: pytest.MonkeyPatch) -> None:  # a tie bug once fixed in the tournament
    orig = mv._two_key_model

    def two(d: int, H: int, gen, style: str):
        model = orig(d, H, gen, style)
        with torch.no_grad():
            model.layers[0].Wo.mul_(1.0 / H)
        return model

    mp.setattr(mv, "_two_key_model", two)


def _ensemble_heads_off_by_one(mp: pytest.MonkeyPatch) -> None:
    orig = mv._ensemble_error.__wrapped__
    mp.setattr(mv, "_ensemble_error", lambda d, H: orig(d, H + 1))


def _biased_bias_sign(mp: pytest.MonkeyPatch) -> None:  # biases written with the wrong sign
    real = bz.biased_model

    def model(family, normalizer="hardmax", beta=1.0):
        return real(type(family)(family.d, -family.biases, family.coeffs), normalizer, beta)

    mp.setattr(bz, "biased_model", model)


def _soft_bias_bound_halved(mp: pytest.MonkeyPatch) -> None:  # 2 min(1, .) -> min(1, .)
    _mutate(mp, bz, "soft_bound_values", "per = 2 * torch.clamp(", "per = torch.clamp(")


def _z_one_sided(mp: pytest.MonkeyPatch) -> None:  # ppf(level) for ppf(1/2 + level/2)
    from scipy.stats import norm

    mp.setattr(est, "z_value", lambda level: float(norm.ppf(level)))


def _seed_ignored(mp: pytest.MonkeyPatch) -> None:
    orig = sphere.as_generator
    mp.setattr(sphere, "as_generator", lambda g: None if isinstance(g, int) else orig(g))


def _init_ignores_generator(mp: pytest.MonkeyPatch) -> None:
    for cls in (att.GeneralizedAttention, att.MultiHeadAttention):
        orig = cls.reset_parameters
        mp.setattr(cls, "reset_parameters", lambda self, generator=None, _o=orig: _o(self, None))


def _derived_seed_not_stable(mp: pytest.MonkeyPatch) -> None:
    calls = iter(range(10**9))
    orig = vtrain.derive_seed
    mp.setattr(vtrain, "derive_seed", lambda s, tag: orig(s + next(calls), tag))


def _naive_softmax(mp: pytest.MonkeyPatch) -> None:  # exp without the max shift
    def soft(X: torch.Tensor, y: torch.Tensor, beta: float) -> torch.Tensor:
        e = torch.exp(beta * torch.einsum("bnd,bd->bn", X, y))
        return torch.einsum("bn,bnd->bd", e / e.sum(-1, keepdim=True), X)

    mp.setattr(targets, "soft_nearest_neighbour", soft)


def _fiber_vector_factor(mp: pytest.MonkeyPatch) -> None:  # lambda_1 without (c + (1-c)/m)
    real = fbm._spectrum

    def spectrum(m: int, c: np.ndarray):  # type: ignore[no-untyped-def]
        vals, mult = real(m, c)
        vals = vals.copy()
        vals[1] = fbm._eigen(m, c)[1]
        return vals, mult

    mp.setattr(fbm, "_spectrum", spectrum)


def _fiber_captured_low(mp: pytest.MonkeyPatch) -> None:  # captured energy 1 % low
    real = fbm._captured
    mp.setattr(fbm, "_captured", lambda d, rs, H: (0.99 * real(d, rs, H)[0], 1e-13))


def _fiber_trace_top_only(mp: pytest.MonkeyPatch) -> None:  # query values: the top value only
    _mutate(mp, fbm, "fiber_bound", "else 1 + m + m * (m + 1) // 2", "else 1")


def _fiber_legendre_norm(mp: pytest.MonkeyPatch) -> None:  # P_2 = (m t^2 - 1)/m
    _mutate(mp, fbm, "_theta_rule", "(m * t * t - 1) / (m - 1)", "(m * t * t - 1) / m")


FAULTS = [
    Fault("fiber vector value without its factor", _fiber_vector_factor,
          ("test_props_fiber::test_spectrum_is_the_brute_force_generalized_spectrum",)),
    Fault("fiber captured energy 1% low", _fiber_captured_low,
          ("test_props_fiber::test_bound_lies_below_the_exact_one_head_error",)),
    Fault("query-dependent fiber bound with the top value only", _fiber_trace_top_only,
          ("test_props_fiber::test_bound_is_non_increasing_in_heads_and_weaker_for_query_values",)),
    Fault("fiber P_2 normalised by m", _fiber_legendre_norm,
          ("test_props_fiber::test_sympy_integrals_equal_the_library",)),
    Fault("rank in 1..d+1", _rank_off_by_one,
          ("test_props_strategies::test_configs_lie_in_the_domain",
           "test_props_strategies::test_bound_arguments_lie_in_the_domain")),
    Fault("tie axes mismatched", _tie_axis_mismatch,
          ("test_props_strategies::test_tie_instances_tie_exactly",)),
    Fault("hardmax of |scores|", _hardmax_of_abs,
          ("test_props_limits::test_hardmax_full_rank_head_is_the_nearest_neighbour",)),
    Fault("Fact 1 error upper bound with beta misplaced", _upper_bound_beta_misplaced,
          ("test_props_limits::test_fact1_error_upper_bound_is_non_increasing_in_beta",)),
    Fault("Condorcet threshold N-3", _condorcet_threshold,
          ("test_props_constructions::test_tournament_equals_the_interpreter",)),
    Fault("ensemble p with arcsin/(2 pi)", _ensemble_p_constant,
          ("test_props_constructions::test_ensemble_error_matches_quadrature_in_t_and_hoeffding",)),
    Fault("random heads ignore the seed", _heads_seed_ignored,
          ("test_props_determinism::test_constructions_are_bit_identical_per_seed",)),
    Fault("streaming merge without the shift term", _chan_update_without_shift,
          ("test_props_estimators::test_streamed_mean_and_std_equal_the_one_shot_ones",)),
    Fault("half-width z s / n", _half_width_without_sqrt,
          ("test_props_estimators::test_normal_intervals_are_centred_and_nest_across_levels",)),
    Fault("early stop at twice the tolerance", _early_stop_twice_the_tolerance,
          ("test_props_estimators::test_early_stop_reaches_its_tolerance_or_the_budget",)),
    Fault("frames 1% off", _frames_off,
          ("test_props_strategies::test_sphere_points_and_frames_are_unit_and_orthonormal",)),
    Fault("instances in float64", _instances_float64,
          ("test_props_strategies::test_drawn_instances_feed_drawn_models",)),
    Fault("nearest drops the last coordinate", _nearest_drops_last_coordinate,
          ("test_props_equivariance::test_nearest_neighbour_is_rotation_equivariant",
           "test_props_limits::test_soft_target_tends_to_the_hard_one_away_from_ties")),
    Fault("gather offsets N-1", _gather_offsets_off_by_one,
          ("test_props_equivariance::test_nearest_neighbour_is_permutation_equivariant",)),
    Fault("softmax position ramp", _softmax_position_ramp,
          ("test_props_equivariance::test_full_rank_head_is_permutation_equivariant",)),
    Fault("projection centres features", _project_centres_features,
          ("test_props_equivariance::test_rank_r_head_is_equivariant_when_its_subspaces_rotate",
           "test_props_equivariance::test_full_rank_head_is_rotation_equivariant")),
    Fault("heads from the cube", _heads_from_the_cube,
          ("test_props_equivariance::test_random_feature_heads_are_rotation_invariant_in_law",)),
    Fault("kernel rows L1-normalised", _kernel_rows_l1_normalised,
          ("test_props_equivariance::test_random_feature_error_is_rotation_invariant",)),
    Fault("soft target at beta/2", _soft_target_half_beta,
          ("test_props_limits::test_soft_target_tends_to_the_hard_one_away_from_ties",)),
    Fault("hardmax ties to the last index", _hardmax_ties_to_last,
          ("test_props_limits::test_hardmax_is_the_argmax_one_hot",)),
    Fault("Fact 1 constant 4 -> 2", _fact1_constant_2,
          ("test_props_limits::test_full_rank_error_is_within_the_pointwise_fact1_bound",)),
    Fault("beta_for 1.5x too small", _beta_for_too_small,
          ("test_props_limits::test_beta_for_reaches_the_accuracy_it_promises",)),
    Fault("D'_l term C(l+r+1,r-1) dropped", _degree_bound_constant,
          ("test_props_bounds::test_bound_equals_the_sympy_encoding_evaluated_in_floats",)),
    Fault("loss factor forgotten", _loss_factor_forgotten,
          ("test_props_bounds::test_random_features_never_beat_the_bound",)),
    Fault("lost energy |N - H D|", _lost_energy_sign,
          ("test_props_bounds::test_bound_is_non_increasing_in_heads",
           "test_props_bounds::test_bound_is_non_increasing_in_rank",
           "test_props_bounds::test_bound_is_a_finite_number_in_0_half")),
    Fault("heads_needed off by one", _heads_needed_off_by_one,
          ("test_props_bounds::test_heads_needed_is_the_least_head_count_of_the_harmonic_count",)),
    Fault("thm5 rhs d eps^2", _thm5_degree_of_eps,
          ("test_props_bounds::test_symbolic_bounds_are_monotone_as_their_theorems_say",)),
    Fault("eta 2% high", _eta_two_percent_high,
          ("test_props_harmonics::test_parseval_partial_sums_rise_to_one",
           "test_props_harmonics::test_sign_coefficients_match_the_high_precision_closed_form")),
    Fault("eta sign pattern lost", _eta_sign_pattern_lost,
          ("test_props_harmonics::test_sign_coefficients_match_quadrature_of_sign",)),
    Fault("N(d,l) without the subtraction", _dim_harmonics_forgets_the_subtraction,
          ("test_props_harmonics::test_dim_harmonics_is_a_positive_integer_counting_polynomials",
           "test_props_harmonics::test_addition_theorem_gram_matrix_has_rank_N")),
    Fault("Gegenbauer recurrence denominator", _legendre_recurrence_denominator,
          ("test_props_harmonics::test_addition_theorem_gram_matrix_has_rank_N",)),
    Fault("normalised Gegenbauer 3% off", _gegenbauer_norm_off,
          ("test_props_harmonics::test_normalized_gegenbauer_is_orthonormal",)),
    Fault("b with kappa 3% high", _b_kappa_three_percent,
          ("test_props_kernels::test_series_for_b_matches_its_closed_form",)),
    Fault("b without sign(c)", _b_sign_lost,
          ("test_props_kernels::test_b_is_a_probability_odd_about_one_half_and_non_decreasing",)),
    Fault("C = 1 - C", _C_sign_flipped,
          ("test_props_kernels::test_C_is_an_agreement_probability_matrix_and_psd",)),
    Fault("values 30% too large", _suboptimal_values,
          ("test_props_kernels::test_optimal_values_give_an_error_in_0_1_that_no_other_values_beat",
           "test_props_constructions::test_random_features_error_equals_its_exact_claim")),
    Fault("kernel error 1 - a.b + a.C.a", _kernel_error_factor,
          ("test_props_constructions::test_random_features_error_equals_its_exact_claim",)),
    Fault("Fact 1 head built at beta = 1", _fact1_model_ignores_beta,
          ("test_props_constructions::test_full_rank_error_is_within_its_claim",)),
    Fault("votes of 1/H", _votes_of_one_over_H,
          ("test_props_constructions::test_majority_vote_equals_the_interpreter",)),
    Fault("ensemble error at H+1", _ensemble_heads_off_by_one,
          ("test_props_constructions::test_majority_vote_error_matches_its_ensemble_claim",)),
    Fault("biased bias sign", _biased_bias_sign,
          ("test_props_constructions::test_biased_hardmax_construction_equals_its_target",)),
    Fault("biased softmax bound without its factor 2", _soft_bias_bound_halved,
          ("test_props_constructions::test_biased_softmax_error_is_within_its_pointwise_claim",)),
    Fault("one-sided z", _z_one_sided,
          ("test_props_estimators::test_ci_contains_the_exact_error_at_the_nominal_rate",)),
    Fault("int seed ignored", _seed_ignored,
          ("test_props_determinism::test_sampling_is_bit_identical_per_seed",)),
    Fault("init ignores its generator", _init_ignores_generator,
          ("test_props_determinism::test_model_initialisation_is_bit_identical_per_seed",)),
    Fault("derived seeds drift", _derived_seed_not_stable,
          ("test_props_determinism::test_training_is_bit_identical_per_seed",)),
    Fault("softmax without the max shift", _naive_softmax,
          ("test_props_extremes::test_huge_beta_on_exact_ties_gives_the_midpoint",
           "test_props_extremes::test_huge_beta_on_near_ties_stays_finite_and_convex")),
]

CASES = [(f.name, target) for f in FAULTS for target in f.caught_by]


def _property(target: str) -> Callable[[], None]:
    module, name = target.split("::")
    return getattr(importlib.import_module(f"tests.properties.{module}"), name)


@pytest.mark.parametrize("fault,target", CASES, ids=[f"{f}->{t.split('::')[1]}" for f, t in CASES])
def test_property_fails_on_planted_fault(fault: str, target: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    prop = _property(target)
    assert hasattr(prop, "hypothesis"), f"{target} is not a @given property"
    inner = prop._hypothesis_internal_use_settings  # type: ignore[attr-defined]
    quick = settings(inner, phases=(Phase.explicit, Phase.generate), database=None,
                     derandomize=True, report_multiple_bugs=False)
    monkeypatch.setattr(prop, "_hypothesis_internal_use_settings", quick)
    {f.name: f for f in FAULTS}[fault].patch(monkeypatch)
    with pytest.raises(AssertionError):
        prop()


def test_every_property_has_a_planted_fault() -> None:
    """Every @given property of the suite appears in CASES (this module's own tests excepted)."""
    listed = {t for _, t in CASES}
    missing = []
    for path in sorted(Path(__file__).parent.glob("test_props_*.py")):
        if path.stem in ("test_props_power", "test_props_extremes_slow"):
            continue
        module = importlib.import_module(f"tests.properties.{path.stem}")
        for name, fn in vars(module).items():
            if name.startswith("test_") and hasattr(fn, "hypothesis"):
                if f"{path.stem}::{name}" not in listed:
                    missing.append(f"{path.stem}::{name}")
    assert not missing, missing


def test_every_property_module_has_a_planted_fault() -> None:
    modules = {t.split("::")[0] for _, t in CASES}
    assert modules >= {f"test_props_{m}" for m in (
        "strategies", "equivariance", "limits", "bounds", "harmonics", "kernels", "constructions",
        "estimators", "determinism", "extremes", "fiber")}


def test_the_old_gegenbauer_overflows_where_the_extremes_test_looks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain extremes test catches the overflowing normalised Gegenbauer evaluation that the
    stable one replaced."""
    def old(d: int, L: int, t: object) -> np.ndarray:
        P = hm.legendre_d(d, L, t)
        scale = np.array([hm._sqrt_int_float(hm.dim_harmonics(d, l)) for l in range(L + 1)])
        with np.errstate(invalid="ignore", over="ignore"):
            return P * scale.reshape((-1,) + (1,) * (P.ndim - 1))

    monkeypatch.setattr(hm, "normalized_gegenbauer", old)
    extremes = importlib.import_module("tests.properties.test_props_extremes")
    with pytest.raises(AssertionError):
        extremes.test_d4096_degree401_gegenbauer_is_finite_and_accurate()
