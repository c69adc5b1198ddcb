"""The registries of bounds, constructions and presets (workbench/plugins/__init__.py)."""

from __future__ import annotations

import sys
import types
from importlib.metadata import EntryPoint

import pytest

from tests.plugin_registry import fresh_registry
from workbench import plugins


def test_builtin_bounds_are_registered_and_the_certified_one_is_the_larger_of_its_parts():
    known = plugins.available("bound")
    assert {"certified", "harmonic", "fiber", "certified-query-values"} <= set(known)
    for d, r, H in ((12, 2, 4), (8, 4, 4), (16, 1, 256)):
        parts = max(known["harmonic"](d, r, H), known["fiber"](d, r, H))
        assert known["certified"](d, r, H) == parts
        lo, hi = known["certified"].interval(d, r, H)
        assert lo == parts <= hi
    assert known["certified"].outside(12, 2, 4, 3) == "N must lie in [2], the N it covers (got 3)"
    assert known["certified"].outside(12, 13, 4, 2) == "rank must be an integer in 1..12 (got 13)"
    with pytest.raises(ValueError, match="N must lie in"):
        known["certified"](12, 2, 4, 3)


def test_builtin_constructions_and_presets_are_registered():
    assert {"full-rank", "random-features", "majority-vote", "biased"} <= set(
        plugins.available("construction"))
    assert plugins.available("construction")["random-features"].params["law"] == "cosine_uniform"
    assert {"fig2", "tiny"} <= set(plugins.available("preset"))


def test_a_plain_function_named_module_colon_attr_is_a_bound():
    mod = types.ModuleType("my_bounds")
    mod.half = lambda d, rank, heads, N: 0.5  # type: ignore[attr-defined]
    sys.modules["my_bounds"] = mod
    try:
        b = plugins.get_bound("my_bounds:half")
        assert b(8, 1, 2, 2) == 0.5 and b.spec == "my_bounds:half" and b.status == "conjectured"
        assert b.outside(8, 1, 2, 7) is None  # a plain function covers every N
        with pytest.raises(ValueError, match="cannot be imported"):
            plugins.get_bound("my_bounds:nothing")
    finally:
        del sys.modules["my_bounds"]
    with pytest.raises(ValueError, match="must be one of"):
        plugins.get_bound("no-such-bound")


def test_entry_points_register_and_a_broken_one_is_reported_by_name(monkeypatch):
    mod = types.ModuleType("pkg_bounds")
    mod.tight = lambda d, rank, heads, N: 0.25  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pkg_bounds", mod)
    fresh_registry(monkeypatch, EntryPoint("tight", "pkg_bounds:tight", "workbench.bounds"),
                   EntryPoint("broken", "pkg_missing_module:f", "workbench.bounds"))
    known = plugins.available("bound")
    # named again by its registered name: a replay resolves it through the registry
    assert known["tight"](4, 1, 1, 2) == 0.25 and (known["tight"].spec or "tight") == "tight"
    assert "certified" in known  # the built-ins still load
    assert "broken" in plugins.LOAD_ERRORS["workbench.bounds:broken"]


def test_a_name_registered_twice_is_refused():
    b = plugins.Bound("twice-test", lambda d, r, H, N: 0.0)
    plugins.register("bound", b)
    with pytest.raises(ValueError, match="registered twice"):
        plugins.register("bound", plugins.Bound("twice-test", lambda d, r, H, N: 1.0))
    with pytest.raises(TypeError, match="must be a Bound"):
        plugins.register("bound", lambda d, r, H, N: 0.0)
    with pytest.raises(ValueError, match="without ':'"):
        plugins.Bound("a:b", lambda d, r, H, N: 0.0)


def test_a_builtin_name_is_answered_without_importing_the_installed_packages(monkeypatch):
    calls: list[str] = []
    fresh_registry(monkeypatch, EntryPoint("slow", "pkg_never_imported:f", "workbench.bounds"),
                   asked=calls)
    assert plugins.get_bound("certified").name == "certified"
    assert calls == [] and plugins.LOAD_ERRORS == {}
    with pytest.raises(ValueError, match="must be one of"):  # an unknown name looks further
        plugins.get_bound("slow-or-not")
    assert calls == ["workbench.bounds"] and "workbench.bounds:slow" in plugins.LOAD_ERRORS


def test_theorem3_lower_side_is_registered_for_its_own_target():
    from workbench.core.bounds.biased import biased_lower_bound
    from workbench.proofs.claim import CheckContext
    from workbench.proofs.support.theorem3 import target_energies

    b = plugins.get_bound("theorem3-lower")
    assert b.target == "theorem3-biased" and b.value_class == "query-dependent-values"
    e = target_energies(6, CheckContext())
    assert b(6, 1, 4) == biased_lower_bound(e, 1, 4).ci[0]
    assert b(6, 1, 64) <= b(6, 1, 4) <= e.energy  # more heads capture more; never above E S^2/2


def test_a_construction_memory_estimate_must_be_a_function() -> None:
    with pytest.raises(TypeError, match="memory must be a function"):
        plugins.Construction("sized", lambda *a: None, memory=8)  # type: ignore[arg-type]
    assert plugins.Construction("sized", lambda *a: None, memory=lambda *a: 8).describe()[
        "memory_estimate"] is True


def test_a_library_user_sees_the_builtins_without_the_cli() -> None:
    """The registry imports none of the built-ins; importing the package hands them over."""
    import subprocess
    import sys

    code = ("from workbench.plugins import available, get\n"
            "assert 'certified' in available('bound') and get('preset', 'fig2').name == 'fig2'\n"
            "assert 'full-rank' in available('construction')\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_bound_status_is_proved_or_conjectured_and_the_old_spelling_reads_proved() -> None:
    """A proved bound is *certified* only where its number is rigorous (docs/extending.md): the
    status says proved or conjectured, ``rigorous`` says whether the enclosure is proved."""
    from workbench.plugins import Bound

    old = Bound("old-spelling", lambda d, r, H, N: 0.1, status="certified")
    assert old.status == "proved" and old.rigorous is False
    with pytest.raises(ValueError, match="status must be one of"):
        Bound("typo", lambda d, r, H, N: 0.1, status="certifed")


def test_importing_the_package_and_registering_the_built_in_targets_imports_no_numpy() -> None:
    """Importing ``workbench`` registers the built-ins, so every command pays for what they
    import at module level: the built-in targets stay numpy-free (workbench/core/profiles.py).
    Installed plug-ins are not loaded here: what they import is theirs."""
    import subprocess
    import sys

    code = ("import sys, workbench\nfrom workbench import plugins\n"
            "from workbench.plugins import builtin as builtin_plugins\n"
            "builtin_plugins.register_builtins('target')\n"
            "assert 'soft-nearest' in plugins._REGISTRY['target']\n"
            "print(sorted(m for m in ('numpy', 'torch', 'flint') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", (out.stdout, out.stderr[-500:])
