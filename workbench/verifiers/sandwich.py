"""The sandwich for N = 2 on D_2: the certified lower bound (Eq. 2: the larger of the ``D'_l``
count and the fiber bound) against the best error of an explicit, saved, replayable model
(docs/derivations/lower_bound.md, "The sandwich"; docs/derivations/fiber_bound.md).

Witnesses (each a model of Eq. 2 with H heads of key-rank <= r; heads with M_h = 0 are allowed,
so a witness for fewer heads is one for more):

- ``one_head_bayes``: one Bayes-optimal head, M = I; error exact (closed form), replayed by
  Monte Carlo;
- ``bayes_heads``, ``hardmax_rank1``: ``workbench.constructions.optimized``;
- ``random_features``: random rank-1 hardmax heads with optimal values, drawn from the head law
  of least exact error (``best_law``; ``workbench.constructions.random_features``, a valid
  witness for every key-rank r >= 1),
  measured by the public runner ``workbench.verifiers.construct.run_construction`` on a fresh
  sample (CLT interval at 99.9%); left out where its Eq. 2 layer (H d^2 values) would be too
  large to measure (``RF_MAX_SIZE``);
- any construction passed as a :class:`ConstructionWitness` (``workbench bounds sandwich
  --witness NAME``), measured the same way: its witness error is the measured estimate with its
  interval, not its claim;
- ``trained_generalized`` (budget ``full``, or passed in as ``trained``): generalized attention
  (learned MLP or dot scores, full d x d value maps) trained with several seeds in one call;
  the best by held-out error, re-measured on a fresh sample (CLT interval at 99.9%;
  ``workbench.verifiers.trained_witness``).

- ``record``: the best known witness of the shipped record (or a store's additions) at this
  point, by inheritance (``workbench.verifiers.witness_record.lookup``), with its recorded error
  and interval; ``best_source`` says whether it or a witness computed now won, and
  ``record.replay`` the command that replays it (``workbench witness verify``).

The lower side is the certified bound unless another one is given (``bound``: any
``f(d, rank, heads, N) -> float``, such as a ``workbench.plugins.Bound``; this layer never
resolves names): ``violated`` when a witness's whole interval lies below it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from workbench.constructions import ClaimedError
from workbench.constructions.optimized import (
    STATE_PREFIX,
    Witness,
    bayes_heads,
    bernstein_ci,
    hardmax_rank1,
    one_head_exact_error,
)
from workbench.constructions.optimized import replay as replay_construction
from workbench.constructions.random_features import HEAD_LAWS, random_features
from workbench.constructions.rank_one import exact_error, rank_one_model
from workbench.core.bounds.certified import certified_lower_bound
from workbench.core.bounds.fiber_bound.fiber import one_head_error
from workbench.core.bounds.value import BoundValue, Part
from workbench.core.safe_files import write_file
from workbench.core.validation import check_choice, check_dim, check_heads, check_rank
from workbench.verifiers.construct import normalise, run_construction
from workbench.verifiers.trained_witness import (
    METHOD as TRAINED,
)
from workbench.verifiers.trained_witness import (
    TrainBudget,
    TrainedWitness,
    replay_trained,
    train_witnesses,
)
from workbench.verifiers.witness_record import RECORD_DIR, Entry, lookup

BUDGETS = ("quick", "full")
LEVEL = 0.999
RF_MAX_SIZE = {"quick": 2**20, "full": 2**22}  # H d^2: the random-features layer's value entries


@dataclass(frozen=True)
class ConstructionWitness:
    """A construction as a witness at ``(d, r, H)``: ``build(seed)`` returns its result,
    ``(model, claimed)`` or ``(model, claimed, target)``, for ``N = 2`` on ``D_2``, with at most
    ``H`` heads of key-rank at most ``r`` (a model with ``heads`` and ``rank`` attributes is
    checked)."""

    name: str
    build: Callable[[int], Any]


@dataclass
class SandwichPoint:
    """Certified bound, best witness and their ratio at one (d, r, H)."""

    d: int
    r: int
    heads: int
    certified: float  # the larger certified Eq. 2 bound: fiber or harmonic count (D'_l)
    certified_query_values: float
    best_error: float
    best_ci: tuple[float, float]
    method: str
    witness_file: str
    ratio: float
    violated: bool
    seconds: float
    candidates: list[dict[str, Any]] = field(default_factory=list)
    certified_harmonic: float = 0.0  # the D'_l count alone
    certified_fiber: float = 0.0  # the fiber bound alone (0 when H r >= d)
    certified_source: str = ""
    bound: str = "certified"  # the lower side: the certified bound, or the one given
    bound_value: float = 0.0
    bound_status: str = "proved"
    skipped: list[str] = field(default_factory=list)  # default witnesses left out, and why
    training: dict[str, Any] | None = None  # the trained candidate's run (trained_witness.py)
    random_features_law: str = ""  # the head law of the random-features candidate (best_law)
    best_source: str = "computed"  # "record": the record's witness won
    record: dict[str, Any] | None = None  # the record's witness here (None: none known)
    # the labels of ``certified`` and of ``bound_value``, read from their BoundValue
    # (workbench/core/bounds/value.py): never set on their own
    rigorous: bool = False
    harmonic_rigorous: bool = False
    fiber_rigorous: bool = False
    certified_rigorous: float = 0.0
    bound_rigorous: bool = False
    bound_certified: float = 0.0
    bound_source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def one_head_witness(d: int, r: int, n_eval: int = 50_000, seed: int = 0) -> Witness:
    """The exact one-head witness: Bayes head on the first r coordinates, M = I. Its error is
    ``1/2 (1 - E_c lambda_0)`` (a rigorous enclosure), intersected with the series enclosure."""
    s_lo, s_hi = one_head_exact_error(d, r)
    err, (q_lo, q_hi) = one_head_error(d, r)
    lo, hi = max(s_lo, q_lo), min(s_hi, q_hi)
    if lo > hi:  # the two computations of one number disagree: report, never hide
        raise RuntimeError(f"one-head error: series [{s_lo}, {s_hi}] vs fiber [{q_lo}, {q_hi}]")
    params = {"B": np.eye(d)[:r][None], "a": np.ones(1)}
    return Witness("one_head_bayes", d, r, 1, err, (lo, hi), params, n_eval, seed)


def _trained_file(path: Path) -> Path:
    return path.with_suffix(".pt")


def _measure(name: str, build: Callable[[int], Any], d: int, n_eval: int,
             seed: int) -> dict[str, Any]:
    """One seed of ``build`` measured by the public runner on ``n_eval`` fresh samples of
    ``D_2`` (the stream ``seed + 10**6``), CLT interval at ``LEVEL``: its payload."""
    return run_construction(name, build, d=d, N=2, seeds=1, seed=seed, eval_samples=n_eval,
                            level=LEVEL)


def _check_size(model: Any, r: int, H: int, name: str) -> None:
    """A model that says how many heads of which rank it has must fit ``(r, H)``, in one layer
    (the class the bounds cover)."""
    heads, rank = getattr(model, "heads", None), getattr(model, "rank", None)
    if isinstance(heads, list | tuple):
        raise ValueError(f"witness must be one attention layer of at most H = {H} heads "
                         f"({name} has layers of {list(heads)} heads)")
    if isinstance(heads, int) and isinstance(rank, int) and (heads > H or rank > r):
        raise ValueError(f"witness must have at most H = {H} heads of key-rank at most r = {r} "
                         f"({name} has {heads} heads of rank {rank})")


def construction_witness(
    cw: ConstructionWitness, d: int, r: int, H: int, *, n_eval: int = 20_000, seed: int = 0
) -> tuple[Witness, dict[str, Any]]:
    """A construction measured as a witness: its error is the runner's Monte Carlo estimate
    (``LEVEL``), not its claim; the second value holds the model and the runner's payload."""
    held: dict[str, Any] = {}

    def build(s: int) -> Any:
        built = normalise(cw.build(s), cw.name)
        _check_size(built.model, r, H, cw.name)
        held["model"] = built.model
        return built

    p = _measure(cw.name, build, d, n_eval, seed)
    m = p["measured_error"]
    return Witness(cw.name, d, r, H, m["mean"], (m["lo"], m["hi"]), {}, n_eval, seed), \
        {"model": held["model"], "payload": p}


def best_law(d: int, H: int, seed: int = 0, draws: int = 4) -> tuple[str, int, float]:
    """The head law of ``HEAD_LAWS`` and the seed among ``seed .. seed + draws - 1`` whose random
    features have the least exact kernel error on ``D_2`` (the claim, computed without building
    the layer): ``(law, seed, error)``. The choice uses exact errors only, so the fresh Monte
    Carlo measurement that follows is unbiased."""
    errs = {(law, s): random_features(d, H, law, generator=s, build_model=False)[1].value
            for law in HEAD_LAWS for s in range(seed, seed + draws)}
    law, s = min(errs, key=lambda k: errs[k])
    return law, s, errs[(law, s)]


def random_features_witness(d: int, H: int, *, n_eval: int = 20_000, seed: int = 0,
                            law: str = "cosine_uniform", draw: int | None = None) -> Witness:
    """Random features (``law``, heads drawn with seed ``draw``, default ``seed``) measured as a
    witness on the stream of ``seed``; saved as its heads ``Q``, ``K`` and values ``a`` (rank 1,
    so a witness for every key-rank)."""
    model, claim = random_features(d, H, law, generator=seed if draw is None else draw)
    w, _ = construction_witness(ConstructionWitness("random_features", lambda s: (model, claim)),
                                d, 1, H, n_eval=n_eval, seed=seed)
    assert model is not None  # build_model=True (the default) builds it
    params = {"Q": model.score.Q[0, :, 0].detach().numpy(),  # type: ignore[index]
              "K": model.W[0, :, 0].detach().numpy(), "a": model.M[0, :, 0, 0].detach().numpy()}
    w.params = params
    return w


def _replay_random_features(w: Witness) -> tuple[float, tuple[float, float]]:
    Q, K, a = (torch.from_numpy(w.params[k]) for k in ("Q", "K", "a"))
    model = rank_one_model(Q, K, a)
    claim = ClaimedError.exact(exact_error(Q, K, a), "==", "exact_kernel", "random features")
    m = _measure(w.method, lambda s: (model, claim), w.d, w.n_eval, w.seed)["measured_error"]
    return m["mean"], (m["lo"], m["hi"])


def save_witness(w: Witness, path: Path, state: dict[str, torch.Tensor] | None = None) -> Path:
    """Write the witness (``.npz``; trained weights alongside as ``.pt``), each file whole or
    not at all (``safe_files.write_file``); errors name ``--witness-dir``."""
    out = w.save(path, "--witness-dir")
    if state is not None:
        write_file(_trained_file(out), lambda fh: torch.save(state, fh), "--witness-dir")
    return out


def replay_file(path: str | Path) -> tuple[Witness, float, tuple[float, float]]:
    """Load a saved witness and recompute its error from the weights alone (a trained one's
    weights inside it as ``state.*`` arrays, or beside it as ``.pt``)."""
    path = Path(path)
    w = Witness.load(path)
    if w.method == TRAINED:  # the weights alone rebuild the model, its score read from them
        state = ({k[len(STATE_PREFIX):]: torch.from_numpy(v) for k, v in w.params.items()}
                 if w.params else torch.load(_trained_file(path), weights_only=True))
        err, ci = replay_trained(w.d, w.r, w.heads, state, w.n_eval, w.seed, LEVEL)
        return w, err, ci
    if w.method == "one_head_bayes":
        err, ci = one_head_replay(w)
        return w, err, ci
    if w.method == "random_features":  # the same evaluation stream: the same estimate
        err, ci = _replay_random_features(w)
        return w, err, ci
    err, ci = replay_construction(w)
    return w, err, ci


def _one_head_losses(w: Witness) -> np.ndarray:
    from workbench.constructions.optimized import _losses  # same evaluation as bayes_heads

    return _losses({"B": w.params["B"], "a": w.params["a"]}, w.d, w.n_eval, w.seed)


def one_head_replay(w: Witness) -> tuple[float, tuple[float, float]]:
    """The one-head witness's error on its stream ``w.seed`` (``w.n_eval`` samples, loss in
    ``[0, 2]``: empirical-Bernstein interval)."""
    loss = _one_head_losses(w)
    return float(loss.mean()), bernstein_ci(loss, 2.0)


def sandwich(
    d: int,
    r: int,
    H: int,
    *,
    budget: str = "quick",
    witness_dir: str | Path | None = None,
    seed: int = 0,
    bound: Callable[[int, int, int, int], float] | None = None,
    bound_name: str | None = None,
    witnesses: Sequence[ConstructionWitness] = (),
    trained: TrainedWitness | None = None,
    train_budget: TrainBudget | None = None,
    record: Sequence[Entry] = (),
) -> SandwichPoint:
    """The lower bound vs the best witness at (d, r, H); ``violated`` when a witness's whole
    interval lies below it. ``bound`` (default: the certified bound) is any ``f(d, rank, heads,
    N)``, reported as ``bound_name`` (default: its ``name``) with its ``status`` where it has
    one. ``witnesses`` are measured beside the built-in ones. ``trained``: a witness trained
    beforehand for this point (the grid trains many points in one call); else budget ``full``
    trains one with ``train_budget`` (default :class:`TrainBudget`). ``record``: the known
    witnesses (``workbench.verifiers.witness_record``), the best of them here a candidate."""
    d, H = check_dim(d), check_heads(H)
    r = check_rank(r, d)
    budget = check_choice("budget", budget, BUDGETS)
    t0 = time.perf_counter()
    lb = certified_lower_bound(d, r, H)
    lbq = certified_lower_bound(d, r, H, value_class="query-dependent-values")
    cands: list[tuple[Witness, dict[str, torch.Tensor] | None]] = []
    measured: set[str] = set()  # the witnesses measured by the public runner
    skipped: list[str] = []
    if r < d:
        cands.append((one_head_witness(d, r, seed=seed), None))
        if H > 1:
            big = H > 16  # cost is ~ H n Beta-function evaluations
            n_fit = (5_000 if big else 20_000) if budget == "quick" else 100_000
            n_eval = (20_000 if big else 50_000) if budget == "quick" else 200_000
            cands.append((bayes_heads(d, r, H, n_fit=n_fit, n_eval=n_eval, seed=seed), None))
    if H <= 64 or budget == "full":
        cands.append(
            (hardmax_rank1(d, H, steps=200 if budget == "quick" else 600, seed=seed), None)
        )
    n_mc = 20_000 if budget == "quick" else 200_000
    rf_law = ""
    if H * d * d <= RF_MAX_SIZE[budget]:
        rf_law, draw, _ = best_law(d, H, seed)
        cands.append((random_features_witness(d, H, n_eval=n_mc, seed=seed, law=rf_law,
                                              draw=draw), None))
        rf_law = f"{rf_law} (draw {draw})"
        measured.add("random_features")
    else:
        skipped.append(f"random_features: its layer holds H d^2 = {H * d * d} values, over "
                       f"{RF_MAX_SIZE[budget]} at budget {budget}")
    for cw in witnesses:
        if cw.name in ("random-features", "random_features"):
            continue  # a default witness already
        cands.append((construction_witness(cw, d, r, H, n_eval=n_mc, seed=seed)[0], None))
        measured.add(cw.name)
    training: dict[str, Any] | None = None
    if trained is None and budget == "full":
        trained = train_witnesses(d, [(r, H)], train_budget or TrainBudget(), seed=seed)[(r, H)]
    if trained is not None:
        tw = trained.witness
        if (tw.d, tw.r, tw.heads) != (d, r, H):
            raise ValueError(f"trained witness is for {(tw.d, tw.r, tw.heads)}, not "
                             f"(d, r, H) = {(d, r, H)}")
        cands.append((trained.witness, trained.state))
        training = trained.record
    known = lookup(record, d, r, H)
    rec: dict[str, Any] | None = None
    if known is not None:
        rec = {**known.to_dict(), "inherited_from": None if known.point == (d, r, H) else
               list(known.point[1:]),
               "replay": f"workbench witness verify {','.join(map(str, known.point))}"}
        cands.append((Witness(f"record:{known.method}", d, r, H, known.error, known.ci, {},
                              known.n_eval, known.stream), None))
    best, state = min(cands, key=lambda c: c[0].ci[1])
    from_record = best.method.startswith("record:")
    file = str(RECORD_DIR / known.file) if from_record and known and known.source == "record" \
        else ""
    # a construction named as a witness is measured again by its construct command, not saved
    saved = (best.method not in measured or best.method == "random_features") and not from_record
    if witness_dir is not None and saved:
        path = Path(witness_dir) / f"d{d}_r{r}_H{H}_{best.method}.npz"
        file = str(save_witness(best, path, state))
    cert, bv = lb.value, lb.bound_value
    if bound is None:
        name, low_bv = "certified", bv
    else:  # a registered Bound evaluates to its labels; a plain function is a conjecture
        name = str(bound_name or getattr(bound, "name", "") or getattr(bound, "__name__", "?"))
        evaluate = getattr(bound, "evaluate", None)
        low_bv = evaluate(d, r, H, 2) if evaluate is not None else BoundValue((
            Part(name, (float(bound(d, r, H, 2)),) * 2, False, "a function", proved=False),))
    low, status = low_bv.value, low_bv.status
    return SandwichPoint(
        d,
        r,
        H,
        cert,
        lbq.value,
        best.error,
        best.ci,
        best.method,
        file,
        best.error / low if low > 0 else math.inf,
        any(w.ci[1] < low for w, _ in cands),
        time.perf_counter() - t0,
        [_candidate(w, w.method in measured, training, rec) for w, _ in cands],
        lb.harmonic.enclosure[0],
        lb.fiber.enclosure[0],
        lb.source,
        name,
        low,
        status,
        skipped,
        training,
        rf_law,
        "record" if from_record else "computed",
        rec,
        rigorous=bv.rigorous,
        harmonic_rigorous=bv.part("harmonic count").rigorous,
        fiber_rigorous=bv.part("fiber").rigorous,
        certified_rigorous=bv.certified,
        bound_rigorous=low_bv.rigorous,
        bound_certified=low_bv.certified,
        bound_source=low_bv.source,
    )


def _candidate(w: Witness, by_runner: bool, training: dict[str, Any] | None,
               rec: dict[str, Any] | None) -> dict[str, Any]:
    c: dict[str, Any] = {"method": w.method, "error": w.error, "ci": list(w.ci)}
    if rec is not None and w.method == f"record:{rec['method']}":  # as recorded, not re-measured
        c.update(interval=rec["interval"], level=LEVEL, samples=rec["n_eval"],
                 replay=rec["replay"])
    if by_runner:  # measured by the public runner: a CLT interval on fresh samples
        c.update(interval="normal", level=LEVEL, samples=w.n_eval)
    if w.method == TRAINED:  # measured again on fresh samples in float64, CLT at LEVEL
        c.update(interval="normal", level=LEVEL, samples=w.n_eval, training=training)
    return c
