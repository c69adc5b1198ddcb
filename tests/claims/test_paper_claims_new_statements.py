"""Power of the claims for statements that had none: Theorem 3's lower side, Remark 4. Each is
run on the real code where that is fast, and on a realistic planted fault, which must make it
``violated``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from workbench.core.bounds.biased import (
    BiasedBound,
    DegreeEnergies,
    biased_lower_bound,
    degree_energies,
    step_coefficients,
)
from workbench.core.intervals import Estimate
from workbench.proofs.claim import CheckContext, combine
from workbench.proofs.paper import remark4, thm3_lower
from workbench.verifiers.train import ModelResult, ModelSpec

QUICK = CheckContext(scale="quick", seed=0)


# ------------------------------------------------------------------ Theorem 3 lower side
def _target(d: int) -> tuple[np.ndarray, np.ndarray]:
    j = np.arange(-(d**2), d**2 + 1)
    return 4.0 * j / d**2, np.where(j % 2 == 0, 1.0, -1.0)


def test_step_coefficients_sum_to_the_energy() -> None:
    # Parseval: sum_l eta_l(rho)^2 -> E_c S(sqrt2 rho c)^2 = 1 for a +-1 step (slowly)
    tau, c = _target(5)
    eta = step_coefficients(5, np.array([2.0]), tau, c, 1500)[:, 0]
    assert 0.97 < float((eta**2).sum()) <= 1.0 + 1e-9


def test_bound_is_zero_at_full_rank_and_decreases_in_heads() -> None:
    tau, c = _target(5)
    E = degree_energies(5, tau, c, max_degree=150, samples=200)
    vals = [biased_lower_bound(E, 1, H).value for H in (1, 16, 256, 4096)]
    assert all(a >= b for a, b in zip(vals, vals[1:])) and vals[0] > vals[-1]
    assert biased_lower_bound(E, 4, 1).value == 0.0


def test_low_rank_lower_holds() -> None:
    assert combine(thm3_lower.low_rank_lower(QUICK), "theorem") == "holds"


def _halved(E: DegreeEnergies, r: int, H: int) -> BiasedBound:
    b = biased_lower_bound(E, r, H)  # a dropped factor 1/2: the bound doubles
    return BiasedBound(b.d, b.r, b.heads, 2 * b.value, (2 * b.ci[0], 2 * b.ci[1]), b.level,
                       b.energy, b.energy_summed, b.max_degree, b.samples)


def test_low_rank_lower_violated_by_a_dropped_half() -> None:
    ev = thm3_lower.low_rank_lower(QUICK, bound_fn=_halved)
    assert combine(ev, "theorem") == "violated"


def test_low_rank_lower_violated_by_an_overcounted_dimension() -> None:
    # the quadratic factor d(d+1)/2 of D_l applied twice (21x at d = 6). A 4x overcount only
    # makes the r = 3 evidence inconclusive: the constant-error claim is not that sharp.
    def twice(E: DegreeEnergies, r: int, H: int) -> BiasedBound:
        return biased_lower_bound(E, r, H * E.d * (E.d + 1) // 2)

    ev = thm3_lower.low_rank_lower(QUICK, bound_fn=twice)
    assert combine(ev, "theorem") == "violated"


# ------------------------------------------------------------------ Remark 4
def _result(r: int, H: int, err: float, scale: float) -> ModelResult:
    d = 6
    M = scale * torch.eye(d).expand(1, H, d, d).clone()
    est = Estimate(err, err - 0.002, err + 0.002, 0.999, 10_000, 0.1, "normal")
    return ModelResult(ModelSpec("generalized", rank=r, heads=H), err, err, est, 0, 0, {"M": M})


def test_remark4_records_the_norm_condition() -> None:
    ev = remark4.record([_result(1, 8, 0.5, 0.3), _result(3, 8, 0.5, 3.0)], 6, 0, True, 1.0, 1)
    assert combine(ev, "remark") == "holds"
    inside = [e.params["hypothesis_holds"] for e in ev]
    assert inside == [True, False]  # 6*8*0.09 = 4.3 < e^5; 6*8*9 = 432 > e^3
    assert ev[0].params["dH_max_norm_sq"] == pytest.approx(6 * 8 * 0.09, rel=1e-6)
    assert ev[1].params["c_star"] == pytest.approx(math.log(432) / 3, rel=1e-6)


def test_remark4_violated_by_a_model_below_the_bound() -> None:
    # a model (or an estimate with a wrong normalisation, error / d) under the certified bound
    ev = remark4.record([_result(1, 8, 0.5 / 6, 0.3)], 6, 0, True, 1.0, 1)
    assert combine(ev, "remark") == "violated"


@pytest.mark.slow
def test_remark4_holds_on_trained_models() -> None:
    assert combine(remark4.norm_condition(QUICK), "remark") == "holds"


def test_decomposition_catches_a_bias_sign_slip(monkeypatch: pytest.MonkeyPatch) -> None:
    import workbench.constructions.biased as cb

    assert thm3_lower.decomposition_gap(6, "random_signs", 500, 3) < 1e-20
    orig = cb.biased_nearest_neighbour
    monkeypatch.setattr(cb, "biased_nearest_neighbour", lambda X, y, b: orig(X, y, -b))
    # the symmetric alternating reading hides the slip; random signs do not
    assert thm3_lower.decomposition_gap(6, "alternating", 500, 3) < 1e-20
    assert thm3_lower.decomposition_gap(6, "random_signs", 500, 3) > 1.0


# ------------------------------------------------------------------ CI coverage
def test_ci_coverage_holds_and_catches_narrow_intervals(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.proofs.paper import ci_coverage as cc

    assert combine(cc.ci_coverage(QUICK), "lemma") == "holds"
    orig = cc.estimate_mean
    monkeypatch.setattr(cc, "estimate_mean",  # a 99% interval built at ~80%
                        lambda draw, **k: orig(draw, **{**k, "level": 0.8 if k["level"] == 0.99
                                                        else k["level"]}))
    assert combine(cc.ci_coverage(QUICK), "lemma") == "violated"
