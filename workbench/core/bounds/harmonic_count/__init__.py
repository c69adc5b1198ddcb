"""The harmonic count: Theorem 2's ``D'_l`` count on D_2 (docs/derivations/lower_bound.md),
its exact energies ``eta_l^2`` (:mod:`.exact_energy`), the degrees it sums
(:mod:`.harmonic_degrees`)
and the curve in the norm of the value maps (:mod:`.norm_curve`, docs/derivations/sandwich.md).

Layering: workbench.core, workbench.core.bounds, workbench.core.bounds.numerics.
"""
