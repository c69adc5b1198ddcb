"""Pytest plugin of the mutation harness: applies the fault named by ``WORKBENCH_MUTANT``.

Load it with ``python -m pytest -p benchmarks.mutant_plugin ...``; without the variable it does
nothing. The fault is applied at configure time, before test modules are imported, so their
``from ... import`` names see it as well.
"""

from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    fault = os.environ.get("WORKBENCH_MUTANT")
    if fault:
        from benchmarks.mutation_faults import apply

        apply(fault)
