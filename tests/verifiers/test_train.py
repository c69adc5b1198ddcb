"""The batched trainer: batched == separate, resume == uninterrupted, the rank
separation of Theorem 2 at small scale, and the schedule of docs/paper.md §6."""

from __future__ import annotations

import ast
import math
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from workbench.core.sphere import make_generator
from workbench.models.attention import MultiHeadAttention
from workbench.models.mixed_attention import MixedAttention
from workbench.verifiers.models import EncoderStack, RegressionStack
from workbench.verifiers.tasks import Task, sample_stacked
from workbench.verifiers.train import (
    CHECKPOINT_KEYS,
    ModelSpec,
    TrainConfig,
    lr_factor,
    read_checkpoint,
    train,
)

SMALL = TrainConfig(steps=12, batch=32, eval_samples=512, eval_batch=256)


def _close_states(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=1e-4, atol=1e-5, msg=k)


@pytest.mark.parametrize(
    "task,specs",
    [
        (Task("nearest", d=6, N=3), [ModelSpec("attention", 1, 3, seed=0, lr=0.01),
                                      ModelSpec("attention", 2, 2, seed=1, lr=0.03),
                                      ModelSpec("attention", 1, 3, seed=2, lr=0.003)]),
        (Task("farthest", d=6, N=4), [ModelSpec("encoder", 2, 3, 2, seed=s,
                                                 options={"ffn_width": 16,
                                                          "positional": "concat",
                                                          "pos_dims": 2}) for s in (0, 5)]),
        (Task("nearest", d=5, N=2), [ModelSpec("generalized", 1, 2, seed=s,
                                                options={"score": "mlp"}) for s in (3, 4)]),
    ],
)
def test_batched_equals_separate(task: Task, specs: list[ModelSpec]) -> None:
    batched = train(specs, task, SMALL)
    assert batched.groups < len(specs) or len(specs) == 1
    for spec, res in zip(specs, batched.results):
        alone = train([spec], task, SMALL).results[0]
        assert res.spec == spec
        _close_states(res.state, alone.state)
        assert res.final_loss == pytest.approx(alone.final_loss, rel=1e-4)
        assert res.heldout is not None and alone.heldout is not None
        assert res.heldout.mean == pytest.approx(alone.heldout.mean, rel=1e-4)


def test_training_moves_parameters_and_seeds_differ() -> None:
    task = Task("nearest", d=6, N=2)
    run = train([ModelSpec(seed=0), ModelSpec(seed=1)], task, SMALL)
    a, b = (r.state["Wq"] for r in run.results)
    assert not torch.allclose(a, b)


def test_resume_after_interrupt_matches_uninterrupted(tmp_path) -> None:
    task = Task("farthest", d=6, N=4)
    specs = [ModelSpec("encoder", 1, 6, seed=s, options={"ffn_width": 8}) for s in (0, 1)]
    cfg = TrainConfig(steps=20, batch=16, eval_samples=256, checkpoint_every=3)
    ref = train(specs, task, cfg)
    ck = tmp_path / "run.pt"

    def stop(step: int, steps: int) -> None:
        if step == 10:  # dies after a checkpoint at 9, losing step 10
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(specs, task, cfg, checkpoint=ck, progress=stop)
    assert torch.load(ck, weights_only=True)["step"] == 9
    resumed = train(specs, task, cfg, checkpoint=ck)
    for a, b in zip(ref.results, resumed.results):
        _close_states(a.state, b.state)
        assert a.best_loss == b.best_loss and a.final_loss == b.final_loss
        assert a.heldout == b.heldout


def test_hard_kill_then_resume(tmp_path) -> None:
    """A process killed without cleanup (os._exit) resumes from its last checkpoint."""
    ck = tmp_path / "kill.pt"
    body = textwrap.dedent(f"""
        import os, sys
        from workbench.verifiers.tasks import Task
        from workbench.verifiers.train import ModelSpec, TrainConfig, train
        cfg = TrainConfig(steps=16, batch=16, eval_samples=256, checkpoint_every=4)
        kill = int(sys.argv[1])
        def hook(step, steps):
            if step == kill:
                os._exit(137)
        run = train([ModelSpec(seed=0), ModelSpec(rank=2, heads=2, seed=1)],
                    Task("nearest", d=4, N=3), cfg, checkpoint={str(ck)!r}, progress=hook)
        print(repr([(r.final_loss, r.heldout.mean) for r in run.results]))
    """)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    first = subprocess.run([sys.executable, "-c", body, "7"], capture_output=True, text=True,
                           env=env)
    assert first.returncode == 137 and ck.exists(), first.stderr
    assert torch.load(ck, weights_only=True)["step"] == 4
    resumed = subprocess.run([sys.executable, "-c", body, "-1"], capture_output=True, text=True,
                             env=env)
    assert resumed.returncode == 0, resumed.stderr
    fresh = train([ModelSpec(seed=0), ModelSpec(rank=2, heads=2, seed=1)],
                  Task("nearest", d=4, N=3),
                  TrainConfig(steps=16, batch=16, eval_samples=256, checkpoint_every=4))
    got = ast.literal_eval(resumed.stdout.strip())
    want = [(r.final_loss, r.heldout.mean) for r in fresh.results if r.heldout is not None]
    flat = [v for pair in got for v in pair]
    assert len(got) == len(want) and flat == pytest.approx([v for pair in want for v in pair],
                                                           rel=1e-6)


def test_checkpoint_of_another_run_is_refused(tmp_path) -> None:
    ck = tmp_path / "a.pt"
    task = Task("nearest", d=4, N=2)
    train([ModelSpec()], task, TrainConfig(steps=2, batch=8, eval_samples=0), checkpoint=ck)
    with pytest.raises(ValueError, match="checkpoint"):
        train([ModelSpec(seed=9)], task, TrainConfig(steps=2, batch=8, eval_samples=0),
              checkpoint=ck)


def test_resume_is_bit_identical(tmp_path) -> None:
    task = Task("nearest", d=5, N=3)
    specs = [ModelSpec(seed=0), ModelSpec(rank=2, heads=2, seed=1, lr=0.02)]
    cfg = TrainConfig(steps=14, batch=16, eval_samples=256, checkpoint_every=4)
    ref = train(specs, task, cfg)
    ck = tmp_path / "run.pt"

    def stop(step: int, steps: int) -> None:
        if step == 10:  # dies after the checkpoint at 8
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(specs, task, cfg, checkpoint=ck, progress=stop)
    assert read_checkpoint(ck)["step"] == 8
    resumed = train(specs, task, cfg, checkpoint=ck)
    for a, b in zip(ref.results, resumed.results):
        assert a.state.keys() == b.state.keys()
        assert all(torch.equal(a.state[k], b.state[k]) for k in a.state)
        assert (a.best_loss, a.final_loss, a.heldout, a.curve) == (
            b.best_loss, b.final_loss, b.heldout, b.curve)


def test_checkpoint_is_read_as_tensors_and_plain_data(tmp_path) -> None:
    ck = tmp_path / "a.pt"
    task, cfg = Task("nearest", d=4, N=2), TrainConfig(steps=3, batch=8, eval_samples=0)
    train([ModelSpec(heads=2)], task, cfg, checkpoint=ck)
    saved = read_checkpoint(ck)
    assert set(saved) == set(CHECKPOINT_KEYS) and saved["step"] == 3
    assert isinstance(saved["groups"][0]["losses"], torch.Tensor)


@pytest.mark.parametrize("edit, why", [
    (lambda s: s["groups"][0]["m"].pop(), "m is not a list of"),
    (lambda s: s["groups"][0]["module"].popitem(), "parameters are not those"),
    (lambda s: s["groups"][0]["gens"].__setitem__(0, torch.zeros(3, dtype=torch.uint8)),
     "gens[0] is not a torch.uint8 tensor"),
    (lambda s: s["groups"][0].pop("losses"), "a group holds"),
    (lambda s: s["groups"].append({}), "2 groups at step 3, not 1"),
    (lambda s: s.__setitem__("step", 99), "at step 99"),
    (lambda s: s.__setitem__("seconds", "soon"), "no 'seconds' entry"),
    (lambda s: s.__setitem__("extra", 1), "entries other than"),
])
def test_checkpoint_of_another_layout_is_refused_before_use(tmp_path, edit, why) -> None:
    ck = tmp_path / "a.pt"
    task, cfg = Task("nearest", d=4, N=2), TrainConfig(steps=3, batch=8, eval_samples=0)
    train([ModelSpec(heads=2)], task, cfg, checkpoint=ck)
    saved = torch.load(ck, weights_only=True)
    edit(saved)
    torch.save(saved, ck)
    before = ck.read_bytes()
    with pytest.raises(ValueError, match="^checkpoint must ") as e:
        train([ModelSpec(heads=2)], task, cfg, checkpoint=ck)
    assert why in str(e.value) and "\n" not in str(e.value)
    assert ck.read_bytes() == before


def test_schedule_warmup_then_cosine() -> None:
    steps = 200
    f = [lr_factor(t, steps, 0.05) for t in range(steps)]
    assert f[0] == pytest.approx(1 / 10) and f[9] == pytest.approx(1.0)
    assert all(a < b for a, b in zip(f[:9], f[1:10]))
    assert all(a >= b for a, b in zip(f[10:], f[11:]))
    mid = 10 + (steps - 10) // 2
    assert f[mid] == pytest.approx(0.5 * (1 + math.cos(math.pi * (mid - 10) / 190)))
    assert f[-1] < 1e-3


@pytest.mark.parametrize(
    "task,batch",
    [(Task("nearest", d=16, N=8), 32), (Task("farthest", d=17, N=6, points="orthonormal"), 16),
     (Task("farthest", d=17, N=6, points="orthonormal"), 7), (Task("regression", d=64, N=40), 48)],
)
def test_stacked_samples_equal_separate(task: Task, batch: int) -> None:
    """Each model's slice is bit for bit its own sample; at batch 7 labelling the stack in one
    call would not be (orthonormal keys: the farthest point is decided by rounding)."""
    inputs, target = sample_stacked(task, batch, [make_generator(s) for s in range(8)])
    for k in range(8):
        alone, want = task.sample(batch, make_generator(k))
        assert all(torch.equal(a[k], b) for a, b in zip(inputs, alone))
        assert torch.equal(target[k], want)


def test_stacked_models_shapes() -> None:
    X = torch.randn(3, 5, 6)
    enc = EncoderStack(6, 6, 2, 3, layers=2, models=4, ffn_width=8, positional="additive")
    assert enc(X).shape == (4, 3, 5, 6)
    assert enc(X, torch.randn(3, 6)).shape == (4, 3, 6)
    reg = RegressionStack(4, 3, 2, layers=2, models=2, width=6, ffn_width=8)
    xs, ys = torch.randn(3, 5, 4), torch.randn(3, 5)
    assert reg(xs, ys).shape == (2, 3)
    run = train([ModelSpec("regression", 3, 2, 2, options={"width": 6, "ffn_width": 8})],
                Task("regression", d=4, N=4), SMALL)
    assert math.isfinite(run.results[0].final_loss)


@pytest.mark.parametrize("bad", [dict(rank=0), dict(heads=0), dict(arch="rnn"),
                                 dict(lr=-1.0), dict(layers=2)])
def test_spec_validation_names_parameter(bad: dict) -> None:
    name = next(iter(bad))
    with pytest.raises(ValueError, match=name):
        ModelSpec(**bad)


def test_separation_full_rank_beats_rank_one_above_lower_bound() -> None:
    """Theorem 2 at d=16, N=2 on D_2: one full-rank head trains markedly lower than 16 rank-1
    heads, and the rank-1 heads stay above the certified lower bound (if built)."""
    d, task = 16, Task("nearest", d=16, N=2, points="orthonormal")
    cfg = TrainConfig(steps=150, batch=256, eval_samples=10_000)
    full, low = train([ModelSpec(rank=d, heads=1, lr=0.03),
                       ModelSpec(rank=1, heads=16, lr=0.03)], task, cfg).results
    assert full.heldout is not None and low.heldout is not None
    assert full.heldout.hi < 0.5 * low.heldout.lo  # markedly lower, beyond both CIs
    assert full.params_paper == low.params_paper == d * d  # same paper parameter count
    cert = pytest.importorskip("workbench.core.bounds.certified").certified_lower_bound
    bound = float(cert(d, 1, 16).value)
    assert 0 < bound < 1
    assert low.heldout.hi >= bound  # no violation of Theorem 2's certified bound


@pytest.mark.parametrize("bias,normalizer", [(True, "softmax"), (False, "hardmax")])
def test_fast_attention_equals_core(bias: bool, normalizer: str) -> None:
    """``MixedAttention`` (the trainer's layer) restates core ``MultiHeadAttention``; the numbers
    must not change."""
    g = torch.Generator().manual_seed(0)
    core = MultiHeadAttention(6, 2, 3, models=2, bias=bias, normalizer=normalizer, scale=0.7,
                              generator=g)
    if bias:
        with torch.no_grad():
            for name in ("bq", "bk", "bv", "bo"):
                getattr(core, name).normal_(generator=g)
    fast = MixedAttention.from_core([core])
    X, y, Y = torch.randn(4, 5, 6), torch.randn(4, 6), torch.randn(2, 4, 3, 6)
    for args in ((X,), (X, y), (X.expand(2, 4, 5, 6), Y), (X, Y[0])):
        torch.testing.assert_close(fast(*args), core(*args), rtol=1e-5, atol=1e-6)


def _full_last(model: EncoderStack, tokens: torch.Tensor) -> torch.Tensor:
    """The reference: every layer on every token, then the last token's row."""
    return model.forward_tokens(tokens)[..., -1, :]


@pytest.mark.parametrize("layers,models,positional", [(1, 1, "none"), (2, 3, "additive"),
                                                      (3, 2, "concat")])
def test_last_token_path_equals_every_token(layers: int, models: int, positional: str) -> None:
    """A lone query's output (``forward(X, y)``), computed for the last token alone in the last
    layer, is the full encoder's last row, in value and in every parameter's gradient."""
    g = torch.Generator().manual_seed(layers)
    ranks, heads = [1, 2, 4][:models], [4, 2, 1][:models]
    enc = EncoderStack(4, 4, ranks, heads, layers, models, ffn_width=16, positional=positional,
                       pos_dims=2, length=6, generator=g)
    X, y = torch.randn(7, 5, 4, generator=g), torch.randn(7, 4, generator=g)
    fast = enc(X, y)
    slow = _full_last(enc, torch.cat((X, y[:, None]), 1))
    torch.testing.assert_close(fast, slow, rtol=1e-5, atol=1e-6)
    w = torch.randn(fast.shape, generator=g)
    params = list(enc.parameters())
    for a, b in zip(torch.autograd.grad((fast * w).sum(), params),
                    torch.autograd.grad((slow * w).sum(), params)):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


def test_regression_reads_the_query_token_alone() -> None:
    g = torch.Generator().manual_seed(0)
    reg = RegressionStack(3, 2, 2, layers=2, models=2, width=4, ffn_width=8, generator=g)
    xs, ys = torch.randn(5, 6, 3, generator=g), torch.randn(5, 6, generator=g)
    full = reg.forward_tokens(torch.cat((xs, ys[..., None]), -1))[..., -1, 0]
    torch.testing.assert_close(reg(xs, ys), full, rtol=1e-5, atol=1e-6)
