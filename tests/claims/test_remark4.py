"""Remark 4 (``workbench/proofs/paper/remark4.py``): trained models are recorded with their norm
condition, and a model under the certified bound, or a bound twice too large, is ``violated``."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
import torch

from tests.claims.conftest import QUICK, assert_module_holds
from workbench.core.bounds.biased import BiasedBound
from workbench.core.intervals import Estimate
from workbench.proofs.claim import combine
from workbench.proofs.registry import builtin_claims
from workbench.testing import plant, replaced
from workbench.verifiers.train import ModelResult, ModelSpec

CLAIMS = builtin_claims()  # each check as the runner calls it (threads, no_grad)
NORM_CONDITION = CLAIMS["remark4.norm_condition"].check

TRAINED = "workbench.proofs.support.biased_training:trained_biased"


def test_remark4_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.remark4")


def _result(r: int, H: int, err: float, scale: float) -> ModelResult:
    d = 6
    M = scale * torch.eye(d).expand(1, H, d, d).clone()
    est = Estimate(err, err - 0.002, err + 0.002, 0.999, 10_000, 0.1, "normal")
    return ModelResult(ModelSpec("generalized", rank=r, heads=H), err, err, est, 0, 0, {"M": M})


def _given(*results: ModelResult) -> Any:
    """``trained_biased`` returning these models (1 step, level 0.999)."""
    return replaced(lambda ctx: (list(results), 1, 0.999))


def test_remark4_records_the_norm_condition() -> None:
    with plant(TRAINED, _given(_result(1, 8, 0.5, 0.3), _result(3, 8, 0.5, 3.0))):
        ev = NORM_CONDITION(QUICK)
    assert combine(ev, "remark") == "holds"
    inside = [e.params["hypothesis_holds"] for e in ev]
    assert inside == [True, False]  # 6*8*0.09 = 4.3 < e^5; 6*8*9 = 432 > e^3
    assert ev[0].params["dH_max_norm_sq"] == pytest.approx(6 * 8 * 0.09, rel=1e-6)
    assert ev[1].params["c_star"] == pytest.approx(math.log(432) / 3, rel=1e-6)


def test_remark4_violated_by_a_model_below_the_bound() -> None:
    # a model (or an estimate with a wrong normalisation, error / d) under the certified bound
    with plant(TRAINED, _given(_result(1, 8, 0.5 / 6, 0.3))):
        ev = NORM_CONDITION(QUICK)
    assert combine(ev, "remark") == "violated"


def _doubled(f: Any) -> Any:
    """A dropped factor 1/2 in the certified bound: bound and interval twice as large."""
    return lambda *a, **k: _twice(f(*a, **k))


def _twice(b: BiasedBound) -> BiasedBound:
    return dataclasses.replace(b, value=2 * b.value, ci=(2 * b.ci[0], 2 * b.ci[1]))


def test_remark4_violated_on_trained_models_by_a_bound_twice_too_large() -> None:
    with plant("workbench.core.bounds.biased:biased_lower_bound", _doubled):
        ev = NORM_CONDITION(QUICK)
    assert combine(ev, "remark") == "violated"


@pytest.mark.slow
def test_remark4_holds_on_trained_models() -> None:
    assert combine(NORM_CONDITION(QUICK), "remark") == "holds"
