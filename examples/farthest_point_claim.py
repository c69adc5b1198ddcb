"""A target, a construction and a claim written from scratch against the public API.

Target: the *farthest* point, ``x_{argmin_i <x_i, y>}``: the label of the paper's sequence task
(docs/paper.md §6). Construction: one full-rank head with a *negative* temperature,
``W_K^T W_Q = -beta I`` and ``W_O^T W_V = I``. Claim: its error falls below any eps for beta large
enough, checked by Monte Carlo with a 99.9% confidence interval, the verdict made beyond the CI.

Run it directly (``python examples/farthest_point_claim.py``), or make a package of it and list the
module under the ``workbench.claims`` entry-point group so that ``workbench check`` runs it too.
"""

from __future__ import annotations

import torch

from workbench.core.montecarlo import estimate_mean
from workbench.core.sphere import sample_instances
from workbench.core.targets import check_keys_query, nearest_neighbour
from workbench.models.attention import MultiHeadAttention
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim, run_claims


def farthest_point(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The new target: the key least aligned with the query (the nearest neighbour of ``-y``)."""
    X, y = check_keys_query(X, y)
    return nearest_neighbour(X, -y)


def negative_temperature_head(d: int, beta: float) -> MultiHeadAttention:
    """The new construction: one full-rank head attending *away* from the query."""
    eye = torch.eye(d, dtype=torch.float64).reshape(1, d, d)
    s = beta**0.5
    return MultiHeadAttention.from_weights(-s * eye, s * eye, eye, eye)


def head_error(d: int, N: int, beta: float, samples: int, seed: int, sign: float = 1.0):
    """Monte Carlo error of the head (``sign=-1`` flips the temperature: a broken variant)."""
    head = negative_temperature_head(d, beta)
    if sign < 0:
        with torch.no_grad():
            head.Wq.neg_()

    def draw(b: int, g: torch.Generator | None) -> torch.Tensor:
        X, y = sample_instances(b, N, d, generator=g)
        with torch.no_grad():
            return (head(X, y) - farthest_point(X, y)).pow(2).sum(-1)  # (1, b)

    return estimate_mean(draw, samples=samples, level=0.999, generator=seed)[0]


@claim(
    "example.farthest_point_full_rank",
    "One full-rank head with negative temperature retrieves the farthest point",
    "lemma",
    depends_on=("fact1.soft_representation",),
    statement="E||x_{argmin <x_i,y>} - X softmax(-beta X^T y)||^2 <= eps for beta >= 50/eps",
    mark="ours",
)
def farthest_point_full_rank(ctx: CheckContext) -> list[Evidence]:
    samples = ctx.pick(20_000, 200_000)
    out = []
    for d, N in ((8, 4), (16, 16)):
        for eps in (1e-2, 1e-3):
            est = head_error(d, N, 50.0 / eps, samples, ctx.seed + d)
            p = {"d": d, "N": N, "eps": eps, "beta": 50.0 / eps, "samples": samples}
            out.append(Evidence.estimate(est, "<=", eps, params=p))
    return out


if __name__ == "__main__":
    for result in run_claims(CheckContext(), only=["example.farthest_point_full_rank"]):
        print(f"{result.verdict:<12} {result.claim.id}")
