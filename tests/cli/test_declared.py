"""The built-in names read from source (``workbench.commands._declared``) are exactly the ones
the registries hold once the modules are imported."""

from __future__ import annotations

from workbench.commands import _declared
from workbench.testing import mapped, plant


def test_declared_claim_ids_are_the_builtin_claims() -> None:
    from workbench.proofs.registry import builtin_claims

    assert _declared.builtin_claim_ids() == frozenset(builtin_claims())


def test_declared_presets_are_the_builtin_presets() -> None:
    from workbench.verifiers.presets import PRESETS

    assert _declared.builtin_preset_names() == frozenset(PRESETS)


def test_a_skipped_source_file_is_seen() -> None:
    from workbench.proofs.registry import builtin_claims

    skip_fact1 = mapped(lambda ps: [p for p in ps if p.name != "fact1.py"])
    with plant("workbench.commands._declared:_sources", skip_fact1):
        assert _declared._first_string_args("workbench.proofs.paper", "claim") != \
            frozenset(builtin_claims())


def test_selection_follows_the_registry_rule() -> None:
    ids = frozenset({"thm2.harmonic_bound", "fact1.beta_for"})
    assert _declared.selects(ids, "thm2") and _declared.selects(ids, "thm2.")
    assert _declared.selects(ids, "fact1.beta_for")
    assert not _declared.selects(ids, "thm") and not _declared.selects(ids, "fact1.beta")
