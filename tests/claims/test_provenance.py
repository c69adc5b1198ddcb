"""Every claim cites an anchor of docs/ that exists, with a mark of the one vocabulary
(workbench/proofs/provenance.py)."""

from __future__ import annotations

import pytest

from workbench.proofs.claim import MARKS
from workbench.proofs.provenance import resolve, slug
from workbench.proofs.registry import builtin_claims

CLAIMS = builtin_claims()


@pytest.mark.parametrize("cid", sorted(CLAIMS))
def test_every_claim_reference_resolves_to_a_heading(cid: str) -> None:
    c = CLAIMS[cid]
    assert c.mark in MARKS, f"{cid}: mark {c.mark!r} is not one of {MARKS}"
    resolve(c.ref)


def test_a_reference_to_a_missing_heading_or_file_is_refused() -> None:
    resolve("paper.md#theorem-2-rank-separation")
    with pytest.raises(ValueError, match="no heading"):
        resolve("paper.md#theorem-2-rank-separaton")
    with pytest.raises(ValueError, match="does not exist"):
        resolve("derivations/nothing.md#lemma-1")
    with pytest.raises(ValueError, match="FILE#anchor"):
        resolve("docs/paper.md §3")


def test_slugs_follow_the_rendered_anchors() -> None:
    assert slug("Lemma 5' (Eq. 2: one fixed form per head)") == (
        "lemma-5-eq-2-one-fixed-form-per-head")
    assert slug("4. The certified lower bound for N = 2 (*ours*)") == (
        "4-the-certified-lower-bound-for-n--2-ours")
