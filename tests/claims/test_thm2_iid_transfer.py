"""The i.i.d. transfer of Theorem 2's certified bound (``workbench/proofs/paper/thm2/
iid_transfer.py``): the claim holds at quick scale with named intervals, and is violated by a
planted fault: a bound 1.5x too large, the D_2 factor 1 in place of ``sqrt(1 - t)``, a pair
``(u, w_hat)`` whose first vector is not normalised (its law then depends on t)."""

from __future__ import annotations

import torch

from tests.claims.conftest import run_claim
from tests.claims.test_thm2_experiments import CERTIFIED, _scaled_certified
from workbench.proofs.claim import INTERVALS
from workbench.testing import edited, mapped, plant

CLAIM = "thm2.iid_transfer"
PAIRS = "workbench.proofs.support.iid_pairs"


def test_iid_transfer_holds_at_quick_scale() -> None:
    verdict, ev = run_claim(CLAIM)
    assert verdict == "holds", [e.describe() for e in ev if e.verdict != "holds"]
    assert {e.method for e in ev} == {"identity", "monte_carlo", "trained"}
    mc = [e for e in ev if e.method in ("monte_carlo", "trained")]
    assert all(e.interval in INTERVALS and e.ci_level is not None and e.ci_level >= 0.999
               for e in mc)
    assert all(e.resolution is not None for e in mc if e.relation == "==")
    confronted = [e for e in mc if e.relation == ">="]
    assert {e.method for e in confronted} == {"monte_carlo", "trained"}
    assert all(e.params["points"] == "iid" for e in confronted)


def test_bound_one_and_a_half_times_too_large_is_violated() -> None:
    """The Bayes head sits 12 % and trained models 15-80 % above the bound at quick scale."""
    with plant(CERTIFIED, _scaled_certified(1.5)):
        verdict, ev = run_claim(CLAIM)
    bad = {e.method for e in ev if e.verdict == "violated"}
    assert verdict == "violated" and bad == {"monte_carlo", "trained"}


def test_the_d2_factor_in_place_of_sqrt_one_minus_t_is_violated() -> None:
    """``|w| = 1`` as on D_2: the projection identity fails on the model's own output."""
    with plant(f"{PAIRS}:w_norm", mapped(torch.ones_like)):
        verdict, ev = run_claim(CLAIM)
    bad = [e for e in ev if e.verdict == "violated"]
    assert verdict == "violated" and {e.method for e in bad} == {"identity"}
    assert any("sqrt(1-t)(s - G_t)" in e.note for e in bad)


def test_a_pair_whose_law_depends_on_t_is_violated() -> None:
    """``u`` left unnormalised: ``d E[u_1^2 | t] = 1 + E[t | t]`` differs between the halves."""
    with plant(f"{PAIRS}:decompose",
               edited("u_hat = u / u.norm(dim=-1, keepdim=True)", "u_hat = u")):
        verdict, ev = run_claim(CLAIM)
    moments = {(e.params["d"], e.params["given"]) for e in ev
               if e.verdict == "violated" and e.params.get("moment") == "d u1^2"}
    assert verdict == "violated" and moments == {(4, "t < 0"), (4, "t >= 0"), (7, "t < 0"),
                                                 (7, "t >= 0")}
