"""The shared numerics of the bounds: the one truncation rule (:mod:`.truncation`,
docs/derivations/lower_bound.md, Lemma 6), normalised Gegenbauer polynomials on balls
(:mod:`.gegenbauer_ball`), proved panel quadrature (:mod:`.panel_quadrature`) and kink
brackets (:mod:`.kink_brackets`).

Layering: workbench.core, workbench.core.bounds.
"""
