"""Claims of workbench/proofs/paper/witnesses.py: each holds at quick scale, and each is
refuted by a realistic planted fault."""

from __future__ import annotations

from tests.claims.conftest import run_claim
from workbench.testing import arg_mapped, plant, scaled


def test_nkeys_one_head_holds() -> None:
    verdict, ev = run_claim("witnesses.nkeys_one_head")
    assert verdict == "holds" and len(ev) == 3


def test_nkeys_one_head_refutes_a_wrong_unseen_dimension() -> None:
    with plant("workbench.constructions.nkeys_one_head:inner_draws",
               arg_mapped(0, "m", lambda m: m + 1)):
        assert run_claim("witnesses.nkeys_one_head")[0] == "violated"


def test_nkeys_one_head_refutes_a_witness_far_too_good() -> None:
    with plant("workbench.constructions.nkeys_one_head:nkeys_one_head_losses", scaled(0.2)):
        assert run_claim("witnesses.nkeys_one_head")[0] == "violated"
