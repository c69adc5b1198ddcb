"""The falsifier: finds a planted violation with a replayable counterexample, and
never reports one against Theorem 2's certified lower bound."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from workbench.verifiers.falsify import Attempt, Domain, bound_value, falsify, replay

SMALL = Domain(d=(4, 8), r=(1, 1), H=(1, 4), N=(2, 2))


def planted(d: int, r: int, H: int, N: int) -> float:
    """Wrong claim: rank-1 heads cannot go below 0.9 (claimed only where d >= 6)."""
    return 0.9 if d >= 6 else 0.0


def test_finds_planted_violation_and_replays_it() -> None:
    report = falsify(planted, SMALL, budget=8, steps=150, eval_samples=4000, seed=0)
    cx = report.counterexample
    assert cx is not None, [t.to_dict() for t in report.trials]
    a = cx.attempt
    assert a.d >= 6 and a.r == 1 and 1 <= a.H <= 4 and a.N == 2
    assert cx.estimate.hi < cx.bound == 0.9
    assert cx.estimate.level == pytest.approx(1 - 0.05 / 8)  # Bonferroni over the budget
    assert all(not t.violated for t in report.trials[:-1]) and report.trials[-1] is cx
    again = replay(Attempt(**json.loads(json.dumps(asdict(a)))))  # from its JSON record
    assert again == cx.estimate
    assert report.to_dict()["violated"] is True


def test_true_bound_is_not_violated() -> None:
    """Trained and solved approximators never beat the certified bound beyond their CI."""
    cert = pytest.importorskip("workbench.core.bounds.certified").certified_lower_bound
    pytest.importorskip("workbench.constructions.random_features")
    report = falsify(lambda d, r, H, N: cert(d, r, H).value, Domain(d=(5, 10), r=(1, 1), H=(1, 8)),
                     budget=2, attacks=("train", "random_features"), steps=150,
                     eval_samples=4000, seed=1)
    assert report.counterexample is None
    assert len(report.trials) == 4 and {t.attempt.attack for t in report.trials} == {
        "train", "random_features"}
    assert all(t.bound > 0 for t in report.trials)


def test_generalized_attack_refutes_a_wrong_bound_and_explores() -> None:
    """A wrong claim "generalized layers of rank <= 3 stay above error 0.6 on D_2" (trained ones
    reach about 0.4 at rank 1, d = 6, and less at higher rank) is refuted by the generalized
    attack at every point it tries, and the search visits several points."""
    report = falsify(lambda d, r, H, N: 0.6, Domain(d=(3, 6), r=(1, 3), H=(1, 3), N=(2, 2)),
                     budget=3, attacks=("generalized",), steps=150, eval_samples=2000, seed=2,
                     stop_on_first=False)
    pts = {(t.attempt.d, t.attempt.r, t.attempt.H, t.attempt.N) for t in report.trials}
    assert len(pts) >= 2 and all(t.attempt.r <= t.attempt.d for t in report.trials)
    assert report.counterexample is not None
    assert all(t.violated for t in report.trials), [t.to_dict() for t in report.trials]


def test_bound_value_accepts_enclosures_and_values() -> None:
    class Enc:
        enclosure = (0.25, 0.26)
        value = 0.255

    class Val:
        value = 0.4

    assert bound_value(lambda *p: Enc(), 5, 1, 1, 2) == 0.25
    assert bound_value(lambda *p: Val(), 5, 1, 1, 2) == 0.4
    assert bound_value(lambda *p: 0.1, 5, 1, 1, 2) == 0.1


@pytest.mark.parametrize("kw,name", [({"budget": 0}, "budget"), ({"attacks": ("x",)}, "attack"),
                                     ({"alpha": 1.5}, "alpha")])
def test_bad_arguments(kw: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        falsify(planted, SMALL, **kw)
    with pytest.raises(ValueError, match="r"):
        Domain(d=(2, 3), r=(4, 4))
    with pytest.raises(ValueError, match="random_features"):
        replay(Attempt(5, 2, 1, 2, "random_features", 0))


@pytest.mark.parametrize("N,score", [(2, "mlp"), (3, "set"), (5, "set")])
def test_generalized_attack_scores_see_every_key_from_three_keys_on(N: int, score: str) -> None:
    """At N >= 3 the generalized attack trains Eq. 2 heads whose scores see all N keys."""
    from workbench.testing import plant

    seen: list = []

    def record(f):
        def train(specs, task, cfg, **kw):
            seen.extend((s.arch, s.options.get("score"), task.N, task.points) for s in specs)
            return f(specs, task, cfg, **kw)

        return train

    with plant("workbench.verifiers.falsify:train", record):
        replay(Attempt(8, 1, 1, N, "generalized", 0, steps=2, eval_samples=200))
    assert seen == [("generalized", score, N, "orthonormal")]
