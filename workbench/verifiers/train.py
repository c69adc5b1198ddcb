"""The batched trainer: K independent models per forward/backward, grouped by shape.

Serves the ``trained`` evidence of docs/paper.md §6 (Figure 2 and the sweeps) and the falsifier's
gradient search against Theorem 2's lower bound.

- Models with the same architecture, rank, heads, layers and options form one group and share
  one stacked module; seeds and learning rates may differ inside a group.
- AdamW (betas (0.9, 0.95), no weight decay by default) with per-model learning rates, linear
  warm-up over 5% of the steps, then cosine decay to 0; float32.
- Fresh samples every step from each model's own stream ``derive_seed(seed, "data")``; the
  initialisation comes from ``derive_seed(seed, "init")`` and held-out samples from
  ``derive_seed(eval_seed, "heldout")``, so training K models batched gives the same numbers as
  training them one at a time, and evaluation never sees training data.
- ``checkpoint``: the whole state (parameters, optimiser moments, sampler states, loss history;
  the file: :mod:`workbench.verifiers.train_checkpoint`) is written atomically every
  ``checkpoint_every`` steps; rerunning with the same path resumes and ends with the same result
  as an uninterrupted run. A checkpoint of the same run planned for other ``steps`` is continued
  to this run's ``steps`` (extending a finished run): the steps after the checkpoint follow this
  run's schedule, so an extended run is not bit-identical to an uninterrupted run of the new
  length (its first steps had the old schedule); ``steps`` below the checkpoint's step is refused.
  ``TrainRun.resumed`` says what was resumed. A checkpoint is read as tensors and plain data only
  (``read_checkpoint``), never as arbitrary pickled objects, and its layout and run fingerprint
  are checked before anything of it is used (docs/sweeps.md, "Files the workbench reads").
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, cast

import torch
from torch import nn

from workbench.core.intervals import Estimate
from workbench.core.sphere import make_generator
from workbench.core.validation import check_choice, check_float, check_int
from workbench.models.attention import GeneralizedAttention, StackedAttention
from workbench.models.mixed_attention import MixedAttention
from workbench.verifiers.allocator import keep_freed_memory
from workbench.verifiers.estimate import estimate_error
from workbench.verifiers.models import EncoderStack, RegressionStack, stack_modules, unstack_state
from workbench.verifiers.tasks import Task, sample_stacked
from workbench.verifiers.train_checkpoint import (  # the first two re-exported, for old imports
    CHECKPOINT_KEYS as CHECKPOINT_KEYS,
)
from workbench.verifiers.train_checkpoint import (
    fingerprint_diff as fingerprint_diff,
)
from workbench.verifiers.train_checkpoint import (
    fingerprint_mismatch,
    planned_steps,
    read_checkpoint,
    resized_losses,
    save_checkpoint,
)

ARCHS: tuple[str, ...] = ("attention", "generalized", "encoder", "regression")
MIXED_ARCHS: tuple[str, ...] = ("attention", "encoder", "regression")  # group by width H r


def derive_seed(seed: int, tag: str) -> int:
    """A 63-bit seed for the stream ``tag`` of run ``seed`` (streams never coincide)."""
    h = hashlib.sha256(f"{check_int('seed', seed, lo=0)}:{tag}".encode()).digest()
    return int.from_bytes(h[:8], "little") >> 1


@dataclass(frozen=True)
class ModelSpec:
    """One model to train. ``options`` go to the architecture (``scale``, ``score``, ...)."""

    arch: str = "attention"
    rank: int = 1
    heads: int = 1
    layers: int = 1
    seed: int = 0
    lr: float = 0.01
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_choice("arch", self.arch, ARCHS)
        check_int("rank", self.rank, lo=1)
        check_int("heads", self.heads, lo=1)
        check_int("layers", self.layers, lo=1)
        check_int("seed", self.seed, lo=0)
        check_float("lr", self.lr, lo=0.0, lo_open=True)
        if self.arch in ("attention", "generalized") and self.layers != 1:
            raise ValueError(f"layers must be 1 for arch {self.arch!r} (got {self.layers})")

    def shape_key(self) -> str:
        """Models with equal keys train in one stacked group.

        Standard attention models group by their projection width ``P = H r`` (mixed ranks and
        head counts share one ``MixedAttention`` stack); generalized attention by ``(r, H)``.
        """
        opts = json.dumps(self.options, sort_keys=True)
        if self.arch in MIXED_ARCHS:
            return f"{self.arch}|P={self.rank * self.heads}|{self.layers}|{opts}"
        return f"{self.arch}|{self.rank}|{self.heads}|{self.layers}|{opts}"


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation and evaluation settings shared by every model of a run (docs/paper.md §6)."""

    steps: int = 1000
    batch: int = 256
    warmup: float = 0.05
    betas: tuple[float, float] = (0.9, 0.95)
    weight_decay: float = 0.0
    eps: float = 1e-8
    eval_samples: int = 20_000
    eval_batch: int = 2048
    level: float = 0.95
    eval_seed: int = 0
    device: str = "cpu"
    checkpoint_every: int = 0

    def __post_init__(self) -> None:
        check_int("steps", self.steps, lo=1)
        check_int("batch", self.batch, lo=1)
        check_float("warmup", self.warmup, 0.0, 1.0, hi_open=True)
        check_int("eval_samples", self.eval_samples, lo=0)
        check_int("checkpoint_every", self.checkpoint_every, lo=0)


@dataclass
class ModelResult:
    """Best/final training loss, held-out error with CI, parameter counts, trained weights.

    ``curve``: the training loss over each tenth of the run, ``(last step, mean, standard
    error)`` of the per-step losses in it (fewer entries when ``steps < 10``); every step draws
    fresh samples, so a segment mean estimates the population loss there (used to measure a
    plateau).
    """

    spec: ModelSpec
    best_loss: float
    final_loss: float
    heldout: Estimate | None
    params_paper: int
    params_total: int
    state: dict[str, torch.Tensor] = field(repr=False, default_factory=dict)
    curve: list[tuple[int, float, float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k not in ("state", "heldout")}
        out["heldout"] = None if self.heldout is None else self.heldout.to_dict()
        return out


@dataclass(frozen=True)
class Resumed:
    """A run continued from a checkpoint: the step it had reached and the steps it was planned
    for (``planned != steps`` of the run: it was extended or shortened)."""

    path: str
    step: int
    planned: int


@dataclass
class TrainRun:
    """All results, in the order of the specs, plus throughput (model-steps per second) and the
    checkpoint it resumed from (``None``: trained from step 0)."""

    results: list[ModelResult]
    steps: int
    seconds: float
    groups: int
    modules: list[nn.Module] = field(repr=False, default_factory=list)
    resumed: Resumed | None = None

    @property
    def model_steps_per_s(self) -> float:
        return len(self.results) * self.steps / max(self.seconds, 1e-12)


def build_model(spec: ModelSpec, task: Task, models: int = 1,
                generator: torch.Generator | None = None,
                shapes: list[tuple[int, int]] | None = None) -> nn.Module:
    """The stacked module of ``spec`` for ``task`` with ``models`` copies.

    ``shapes``: per-model ``(rank, heads)`` for a mixed stack of the group of ``spec`` (same
    ``H r``; attention, encoder and regression models only); default ``spec``'s for all.
    """
    o = dict(spec.options)
    if shapes is not None and spec.arch not in MIXED_ARCHS:
        raise ValueError(f"shapes must be None for arch {spec.arch!r}")
    rank: int | list[int] = [r for r, _ in shapes] if shapes else spec.rank
    heads: int | list[int] = [h for _, h in shapes] if shapes else spec.heads
    if spec.arch == "attention":
        return MixedAttention(task.d, rank, heads, models, generator=generator, **o)
    if spec.arch == "generalized":
        return GeneralizedAttention(task.d, spec.rank, spec.heads, models, generator=generator,
                                    **o)
    if spec.arch == "encoder":
        o.setdefault("length", task.N + 1)
        return EncoderStack(task.d, task.d, rank, heads, spec.layers, models,
                            generator=generator, **o)
    o.setdefault("length", task.N + 1)
    return RegressionStack(task.d, rank, heads, spec.layers, models,
                           generator=generator, **o)


def param_counts(module: nn.Module, models: int) -> tuple[int, int]:
    """``(paper, total)`` parameters of one model: ``L H r d`` and every trainable number."""
    total = sum(p.numel() for p in module.parameters()) // models
    if isinstance(module, (EncoderStack, MixedAttention)):
        return module.paper_params(), total
    layer = cast(StackedAttention, module)
    return layer.heads * layer.rank * layer.d, total


def lr_factor(step: int, steps: int, warmup: float) -> float:
    """Linear warm-up over ``warmup * steps`` steps, then cosine decay to 0 (docs/paper.md §6)."""
    w = int(round(warmup * steps))
    if step < w:
        return (step + 1) / w
    return 0.5 * (1 + math.cos(math.pi * (step - w) / max(1, steps - w)))


class _Group:
    """One stacked module, its AdamW moments, sampler states and loss history."""

    def __init__(self, specs: list[tuple[int, ModelSpec]], task: Task, cfg: TrainConfig):
        self.index = [i for i, _ in specs]
        self.specs = [s for _, s in specs]
        K, dev = len(self.specs), torch.device(cfg.device)
        ones = [build_model(s, task, 1, make_generator(derive_seed(s.seed, "init")))
                for s in self.specs]
        shapes = [(s.rank, s.heads) for s in self.specs]
        target = build_model(self.specs[0], task, K, shapes=shapes if self.specs[0].arch in
                             MIXED_ARCHS else None)
        self.module = stack_modules(ones, target).to(dev)
        self.params: list[torch.Tensor] = [p for p in self.module.parameters() if p.requires_grad]
        # the moments of all parameters side by side, (K, numbers per model); m, v: views per
        # parameter (what a checkpoint holds)
        self.sizes = [p[0].numel() for p in self.params]
        self.flat_m, self.flat_v = (self.params[0].new_zeros(K, sum(self.sizes)) for _ in "mv")
        self.m, self.v = self._split(self.flat_m), self._split(self.flat_v)
        self.lr = torch.tensor([s.lr for s in self.specs], device=dev)
        self.gens = [make_generator(derive_seed(s.seed, "data"), dev) for s in self.specs]
        self.losses = torch.zeros(cfg.steps, K, device=dev)

    def step(self, t: int, task: Task, cfg: TrainConfig) -> None:
        inputs, target = sample_stacked(task, cfg.batch, self.gens, cfg.device)
        loss = task.error(self.module(*inputs), target).mean(1)  # (K,)
        for p in self.params:
            p.grad = None
        loss.sum().backward()
        self.losses[t] = loss.detach()
        _adamw(self, t, cfg)

    def _split(self, flat: torch.Tensor) -> list[torch.Tensor]:
        """Views of a ``(K, numbers per model)`` tensor shaped like each parameter."""
        return [x.view_as(p) for x, p in zip(flat.split(self.sizes, 1), self.params)]

    def state(self) -> dict[str, Any]:
        return {"module": self.module.state_dict(), "m": self.m, "v": self.v,
                "gens": [g.get_state() for g in self.gens], "losses": self.losses}

    def load(self, st: dict[str, Any]) -> None:
        """Restore a state of ``state()``'s layout (``check_state`` checked it)."""
        self.module.load_state_dict(st["module"])
        for mine, saved in ((self.m, st["m"]), (self.v, st["v"])):
            for a, b in zip(mine, saved):
                a.copy_(b)
        for g, s in zip(self.gens, st["gens"]):
            g.set_state(s.cpu())  # a generator's state is a CPU byte tensor on every device
        self.losses.copy_(st["losses"])

    def check_state(self, st: object, where: str) -> None:
        """Fail (``ValueError`` naming ``checkpoint``) unless ``st`` has ``state()``'s layout:
        the same keys, and tensors of this group's shapes and dtypes."""

        def bad(why: str) -> ValueError:
            return ValueError(f"checkpoint must be a checkpoint of this run ({where}: {why})")

        def tensors(name: str, got: object, want: list[torch.Tensor]) -> None:
            if not isinstance(got, (list, tuple)) or len(got) != len(want):
                raise bad(f"{name} is not a list of {len(want)} tensors")
            for i, (a, b) in enumerate(zip(got, want)):
                if not isinstance(a, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
                    raise bad(f"{name}[{i}] is not a {b.dtype} tensor of shape {tuple(b.shape)}")

        if not isinstance(st, dict) or set(st) != {"module", "m", "v", "gens", "losses"}:
            keys = sorted(map(str, st)) if isinstance(st, dict) else type(st).__name__
            raise bad(f"a group holds {keys}, not module, m, v, gens, losses")
        mine = self.module.state_dict()
        saved = st["module"]
        if not isinstance(saved, dict) or set(saved) != set(mine):
            raise bad("the module's parameters are not those of this run's model")
        tensors("module", [saved[k] for k in mine], list(mine.values()))
        tensors("m", st["m"], self.m)
        tensors("v", st["v"], self.v)
        states = [g.get_state() for g in self.gens]
        tensors("gens", st["gens"], states)
        tensors("losses", [st["losses"]], [self.losses])


@torch.no_grad()
def _adamw(group: _Group, t: int, cfg: TrainConfig) -> None:
    """AdamW (decoupled weight decay), as ``torch.optim.AdamW``, with a learning rate per model.

    One update of all parameters at once, on the ``(K, numbers per model)`` moments.
    """
    b1, b2 = cfg.betas
    lr = (group.lr * lr_factor(t, cfg.steps, cfg.warmup)).unsqueeze(1)  # (K, 1)
    bc1, bc2 = 1 - b1 ** (t + 1), math.sqrt(1 - b2 ** (t + 1))
    K, m, v = len(group.specs), group.flat_m, group.flat_v
    # the gradients from the backward pass in _Group.step
    g = torch.cat([cast(torch.Tensor, p.grad).reshape(K, -1) for p in group.params], 1)
    if cfg.weight_decay:
        torch._foreach_mul_(group.params, group._split((1 - lr * cfg.weight_decay).expand_as(m)))
    m.mul_(b1).add_(g, alpha=1 - b1)
    v.mul_(b2).addcmul_(g, g, value=1 - b2)
    torch._foreach_sub_(group.params, group._split((lr / bc1) * m / (v.sqrt() / bc2 + cfg.eps)))


def _window(steps: int) -> int:
    return max(1, min(100, steps // 20))


def train(specs: list[ModelSpec], task: Task, config: TrainConfig | None = None, *,
          checkpoint: str | os.PathLike[str] | None = None,
          progress: Callable[[int, int], None] | None = None) -> TrainRun:
    """Train every spec on fresh samples of ``task``; results come back in the order of ``specs``.

    ``best_loss`` is the lowest moving average of the training loss over ``steps // 20`` steps
    (at most 100), ``final_loss`` the last such average; ``heldout`` the error on
    ``eval_samples`` fresh samples with a normal CI at ``level`` (None if ``eval_samples == 0``).
    """
    cfg = config or TrainConfig()
    if not specs:
        raise ValueError("specs must hold at least one ModelSpec")
    # no page faults on the per-step activations (workbench.verifiers.allocator)
    keep_freed_memory()
    keys: dict[str, list[tuple[int, ModelSpec]]] = {}
    for i, s in enumerate(specs):
        keys.setdefault(s.shape_key(), []).append((i, s))
    # equal (rank, heads) next to each other: one attention-core call per run of equal ranks
    groups = [_Group(sorted(v, key=lambda e: (e[1].rank, e[0])), task, cfg)
              for v in keys.values()]
    fingerprint = json.dumps([task.to_dict(), [asdict(s) for s in specs], asdict(cfg)],
                             sort_keys=True, default=str)
    start, elapsed, resumed = 0, 0.0, None
    if checkpoint is not None and os.path.exists(checkpoint):
        saved = read_checkpoint(checkpoint, cfg.device)
        where = repr(os.fspath(checkpoint))
        planned = planned_steps(saved["fingerprint"], fingerprint)
        if planned is None:
            why = fingerprint_mismatch(saved["fingerprint"], fingerprint)
            raise ValueError(f"checkpoint must belong to this run's configuration ({where} was "
                             f"written by another: {why}; delete it to start afresh)")
        if len(saved["groups"]) != len(groups) or not 0 <= saved["step"] <= planned:
            raise ValueError(f"checkpoint must be a checkpoint of this run ({where}: "
                             f"{len(saved['groups'])} groups at step {saved['step']}, not "
                             f"{len(groups)} groups at a step in 0..{planned})")
        if saved["step"] > cfg.steps:
            raise ValueError(f"steps must be >= {saved['step']}, the step {where} reached (got "
                             f"{cfg.steps}); a run cannot be shortened after the fact")
        for grp, st in zip(groups, saved["groups"]):
            if isinstance(st, dict) and "losses" in st:  # the history, to this run's length
                st["losses"] = resized_losses(st["losses"], planned, cfg.steps)
            grp.check_state(st, where)
        for grp, st in zip(groups, saved["groups"]):
            grp.load(st)
        start, elapsed = saved["step"], float(saved["seconds"])
        resumed = Resumed(os.fspath(checkpoint), start, planned)
    every = cfg.checkpoint_every or max(1, cfg.steps // 20)
    t0 = time.perf_counter()
    for t in range(start, cfg.steps):
        for grp in groups:
            grp.step(t, task, cfg)
        if checkpoint is not None and ((t + 1) % every == 0 or t + 1 == cfg.steps):
            save_checkpoint(checkpoint, fingerprint, t + 1, elapsed + time.perf_counter() - t0,
                            [g.state() for g in groups])
        if progress is not None:
            progress(t + 1, cfg.steps)
    seconds = elapsed + time.perf_counter() - t0
    results: list[ModelResult | None] = [None] * len(specs)
    for grp in groups:
        _collect(grp, task, cfg, results)
    return TrainRun([r for r in results if r is not None], cfg.steps, seconds, len(groups),
                    [g.module for g in groups], resumed)


def _collect(grp: _Group, task: Task, cfg: TrainConfig, out: list[ModelResult | None]) -> None:
    w = _window(cfg.steps)
    hist = grp.losses.double().cpu()
    smooth = hist.unfold(0, w, 1).mean(-1)  # (steps - w + 1, K)
    K = len(grp.specs)
    ests: list[Estimate | None] = [None] * K
    if cfg.eval_samples:
        ests = list(estimate_error(grp.module, task, samples=cfg.eval_samples,
                                   batch=cfg.eval_batch, level=cfg.level,
                                   generator=derive_seed(cfg.eval_seed, "heldout")))
    paper, total = param_counts(grp.module, K)
    T = hist.shape[0]
    cuts = sorted({round(f * T / 10) for f in range(11)})
    segs = [hist[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]
    for k, (i, s) in enumerate(zip(grp.index, grp.specs)):
        curve = [(a + len(seg), float(seg[:, k].mean()),
                  float(seg[:, k].std() / math.sqrt(len(seg))) if len(seg) > 1 else math.nan)
                 for a, seg in zip(cuts, segs)]
        out[i] = ModelResult(s, float(smooth[:, k].min()), float(smooth[-1, k]), ests[k],
                             paper, total, unstack_state(grp.module, k), curve)
