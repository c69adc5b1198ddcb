"""A conjectured lower bound that is deliberately too strong: one and a half times the
workbench's certified bound. It is false wherever a model gets within 1.5x of the certified
bound, for instance one head of rank 1 at d = 6, whose exact error is about 0.46 while the
conjecture asks for at least 0.66."""

from __future__ import annotations

from workbench.core.bounds.certified import certified_lower_bound
from workbench.plugins import Bound


def optimistic(d: int, rank: int, heads: int, N: int) -> float:
    """``1.5 x`` the certified lower bound (a conjecture, and a wrong one)."""
    return 1.5 * certified_lower_bound(d, rank, heads).value


OPTIMISTIC = Bound(
    "optimistic", optimistic, status="conjectured", law="orthonormal", value_class="eq2", N=(2,),
    description="1.5 x the certified bound: a conjecture that is too strong",
    source="workbench-structured-heads",
)
