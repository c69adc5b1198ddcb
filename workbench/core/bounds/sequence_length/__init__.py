"""Sequence length: bounds for N >= 3 keys on D_N (docs/derivations/beyond_two_keys.md):
``n-keys`` (:mod:`.n_keys`, its energies in :mod:`.n_keys_energy`); the certified bound at
N >= 3, every sequence-length bound covering a point in one value (:mod:`.certified_n`).

Layering: workbench.core, workbench.core.bounds, workbench.core.bounds.numerics.
"""
