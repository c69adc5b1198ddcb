"""Remark 4: Theorem 3's lower bound is stated under a norm condition,
``d H max_h ||V_h||^2 < exp(c (d - r))``; recorded here on trained models (docs/paper.md#remark-4).

Reading (docs/derivations/biased_lower_bound.md#what-the-claims-assert): ``V_h`` is the value map
of head h, ``M_h`` in Eq. 2, measured in spectral norm; ``c`` is not in our copy of the paper, so it
is read as ``support.theorem3.C_HYP``, and each model also reports ``c* = log(d H
max||V_h||^2) / (d - r)``, the least c for which it satisfies the hypothesis. The sympy encoding is
``remark4.norm_needed`` (``workbench.core.symbolic.bounds``).

Evidence per trained model (rank-r biased attention, ``support.biased_training``): the held-out
error (CI) against the conclusion, ``err >= B(d, r, H)`` (the certified bound of
``thm3.low_rank_lower``), with the norm quantity and whether the hypothesis holds in the params.
The derived bound for N = 2 needs no norm condition, so models outside the hypothesis are
compared too; their evidence says so.

Its test: ``tests/claims/test_remark4.py``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import workbench.core.bounds.biased as biased_bounds
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim

if TYPE_CHECKING:
    import torch



def norm_quantity(d: int, M: torch.Tensor) -> float:
    """``d H max_h ||M_h||_2^2`` for value maps ``M`` ``(H, d, d)`` (or ``(1, H, d, d)``)."""
    import torch
    M = M.reshape(-1, d, d).double()
    return d * M.shape[0] * float(torch.linalg.matrix_norm(M, ord=2).max()) ** 2


def hypothesis_threshold(d: int, r: int, H: int, c: float) -> float:
    """``exp(c (d - r))`` read off the encoding ``remark4.norm_needed`` (``V^2 >= rhs`` there,
    so ``d H V^2 < d H rhs = exp(c (d - r))`` is the hypothesis)."""
    from workbench.core.symbolic.bounds import c_3, get_bound
    return d * H * get_bound("remark4.norm_needed").evaluate(d=d, r=r, H=H, **{c_3.name: c})


@claim(
    "remark4.norm_condition",
    "Remark 4: the norm condition d H max||V_h||^2 < exp(c (d - r)), recorded on trained models",
    "remark",
    depends_on=("thm3.low_rank_lower",),
    statement="trained rank-r biased attention: report d H max||V_h||^2 and exp(c (d-r)); "
    "the held-out error is >= the certified bound B(d, r, H)",
    ref="derivations/biased_lower_bound.md#what-the-claims-assert",
    mark="reading", threads=1,
)
def norm_condition(ctx: CheckContext) -> list[Evidence]:
    """Every trained model's held-out error against the certified bound, norms recorded."""
    import workbench.proofs.support.biased_training as biased_training
    import workbench.proofs.support.theorem3 as theorem3
    from workbench.proofs.support.theorem3 import C_HYP
    results, steps, _ = biased_training.trained_biased(ctx)
    d, c = biased_training.D_TRAIN, C_HYP
    E = theorem3.target_energies(d, ctx)
    out: list[Evidence] = []
    for res in results:
        r, H = res.spec.rank, res.spec.heads
        q = norm_quantity(d, res.state["M"])
        thr = hypothesis_threshold(d, r, H, c)
        inside = q < thr
        b = biased_bounds.biased_lower_bound(E, r, H)
        est = res.heldout
        assert est is not None
        p = {"d": d, "r": r, "H": H, "steps": steps, "dH_max_norm_sq": q,
             "exp_c_d_minus_r": thr, "c": c, "c_star": math.log(q) / (d - r),
             "hypothesis_holds": inside, "bound": b.value, "bound_ci": b.ci}
        where = "inside" if inside else "outside"
        out.append(Evidence(est.mean - b.value, 0.0, ">=", "trained",
                            {**p, "error": est.mean, "error_ci": (est.lo, est.hi)},
                            ci=(est.lo - b.ci[1], est.hi - b.ci[0]), ci_level=est.level,
                            interval="normal",
                            note="trained held-out error minus certified bound >= 0 (CI beyond "
                            f"both intervals); model {where} the norm hypothesis at c = {c}"))
    return out
