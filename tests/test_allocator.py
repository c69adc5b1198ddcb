"""``verifiers.allocator``: the glibc settings apply once and stop the per-step page faults of
a batched training run (counted by the kernel, in fresh interpreters, with and without)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from verifiers import allocator

_SCRIPT = """
import resource, torch
torch.set_num_threads(1)
from verifiers.tasks import Task
from verifiers.train import ModelSpec, TrainConfig, _Group, keep_freed_memory
keep_freed_memory()
task = Task("farthest", d=16, N=8)
specs = [ModelSpec("encoder", r, 16 // r, seed=i, options={"ffn_width": 64})
         for i, r in enumerate([1, 2, 4, 16] * 4)]
cfg = TrainConfig(steps=20, batch=256, eval_samples=0)
group = _Group(list(enumerate(specs)), task, cfg)
for t in range(8):  # the heap settles in the first few steps
    group.step(t, task, cfg)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for t in range(8, 20):
    group.step(t, task, cfg)
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 12)
"""


def _faults_per_step(tune: bool) -> float:
    env = {**os.environ, "WORKBENCH_MALLOC_TUNE": "1" if tune else "0"}
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                         text=True, check=True, timeout=300)
    return float(out.stdout.split()[-1])


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_training_steps_stop_faulting_pages() -> None:
    assert allocator.keep_freed_memory() is True
    assert allocator.keep_freed_memory() is True  # idempotent
    tuned = _faults_per_step(True)
    untuned = _faults_per_step(False)
    if untuned < 200:
        pytest.skip(f"glibc's defaults fault only {untuned:.0f} pages per step here")
    assert tuned < untuned / 3, (tuned, untuned)  # measured here: about 105 against 700


def test_switch_off_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_MALLOC_TUNE", "0")
    assert allocator._apply() is False
