"""Sequence length: bounds for N >= 3 keys on D_N (docs/derivations/beyond_two_keys.md):
``n-keys`` (:mod:`.n_keys`, its energies in :mod:`.n_keys_energy`) and the multi-level bound
``multi-level`` for 3 <= N <= d (:mod:`.multi_level`; the level law in :mod:`.multi_level_law`,
the energies in :mod:`.multi_level_energy`; docs/derivations/long_contexts_evaluation.md).

Layering: workbench.core, workbench.core.bounds, workbench.core.bounds.numerics.
"""
