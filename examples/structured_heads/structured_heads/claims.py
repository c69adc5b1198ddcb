"""Claims about the structured heads and the optimistic conjecture, registered under the
``workbench.claims`` entry-point group, so ``workbench check --only structured`` runs them.

Two of them come out ``violated``, to show what that looks like: the conjectured bound is too
strong, and the design, which beats random features at few heads, stops improving once there are
many (tied heads cannot capture what independent ones do).
"""

from __future__ import annotations

from structured_heads.conjecture import optimistic
from structured_heads.construction import structured_heads
from workbench.constructions import random_features
from workbench.core.bounds.certified import certified_lower_bound
from workbench.core.bounds.fiber_bound.fiber import one_head_error
from workbench.core.intervals import student_t
from workbench.core.montecarlo import sample_mean
from workbench.core.sphere import sample_instances
from workbench.core.targets import nearest_neighbour
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

RANDOM_SEEDS = 8  # independent random-features draws pooled by a Student-t interval


def _random_features_error(d: int, heads: int, level: float):
    errs = [random_features.random_features(d, heads, "cosine_uniform", generator=s,
                                            build_model=False)[1].value
            for s in range(RANDOM_SEEDS)]
    return student_t(errs, level)


@claim("structured.exact_error", "The structured heads' claimed error is their D_2 error",
       "lemma", statement="E||f - A||^2 on D_2 == 1 - 2 a.b + a.C.a", threads=1, no_grad=True)
def exact_error(ctx: CheckContext) -> list[Evidence]:
    out = []
    for d, H in ((8, 16), (6, 16)):
        model, claimed = structured_heads(d, 1, H, 2, ctx.seed)
        X, y = sample_instances(ctx.pick(40_000, 400_000), 2, d, "orthonormal",
                                generator=ctx.seed + d)
        err = (model(X, y)[0] - nearest_neighbour(X, y)).pow(2).sum(-1)
        est = sample_mean(err, 0.999, "normal")
        out.append(Evidence.estimate(est, "==", claimed.value, params={"d": d, "heads": H},
                                     resolution=0.01))
    return out


@claim("structured.respects_certified_bound",
       "The structured heads never go below the workbench's certified lower bound", "experiment",
       depends_on=("structured.exact_error",), statement="err >= certified_lower_bound(d, 1, H)")
def respects_certified_bound(ctx: CheckContext) -> list[Evidence]:
    out = []
    for d, H in ((6, 16), (8, 16), (8, 64), (8, 256)):
        _, claimed = structured_heads(d, 1, H, 2, ctx.seed)
        out.append(Evidence(claimed.value, certified_lower_bound(d, 1, H).value, ">=", "solved",
                            {"d": d, "heads": H}, tolerance=1e-9))
    return out


@claim("structured.beats_random_features_at_few_heads",
       "With 16 heads the design is better than random features", "experiment",
       depends_on=("structured.exact_error",),
       statement="err(structured) <= E err(random features, cosine law) at H = 16")
def beats_random_features(ctx: CheckContext) -> list[Evidence]:
    out = []
    for d in (6, 8):
        _, claimed = structured_heads(d, 1, 16, 2, ctx.seed)
        rf = _random_features_error(d, 16, 0.995)
        out.append(Evidence(claimed.value, rf.mean, "<=", "solved", {"d": d, "heads": 16},
                            bound_ci=(rf.lo, rf.hi), bound_ci_level=rf.level,
                            note="random features: Student-t over 8 draws"))
    return out


@claim("structured.no_worse_than_random_features",
       "The design is no worse than random features at any number of heads (false)",
       "conjecture", depends_on=("structured.exact_error",),
       statement="err(structured) <= E err(random features) for H in {16, 64, 256}")
def no_worse_than_random_features(ctx: CheckContext) -> list[Evidence]:
    out = []
    for H in (16, 64, 256):
        _, claimed = structured_heads(8, 1, H, 2, ctx.seed)
        rf = _random_features_error(8, H, 0.995)
        out.append(Evidence(claimed.value, rf.mean, "<=", "solved", {"d": 8, "heads": H},
                            bound_ci=(rf.lo, rf.hi), bound_ci_level=rf.level))
    return out


@claim("structured.optimistic_bound",
       "Conjecture: every model has error at least 1.5x the certified bound (false)",
       "conjecture", statement="err >= 1.5 certified_lower_bound(d, r, H)")
def optimistic_bound(ctx: CheckContext) -> list[Evidence]:
    out = []
    for d, r in ((6, 1), (12, 2)):
        err, (lo, hi) = one_head_error(d, r)  # the exact error of the best known single head
        out.append(Evidence(err, optimistic(d, r, 1, 2), ">=", "exact", {"d": d, "rank": r,
                            "heads": 1}, ci=(lo, hi), ci_level=1.0, interval="quadrature"))
    return out
