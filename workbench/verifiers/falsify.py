"""Active search for counterexamples to a claimed lower bound on the error (engine of the
``violated`` verdict; Theorem 2's certified bound is the main customer).

hypothesis draws ``(d, r, H, N)`` from a ``Domain`` within a budget of trials. At each point the
attacks (``generalized``: gradient search over Eq. 2 heads with full value maps and MLP scores,
the class the bounds are proved against, first by default; ``train``: gradient search over
standard heads; ``random_features``: random rank-1 hardmax heads with optimal values, N = 2 and
r = 1 only) try to get below the bound. The bound follows the contract ``f(d, rank, heads, N)``
(a registered ``workbench.plugins.Bound`` qualifies). A trial counts as a counterexample only when
its held-out CI lies entirely below the bound; each CI is at level ``1 - alpha / budget``
(Bonferroni over the trials), so a true bound is reported violated with probability <= alpha.
Every trial is an ``Attempt``: ``replay(attempt)`` reproduces its estimate exactly.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.core.intervals import Estimate
from workbench.core.validation import check_choice, check_float, check_int, check_seed
from workbench.verifiers.attacks import ATTACKS, DEFAULT_ATTACKS
from workbench.verifiers.estimate import estimate_error
from workbench.verifiers.tasks import Task
from workbench.verifiers.train import ModelSpec, TrainConfig, derive_seed, train

if TYPE_CHECKING:
    from hypothesis import strategies as st

BoundLike = Callable[[int, int, int, int], Any]


@dataclass(frozen=True)
class Domain:
    """Inclusive ranges for ``d, r, H, N``; ``r`` is capped at ``d``; orthonormal keys if N <= d."""

    d: tuple[int, int] = (4, 16)
    r: tuple[int, int] = (1, 4)
    H: tuple[int, int] = (1, 16)
    N: tuple[int, int] = (2, 2)

    def __post_init__(self) -> None:
        for name, lo_min in (("d", 2), ("r", 1), ("H", 1), ("N", 1)):
            lo, hi = getattr(self, name)
            check_int(f"{name}[0]", lo, lo=lo_min)
            check_int(f"{name}[1]", hi, lo=lo)
        if self.r[0] > self.d[1]:
            raise ValueError(f"r[0] must be an integer <= d[1] = {self.d[1]} (got {self.r[0]})")

    def strategy(self) -> st.SearchStrategy[tuple[int, int, int, int]]:
        from hypothesis import strategies as st  # imported when a search runs (0.2 s)

        @st.composite
        def points(draw: Any) -> tuple[int, int, int, int]:
            d = draw(st.integers(max(self.d[0], self.r[0]), self.d[1]))
            r = draw(st.integers(self.r[0], min(self.r[1], d)))
            return d, r, draw(st.integers(*self.H)), draw(st.integers(*self.N))

        return points()


@dataclass(frozen=True)
class Attempt:
    """Everything needed to replay one trial bit for bit."""

    d: int
    r: int
    H: int
    N: int
    attack: str
    seed: int
    steps: int = 200
    lr: float = 0.03
    batch: int = 256
    eval_samples: int = 20_000
    level: float = 0.95
    eval_seed: int = 0

    @property
    def task(self) -> Task:
        points = "orthonormal" if self.N <= self.d else "iid"
        return Task("nearest", d=self.d, N=self.N, points=points)


@dataclass
class Trial:
    attempt: Attempt
    estimate: Estimate
    bound: float

    @property
    def violated(self) -> bool:
        return self.estimate.below(self.bound)

    def to_dict(self) -> dict[str, Any]:
        return {"attempt": asdict(self.attempt), "estimate": self.estimate.to_dict(),
                "bound": self.bound, "violated": self.violated}


@dataclass
class FalsifyReport:
    """All trials; ``counterexample`` is the first violating trial (None: none found)."""

    trials: list[Trial] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def counterexample(self) -> Trial | None:
        return next((t for t in self.trials if t.violated), None)

    def to_dict(self) -> dict[str, Any]:
        cx = self.counterexample
        return {"violated": cx is not None, "counterexample": None if cx is None else cx.to_dict(),
                "trials": [t.to_dict() for t in self.trials], "seconds": self.seconds}


def bound_value(bound: BoundLike, d: int, r: int, H: int, N: int) -> float:
    """The claimed bound as a float: the lower end of a ``Bound``'s interval (what it certifies),
    else of a returned ``enclosure``, else its ``value``, else the number returned."""
    if hasattr(bound, "interval"):
        return float(bound.interval(d, r, H, N)[0])
    b = bound(d, r, H, N)
    if hasattr(b, "enclosure"):
        return float(b.enclosure[0])
    return float(b.value) if hasattr(b, "value") else float(b)


def check_bound(bound: Any) -> BoundLike:
    """``bound`` must follow the contract ``f(d, rank, heads, N)`` (docs/extending.md). The
    library's bound functions take a value class fourth: use their registered ``Bound``
    (``workbench.plugins.get_bound("certified")``) instead."""
    if not callable(bound):
        raise TypeError(f"bound must be callable as f(d, rank, heads, N) (got {bound!r})")
    if not hasattr(bound, "interval"):
        try:
            params = list(inspect.signature(bound).parameters)
        except (TypeError, ValueError):
            params = []
        if len(params) >= 4 and params[3] == "value_class":
            name = getattr(bound, "__name__", "bound")
            raise TypeError(f"bound must be f(d, rank, heads, N), but {name} takes value_class "
                            "fourth: pass workbench.plugins.get_bound(NAME) (e.g. 'certified')")
    return bound


def replay(a: Attempt, task_for: Callable[[Attempt], Any] | None = None) -> Estimate:
    """Run the attack of ``a`` and return its held-out estimate (deterministic on the CPU).
    ``task_for(a)``, when given, is the task trained and scored on (another target's
    ``TargetTask``); default ``a.task``, the nearest neighbour."""
    check_choice("attack", a.attack, ATTACKS)
    task = a.task if task_for is None else task_for(a)
    if a.attack == "random_features":
        if a.N != 2 or a.r != 1:
            raise ValueError(f"N and r must be 2 and 1 for random_features (got {a.N}, {a.r})")
        from workbench.constructions.random_features import random_features

        model, _ = random_features(a.d, a.H, generator=derive_seed(a.seed, "heads"))
        assert model is not None
        return estimate_error(model, task, samples=a.eval_samples, level=a.level,
                              generator=derive_seed(a.eval_seed, "heldout"))[0]
    # Eq. 2 scores: an MLP on (projected key, query); from N = 3 on, with a pooled summary of
    # all N projected keys too (``set``), as the bound beyond two keys allows
    score = "mlp" if a.N <= 2 else "set"
    arch, opts = ("attention", {}) if a.attack == "train" else ("generalized", {"score": score})
    spec = ModelSpec(arch, a.r, a.H, seed=a.seed, lr=a.lr, options=opts)
    cfg = TrainConfig(steps=a.steps, batch=a.batch, eval_samples=a.eval_samples,
                      level=a.level, eval_seed=a.eval_seed)
    est = train([spec], task, cfg).results[0].heldout
    assert est is not None
    return est


class _Found(BaseException):
    """Stops hypothesis at the first counterexample (a BaseException, so it is not shrunk)."""


def falsify(bound: BoundLike, domain: Domain | None = None, *, budget: int = 10,
            attacks: tuple[str, ...] = DEFAULT_ATTACKS, steps: int = 200, lr: float = 0.03,
            eval_samples: int = 20_000, alpha: float = 0.05, seed: int = 0,
            stop_on_first: bool = True,
            on_trial: Callable[[Trial], None] | None = None,
            task_for: Callable[[Attempt], Any] | None = None) -> FalsifyReport:
    """Search ``domain`` for a model whose held-out error CI lies below ``bound(d, r, H, N)``.

    ``budget`` trials are drawn by hypothesis (seeded by ``seed``); each runs every attack in
    ``attacks`` (``random_features`` only where N = 2 and r = 1). ``on_trial`` sees each trial
    as it finishes (progress for a front end such as ``workbench falsify``); ``task_for`` as in
    :func:`replay` (another target).
    """
    bound = check_bound(bound)
    domain = domain or Domain()
    budget = check_int("budget", budget, lo=1)
    for a in attacks:
        check_choice("attack", a, ATTACKS)
    alpha = check_float("alpha", alpha, 0.0, 1.0, lo_open=True, hi_open=True)
    seed = check_seed(seed)
    level = 1 - alpha / budget
    report, t0 = FalsifyReport(), time.perf_counter()
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    @hypothesis_seed(seed)
    @settings(max_examples=budget, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck), derandomize=False)
    @given(domain.strategy())
    def search(point: tuple[int, int, int, int]) -> None:
        d, r, H, N = point
        b = bound_value(bound, d, r, H, N)
        for attack in attacks:
            if attack == "random_features" and (N != 2 or r != 1):
                continue
            trial_seed = derive_seed(seed, f"trial{len(report.trials)}") % 2**31
            att = Attempt(d, r, H, N, attack, trial_seed, steps, lr, eval_samples=eval_samples,
                          level=level, eval_seed=trial_seed)
            report.trials.append(Trial(att, replay(att, task_for), b))
            if on_trial is not None:
                on_trial(report.trials[-1])
            if stop_on_first and report.trials[-1].violated:
                raise _Found

    try:
        search()
    except _Found:
        pass
    report.seconds = time.perf_counter() - t0
    return report
