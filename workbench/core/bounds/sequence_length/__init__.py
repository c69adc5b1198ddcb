"""Sequence length: bounds for N >= 3 keys on D_N (docs/derivations/beyond_two_keys.md):
``n-keys`` (:mod:`.n_keys`, its energies in :mod:`.n_keys_energy`).

Layering: workbench.core, workbench.core.bounds, workbench.core.bounds.numerics.
"""
