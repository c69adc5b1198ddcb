"""Claims of workbench/proofs/paper/long_contexts.py: each holds at quick scale, and each is
refuted by a realistic planted fault in the reference (the coarser level not subtracted,
F_{K,D} on S^{D-2}, the coarser level's tau without its unseen Gaussians, a score reading the
full keys, lambda_k one short, the degree-1 count one short, the density of c on S^{n-2})."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.claims.conftest import run_claim
from workbench.testing import arg_mapped, edited, mapped, plant, replaced

REF = "workbench.proofs.support.long_context_reference"
CLAIMS = ["lc.orthogonal_increments", "lc.level_target", "lc.rotation_invariance",
          "lc.model_count", "lc.parseval", "lc.multi_level_value",
          "lc.multi_level_estimate_inputs"]
ML = "workbench.core.bounds.sequence_length"


@pytest.mark.parametrize("cid", CLAIMS)
def test_claims_hold_at_quick_scale(cid: str) -> None:
    verdict, ev = run_claim(cid)
    assert verdict == "holds", [e.describe() for e in ev if e.verdict != "holds"]


@pytest.mark.parametrize("target,wrap,cids", [
    (f"{REF}:increments", replaced(lambda T: np.array(T, dtype=float)),
     ["lc.orthogonal_increments", "lc.parseval"]),
    (f"{REF}:max_coordinate_cdf", arg_mapped(1, "D", lambda D: D - 1), ["lc.level_target"]),
    (f"{REF}:closed_level_target", edited("(g_seen[..., k - 2:] ** 2).sum(-1)", "0.0"),
     ["lc.level_target"]),
    (f"{REF}:conditional_head_score", edited("[..., 0]\n", "[..., 0] + 0.5 * Xi @ y\n"),
     ["lc.rotation_invariance"]),
    (f"{REF}:linear_form_count", mapped(lambda n: n - 1), ["lc.model_count"]),
    (f"{REF}:degree_one_count", mapped(lambda n: n - 1), ["lc.model_count"]),
    (f"{REF}:_c_nodes", arg_mapped(0, "n", lambda n: n - 1), ["lc.parseval"]),
    # the printed multi-level parts (the core, confronted with the reference)
    (f"{ML}.multi_level:rigorous_value", mapped(lambda v: v * 103 / 100),
     ["lc.multi_level_value"]),
    (f"{ML}.multi_level_law:linear_forms", mapped(lambda n: n - 1), ["lc.multi_level_value"]),
    (f"{ML}.multi_level_law:max_coordinate_law", arg_mapped(1, "D", lambda D: D + 1),
     ["lc.multi_level_estimate_inputs"]),
    (f"{ML}.multi_level_energy:degree_one_estimate", arg_mapped(3, "k_prev", lambda _k: None),
     ["lc.multi_level_estimate_inputs"]),
])
def test_claims_refute_a_planted_fault(target: str, wrap: Any, cids: list[str]) -> None:
    with plant(target, wrap):
        for cid in cids:
            assert run_claim(cid)[0] == "violated", (target, cid)
