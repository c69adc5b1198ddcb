"""Saved witnesses of workbench/constructions/optimized.py (docs/sweeps.md, "Files the workbench
reads"):
each method's witness reads back whole; a file that holds objects, is damaged, foreign or does
not match its own ``(d, r, H)`` is refused with one line naming ``witness``, unpickling
nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.planted_files import RunsCode
from workbench.constructions.optimized import WITNESS_PARAMS, Witness, bayes_heads, hardmax_rank1


@pytest.mark.parametrize("make", [lambda: hardmax_rank1(4, 3, steps=3, seed=1),
                                  lambda: bayes_heads(5, 2, 2, n_fit=200, n_eval=200, seed=2)])
def test_each_method_reads_back_whole(tmp_path: Path, make) -> None:
    w = make()
    back = Witness.load(w.save(tmp_path / "w.npz"))
    assert (back.method, back.d, back.r, back.heads, back.error, back.ci, back.n_eval,
            back.seed) == (w.method, w.d, w.r, w.heads, w.error, w.ci, w.n_eval, w.seed)
    assert back.params.keys() == w.params.keys() == WITNESS_PARAMS[w.method](w.d, w.r,
                                                                             w.heads).keys()
    assert all(np.array_equal(back.params[k], w.params[k]) for k in w.params)


def _arrays(**change: object) -> dict[str, object]:
    """The arrays of a valid bayes_heads witness at (d, r, H) = (5, 2, 2), with ``change``
    (None removes an array)."""
    base: dict[str, object] = {
        "method": np.array("bayes_heads"), "meta": np.array([5, 2, 2, 10, 3]),
        "error": np.array([0.3, 0.29, 0.31]), "B": np.ones((2, 2, 5)), "a": np.ones(2)}
    base.update(change)
    return {k: v for k, v in base.items() if v is not None}


def _write(case: str, path: Path) -> None:
    if case == "text":
        path.write_text("abc")
    elif case == "empty":
        path.write_bytes(b"")
    elif case == "one array":
        with path.open("wb") as f:
            np.save(f, np.ones(3))
    elif case == "truncated":
        np.savez(path, **_arrays())
        path.write_bytes(path.read_bytes()[:300])
    else:
        raise AssertionError(case)


@pytest.mark.parametrize("case, why", [
    ("text", "is not an .npz archive"),
    ("empty", "is not an .npz archive"),
    ("one array", "is a single array"),
    ("truncated", "is truncated or damaged"),
    ({"method": None}, "has no method name"),
    ({"method": np.array("mine")}, "names the method 'mine'"),
    ({"meta": np.array([5.0, 2, 2, 10, 3])}, "no meta array"),
    ({"meta": np.array([5, 9, 2, 10, 3])}, "records d=5, r=9"),
    ({"error": np.array([1, 2, 3])}, "no error array"),
    ({"B": np.ones((2, 2, 4))}, "holds B of shape (2, 2, 4)"),
    ({"Q": np.ones((2, 5))}, "holds the arrays"),
])
def test_a_bad_witness_is_one_line(tmp_path: Path, case: str | dict[str, object],
                                   why: str) -> None:
    path = tmp_path / "w.npz"
    if isinstance(case, str):
        _write(case, path)
    else:
        np.savez(path, **_arrays(**case))
    with pytest.raises(ValueError, match="^witness must be a witness file") as e:
        Witness.load(path)
    assert why in str(e.value) and "\n" not in str(e.value)


def test_a_witness_holding_a_pickle_is_refused_unrun(tmp_path: Path) -> None:
    marker, path = tmp_path / "marker", tmp_path / "w.npz"
    planted = np.empty(1, dtype=object)
    planted[0] = RunsCode(marker)
    np.savez(path, **_arrays(a=planted))
    with np.load(path, allow_pickle=True) as z:  # the plant works: loading it so runs it
        z["a"]
    assert marker.read_text() == "ran"
    marker.unlink()
    with pytest.raises(ValueError, match="holds objects other than numbers"):
        Witness.load(path)
    assert not marker.exists()


def test_the_adam_steps_are_torch_adams() -> None:
    """hardmax_rank1 steps Adam by hand (torch.optim's constructor imports torch._dynamo); the
    iterates equal torch.optim.Adam's bit for bit, and a step size a few percent off does not."""
    import torch

    from workbench.constructions.optimized import _adam_step, _rank1_error

    Q0 = torch.randn(5, 6, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    ref = Q0.clone().requires_grad_(True)
    opt = torch.optim.Adam([ref], lr=0.05)
    for _ in range(60):
        opt.zero_grad()
        _rank1_error(ref, 0.6).backward()
        opt.step()
    for lr, same in ((0.05, True), (0.0515, False)):
        Q = Q0.clone().requires_grad_(True)
        m, v = torch.zeros_like(Q), torch.zeros_like(Q)
        for t in range(1, 61):
            Q.grad = None
            _rank1_error(Q, 0.6).backward()
            _adam_step(Q, m, v, t, lr=lr)
        assert torch.equal(Q, ref) is same
