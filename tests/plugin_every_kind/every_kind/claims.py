"""Two claims: one that holds and one that is violated on purpose (a plug-in's violated claim
must not change the workbench's own verdicts or tests)."""

from __future__ import annotations

import torch

from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim


@claim("everykind.zero_error", "the zero model's error is 1 on unit keys", "fact",
       statement="E||0 - x||^2 = 1 for x on the unit sphere")
def check_zero_error(ctx: CheckContext) -> list[Evidence]:
    x = torch.nn.functional.normalize(torch.randn(64, 5, dtype=torch.float64), dim=1)
    residual = abs(float((x * x).sum(1).mean()) - 1.0)
    return [Evidence.identity(residual, {"n": 64}, tolerance=1e-12)]


@claim("everykind.wrong", "a claim that is false on purpose", "conjecture",
       statement="1 <= 0.5 (false)")
def check_wrong(ctx: CheckContext) -> list[Evidence]:
    return [Evidence(1.0, 0.5, "<=", "exact")]
