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
from dataclasses import dataclass, replace
from fractions import Fraction

from benchmarks.mutation_wraps import (
    _agreement_flip,
    _biased_sign,
    _combined_query_class_eq2,
    _d_squared_as_d,
    _decompose_sign,
    _degree_off,
    _dim_harmonics_binomial,
    _enclosure_beta_shifted,
    _enclosure_traceless_short,
    _enclosure_vector_factor_dropped,
    _encoding,
    _ensemble_ties,
    _eps_power,
    _estimate_scaled,
    _family_spacing,
    _fiber_bound_2pct,
    _fiber_bound_10pct_two_heads,
    _fiber_multiplicity_short,
    _fiber_query_class_eq2,
    _fiber_span_one_head,
    _fiber_vector_factor_dropped,
    _fit_short,
    _flip,
    _harmonic_bound_scaled,
    _harmonic_count_off,
    _heads_minus_one,
    _invariant_rank_off,
    _kernel_error_dropped,
    _ky_fan_one_more,
    _legendre_dim_off,
    _low_rank_given_full_rank,
    _lr_no_warmup,
    _majority_eps_linear,
    _mc_interval_quarter,
    _orthonormal_iid,
    _profile_eta_high,
    _reading_spacing,
    _replay_low,
    _sample_mean_quarter,
    _series_ratio_off,
    _sign_coefficients_next_odd,
    _sign_coefficients_scaled,
    _solve_ridge,
    _task_error_mean,
    _uniform_sphere_unnormalised,
    _values_shrunk,
)
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
    Fault("core.soft_iid_weight_without_one_minus_t",
          "workbench.core.bounds.profile_iid:weighted_mass", "core", "dropped term",
          "i.i.d. soft mixture: each cell weighted by P(cell), not E[(1 - t); cell]",
          replaced(lambda d, lo, hi: __import__(
              "workbench.core.bounds.profile_iid", fromlist=["t_mass"]).t_mass(d, lo, hi))),
    Fault("core.tanh_panel_sqrt2_dropped",
          "workbench.core.bounds.panel_energy:_tanh_at_nodes", "core", "normalisation",
          "panel energies of tanh(b t) in place of tanh(b t/sqrt2)",
          arg_scaled(0, "b", math.sqrt(2))),
    Fault("core.panel_form_nodes_5pct", "workbench.core.bounds.panel_energy:_form_at_nodes",
          "core", "constant", "panel energies of a profile's exact form from node values 5 % "
          "high", mapped(lambda vals: [1.05 * v for v in vals])),
    Fault("core.profile_iid_no_key_gap", "workbench.core.bounds.profile_iid_scale:scaled_profile",
          "core", "dropped term", "i.i.d. profile mixture: psi at scale 1 on every pair, not "
          "sqrt(1 - t)", lambda f: lambda p, c: f(p, 1.0)),
    Fault("core.profile_iid_scale_squared",
          "workbench.core.bounds.profile_iid_scale:scaled_profile", "core", "degree",
          "i.i.d. profile mixture: scale 1 - t instead of sqrt(1 - t)",
          lambda f: lambda p, c: f(p, c * c)),
    Fault("core.profile_iid_gap_halved", "workbench.core.bounds.profile_iid_scale:scale_gap",
          "core", "constant", "i.i.d. profile mixture: the cell's scale gap halved",
          lambda f: lambda *a: (f(*a)[0] / 2, f(*a)[1])),
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
    Fault("core.profile_eta_five_percent", "workbench.core.bounds.gegenbauer_ball:normalized_at",
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
