"""Theorem 2 for N = 2 on D_2: the harmonic count as a chain of lemma claims
(docs/derivations/lower_bound.md, Lemmas 1-6), the fiber bound (docs/derivations/fiber_bound.md),
and experiments that must respect the certified bound, the larger of the two
(``workbench.core.bounds.certified``).

Chain (``depends_on`` mirrors the derivation)::

    thm2.projection_reduction (L1) -> thm2.odd_reduction (L2)
    thm2.projection_reduction      -> thm2.conditional_law (L3)
    harmonics.*                    -> thm2.isotropy (L4)
    harmonics.dimension            -> thm2.invariant_dimension (L5a) -> thm2.degree_dimension (L5b)
                                                                    -> thm2.fixed_form_dimension
    all of the above               -> thm2.harmonic_bound (L6, theorem)
    thm2.isotropy, thm2.invariant_dimension -> thm2.one_head_exact -> thm2.sandwich
    thm2.conditional_law -> thm2.fiber_spectrum (F2, F3) -> thm2.fiber_bound (F4)
    thm2.projection_reduction, thm2.one_head_exact          -> thm2.fiber_bound
    thm2.fiber_spectrum, thm2.one_head_exact -> thm2.one_head_optimum (evidence)
    thm2.fiber_spectrum -> thm2.fiber_value (the value at H >= 2, both classes, vs Monte Carlo)
    thm2.harmonic_bound, thm2.fiber_value -> thm2.combined_bound (the printed max, each class)
    thm2.harmonic_bound, thm2.fiber_bound (the certified bound: their max)
                                   -> thm2.iid_transfer (i.i.d. keys; and L1),
                                      thm2.fitted_models_respect_bound,
                                      thm2.random_features_respect_bound (and kernels.agreement),
                                      thm2.full_rank_reaches_zero (and fact1.hard_limit),
                                      thm2.sandwich,
                                      thm2.solved_values_optimal (and kernels.agreement)
    thm2.harmonic_bound (the count alone) -> thm2.regime_high_dimensional,
                                             thm2.regime_high_accuracy (``thm2.regimes``)

Every check compares the library with an independent computation: identities on random
generalized-attention models from ``workbench.models.attention``; Monte Carlo with named
intervals (``workbench.core.montecarlo.sample_mean``; where a claim has several, mostly
Bonferroni-corrected to hold together at 99.9%); numerical ranks of exactly integrated Gram
matrices; and the bound re-evaluated in interval arithmetic from the Gamma closed form with
exact factorials (not the library's ratio recurrence).
"""

from workbench.proofs.paper.thm2.combined import combined_bound_claim
from workbench.proofs.paper.thm2.experiments import (
    fitted_models_respect_bound,
    full_rank_reaches_zero,
    random_features_respect_bound,
)
from workbench.proofs.paper.thm2.fiber import (
    fiber_bound_claim,
    fiber_spectrum_claim,
    one_head_optimum,
)
from workbench.proofs.paper.thm2.fiber_value import fiber_value_claim
from workbench.proofs.paper.thm2.harmonic_bound import harmonic_bound_claim
from workbench.proofs.paper.thm2.harmonic_lemmas import (
    degree_dimension,
    fixed_form_dimension,
    invariant_dimension,
    isotropy,
)
from workbench.proofs.paper.thm2.iid_transfer import iid_transfer_claim
from workbench.proofs.paper.thm2.optimality import solved_values_optimal
from workbench.proofs.paper.thm2.reductions import (
    conditional_law,
    odd_reduction,
    projection_reduction,
)
from workbench.proofs.paper.thm2.sandwich import one_head_exact, sandwich_claim
from workbench.proofs.support.exact_harmonics import independent_bound

__all__ = [
    "combined_bound_claim", "conditional_law", "degree_dimension", "fiber_bound_claim",
    "fiber_spectrum_claim", "fiber_value_claim", "fitted_models_respect_bound",
    "fixed_form_dimension", "full_rank_reaches_zero", "harmonic_bound_claim",
    "iid_transfer_claim", "independent_bound", "invariant_dimension",
    "isotropy", "odd_reduction", "one_head_exact", "one_head_optimum", "projection_reduction",
    "random_features_respect_bound", "sandwich_claim", "solved_values_optimal",
]
