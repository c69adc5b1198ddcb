"""One Eq. 2 layer trained on a soft target (docs/derivations/soft_targets.md): the held-out
error the soft-target claims compare with their bounds (the harmonic count on orthonormal keys,
the i.i.d. mixture bound on i.i.d. keys), and on i.i.d. keys its error in bins of
``t = <x1, x2>`` (step T holds at each t)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.core.intervals import Estimate


def target_task(d: int, points: str, name: str, params: tuple[tuple[str, Any], ...],
                fn: Callable[[Any, Any], Any]) -> Any:
    """The N = 2 task of a target ``fn(X, y)`` over keys drawn by ``points``."""
    from workbench.verifiers.tasks import TargetTask

    return TargetTask("nearest", d=d, N=2, points=points, target=name, target_params=params,
                      fn=fn)


def soft_task(d: int, beta: float, points: str) -> Any:
    from workbench.core.targets import soft_nearest_neighbour

    return target_task(d, points, "soft-nearest", (("beta", beta),),
                       lambda X, y: soft_nearest_neighbour(X, y, beta))


def _train(task: Any, r: int, H: int, *, seed: int, steps: int, eval_seed: int
           ) -> tuple[Any, Any]:
    """``(spec, result)`` of one Eq. 2 layer (dot scores of key-rank ``r``, ``H`` heads, full
    value maps) trained ``steps`` steps on ``task``; held-out 99.9 % CLT interval on 20,000
    fresh samples of stream ``eval_seed``."""
    from workbench.verifiers.train import ModelSpec, TrainConfig, train

    cfg = TrainConfig(steps=steps, batch=512, eval_samples=20_000, level=0.999,
                      eval_seed=eval_seed)
    spec = ModelSpec("generalized", r, H, seed=seed, lr=0.02, options={"score": "dot"})
    return spec, train([spec], task, cfg).results[0]


def soft_nearest_heldout(d: int, r: int, H: int, beta: float, points: str, *, seed: int,
                         steps: int, eval_seed: int) -> Estimate:
    """Held-out error (99.9 % CLT interval on 20,000 fresh samples) of an Eq. 2 layer (dot
    scores of key-rank ``r``, ``H`` heads, full value maps) trained ``steps`` steps on the
    soft-nearest target of inverse temperature ``beta`` over N = 2 keys drawn by ``points``."""
    est = _train(soft_task(d, beta, points), r, H, seed=seed, steps=steps,
                 eval_seed=eval_seed)[1].heldout
    assert est is not None
    return est


def iid_binned_errors(task: Any, r: int, H: int, edges: Sequence[float], *, seed: int,
                      steps: int, samples: int, eval_seed: int, level: float = 0.999
                      ) -> tuple[Estimate, list[Estimate]]:
    """The error of one Eq. 2 layer trained on ``task`` (i.i.d. keys; as
    :func:`soft_nearest_heldout`), measured again in float64 on ``samples`` fresh samples
    (stream ``eval_seed``) and split by ``t = <x1, x2>`` into the bins
    ``[edges[k], edges[k+1])``: the mean over every sample (interval at ``level``) and per bin
    the mean per-sample error with an interval at ``1 - (1 - level)/bins`` (Bonferroni over the
    bins); both empirical Bernstein, as the error lies in [0, 4]."""
    import torch

    from workbench.core.montecarlo import sample_mean
    from workbench.verifiers.train import build_model

    spec, res = _train(task, r, H, seed=seed, steps=steps, eval_seed=eval_seed + 1)
    model = build_model(spec, task, models=1)
    model.load_state_dict(res.state)
    model = model.double()
    g = torch.Generator().manual_seed(eval_seed)
    ts, errs = [], []
    for start in range(0, samples, 8192):
        (X, y), target = task.sample(min(8192, samples - start), g)
        X, y = X.double(), y.double()
        with torch.no_grad():
            errs.append(task.error(model(X, y), target.double()).reshape(-1))
        ts.append((X[:, 0] * X[:, 1]).sum(-1))
    t, err = torch.cat(ts), torch.cat(errs)
    bins = len(edges) - 1
    whole = sample_mean(err, level, "bernstein", (0.0, 4.0))
    out = []
    for lo, hi in zip(edges, edges[1:]):
        inside = err[(t >= lo) & (t < hi)]
        out.append(sample_mean(inside, 1 - (1 - level) / bins, "bernstein", (0.0, 4.0)))
    return whole, out


def binned_evidence(task: Any, r: int, H: int, bins: Sequence[tuple[float, float, float]],
                    lower: float, params: dict[str, Any], what: str, *, seed: int, steps: int,
                    samples: int, eval_seed: int) -> list[Any]:
    """Evidence rows of :func:`iid_binned_errors`: the trained layer's error over all keys
    ``>= lower`` (the i.i.d. mixture bound of ``what``) and in each bin ``(t_lo, t_hi, bound)``
    ``>=`` the bin's bound."""
    from workbench.proofs.claim import Evidence

    edges = [b[0] for b in bins] + [bins[-1][1]]
    whole, per_bin = iid_binned_errors(task, r, H, edges, seed=seed, steps=steps,
                                       samples=samples, eval_seed=eval_seed)
    out = [Evidence.estimate(whole, ">=", lower, "trained", params,
                             note="error of a trained Eq. 2 layer on i.i.d. keys against the "
                             f"{what} i.i.d. mixture bound")]
    for (lo, hi, bound), est in zip(bins, per_bin):
        out.append(Evidence.estimate(est, ">=", bound, "trained",
                                     {**params, "t_bin": f"[{lo:.3f}, {hi:.3f})"},
                                     note="the same layer's error on keys with t = <x1, x2> "
                                     "in the bin against the bin's bound"))
    return out
