"""What the ``workbench bounds`` commands share: the value classes and laws of the keys in words,
the largest d of the built-in bounds, the registered bounds ``lower`` shows with every part, why
a bound is vacuous, and the one check of a point against what a bound covers (naming the flag).
"""

from __future__ import annotations

from typing import Any

from workbench.core.bounds import EQ2, QUERY_VALUES  # imports nothing: fast
from workbench.core.validation import check_dim, check_int, check_rank

CLASS_TEXT = {
    "eq2": "Eq. 2 models: one fixed value map M_h per head (count D'_l; fiber: H values)",
    "query-dependent-values": "models whose value maps M_h(y) may depend on the query "
    "(count d(d+1)/2 D'_l; fiber: the full trace; also covers Eq. 2)",
}
MAX_D = 2048  # answers within seconds; beyond, the exact binomial tables take minutes
# the registered bounds ``lower`` computes with every part shown, and the class of each
CERTIFIED = {"certified": EQ2, "certified-query-values": QUERY_VALUES}
# the law of the keys the certified bound covers: proved on D_2, transferred to i.i.d. keys at N = 2
# (docs/derivations/iid_transfer.md)
POINTS_TEXT = {
    "orthonormal": "N = 2 orthonormal keys (D_2), uniform query",
    "iid": "N = 2 i.i.d. uniform keys, uniform query (the i.i.d. transfer: the same number, "
    "since E[1 - <x1, x2>] = 1)",
}
SOFT_IID_TEXT = ("N = 2 i.i.d. uniform keys, uniform query (a mixture over the profiles "
                 "psi(sqrt(1 - <x1, x2>) s): for soft-nearest the effective temperatures "
                 "beta sqrt(1 - <x1, x2>); docs/derivations/soft_targets.md, step T)")
EPS_RANGE = "(0, 1]"  # the error of the zero model is 1: a target above 1 needs no heads


def check_common(d: int, rank: int, max_degree: int | None) -> tuple[int, int]:
    d = check_int("--d", d, lo=2, hi=MAX_D)
    rank = check_rank(rank, d, "--rank")
    if max_degree is not None:
        check_int("--max-degree", max_degree, lo=1, hi=20001)
    return check_dim(d, "--d"), rank


def vacuous_reason(d: int, r: int, heads: int | None = None) -> str | None:
    """Why the bound is 0, when it is: for r >= d-1 a head's space holds every harmonic degree,
    and for H r >= d the heads' keys together see every direction (no fiber is left).
    ``heads=None``: only the harmonic count is in use (``heads-needed``)."""
    if r >= d - 1 and (heads is None or heads * r >= d):
        return (
            f"vacuous: the bound is 0 for rank r >= d-1 = {d - 1} with H r >= d, because then "
            "one head's space reaches every harmonic degree (D_l >= N(d,l)) and the keys see "
            "every direction (no fiber); it says nothing here"
        )
    return None


def resolve_bound(spec: str) -> Any:
    """The ``Bound`` named ``spec`` (registered, or ``module:function``); errors name --bound."""
    from workbench.plugins import get_bound

    if spec.partition(":")[0] == "constant":
        raise ValueError(f"--bound must be a registered bound (workbench bounds list) or "
                         f"module:function (got {spec!r}; constant:C, a planted constant in "
                         "(0, 1], is taken by workbench falsify only)")
    try:
        return get_bound(spec)
    except ValueError as e:
        raise ValueError(f"--bound: {e}") from None


FLAGS = {"d": "--d", "rank": "--rank", "heads": "--heads", "N": "--N"}  # Bound's argument names


def point_error(why: str, spec: str, d: int, rank: int, heads: int, N: int) -> ValueError:
    """Bad input for a point a bound does not cover: the flag, when ``why`` starts with an
    argument's name (``Bound.outside``), else the whole point."""
    arg = why.split(" ", 1)[0]
    if arg in FLAGS:
        return ValueError(f"{FLAGS[arg]}{why[len(arg):]} for --bound {spec}")
    return ValueError(f"--bound {spec} does not cover d={d}, rank={rank}, heads={heads}, N={N} "
                      f"(--d, --rank, --heads, --N): {why}")


def check_covered(b: Any, spec: str, d: int, rank: int, heads: int, N: int) -> None:
    """Bad input (naming the flag) when ``(d, rank, heads, N)`` is outside what ``b`` covers."""
    why = b.outside(d, rank, heads, N)
    if why is not None:
        raise point_error(why, spec, d, rank, heads, N)

