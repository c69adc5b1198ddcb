"""Trained witnesses of the sandwich (docs/derivations/sandwich.md): a saved MLP-score witness's
recorded error is reproduced from its weights by an independent NumPy evaluation of Eq. 2 on a
fresh D_2 sample, and the chosen model is the one of least held-out error. Toy sizes only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from workbench.testing import edited, plant, scaled
from workbench.verifiers import sandwich as sw
from workbench.verifiers.trained_witness import TrainBudget, TrainedWitness, train_witnesses

D, R, H = 3, 1, 2
TOY = TrainBudget(steps=40, batch=64, lrs=(0.02, 1e-6), seeds=2, scores=("mlp",), hidden=4,
                  heldout=3000)


def _train() -> TrainedWitness:
    return train_witnesses(D, [(R, H)], TOY, seed=5, n_eval=8000)[(R, H)]


def numpy_error(state: dict[str, torch.Tensor], d: int, n: int, seed: int) -> tuple[float, float]:
    """Eq. 2 with MLP scores written out in NumPy, on ``n`` fresh samples of D_2 (a Haar
    orthonormal pair of keys, a uniform query, the target its nearest key): mean and SE."""
    W, M, A, B, c, v = (state[k][0].double().numpy()
                        for k in ("W", "M", "score.A", "score.B", "score.c", "score.v"))
    rng = np.random.default_rng(seed)
    q, rr = np.linalg.qr(rng.standard_normal((n, d, 2)))
    X = (q * np.sign(np.diagonal(rr, axis1=1, axis2=2))[:, None, :]).transpose(0, 2, 1)
    y = rng.standard_normal((n, d))
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    hk = np.einsum("hrd,nid,hrm->nhim", W, X, A)
    hq = np.einsum("nd,hdm->nhm", y, B) + c
    s = np.einsum("nhim,hm->nhi", np.maximum(hk + hq[:, :, None, :], 0), v)
    phi = np.exp(s - s.max(-1, keepdims=True))
    phi /= phi.sum(-1, keepdims=True)
    f = np.einsum("hed,nhi,nid->ne", M, phi, X)
    target = X[np.arange(n), np.argmax(np.einsum("nid,nd->ni", X, y), axis=1)]
    loss = ((f - target) ** 2).sum(-1)
    return float(loss.mean()), float(loss.std(ddof=1) / np.sqrt(n))


def reproduced(path: Path) -> bool:
    """The recorded error agrees with the NumPy re-evaluation of the stored weights (z < 4.5,
    the two estimates independent), and the workbench's own replay returns it exactly."""
    w, err, _ = sw.replay_file(path)
    state = torch.load(path.with_suffix(".pt"), weights_only=True)
    mean, se = numpy_error(state, w.d, 40_000, seed=11)
    se_rec = (w.ci[1] - w.ci[0]) / (2 * 3.2905)  # the recorded 99.9 % CLT interval
    return abs(mean - w.error) < 4.5 * float(np.hypot(se, se_rec)) and err == w.error


def chose_least_heldout(tw: TrainedWitness) -> bool:
    rows = tw.record["heldout"]
    best = min(rows, key=lambda row: row["mean"])
    worst = max(rows, key=lambda row: row["mean"])
    chosen = tw.record["chosen"]
    return (chosen["seed"], chosen["lr"]) == (best["seed"], best["lr"]) and \
        best["mean"] < worst["mean"]


@pytest.fixture(scope="module")
def trained() -> TrainedWitness:
    return _train()


def test_mlp_witness_error_is_reproduced_from_its_stored_weights(
        trained: TrainedWitness, tmp_path: Path) -> None:
    assert trained.record["chosen"]["score"] == "mlp"
    path = sw.save_witness(trained.witness, tmp_path / "w.npz", trained.state)
    assert reproduced(path)


def test_a_witness_whose_weights_were_changed_is_not_reproduced(
        trained: TrainedWitness, tmp_path: Path) -> None:
    state = {**trained.state, "M": 0.8 * trained.state["M"]}  # recorded error unchanged
    assert not reproduced(sw.save_witness(trained.witness, tmp_path / "w.npz", state))


def test_a_planted_score_fault_in_the_recorded_error_is_caught(tmp_path: Path) -> None:
    with plant("workbench.models.scores:MLPScore.forward", scaled(0.3)):
        tw = _train()  # trained and measured with a faulty score: its record is wrong
    assert not reproduced(sw.save_witness(tw.witness, tmp_path / "w.npz", tw.state))


def test_the_witness_is_the_model_of_least_heldout_error(trained: TrainedWitness) -> None:
    assert chose_least_heldout(trained)
    rec = trained.record
    assert rec["seeds"] == [5, 6] and rec["models_in_call"] == 4
    conv = rec["convergence"]
    assert conv["loss_at_80pct"]["step"] == 32 and conv["loss_end"]["step"] == 40


def test_a_planted_selection_by_worst_heldout_is_caught() -> None:
    with plant("workbench.verifiers.trained_witness:select_best", edited("min(", "max(")):
        tw = _train()
    assert not chose_least_heldout(tw)
