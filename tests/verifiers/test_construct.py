"""The public construction runner (workbench/verifiers/construct.py): what a construction may
return, how its claim is read, and that its verdict is ``decide``'s on the measured interval.
The toy constructions' errors are known exactly (tests/plugin_fixtures.py)."""

from __future__ import annotations

import json
import math

import pytest
import torch

from tests import plugin_fixtures as fx
from workbench.cli import main
from workbench.constructions import ClaimedError
from workbench.core.intervals import Estimate, bonferroni_level
from workbench.core.verdict import VERDICT_LEVEL, decide
from workbench.plugins.builtin import RANDOM_FEATURES
from workbench.testing import plant, replaced
from workbench.verifiers.construct import Built, normalise, normalise_claimed, run_construction


def _run(build, **kw):  # type: ignore[no-untyped-def]
    kw = {"d": 4, "N": 2, "eval_samples": 2000, **kw}
    return run_construction("toy", build, **kw)


def test_a_module_and_a_number_that_it_reaches_holds() -> None:
    p = _run(lambda s: fx.midpoint(4, 1, 1, 2, s))
    m, c = p["measured_error"], p["claimed_error"]
    assert m["mean"] == pytest.approx(fx.MIDPOINT_ERROR, abs=1e-6)
    assert (c["value"], c["relation"]) == (0.55, "<=")
    assert p["verdict"] == "holds"


def test_a_claimed_error_the_model_does_not_reach_is_violated() -> None:
    p = _run(lambda s: fx.overclaimed(4, 1, 1, 2, s))
    assert p["measured_error"]["lo"] > 0.45 and p["verdict"] == "violated"


def test_a_module_gets_its_inputs_in_its_own_dtype() -> None:
    model, _ = fx.midpoint(4, 1, 1, 2, 0)
    _run(lambda s: (model, 0.55), eval_samples=100)
    assert model.seen and set(model.seen) == {torch.float32}  # float64 samples, cast


def test_an_estimated_claim_counts_its_interval() -> None:
    """Measured exactly 1/2: below the number 0.52, but not beyond the interval [0.49, 0.55]
    of an estimate of 0.52."""
    est = Estimate(0.52, 0.49, 0.55, 0.95, 100, 0.1, "normal")
    assert _run(lambda s: fx.midpoint(4, 1, 1, 2, s, claim=0.52))["verdict"] == "holds"
    p = _run(lambda s: (fx.Midpoint(4), est))
    assert p["verdict"] == "inconclusive"
    assert (p["claimed_error"]["lo"], p["claimed_error"]["hi"]) == (0.49, 0.55)
    low = Estimate(0.45, 0.40, 0.48, 0.95, 100, 0.1, "normal")
    assert _run(lambda s: (fx.Midpoint(4), low))["verdict"] == "violated"


def test_claims_are_normalised() -> None:
    ce = ClaimedError.exact(0.3, "==", "exact_kernel", "s")
    assert normalise_claimed(ce) is ce
    n = normalise_claimed(0.25)
    assert (n.value, n.lo, n.hi, n.relation) == (0.25, 0.25, 0.25, "<=")
    assert normalise_claimed(torch.tensor(0.5)).value == 0.5
    e = normalise_claimed(Estimate(0.3, 0.2, 0.4, 0.95, 10, 0.1, "normal"))
    assert (e.value, e.lo, e.hi, e.relation, e.method) == (0.3, 0.2, 0.4, "<=", "monte_carlo")
    for bad in ("0.5", True, math.nan, None, [0.5]):
        with pytest.raises(ValueError, match="must claim"):
            normalise_claimed(bad, "toy")


def test_results_are_normalised() -> None:
    b = normalise((fx.Midpoint(4), 0.5))
    assert isinstance(b, Built) and b.claimed.relation == "<=" and b.meta == {}
    assert normalise(b) is b
    assert normalise((fx.first_key, 0.0, fx.first_key)).target is fx.first_key
    for bad in ((fx.Midpoint(4),), [fx.Midpoint(4), 0.5], (1, 0.5), (fx.Midpoint(4), 0.5, 3)):
        with pytest.raises(ValueError, match="toy must"):
            normalise(bad, "toy")


def test_a_stacked_output_is_the_same_model() -> None:
    flat = _run(lambda s: fx.midpoint(4, 1, 1, 2, s))
    stacked = _run(lambda s: fx.midpoint(4, 1, 1, 2, s, stacked=True))
    assert stacked["measured_error"] == flat["measured_error"]


@pytest.mark.parametrize("out", [lambda X, y: X[:, :, 0], lambda X, y: torch.stack([y, y]),
                                 lambda X, y: X[:, 0, :-1], lambda X, y: 0.5])
def test_any_other_output_shape_is_refused(out) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=r"toy must give a model whose output is \(batch, d\)"):
        _run(lambda s: (out, 0.5), eval_samples=10)


def test_a_third_element_is_the_target() -> None:
    own = _run(lambda s: fx.copies_first_key(4, 1, 1, 2, s))
    assert own["measured_error"]["mean"] == 0.0 and own["verdict"] == "holds"
    nearest = _run(lambda s: fx.copies_first_key(4, 1, 1, 2, s)[:2])  # against the nearest key
    assert nearest["measured_error"]["mean"] == pytest.approx(1.0, abs=0.1)
    assert nearest["verdict"] == "violated"


def test_seeds_are_bonferroni_corrected_and_pooled() -> None:
    seen: list[int] = []
    p = _run(lambda s: (fx.first_key, 1.2), seeds=3, seed=5, eval_samples=1000,
             on_batch=seen.append)
    assert sum(seen) == 3000 and [r["seed"] for r in p["runs"]] == [5, 6, 7]
    assert all(r["measured"]["level"] == bonferroni_level(3, VERDICT_LEVEL) for r in p["runs"])
    m = p["measured_error"]
    assert m["interval"] == "normal, 3000 samples" and m["level"] == VERDICT_LEVEL
    assert m["mean"] == pytest.approx(sum(r["measured"]["mean"] for r in p["runs"]) / 3)
    assert p["verdict"] == decide(m["lo"], m["hi"], "<=", 1.2) == "holds"


def test_an_ensemble_claim_is_judged_on_the_pooled_draws() -> None:
    p = _run(lambda s: (fx.first_key, 1.2), seeds=3, eval_samples=500, ensemble=True)
    m = p["measured_error"]
    assert m["method"] == "student_t" and m["n"] == 3 and "verdict" not in p["runs"][0]
    assert p["verdict"] == decide(m["lo"], m["hi"], "<=", 1.2)


def test_the_runner_gives_the_payload_construct_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """``construct random-features`` is the runner applied to the registered construction."""
    assert main(["construct", "random-features", "--d", "3", "--heads", "8", "--seeds", "2",
                 "--eval-samples", "1500", "--seed", "4", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    p = run_construction("random-features", lambda s: RANDOM_FEATURES.fn(3, 1, 8, 2, s), d=3, N=2,
                         seeds=2, seed=4, eval_samples=1500)
    assert p["measured_error"] == cli["measured_error"] and p["verdict"] == cli["verdict"]
    assert [r["measured"] for r in p["runs"]] == [r["measured"] for r in cli["runs"]]
    assert p["claimed_error"]["value"] == cli["claimed_error"]["value"]


def test_a_memory_estimate_that_cannot_fit_is_refused_before_any_build() -> None:
    built: list[int] = []

    def build(s: int):  # type: ignore[no-untyped-def]
        built.append(s)
        return fx.midpoint(4, 1, 1, 2, s)

    with pytest.raises(ValueError, match=r"^--heads 1000000 needs at least ~1e\+03 PB"):
        _run(build, memory=10**18, params={"heads": 10**6})
    assert built == []
    assert _run(build, memory=8 * 4, params={"heads": 1})["verdict"] == "holds"
    assert built == [0]
    with plant("workbench.verifiers.resources:check_fits", replaced(lambda *a, **k: None)):
        assert _run(build, memory=10**18, eval_samples=100)["construction"] == "toy"
    assert built == [0, 0]
