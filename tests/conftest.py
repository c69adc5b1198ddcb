"""Shared test setup: hypothesis profiles and torch threading.

The profiles ship in the package (``workbench.hypothesis_profiles``); choose one with the
environment variable ``HYPOTHESIS_PROFILE`` (default ``ci``):

- ``ci``: bounded examples, derandomized (the same examples every run), no deadline: a torch
  kernel's first call is slow and the shared CI cores are loaded, so a per-example deadline
  would only make the suite flaky. ``.ci/run`` selects it explicitly.
- ``thorough``: for local runs; ten times the examples, random (new examples every run), with
  the example database on so that a failure found once is replayed first next time.
- ``dev``: kept for old scripts; between the two.

The profile is loaded here, before any test module is imported, so every property (and
``workbench.strategies.torch_settings``, which takes the profile active when it decorates one)
runs under it.
"""

import pytest
import torch

from workbench.hypothesis_profiles import load_profile

load_profile()

# The tests run many small kernels: one thread avoids OpenMP stalls on a 2-core machine
# (measured 5-8x faster for small training loops than two threads under load).
torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _private_data_home(tmp_path_factory: pytest.TempPathFactory,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own data directory (``$XDG_DATA_HOME``), so the default results store
    that ``workbench check``, ``sweep`` and ``report`` use without ``--db``
    (``workbench.verifiers.store.default_path``) is a fresh temporary one, never the user's;
    subprocesses inherit it."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))
