"""Small experiments (PAPER.md §4) run through the verifiers: the batched trainer and the
falsifier, compared with Theorem 2's certified lower bound (``workbench.core.lower_bound``).

Held-out errors come from the trainer's own fresh held-out stream (never training data); every
comparison is decided beyond the confidence intervals involved.
"""

from __future__ import annotations

import json
from dataclasses import asdict

from verifiers.falsify import Attempt, Domain, falsify, replay
from verifiers.tasks import Task
from verifiers.train import ModelSpec, TrainConfig, train
from workbench.core.lower_bound import lower_bound
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.paper.fact1 import bonferroni_level, one_thread
from workbench.proofs.registry import claim

CERTIFIED = "thm2.certified_bound"
ALPHA = 0.001  # falsifier: family error rate (Bonferroni over its trials)


@claim(
    "experiment.rank_separation_small",
    "Trained on D_2 (d = 16): one full-rank head beats 16 rank-1 heads, which stay above the "
    "certified lower bound",
    "experiment",
    depends_on=(CERTIFIED,),
    statement="err(full rank, H = 1) < err(rank 1, H = 16) and err(rank 1, H = 16) >= "
    "lower_bound(16, 1, 16)",
    source="PAPER.md §2 Theorem 2, §4 (Figure 2, small scale)",
)
@one_thread
def rank_separation_small(ctx: CheckContext) -> list[Evidence]:
    quick = ctx.scale == "quick"
    d, N, H = 16, 2, 16
    steps, n, seeds = (300, 20_000, 1) if quick else (3000, 100_000, 3)
    level = bonferroni_level(2 * seeds)
    task = Task("nearest", d=d, N=N, points="orthonormal")
    specs: list[ModelSpec] = []
    for s in range(seeds):
        specs += [
            ModelSpec("attention", rank=d, heads=1, seed=ctx.seed + s, lr=0.05),
            ModelSpec("attention", rank=1, heads=H, seed=ctx.seed + s, lr=0.05),
        ]
    cfg = TrainConfig(
        steps=steps,
        batch=256,
        eval_samples=n,
        eval_batch=4096,
        level=level,
        eval_seed=ctx.seed,
        device=ctx.device,
    )
    run = train(specs, task, cfg)
    lb = lower_bound(d, 1, H).enclosure[0]
    out: list[Evidence] = []
    for s in range(seeds):
        full, low = run.results[2 * s], run.results[2 * s + 1]
        assert full.heldout is not None and low.heldout is not None
        f, r = full.heldout, low.heldout
        p = {
            "d": d,
            "N": N,
            "steps": steps,
            "seed": ctx.seed + s,
            "n": n,
            "full_rank_error": f.mean,
            "rank1_error": r.mean,
        }
        out.append(
            Evidence(
                f.mean - r.mean,
                0.0,
                "<=",
                "trained",
                {**p, "heads_rank1": H},
                ci=(f.lo - r.hi, f.hi - r.lo),
                ci_level=level,
                note="full-rank minus rank-1 held-out error; CI = beyond both CIs",
            )
        )
        out.append(
            Evidence(
                r.mean,
                lb,
                ">=",
                "trained",
                {**p, "r": 1, "H": H},
                ci=(r.lo, r.hi),
                ci_level=level,
                note="trained rank-1 layer vs certified lower bound",
            )
        )
        out.append(
            Evidence(
                f.mean,
                lb,
                "<=",
                "trained",
                {**p, "r": d, "H": 1},
                ci=(f.lo, f.hi),
                ci_level=level,
                note="one trained full-rank head goes below what any rank-1 layer of "
                f"{H} heads can reach",
            )
        )
    return out


def planted_bound(d: int, r: int, H: int, N: int) -> float:
    """A wrong claim: "rank-1 layers of at most 8 heads cannot go below error 0.9 on D_2"."""
    return 0.9


def certified(d: int, r: int, H: int, N: int) -> float:
    """Theorem 2's certified bound (lower end of its interval enclosure)."""
    return lower_bound(d, r, H).enclosure[0]


@claim(
    "experiment.falsifier_finds_planted",
    "The falsifier finds a planted wrong lower bound (replayable) and none against the "
    "certified bound",
    "experiment",
    depends_on=(CERTIFIED,),
    statement="falsify(0.9) returns a counterexample whose CI lies below 0.9 and which replays "
    "bit for bit; falsify(lower_bound) returns none within its budget",
    source="DESIGN.md (verdicts, falsify.py); PAPER.md §3 (certified bound)",
)
@one_thread
def falsifier_finds_planted(ctx: CheckContext, true_bound=certified) -> list[Evidence]:
    """``true_bound`` is Theorem 2's bound (the tests pass a wrong one to make this fail)."""
    quick = ctx.scale == "quick"
    budget, steps, n = (3, 100, 2000) if quick else (8, 300, 20_000)
    out: list[Evidence] = []
    rep = falsify(
        planted_bound,
        Domain(d=(6, 10), r=(1, 1), H=(4, 8), N=(2, 2)),
        budget=budget,
        steps=steps,
        eval_samples=n,
        alpha=ALPHA,
        seed=ctx.seed,
    )
    best = rep.counterexample or min(rep.trials, key=lambda t: t.estimate.hi)
    a, e = best.attempt, best.estimate
    p = {**asdict(a), "trials": len(rep.trials), "found": rep.counterexample is not None}
    out.append(
        Evidence(
            e.mean,
            best.bound,
            "<=",
            "trained",
            p,
            ci=(e.lo, e.hi),
            ci_level=e.level,
            note="best trial against the planted bound 0.9",
        )
    )
    again = replay(Attempt(**json.loads(json.dumps(asdict(a)))))  # from its JSON record
    diff = max(abs(again.mean - e.mean), abs(again.lo - e.lo), abs(again.hi - e.hi))
    out.append(Evidence(diff, 0.0, "<=", "identity", p, note="replay reproduces the estimate"))
    dom = Domain(d=(5, 12), r=(1, 1), H=(1, 16), N=(2, 2))
    attacks = ("train", "random_features")
    rep = falsify(
        true_bound,
        dom,
        budget=2 if quick else 6,
        attacks=attacks,
        steps=steps,
        eval_samples=n,
        alpha=ALPHA,
        seed=ctx.seed + 1,
        stop_on_first=False,
    )
    for t in rep.trials:
        a, e = t.attempt, t.estimate
        method = "solved" if a.attack == "random_features" else "trained"
        out.append(
            Evidence(
                e.mean,
                t.bound,
                ">=",
                method,
                asdict(a),
                ci=(e.lo, e.hi),
                ci_level=e.level,
                note="no counterexample to the certified bound",
            )
        )
    return out
