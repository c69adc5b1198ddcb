"""Sequence length: bounds for N >= 3 keys on D_N: ``n-keys`` (:mod:`.n_keys`, its energies in
:mod:`.n_keys_energy`; docs/derivations/beyond_two_keys.md), the multi-level bound
``multi-level`` for 3 <= N <= d (:mod:`.multi_level`; the level law in :mod:`.multi_level_law`,
the energies in :mod:`.multi_level_energy`; docs/derivations/long_contexts.md and
long_contexts_evaluation.md), and the certified bound at N >= 3, every sequence-length bound
covering a point in one value (:mod:`.certified_n`).

Layering: workbench.core, workbench.core.bounds, workbench.core.bounds.numerics.
"""
