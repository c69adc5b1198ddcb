"""The mutation harness's faults (benchmarks/mutation_faults.py) target names that exist, and
applying one changes what its call sites compute (also through ``from ... import`` names)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.mutation_faults import BY_ID, FAULTS  # noqa: E402
from workbench.testing import resolve  # noqa: E402


def test_at_least_45_faults_over_every_layer() -> None:
    layers = Counter(f.layer for f in FAULTS)
    assert len(FAULTS) >= 45 and len(BY_ID) == len(FAULTS)
    kinds = Counter(f.kind for f in FAULTS)
    assert kinds["optimality"] >= 2 and kinds["encoding"] >= 3
    assert set(layers) == {"core", "constructions", "verifiers", "claims"}


@pytest.mark.parametrize("fault", FAULTS, ids=[f.id for f in FAULTS])
def test_every_target_exists_and_wraps(fault) -> None:
    from workbench.proofs.registry import load_claims

    load_claims()
    _, _, orig = resolve(fault.target)
    assert callable(fault.wrap(orig))


def test_apply_reaches_from_imported_names() -> None:
    code = (
        "from workbench.core.bounds.harmonic_count.harmonic import heads_needed\n"
        "from benchmarks.mutation_faults import apply\n"
        "apply('core.heads_needed_minus_one')\n"
        "import workbench.core.bounds.harmonic_count.harmonic as lb\n"
        "print(lb.heads_needed(8, 1, 0.05), heads_needed(8, 1, 0.05))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": ""}, check=True).stdout.split()
    from workbench.core.bounds.harmonic_count.harmonic import heads_needed

    true = heads_needed(8, 1, 0.05)  # this process is not mutated
    assert true > 1 and out == [str(true - 1)] * 2


def test_unknown_fault_is_rejected() -> None:
    from benchmarks.mutation_faults import apply

    with pytest.raises(ValueError, match="fault must be one of"):
        apply("no.such.fault", preload=False)


@pytest.mark.parametrize("fault", [f for f in FAULTS if f.kind == "encoding"],
                         ids=lambda f: f.id)
def test_encoding_faults_change_one_encoding_only(fault) -> None:
    """An encoding fault rewrites the right-hand side of the encoding it names and leaves the
    others as they are."""
    import workbench.core.symbolic.bounds as encodings
    from workbench.testing import plant

    every = encodings.ALL_BOUNDS
    with plant(fault.target, fault.wrap):
        changed = [i for i in every if encodings.get_bound(i).rhs != every[i].rhs]
    assert len(changed) == 1 and changed[0] in fault.description


def test_relation_fault_flips_the_estimate_relation() -> None:
    from workbench.core.intervals import Estimate
    from workbench.proofs.claim import Evidence
    from workbench.testing import plant

    est = Estimate(0.5, 0.4, 0.6, 0.999, 100, 0.1, "normal")
    fault = BY_ID["claims.estimate_relation_flipped"]
    with plant(fault.target, fault.wrap):
        assert Evidence.estimate(est, ">=", 0.1).relation == "<="
    assert Evidence.estimate(est, ">=", 0.1).relation == ">="
