"""Shared test setup: hypothesis profiles and torch threading.

Profiles (choose with the environment variable ``HYPOTHESIS_PROFILE``; default ``ci``):

- ``ci``: bounded examples, derandomized (the same examples every run), no deadline: a torch
  kernel's first call is slow and the shared CI cores are loaded, so a per-example deadline
  would only make the suite flaky. ``.ci/run`` selects it explicitly.
- ``thorough``: for local runs; ten times the examples, random (new examples every run), with
  the example database on so that a failure found once is replayed first next time.
- ``dev``: kept for old scripts; between the two.
"""

import os

import torch
from hypothesis import HealthCheck, settings

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "ci", max_examples=25, deadline=None, derandomize=True, database=None,
    suppress_health_check=_SLOW_OK,
)
settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=_SLOW_OK)
settings.register_profile(
    "thorough", max_examples=250, deadline=None, suppress_health_check=_SLOW_OK,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The tests run many small kernels: one thread avoids OpenMP stalls on a 2-core machine
# (measured 5-8x faster for small training loops than two threads under load).
torch.set_num_threads(1)
