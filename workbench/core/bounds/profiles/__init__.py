"""Profiles and soft targets (docs/derivations/soft_targets.md): the harmonic count of any odd
profile (:mod:`.profile_harmonic`, energies in :mod:`.profile_energy`, :mod:`.panel_energy`,
:mod:`.profile_form`), step S6 (:mod:`.soft_limit`), the fiber part (:mod:`.profile_fiber`,
:mod:`.profile_fiber_kernel`) and i.i.d. keys (:mod:`.profile_iid`, :mod:`.profile_iid_scale`).

Layering: workbench.core, workbench.core.bounds, workbench.core.bounds.numerics,
workbench.core.bounds.harmonic_count, workbench.core.bounds.fiber_bound.
"""
