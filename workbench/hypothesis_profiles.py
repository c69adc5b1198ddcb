"""The hypothesis profiles of the workbench's property tests, shipped so that a user's own
properties run under the same ones (README, "Testing your own construction").

- ``ci`` (the default): bounded (25 examples) and derandomized (the same examples every run, so
  no example database); no deadline: a torch kernel's first call is slow and shared CI cores
  are loaded, so a per-example deadline would only make a suite flaky;
- ``thorough``: ten times the examples (250), fresh ones every run, with hypothesis's example
  database on so that a failure found once is replayed first next time; no deadline;
- ``dev``: kept for old scripts; 60 random examples, no deadline.

Each profile is built on hypothesis's own ``default`` profile (not on whatever profile happens
to be loaded when this module is imported), and importing this module only registers them.
:func:`load_profile` loads the one named by ``HYPOTHESIS_PROFILE`` (``ci`` when unset); call it
from a ``conftest.py``, as the workbench's own ``tests/conftest.py`` does::

    from workbench.hypothesis_profiles import load_profile

    load_profile()

``workbench.strategies.torch_settings`` takes the profile that is active when it decorates a
property, so load the profile before the test modules are imported (a ``conftest.py`` is).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

ENV = "HYPOTHESIS_PROFILE"
DEFAULT = "ci"
PROFILES: tuple[str, ...] = ("ci", "thorough", "dev")
SLOW_OK: tuple[HealthCheck, ...] = (HealthCheck.too_slow, HealthCheck.data_too_large)
"""Health checks the profiles switch off: torch examples are slow to build and run."""


def register_profiles() -> None:
    """Register ``ci``, ``thorough`` and ``dev`` (again: re-registering replaces them)."""
    base = settings.get_profile("default")
    settings.register_profile("ci", base, max_examples=25, deadline=None, derandomize=True,
                              database=None, suppress_health_check=SLOW_OK)
    settings.register_profile("thorough", base, max_examples=250, deadline=None,
                              suppress_health_check=SLOW_OK)
    settings.register_profile("dev", base, max_examples=60, deadline=None,
                              suppress_health_check=SLOW_OK)


def load_profile(name: str | None = None) -> str:
    """Load the profile ``name``, else ``$HYPOTHESIS_PROFILE``, else ``ci``; its name.

    Any registered hypothesis profile may be named (an unknown one raises hypothesis's
    ``InvalidArgument``)."""
    chosen = name or os.environ.get(ENV) or DEFAULT
    settings.load_profile(chosen)
    return chosen


register_profiles()
