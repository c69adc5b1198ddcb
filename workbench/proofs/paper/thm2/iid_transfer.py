"""Theorem 2's certified bound transferred from D_2 to two i.i.d. uniform keys
(docs/derivations/iid_transfer.md): the conditional law of the normalised pair given
``t = <x1, x2>``, the projection identity with its factor ``sqrt(1 - t)``, and the bound against
the i.i.d. Bayes head and trained generalized attention on i.i.d. keys.

Its test: ``tests/claims/test_thm2_iid_transfer.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import workbench.proofs.support.eq2_models as eq2
from workbench.core.bounds.certified import certified_lower_bound
from workbench.core.intervals import bonferroni_level
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

IID_TRANSFER = "derivations/iid_transfer.md"
LAW_RESOLUTION = 0.15  # a moment (normalised to 1 or 0) off by 0.15 is resolved
BAYES_LOSS_RANGE = (0.0, 4.0)  # (1 - t)(s - psi)^2 / 2 <= 2 * 4 / 2
if TYPE_CHECKING:
    import torch

    Moment = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, int], torch.Tensor]
# Statistics of (u_hat, w_hat, y), each scaled so that its value under the law of the derivation
# (a Haar-uniform orthonormal pair and an independent uniform query) is 1 or 0.
MOMENTS: tuple[tuple[str, Moment, float], ...] = (
    ("d u1^2", lambda u, w, y, d: d * u[:, 0] ** 2, 1.0),
    ("d w1^2", lambda u, w, y, d: d * w[:, 0] ** 2, 1.0),
    ("d u1 w1", lambda u, w, y, d: d * u[:, 0] * w[:, 0], 0.0),
    ("d(d+2)/3 w1^4", lambda u, w, y, d: d * (d + 2) / 3 * w[:, 0] ** 4, 1.0),
    ("d(d+2) u1^2 w1^2", lambda u, w, y, d: d * (d + 2) * u[:, 0] ** 2 * w[:, 0] ** 2, 1.0),
    ("d <y,u><y,w>", lambda u, w, y, d: d * (y * u).sum(-1) * (y * w).sum(-1), 0.0),
    ("d(d+2) <y,u>^2 <y,w>^2",
     lambda u, w, y, d: d * (d + 2) * (y * u).sum(-1) ** 2 * (y * w).sum(-1) ** 2, 1.0),
)
LAW_DIMS = (4, 7)
# (d, r), one head, d - r >= 2. The Bayes head's error exceeds the bound by 12 % at (3, 1), 4 %
# at (4, 1), 2.6 % at (5, 2), 1.4 % at (6, 2) and 0.6 % at (8, 1) (benchmarks/iid_transfer.py):
# 2·10^4 samples resolve the first, 4·10^5 the next two; the others would need millions.
BAYES_CASES = ((3, 1), (4, 1), (5, 2))
TRAINED_D, TRAINED_SHAPES = 6, ((1, 2), (2, 2))  # (r, H) with H r < d: x1.14 and x1.8 above


def _law_evidence(n: int, g: torch.Generator) -> list[Evidence]:
    """Orthonormality exactly; then, in each half of the range of t, every moment of ``MOMENTS``
    against its value under the derivation's law, and the law of t: ``E t = 0``,
    ``d E t^2 = 1``."""
    import torch

    import workbench.core.sphere as sphere
    import workbench.proofs.support.iid_pairs as iid
    from workbench.core.montecarlo import sample_mean
    from workbench.core.targets import nearest_neighbour
    level = bonferroni_level(len(LAW_DIMS) * (2 * len(MOMENTS) + 2))  # jointly at 99.9%
    out: list[Evidence] = []
    for d in LAW_DIMS:
        X, y = sphere.sample_instances(n, 2, d, points="iid", generator=g)
        t, u, w, s = iid.decompose(X, y)
        p = {"d": d, "n": n}
        ortho = max(float((u * w).sum(-1).abs().max()), float((u.norm(dim=-1) - 1).abs().max()),
                    float((w.norm(dim=-1) - 1).abs().max()))
        out.append(Evidence.identity(ortho, p, tolerance=1e-12,
                                     note="u_hat, w_hat orthonormal: max deviation"))
        target = (u * torch.sqrt(1 + t)[:, None] + s[:, None] * w * iid.w_norm(t)[:, None])
        resid = float((nearest_neighbour(X, y) - target / iid.SQRT2).norm(dim=-1).max())
        out.append(Evidence.identity(resid, p, tolerance=1e-12,
                                     note="target = (u + s w)/sqrt2, s = sign<y, w_hat>"))
        for half, sel in (("t < 0", t < 0), ("t >= 0", t >= 0)):
            for name, stat, exact in MOMENTS:
                est = sample_mean(stat(u[sel], w[sel], y[sel], d), level, "normal")
                out.append(Evidence.estimate(
                    est, "==", exact, params={**p, "given": half, "moment": name},
                    resolution=LAW_RESOLUTION,
                    note=f"E[{name} | {half}]: the law of (u_hat, w_hat, y) given t"))
        out.append(Evidence.estimate(sample_mean(t, level, "bounded", (-1.0, 1.0)), "==", 0.0,
                                     params=p, resolution=LAW_RESOLUTION / d,
                                     note="E t = 0, so E[1 - t] = 1"))
        out.append(Evidence.estimate(sample_mean(d * t * t, level, "bounded", (0.0, float(d))),
                                     "==", 1.0, params=p, resolution=LAW_RESOLUTION,
                                     note="d E t^2 = 1 (t is one coordinate of a uniform point)"))
    return out


def _projection_evidence(n: int, g: torch.Generator) -> list[Evidence]:
    """On random Eq. 2 models with i.i.d. keys: ``sqrt2 <w_hat, f - A> = sqrt(1-t) (s - G_t)``
    (left side from the model's output, right side from its weights and scores) and
    ``||f - A||^2 >= (1 - t)/2 (s - G_t)^2``, pointwise."""
    import workbench.core.sphere as sphere
    import workbench.proofs.support.iid_pairs as iid
    from workbench.core.targets import nearest_neighbour
    out: list[Evidence] = []
    for d, r, H, score, norm in eq2.MODEL_CASES:
        model = eq2.random_model(d, r, H, 3, score, norm, g)
        X, y = sphere.sample_instances(n, 2, d, points="iid", generator=g)
        t, _, w, s = iid.decompose(X, y)
        resid = nearest_neighbour(X, y) - model(X, y)  # (K, n, d)
        right = iid.w_norm(t) * (s - iid.G_t(model, X, y))
        p = {"d": d, "r": r, "H": H, "score": score, "normalizer": norm, "n": n, "models": 3}
        ident = float((iid.SQRT2 * (resid * w).sum(-1) - right).abs().max())
        out.append(Evidence.identity(ident, p, tolerance=1e-10,
                                     note="max |sqrt2 <w_hat, f - A> - sqrt(1-t)(s - G_t)|"))
        excess = float((right**2 / 2 - (resid**2).sum(-1)).max())
        out.append(Evidence.identity(excess, p, tolerance=1e-10,
                                     note="max of (1-t)/2 (s - G_t)^2 - ||f - A||^2"))
    return out


def _bayes_evidence(n: int, cases: tuple[tuple[int, int], ...], g: torch.Generator,
                    level: float) -> list[Evidence]:
    """The i.i.d. one-head Bayes model's error (per-sample loss in [0, 4]: a bounded interval)
    against the certified bound, which it must respect and which it meets within about 1 %."""
    import workbench.core.sphere as sphere
    import workbench.proofs.support.iid_pairs as iid
    from workbench.core.montecarlo import sample_mean
    out: list[Evidence] = []
    for d, r in cases:
        X, y = sphere.sample_instances(n, 2, d, points="iid", generator=g)
        est = sample_mean(iid.bayes_head_errors(d, r, X, y), level, "bounded", BAYES_LOSS_RANGE)
        lb = certified_lower_bound(d, r, 1)
        out.append(Evidence.estimate(est, ">=", lb.enclosure[1],
                                     params={"d": d, "r": r, "H": 1, "n": n, "points": "iid"},
                                     note="i.i.d. Bayes head (M = I) vs the certified bound"))
    return out


def _trained_evidence(ctx: CheckContext, level: float) -> list[Evidence]:
    """Generalized attention (Eq. 2, dot scores, full value maps) trained on i.i.d. keys:
    held-out error (CLT interval: trained outputs have no a-priori range) vs the bound."""
    from workbench.verifiers.tasks import Task
    from workbench.verifiers.train import ModelSpec, TrainConfig, train
    steps, n, seeds = ctx.pick((100, 10_000, 1), (2000, 100_000, 3))
    task = Task("nearest", d=TRAINED_D, N=2, points="iid")
    specs = [ModelSpec("generalized", rank=r, heads=h, seed=ctx.seed + k, lr=0.05)
             for k in range(seeds) for r, h in TRAINED_SHAPES]
    cfg = TrainConfig(steps=steps, batch=512, eval_samples=n, eval_batch=10_000, level=level,
                      eval_seed=ctx.seed, device=ctx.device)
    out: list[Evidence] = []
    for res in train(specs, task, cfg).results:
        assert res.heldout is not None
        r, h = res.spec.rank, res.spec.heads
        p = {"d": TRAINED_D, "N": 2, "r": r, "H": h, "steps": steps, "seed": res.spec.seed,
             "n": n, "points": "iid"}
        out.append(Evidence.estimate(res.heldout, ">=",
                                     certified_lower_bound(TRAINED_D, r, h).enclosure[1],
                                     "trained", p,
                                     note="trained generalized attention on i.i.d. keys vs the "
                                     "certified bound"))
    return out


@claim(
    "thm2.iid_transfer",
    "The certified N = 2 bound covers two i.i.d. uniform keys: given t = <x1, x2> the normalised "
    "pair has the law of D_2, and the error is at least E[(1 - t)] times the D_2 bound",
    "theorem",
    depends_on=(*eq2.CERTIFIED_BOUND_CLAIMS, "thm2.projection_reduction"),
    statement="sqrt2 <w_hat, f - A> = sqrt(1 - t)(s - G_t); (u_hat, w_hat, y) | t has the law of "
    "D_2; hence E||f - A||^2 >= E[1 - t] certified_lower_bound(d, r, H) = "
    "certified_lower_bound(d, r, H) for x1, x2 i.i.d. uniform",
    ref=f"{IID_TRANSFER}#result",
    mark="ours",
    threads=1,
)
def iid_transfer_claim(ctx: CheckContext) -> list[Evidence]:
    import torch

    import workbench.core.sphere as sphere
    g = sphere.make_generator(ctx.seed + 1013)
    bayes_cases = ctx.pick(BAYES_CASES[:1], BAYES_CASES)
    confrontations = len(bayes_cases) + len(TRAINED_SHAPES) * ctx.pick(1, 3)
    level = bonferroni_level(confrontations)  # jointly at 99.9%
    with torch.no_grad():
        out = _law_evidence(ctx.pick(20_000, 400_000), g)
        out += _projection_evidence(ctx.pick(2000, 50_000), g)
        out += _bayes_evidence(ctx.pick(20_000, 400_000), bayes_cases, g, level)
    return out + _trained_evidence(ctx, level)
