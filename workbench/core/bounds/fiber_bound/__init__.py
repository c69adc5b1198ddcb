"""The fiber bound on D_2 (docs/derivations/fiber_bound.md): the bound (:mod:`.fiber`), its
rigorous enclosure (:mod:`.fiber_enclosure`, with ``fiber_table.json``), the eigenvalue series
(:mod:`.fiber_series`), their ``acb.integral`` checks (:mod:`.fiber_rigorous`) and kinks
(:mod:`.fiber_kinks`).

Layering: workbench.core, workbench.core.bounds, workbench.core.bounds.numerics.
"""
