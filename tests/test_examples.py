"""The example written from scratch keeps working, and its check can fail."""

import runpy
from pathlib import Path

from workbench.proofs.claim import CheckContext
from workbench.proofs.registry import run_claims

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "farthest_point_claim.py"


def test_example_claim_holds_and_broken_variant_is_caught():
    ns = runpy.run_path(str(EXAMPLE))  # registers example.farthest_point_full_rank
    (res,) = [
        r
        for r in run_claims(CheckContext(), only=["example.farthest_point_full_rank"])
        if r.claim.id == "example.farthest_point_full_rank"
    ]
    assert res.verdict == "holds", [e.to_dict() for e in res.evidence]
    good = ns["head_error"](8, 4, 5e3, 5000, 0)
    broken = ns["head_error"](8, 4, 5e3, 5000, 0, sign=-1.0)  # attends to the nearest point
    assert good.hi < 1e-2 < broken.lo
