"""Sweep presets: the experiments of docs/paper.md §7 (Figure 2 and the further sweeps) as grids.

Each preset expands to a list of ``Run`` for a scale:

- ``paper``: the paper's sizes, steps and seeds (best of seeds by held-out error); for a GPU or
  a cluster. Where the paper does not say, the choice is marked *inferred* in ``why``.
- ``quick``: the same design shrunk (smaller d, N, FFN, steps and seeds) so a grid runs on two
  CPU cores in minutes.

All seeds of a preset are scored on the same held-out stream (``eval_seed = 0``).
``tiny`` is a seconds-long smoke preset (tests, resume, Ray equivalence). ``H = c d / r`` keeps
``H r d`` (the paper's parameters per layer) equal across ranks, so ranks of one ``(L, c)``
share a projection width and train in one stacked group.

A run's kind is ``train`` or ``random_features``. A random-features run draws its heads from
``law`` (``workbench.constructions.random_features.HEAD_LAWS``, default ``cosine_uniform`` as in
the paper's figure); the law enters the run's configuration, and so its store key, only when it
is not the default, so the keys of the runs stored before the law was a parameter stay the
same. ``random_features_preset(name, law)`` builds the random-features grid for another law, for
a plug-in's preset (docs/extending.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.constructions.random_features import HEAD_LAWS
from workbench.core.validation import check_choice
from workbench.verifiers.tasks import Task
from workbench.verifiers.train import ModelSpec, TrainConfig

SCALES: tuple[str, ...] = ("quick", "paper")
KINDS: tuple[str, ...] = ("train", "random_features")
RF_LAW = "cosine_uniform"  # the head law of the paper's random-features figure (the default)


@dataclass(frozen=True)
class Run:
    """One model (or one random-features draw) of a preset, with the labels a figure plots."""

    preset: str
    scale: str
    kind: str
    task: Task
    spec: ModelSpec
    config: TrainConfig
    labels: tuple[tuple[str, Any], ...]  # e.g. (("L", 1), ("c", 8), ("r", 4))
    law: str = RF_LAW  # random_features: the law of the heads (HEAD_LAWS)

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, KINDS)
        check_choice("law", self.law, HEAD_LAWS)
        if self.kind != "random_features" and self.law != RF_LAW:
            raise ValueError(f"law must be {RF_LAW!r} for a {self.kind} run (a head law is a "
                             f"random_features parameter; got {self.law!r})")

    @property
    def seed(self) -> int:
        return self.spec.seed

    @property
    def model_class(self) -> str:
        """``standard`` (rank-r value maps) or ``generalized`` (full value maps, Theorem 2)."""
        return "generalized" if self.spec.arch == "generalized" else "standard"

    def label_dict(self) -> dict[str, Any]:
        return dict(self.labels)

    def config_dict(self) -> dict[str, Any]:
        """The full configuration (what the store's key hashes, with the code version); the law
        only when it is not the default, so default runs keep the keys they always had."""
        out = {"preset": self.preset, "kind": self.kind, "task": self.task.to_dict(),
               "spec": asdict(self.spec), "train": asdict(self.config),
               "labels": self.label_dict()}
        if self.law != RF_LAW:
            out["law"] = self.law
        return out

    def group_key(self) -> str:
        """Runs with equal keys train in one batched call (same task, settings and shape)."""
        return json.dumps([self.kind, self.task.to_dict(), asdict(self.config),
                           self.spec.shape_key()], sort_keys=True, default=str)


@dataclass(frozen=True)
class Preset:
    """A named grid: what it sweeps, the model class it uses and why, and its figure axes."""

    name: str
    sweeps: str
    model_class: str
    why: str
    x: str  # the label on the figure's x axis
    curves: tuple[str, ...]  # labels that split runs into curves
    log_x: bool
    build: Callable[[str, int], list[Run]] = field(repr=False)

    def runs(self, scale: str, seed: int = 0) -> list[Run]:
        check_choice("scale", scale, SCALES)
        return self.build(scale, seed)


def _train_run(preset: str, scale: str, task: Task, spec: ModelSpec, cfg: TrainConfig,
               **labels: Any) -> Run:
    return Run(preset, scale, "train", task, spec, cfg, tuple(labels.items()))


def _ranks(d: int) -> list[int]:
    """``1, 2, 4, ..., d`` (d itself included when it is not a power of two)."""
    out, r = [], 1
    while r < d:
        out.append(r)
        r *= 2
    return out + [d]


def encoder_grid(preset: str, scale: str, task: Task, cfg: TrainConfig, layers: list[int],
                 cs: list[int], ranks: list[int], seeds: range, lr: float, ffn: int,
                 extra: dict[str, Any] | None = None, **labels: Any) -> list[Run]:
    """Encoder models on ``task`` with ``H = c d / r`` heads (paper params per layer ``c d^2``)."""
    d, out = task.d, []
    for L in layers:
        for c in cs:
            for r in ranks:
                opts = {"ffn_width": ffn, **(extra or {})}
                for s in seeds:
                    spec = ModelSpec("encoder", rank=r, heads=max(1, c * d // r), layers=L,
                                     seed=s, lr=lr, options=opts)
                    out.append(_train_run(preset, scale, task, spec, cfg, L=L, c=c, r=r,
                                          **labels))
    return out


def _tiny(scale: str, seed: int) -> list[Run]:
    task = Task("farthest", d=4, N=4)
    cfg = TrainConfig(steps=60 if scale == "quick" else 300, batch=64, eval_samples=1000,
                      eval_batch=1000)
    return encoder_grid("tiny", scale, task, cfg, [1, 2], [1, 2], [1, 2, 4],
                         range(seed, seed + 2), 0.01, 16)


def _fig2(scale: str, seed: int) -> list[Run]:
    if scale == "paper":
        task = Task("farthest", d=64, N=16)
        cfg = TrainConfig(steps=100_000, batch=256, eval_samples=20_000)
        return encoder_grid("fig2", scale, task, cfg, [1, 3, 5], [1, 8, 64], _ranks(64),
                             range(seed, seed + 5), 0.01, 2048)
    task = Task("farthest", d=8, N=8)
    cfg = TrainConfig(steps=1000, batch=128, eval_samples=4000, eval_batch=4000)
    return encoder_grid("fig2", scale, task, cfg, [1, 2], [1, 4], _ranks(8),
                         range(seed, seed + 3), 0.01, 64)


# quick vary_n: d = 16 and N <= d, one layer, 800 steps at lr 0.03 (docs/sweeps.md, "The
# error against N at quick scale" says why each size)
@dataclass(frozen=True)
class NSweepSizes:
    """The sizes of an error-against-N grid at one scale."""

    d: int
    Ns: tuple[int, ...]
    layers: int
    steps: int
    lr: float
    ffn: int
    seeds: int
    ranks: tuple[int, ...]


VARY_N_QUICK = NSweepSizes(d=16, Ns=(4, 8, 16), layers=1, steps=800, lr=0.03, ffn=64, seeds=2,
                           ranks=(1, 16))
VARY_N_PAPER = NSweepSizes(d=64, Ns=(4, 16, 64, 256), layers=2, steps=200_000, lr=0.005,
                           ffn=2048, seeds=5, ranks=(1, 4, 16, 64))


def _vary_n(scale: str, seed: int) -> list[Run]:
    q = VARY_N_PAPER if scale == "paper" else VARY_N_QUICK
    cfg = TrainConfig(steps=q.steps, batch=256 if scale == "paper" else 128,
                      eval_samples=20_000 if scale == "paper" else 4000,
                      eval_batch=2048 if scale == "paper" else 4000)
    out: list[Run] = []
    for N in q.Ns:
        out += encoder_grid("vary_n", scale, Task("farthest", d=q.d, N=N), cfg, [q.layers],
                             [q.d], list(q.ranks), range(seed, seed + q.seeds), q.lr, q.ffn, N=N)
    return out


def _vary_d(scale: str, seed: int) -> list[Run]:
    paper = scale == "paper"
    cfg = (TrainConfig(steps=100_000, batch=256, eval_samples=20_000) if paper
           else TrainConfig(steps=800, batch=128, eval_samples=4000, eval_batch=4000))
    out: list[Run] = []
    for d in ([16, 64, 128, 256] if paper else [4, 8, 16]):
        task = Task("farthest", d=d, N=16 if paper else 8)
        ranks = sorted({r for r in (1, 4, 16, d) if r <= d}) if paper else [1, d]
        for r in ranks:
            H = max(1, round(d ** 1.5 / r))
            for s in range(seed, seed + (5 if paper else 2)):
                spec = ModelSpec("encoder", rank=r, heads=H, layers=2, seed=s, lr=0.01,
                                 options={"ffn_width": 2048 if paper else 64})
                out.append(_train_run("vary_d", scale, task, spec, cfg, d=d, r=r,
                                      rank=("full" if r == d else str(r))))
    return out


def _positional(scale: str, seed: int) -> list[Run]:
    paper = scale == "paper"
    d = 64 if paper else 8
    task = Task("farthest", d=d, N=16 if paper else 8)
    cfg = (TrainConfig(steps=100_000, batch=256, eval_samples=20_000) if paper
           else TrainConfig(steps=800, batch=128, eval_samples=4000, eval_batch=4000))
    out: list[Run] = []
    for pos in ("none", "additive", "concat"):
        extra: dict[str, Any] = {"positional": pos}
        if pos == "concat":
            extra["pos_dims"] = d
        out += encoder_grid("positional", scale, task, cfg, [1, 3] if paper else [1, 2], [1],
                             [1, 4, 16, 64] if paper else [1, 8],
                             range(seed, seed + (5 if paper else 2)), 0.01,
                             2048 if paper else 64, extra, positional=pos)
    return out


def _icl(scale: str, seed: int) -> list[Run]:
    paper = scale == "paper"
    task = Task("regression", d=20 if paper else 5, N=40 if paper else 10)
    width, layers = (48, 12) if paper else (16, 2)
    cfg = (TrainConfig(steps=100_000, batch=64, eval_samples=20_000) if paper
           else TrainConfig(steps=800, batch=64, eval_samples=4000, eval_batch=4000))
    out: list[Run] = []
    for r in ([48, 24, 12, 6, 3] if paper else [16, 4, 1]):
        for s in range(seed, seed + (5 if paper else 2)):
            spec = ModelSpec("regression", rank=r, heads=width // r, layers=layers, seed=s,
                             lr=1e-4 if paper else 1e-3,
                             options={"width": width, "ffn_width": 4 * width})
            out.append(_train_run("icl_regression", scale, task, spec, cfg, r=r))
    return out


def random_features_runs(preset: str, scale: str, seed: int, law: str = RF_LAW) -> list[Run]:
    """The random-features grid (exact ``D_2`` error of ``H`` random rank-1 hardmax heads with
    optimal values, against ``H``, per ``d``) with heads drawn from ``law``; a law other than the
    default is also a label, so grids of two laws never mix."""
    paper = scale == "paper"
    out: list[Run] = []
    Hs = [4 ** k for k in range(8)] if paper else [1, 4, 16, 64, 256]
    extra = () if law == RF_LAW else (("law", law),)
    for d in ([8, 16, 32, 64] if paper else [8, 16]):
        task = Task("nearest", d=d, N=2)
        for H in Hs:
            for s in range(seed, seed + (5 if paper else 2)):
                spec = ModelSpec("generalized", rank=1, heads=H, seed=s,
                                 options={"normalizer": "hardmax"})
                out.append(Run(preset, scale, "random_features", task, spec,
                               TrainConfig(steps=1, eval_samples=0),
                               (("d", d), ("H", H), *extra), law))
    return out


def random_features_preset(name: str = "random_features", law: str = RF_LAW) -> Preset:
    """The random-features preset with heads drawn from ``law`` (the built-in one: the default
    law, under its own name)."""
    law = check_choice("law", law, HEAD_LAWS)
    of = "" if law == RF_LAW else f" (heads drawn {law})"
    return Preset(name, "exact error of random rank-1 hardmax heads against H, with Theorem 2's "
                  f"certified lower bound{of}", "generalized",
                  "generalized attention (full value maps): the class Theorem 2's lower bound "
                  "covers, so the certified curve applies", "H", ("d",), True,
                  lambda scale, seed: random_features_runs(name, scale, seed, law))


_STANDARD = ("standard attention (rank-r value maps), as in the paper's experiments (docs/"
             "paper.md §7)")
PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("fig2", "layers x parameters per layer x rank, farthest-point sequence task",
           "standard", _STANDARD + "; quick: d = 8, N = 8, L in {1, 2}, c in {1, 4}, 3 seeds",
           "r", ("L", "c"), True, _fig2),
    Preset("vary_n", "error against the sequence length N at H = d^2 / r",
           "standard", _STANDARD + "; ranks 1, 4, 16, 64 at paper scale are inferred; quick: "
           "d = 16, N in {4, 8, 16}, one layer (L = 2 at paper scale), ranks 1 and 16, 800 steps "
           "at lr 0.03, 2 seeds",
           "N", ("r",), True, _vary_n),
    Preset("vary_d", "error against d at H = round(d^1.5 / r) (L = 2, N = 16)",
           "standard", _STANDARD + "; H rounded to an integer; ranks are inferred",
           "d", ("rank",), True, _vary_d),
    Preset("positional", "no positional encoding, learned additive or concatenated",
           "standard", _STANDARD + "; H = d / r and L in {1, 3} are inferred",
           "r", ("positional", "L"), True, _positional),
    Preset("icl_regression", "in-context linear regression, H = width / r",
           "standard", _STANDARD + "; steps, batch 64 and lr 1e-4 follow Garg et al. "
           "(inferred)", "r", (), True, _icl),
    random_features_preset(),
    Preset("tiny", "smoke preset (seconds): the fig2 design at d = 4, N = 4",
           "standard", _STANDARD, "r", ("L", "c"), True, _tiny),
)}


def get_preset(name: str) -> Preset:
    """The preset ``name`` (bad names raise ``ValueError`` listing the known ones)."""
    check_choice("preset", name, tuple(PRESETS))
    return PRESETS[name]


def plan(name: str, scale: str, seed: int = 0) -> list[Run]:
    """Every run of preset ``name`` at ``scale`` with seeds starting at ``seed``."""
    return get_preset(name).runs(scale, seed)
