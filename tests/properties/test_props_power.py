"""Power of the property suite: each planted fault below is realistic (a
constant, sign, degree, normalisation or tie rule a few percent or a few times off, or a lost
seed), and the named properties must find a counterexample to it. A property that never fails
on a broken implementation would prove nothing.

Each fault is planted with ``workbench.testing.plant`` (the name is replaced wherever it is
bound, ``from x import f`` aliases included, and restored afterwards); the property then runs
under ``workbench.testing.property_fails``, which stops at its first failing example, and must
fail by an ``AssertionError`` (the property's own check, not a crash).
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import strategies as st

from workbench.core import harmonics as hm
from workbench.core.symbolic import bounds as sb
from workbench.testing import (
    Wrap,
    arg_mapped,
    arg_scaled,
    edited,
    mapped,
    plant,
    property_fails,
    replaced,
    scaled,
)

pytestmark = pytest.mark.properties


@dataclass(frozen=True)
class Fault:
    name: str
    target: str  # "module:attr" or "module:Class.attr"
    wrap: Wrap
    caught_by: tuple[str, ...]  # "module::property"
    also: tuple[tuple[str, Wrap], ...] = ()  # more (target, wrap), planted with it


# --- the wraps that are not a one-line edit ----------------------------------------------------


def _cube_directions(*shape: int, d: int, generator=None, **_: object) -> torch.Tensor:
    """Directions of uniform points in the cube, not of Gaussian ones: not uniform on the
    sphere."""
    z = torch.rand(*shape, d, generator=generator, dtype=torch.float64) * 2 - 1
    return z / z.norm(dim=-1, keepdim=True)


def _thm5_rhs_of_eps_squared(bounds: dict[str, sb.Bound]) -> dict[str, sb.Bound]:
    """Theorem 5's right-hand side d / eps^2 written as d eps^2."""
    b = bounds["thm5.majority_vote_heads"]
    wrong = sb.Bound(b.id, b.title, b.tag, b.lhs, b.relation, b.rhs.subs(sb.eps, 1 / sb.eps),
                     b.constants, b.note)
    return {**bounds, b.id: wrong}


def _abs(c: Any) -> Any:
    return c.abs() if isinstance(c, torch.Tensor) else abs(c)


def _position_ramp(s: torch.Tensor) -> torch.Tensor:
    return s + 0.05 * torch.arange(s.shape[-1], dtype=s.dtype)


_SEED_DRIFT = itertools.count()
_NO_GENERATOR = arg_mapped(1, "generator", lambda _: None)


# --- the planted faults -----------------------------------------------------------------------

_FIBER = "workbench.core.bounds.fiber_bound.fiber"
_HARMONIC = "workbench.core.bounds.harmonic_count.harmonic"
_EST = "workbench.core.montecarlo:estimate_mean"
_NORMALIZE = "workbench.models.attention:normalize"
_HARDMAX_ARGMAX = "idx = scores.argmax(dim=-1, keepdim=True)"

FAULTS = [
    Fault("fiber vector value without its factor",
          f"{_FIBER}:_spectrum", edited("lam[1] * (c + (1 - c) / m)", "lam[1]"),
          ("test_props_fiber::test_spectrum_is_the_brute_force_generalized_spectrum",)),
    Fault("fiber captured energy 1% low",
          f"{_FIBER}:_captured", edited("return captured_enclosure(d, r_star, count)",
                                        "return tuple(0.99 * x for x in captured_enclosure("
                                        "d, r_star, count))"),
          ("test_props_fiber::test_bound_lies_below_the_exact_one_head_error",)),
    Fault("query-dependent fiber bound with the top value only",
          f"{_FIBER}:_span_and_count", edited("else 1 + m + m * (m + 1) // 2", "else 1"),
          ("test_props_fiber::test_bound_is_non_increasing_in_heads_and_weaker_for_query_values",)),
    Fault("fiber P_2 normalised by m",
          "workbench.core.quadrature:fiber_angle_rule",
          edited("(m * t * t - 1) / (m - 1)", "(m * t * t - 1) / m"),
          ("test_props_fiber::test_sympy_integrals_equal_the_library",)),
    Fault("rank in 1..d+1",
          "workbench.strategies:ranks", replaced(lambda d: st.integers(1, d + 1)),
          ("test_props_strategies::test_configs_lie_in_the_domain",
           "test_props_strategies::test_bound_arguments_lie_in_the_domain")),
    Fault("tie axes mismatched",  # zero y_0 but flip x_{d-1}
          "workbench.strategies:tie_instances_from_seed", edited("y[:, -1] = 0.0", "y[:, 0] = 0.0"),
          ("test_props_strategies::test_tie_instances_tie_exactly",)),
    Fault("pinned rank drawn anyway",
          "workbench.strategies:_configs",
          edited("r = draw(ranks(d)) if rank is None else rank", "r = draw(ranks(d))"),
          ("test_props_strategies::test_pinned_rank_and_n_are_kept_and_the_rest_is_drawn_around_them",)),
    Fault("pinned heads drawn anyway",
          "workbench.strategies:_configs",
          edited("H = draw(heads(max_heads)) if heads_ is None else heads_",
                 "H = draw(heads(max_heads))"),
          ("test_props_strategies::test_pinned_d_heads_and_orthonormal_n",)),
    Fault("D_2 keys drawn i.i.d.",
          "workbench.strategies:instances",
          edited("points = POINT_NAMES[law]", 'points = "iid"'),
          ("test_props_strategies::test_d2_and_dn_instances_have_orthonormal_keys",)),
    Fault("hardmax of |scores|",  # a lost sign
          _NORMALIZE, edited("idx = scores.argmax(", "idx = scores.abs().argmax("),
          ("test_props_limits::test_hardmax_full_rank_head_is_the_nearest_neighbour",)),
    Fault("Fact 1 error upper bound with beta misplaced",  # / (2 beta) -> * (2 beta)
          "workbench.constructions.full_rank:error_upper_bound",
          edited("np.log(A / u[1:-1]) / (2 * beta)", "np.log(A / u[1:-1]) * (2 * beta)"),
          ("test_props_limits::test_fact1_error_upper_bound_is_non_increasing_in_beta",)),
    Fault("Condorcet threshold N-3",
          "workbench.constructions.majority_vote:_tournament_model",
          edited("Q3[i, L.one] = 1.0, -(N - 2.0)", "Q3[i, L.one] = 1.0, -(N - 3.0)"),
          ("test_props_constructions::test_tournament_equals_the_interpreter",)),
    Fault("ensemble p with arcsin/(2 pi)",
          "workbench.constructions.majority_vote:_ensemble_error",
          edited("math.asin(math.cos(phi)) / math.pi",
                 "math.asin(math.cos(phi)) / (2 * math.pi)"),
          ("test_props_constructions::test_ensemble_error_matches_quadrature_in_t_and_hoeffding",)),
    Fault("random heads ignore the seed",
          "workbench.constructions.random_features:sample_heads",
          edited("gen = as_generator(generator)",
                 "gen = as_generator(None if isinstance(generator, int) else generator)"),
          ("test_props_determinism::test_constructions_are_bit_identical_per_seed",)),
    Fault("streaming merge without the shift term",  # merge drops delta^2 n b/(n+b)
          _EST, edited("m2 = m2 + bm2 + delta.square() * n * b / (n + b)", "m2 = m2 + bm2"),
          ("test_props_estimators::test_streamed_mean_and_std_equal_the_one_shot_ones",)),
    Fault("half-width z s / n",
          _EST, edited("half = z * std / math.sqrt(n)", "half = z * std / n"),
          ("test_props_estimators::test_normal_intervals_are_centred_and_nest_across_levels",)),
    Fault("early stop at twice the tolerance",
          _EST, edited(".max()) <= tol:", ".max()) <= 2 * tol:"),
          ("test_props_estimators::test_early_stop_reaches_its_tolerance_or_the_budget",)),
    Fault("frames 1% off",  # normalisation
          "workbench.strategies:orthonormal_points", scaled(1.01),
          ("test_props_strategies::test_sphere_points_and_frames_are_unit_and_orthonormal",)),
    Fault("instances in float64",  # models vs inputs dtype
          "workbench.strategies:sample_instances", arg_mapped(7, "dtype", lambda _: torch.float64),
          ("test_props_strategies::test_drawn_instances_feed_drawn_models",)),
    Fault("nearest drops the last coordinate",  # off-by-one slice
          "workbench.core.targets:nearest_neighbour",
          edited('torch.einsum("bnd,bd->bn", X, y)',
                 'torch.einsum("bnd,bd->bn", X[..., :-1], y[..., :-1])'),
          ("test_props_equivariance::test_nearest_neighbour_is_rotation_equivariant",
           "test_props_limits::test_soft_target_tends_to_the_hard_one_away_from_ties")),
    Fault("gather offsets N-1",
          "workbench.core.targets:_gather", edited(".mul_(N)", ".mul_(max(N - 1, 1))"),
          ("test_props_equivariance::test_nearest_neighbour_is_permutation_equivariant",)),
    Fault("softmax position ramp",  # a stray positional term
          _NORMALIZE, arg_mapped(0, "scores", _position_ramp),
          ("test_props_equivariance::test_full_rank_head_is_permutation_equivariant",)),
    Fault("projection centres features",  # a stray mean-centering
          "workbench.models.scores:project",
          arg_mapped(0, "Z", lambda Z: Z - Z.mean(-1, keepdim=True)),
          ("test_props_equivariance::test_rank_r_head_is_equivariant_when_its_subspaces_rotate",
           "test_props_equivariance::test_full_rank_head_is_rotation_equivariant")),
    Fault("heads from the cube",  # uniform cube, not Gaussian
          "workbench.constructions.random_features:uniform_sphere", replaced(_cube_directions),
          ("test_props_equivariance::test_random_feature_heads_are_rotation_invariant_in_law",)),
    Fault("kernel rows L1-normalised",
          "workbench.constructions._kernel_solve:_unit",
          edited("M / M.norm(dim=-1, keepdim=True)", "M / M.abs().sum(-1, keepdim=True)"),
          ("test_props_equivariance::test_random_feature_error_is_rotation_invariant",)),
    Fault("soft target at beta/2",  # temperature 2x off
          "workbench.core.targets:soft_nearest_neighbour", arg_scaled(2, "beta", 0.5),
          ("test_props_limits::test_soft_target_tends_to_the_hard_one_away_from_ties",)),
    Fault("hardmax ties to the last index",  # tie rule flipped
          _NORMALIZE,
          edited(_HARDMAX_ARGMAX, "idx = scores.shape[-1] - 1 - "
                                  "scores.flip(-1).argmax(dim=-1, keepdim=True)"),
          ("test_props_limits::test_hardmax_is_the_argmax_one_hot",)),
    Fault("Fact 1 constant 4 -> 2",  # in the pointwise bound
          "workbench.constructions.full_rank:pointwise_bound",
          edited("return 4 * torch.clamp(", "return 2 * torch.clamp("),
          ("test_props_limits::test_full_rank_error_is_within_the_pointwise_fact1_bound",)),
    Fault("beta_for 1.5x too small",
          "workbench.constructions.full_rank:beta_for", scaled(1 / 1.5),
          ("test_props_limits::test_beta_for_reaches_the_accuracy_it_promises",)),
    Fault("D'_l term C(l+r+1,r-1) dropped",
          f"{_HARMONIC}:_tables", edited(" + inv[l + 2])", ")"),
          ("test_props_bounds::test_bound_equals_the_sympy_encoding_evaluated_in_floats",)),
    Fault("loss factor forgotten",  # (1 - min(1, H D/N)) dropped: every degree counts in full
          f"{_HARMONIC}:_bound_interval",
          edited("if gap > 0:\n"
                 "            lo += e_lo[i] * gap // Ns[i]\n"
                 "            hi += ceil_div(e_hi[i] * gap, Ns[i])",
                 "lo += e_lo[i]\n"
                 "        hi += e_hi[i]"),
          ("test_props_bounds::test_random_features_never_beat_the_bound",)),
    Fault("lost energy |N - H D|",  # for max(0, N - H D)
          f"{_HARMONIC}:_bound_interval",
          edited("gap = Ns[i] - H * Ds[i]", "gap = abs(Ns[i] - H * Ds[i])"),
          ("test_props_bounds::test_bound_is_non_increasing_in_heads",
           "test_props_bounds::test_bound_is_non_increasing_in_rank",
           "test_props_bounds::test_bound_is_a_finite_number_in_0_half")),
    Fault("heads_needed off by one",
          f"{_HARMONIC}:heads_needed", mapped(lambda h: h + 1),
          ("test_props_bounds::test_heads_needed_is_the_least_head_count_of_the_harmonic_count",)),
    Fault("thm5 rhs d eps^2",  # d / eps^2 -> d eps^2
          "workbench.core.symbolic.bounds:ALL_BOUNDS", _thm5_rhs_of_eps_squared,
          ("test_props_bounds::test_symbolic_bounds_are_monotone_as_their_theorems_say",)),
    Fault("eta 2% high",
          "workbench.core.harmonics:sign_coefficients", scaled(1.02),
          ("test_props_harmonics::test_parseval_partial_sums_rise_to_one",
           "test_props_harmonics::test_sign_coefficients_match_the_high_precision_closed_form")),
    Fault("eta sign pattern lost",  # (-1)^m dropped
          "workbench.core.harmonics:sign_coefficients", mapped(np.abs),
          ("test_props_harmonics::test_sign_coefficients_match_quadrature_of_sign",)),
    Fault("N(d,l) without the subtraction",
          "workbench.core.harmonics:dim_harmonics",
          replaced(lambda d, l: math.comb(l + d - 1, d - 1)),
          ("test_props_harmonics::test_dim_harmonics_is_a_positive_integer_counting_polynomials",
           "test_props_harmonics::test_addition_theorem_gram_matrix_has_rank_N")),
    Fault("Gegenbauer recurrence denominator",  # (l+d-2) -> (l+d-1)
          "workbench.core.harmonics:legendre_d", edited("/ (l + d - 2)", "/ (l + d - 1)"),
          ("test_props_harmonics::test_addition_theorem_gram_matrix_has_rank_N",)),
    Fault("normalised Gegenbauer 3% off",
          "workbench.core.harmonics:normalized_gegenbauer", scaled(1.03),
          ("test_props_harmonics::test_normalized_gegenbauer_is_orthonormal",)),
    Fault("b with kappa 3% high",
          "workbench.core.head_kernels:head_target_agreement",
          mapped(lambda b: 0.5 + 1.03 * (b - 0.5)),
          ("test_props_kernels::test_series_for_b_matches_its_closed_form",)),
    Fault("b without sign(c)",  # sign(c) dropped from b(c)
          "workbench.core.head_kernels:head_target_agreement", arg_mapped(1, "cos_qk", _abs),
          ("test_props_kernels::test_b_is_a_probability_odd_about_one_half_and_non_decreasing",)),
    Fault("C = 1 - C",
          "workbench.core.head_kernels:agreement_kernel_cross",
          edited("return 0.5 + _TWO_OVER_PI2", "return 0.5 - _TWO_OVER_PI2"),
          ("test_props_kernels::test_C_is_an_agreement_probability_matrix_and_psd",)),
    Fault("values 30% too large",
          "workbench.constructions.random_features:solve_heads",
          mapped(lambda s: replace(s, a=s.a * 1.3)),
          ("test_props_kernels::test_optimal_values_give_an_error_in_0_1_that_no_other_values_beat",
           "test_props_constructions::test_random_features_error_equals_its_exact_claim")),
    Fault("kernel error 1 - a.b + a.C.a",  # 1 - 2 a.b -> 1 - a.b
          "workbench.constructions._kernel_solve:solve_value_weights",
          edited("err = float(1.0 - 2.0 * (a @ b) + a @ Ca)",
                 "err = float(1.0 - a @ b + a @ Ca)"),
          ("test_props_constructions::test_random_features_error_equals_its_exact_claim",)),
    Fault("Fact 1 head built at beta = 1",  # Wq = I instead of beta I for beta > 1
          "workbench.constructions.full_rank:full_rank_model",
          edited("from_weights(beta * eye,", "from_weights(min(beta, 1.0) * eye,"),
          ("test_props_constructions::test_full_rank_error_is_within_its_claim",)),
    Fault("votes of 1/H",  # a tie bug once fixed in the tournament
          "workbench.constructions.majority_vote:_two_key_model",
          edited("Wo = _unit_row(D, L.tally, [1.0])", "Wo = _unit_row(D, L.tally, [1.0 / H])"),
          ("test_props_constructions::test_majority_vote_equals_the_interpreter",)),
    Fault("ensemble error at H+1",
          "workbench.constructions.majority_vote:_ensemble_error",
          arg_mapped(1, "H", lambda H: H + 1),
          ("test_props_constructions::test_majority_vote_error_matches_its_ensemble_claim",)),
    Fault("biased bias sign",  # biases written with the wrong sign
          "workbench.constructions.biased:biased_model",
          edited("score.bias.copy_(family.biases", "score.bias.copy_(-family.biases"),
          ("test_props_constructions::test_biased_hardmax_construction_equals_its_target",)),
    Fault("biased softmax bound without its factor 2",  # 2 min(1, .) -> min(1, .)
          "workbench.constructions.biased:soft_bound_values",
          edited("per = 2 * torch.clamp(", "per = torch.clamp("),
          ("test_props_constructions::test_biased_softmax_error_is_within_its_pointwise_claim",)),
    Fault("one-sided z",  # ppf(level) for ppf(1/2 + level/2)
          "workbench.core.intervals:z_value",
          edited("ndtri(0.5 + level / 2)", "ndtri(level)"),
          ("test_props_estimators::test_ci_contains_the_exact_error_at_the_nominal_rate",)),
    Fault("int seed ignored",
          "workbench.core.sphere:as_generator",
          edited('return make_generator(generator, "cpu")', "return None"),
          ("test_props_determinism::test_sampling_is_bit_identical_per_seed",)),
    Fault("init ignores its generator",
          "workbench.models.attention:GeneralizedAttention.reset_parameters", _NO_GENERATOR,
          ("test_props_determinism::test_model_initialisation_is_bit_identical_per_seed",),
          also=(("workbench.models.attention:MultiHeadAttention.reset_parameters",
                 _NO_GENERATOR),)),
    Fault("derived seeds drift",
          "workbench.verifiers.train:derive_seed",
          arg_mapped(0, "seed", lambda s: s + next(_SEED_DRIFT)),
          ("test_props_determinism::test_training_is_bit_identical_per_seed",)),
    Fault("n-keys without the 1/2 of its pair factor",
          "workbench.core.bounds.sequence_length.n_keys:pair_factor",
          lambda f: lambda N: Fraction(N - 1),
          ("test_props_n_keys::test_bound_is_at_most_uniform_attention",)),
    Fault("n-keys fiber one dimension too large (n = d - N + 2)",
          "workbench.core.bounds.sequence_length.n_keys_energy:fiber_dim", lambda f: lambda d,
          N: d - N + 2,
          ("test_props_n_keys::test_bound_is_zero_once_the_rank_reaches_the_fiber",),
          also=(("workbench.core.bounds.sequence_length.n_keys_energy:energy_enclosures",
                 # uncached meanwhile
                 lambda f: f.__wrapped__),)),
    Fault("n-keys counts the captured fraction as lost",
          "workbench.core.bounds.sequence_length.n_keys:_loss",
          mapped(lambda x: 1 - x),
          ("test_props_n_keys::test_bound_is_non_increasing_in_heads",
           "test_props_n_keys::test_bound_is_non_increasing_in_rank")),
    Fault("multi-level counts the captured share as lost",
          "workbench.core.bounds.sequence_length.multi_level:level_capture",
          mapped(lambda mn: (1 - mn[0], 1 - mn[1])),
          ("test_props_multi_level::test_range_and_monotonicity",)),
    Fault("multi-level's Abel sum forgets the last level's cumulative energy",
          "workbench.core.bounds.sequence_length.multi_level:_abel",
          edited("total = c[-1] * cumulative_energy_lower(d, N, ks[-1])",
                 "total = 0 * c[-1]"),
          ("test_props_multi_level::test_abel_form_equals_the_plain_sum",)),
    Fault("softmax without the max shift",  # exp overflows at a huge beta
          "workbench.core.targets:soft_nearest_neighbour",
          edited('p = torch.softmax(beta * torch.einsum("bnd,bd->bn", X, y), dim=-1)',
                 'e = torch.exp(beta * torch.einsum("bnd,bd->bn", X, y))\n'
                 "    p = e / e.sum(-1, keepdim=True)"),
          ("test_props_extremes::test_huge_beta_on_exact_ties_gives_the_midpoint",
           "test_props_extremes::test_huge_beta_on_near_ties_stays_finite_and_convex")),
]

CASES = [(f.name, target) for f in FAULTS for target in f.caught_by]


def _property(target: str) -> Callable[[], None]:
    module, name = target.split("::")
    return getattr(importlib.import_module(f"tests.properties.{module}"), name)


@pytest.mark.parametrize("fault,target", CASES, ids=[f"{f}->{t.split('::')[1]}" for f, t in CASES])
def test_property_fails_on_planted_fault(fault: str, target: str) -> None:
    prop = _property(target)
    assert hasattr(prop, "hypothesis"), f"{target} is not a @given property"
    with contextlib.ExitStack() as planted:
        f = {f.name: f for f in FAULTS}[fault]
        for name, wrap in ((f.target, f.wrap), *f.also):
            planted.enter_context(plant(name, wrap))
        assert property_fails(prop), f"{target} passes with the fault {fault!r} planted"


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


def _overflowing_gegenbauer(d: int, L: int, t: object) -> np.ndarray:
    """The normalised Gegenbauer evaluation the stable one replaced: ``sqrt(N(d,l)) P_l``."""
    P = hm.legendre_d(d, L, t)
    scale = np.array([hm._sqrt_int_float(hm.dim_harmonics(d, l)) for l in range(L + 1)])
    with np.errstate(invalid="ignore", over="ignore"):
        return P * scale.reshape((-1,) + (1,) * (P.ndim - 1))


def test_the_old_gegenbauer_overflows_where_the_extremes_test_looks() -> None:
    """The plain extremes test catches the overflowing normalised Gegenbauer evaluation that the
    stable one replaced."""
    extremes = importlib.import_module("tests.properties.test_props_extremes")
    with plant("workbench.core.harmonics:normalized_gegenbauer",
               replaced(_overflowing_gegenbauer)), pytest.raises(AssertionError):
        extremes.test_d4096_degree401_gegenbauer_is_finite_and_accurate()
