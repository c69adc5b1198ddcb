"""A fresh registry of bounds, constructions and presets (workbench/plugins/__init__.py) for one
test, shared by the tests of the registry and of the commands that use it."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from workbench import plugins


def fresh_registry(monkeypatch: pytest.MonkeyPatch, *installed: EntryPoint,
                   asked: list[str] | None = None) -> None:
    """Empty the registries (the built-ins register again when first used) and make ``installed``
    the only entry points of the packages; the groups looked up are appended to ``asked``."""

    def entry_points(group: str) -> list[EntryPoint]:
        if asked is not None:
            asked.append(group)
        return [ep for ep in installed if ep.group == group]

    monkeypatch.setattr(plugins, "entry_points", entry_points)
    monkeypatch.setattr(plugins, "_loaded", set())
    monkeypatch.setattr(plugins, "_REGISTRY", {k: {} for k in plugins.KINDS})
    monkeypatch.setattr(plugins, "LOAD_ERRORS", {})
