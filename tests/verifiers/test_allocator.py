"""``workbench.verifiers.allocator``: the glibc settings apply once and can be switched off.

How many page faults they save depends on the machine's memory pressure, so that is measured by
``benchmarks/allocator_faults.py``, not asserted here.
"""

from __future__ import annotations

import platform

import pytest

from workbench.verifiers import allocator


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_settings_apply_once() -> None:
    assert allocator.keep_freed_memory() is True
    assert allocator.keep_freed_memory() is True  # idempotent
    assert allocator._done == [True]


def test_switch_off_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_MALLOC_TUNE", "0")
    assert allocator._apply() is False
