"""``workbench bounds lower --N N`` and ``bounds heads-needed --N N`` for ``N >= 3``: the bound
beyond two keys (``n-keys``, docs/derivations/beyond_two_keys.md). Kept apart from the N = 2
code of ``bounds.py``, which calls :func:`lower_n_keys` and :func:`heads_needed_n_keys` when
``--N`` is not 2. Outside ``3 <= N <= d - 2`` on orthonormal keys nothing is printed but one
line saying what is and is not covered (bad input, exit 2).
"""

from __future__ import annotations

from typing import Any

from workbench.commands._bound_labels import label_fields, labels_text, part_text
from workbench.commands._common import emit, exact_decimal, readable_int
from workbench.commands._error_meaning import error_meaning
from workbench.commands._truncation import truncation_line, truncation_payload
from workbench.core.validation import check_float, check_int, check_layer

COVERS = {
    "eq2": "Eq. 2 models: one fixed value map M_h per head (count D_l: 1 quadratic and "
    "min(N-1, n) linear forms per head)",
    "query-dependent-values": "models whose value maps M_h(y) may depend on the query (count: "
    "n(n+1)/2 quadratic and n linear forms per head; also covers Eq. 2)",
}
LAW_TEXT = "N orthonormal keys (D_N), uniform query"
BOUND_NAME = {"eq2": "n-keys", "query-dependent-values": "n-keys-query-values"}  # registered


def not_covered(d: int, N: int, points: str = "orthonormal") -> str | None:
    """The one line for a point no bound covers at ``N >= 3`` (or ``None``)."""
    if points != "orthonormal":
        return (f"--N {N} with --points {points}: no bound covers i.i.d. keys at N >= 3 (the "
                "n-keys bound is proved for orthonormal keys, 3 <= N <= d-2; the i.i.d. transfer "
                "for N = 2 only)")
    if N > d:
        return f"--N must be at most --d for orthonormal keys (got --N {N}, --d {d})"
    if N >= d - 1:
        return (f"--N {N} at --d {d}: no bound covers N >= d-1 (the n-keys bound covers "
                f"3 <= N <= d-2 = {d - 2} on orthonormal keys, where it is certified; N = 2 has "
                "the certified bound)")
    return None


def _check(d: int, rank: int, heads: int, N: int, points: str) -> tuple[int, int, int, int]:
    d, rank, heads = check_layer(d, rank, heads, ("--d", "--rank", "--heads"))
    N = check_int("--N", N, lo=1)
    why = not_covered(d, N, points)
    if why is not None:
        raise ValueError(why)
    return d, rank, heads, N


def _max_degree(max_degree: int | None) -> int | None:
    from workbench.core.bounds.sequence_length.n_keys import MAX_DEGREE

    return None if max_degree is None else check_int("--max-degree", max_degree, lo=1,
                                                     hi=MAX_DEGREE)


def lower_n_keys(d: int, rank: int, heads: int, N: int, max_degree: int | None,
                 value_class: str, points: str, as_json: bool) -> None:
    """``bounds lower --N N`` for ``N >= 3``: the largest valid bound there, and its name."""
    d, rank, heads, N = _check(d, rank, heads, N, points)
    L = _max_degree(max_degree)
    from workbench.core.bounds.sequence_length.n_keys import n_keys_bound

    bv = n_keys_bound(d, rank, heads, N, value_class, max_degree=L)
    emit(_payload(d, rank, heads, N, value_class, bv), as_json, _human_lower)


def _payload(d: int, rank: int, heads: int, N: int, value_class: str, bv: Any
             ) -> dict[str, Any]:
    t = bv.truncation
    return {
        "d": d, "r": rank, "heads": heads, "N": N, "bound": BOUND_NAME[value_class],
        **label_fields(bv), "method": bv.chosen.method, "truncation": truncation_payload(t),
        "degrees_summed": t.degrees_summed, "tail": t.tail,
        "class": value_class, "covers": COVERS[value_class], "law": "orthonormal",
        "law_text": LAW_TEXT, "fiber_dim": d - N + 1,
        "error_meaning": error_meaning("nearest", N, "orthonormal"),
    }


def _human_lower(p: dict[str, Any]) -> str:
    lines = [
        f"d={p['d']} rank={p['r']} heads={p['heads']} N={p['N']}: every model of the class below "
        f"has error >= {p['lower_bound']:.6g}  (bound {p['bound']}, the largest that applies "
        "here)",
        f"  {labels_text(p)}",
        *[f"  {part_text(q)} (the full series)" for q in p["parts"]],
        truncation_line(p["truncation"]),
        f"  {p['method']}",
        f"  covers: {p['covers']}", f"  law of the keys: {p['law_text']}",
        f"  {p['error_meaning']}",
    ]
    return "\n".join(lines)


def heads_needed_n_keys(d: int, rank: int, N: int, eps: float, max_degree: int | None,
                        value_class: str, as_json: bool) -> None:
    """``bounds heads-needed --N N`` for ``N >= 3``: the least H whose n-keys bound is at most
    eps (every smaller H is certified to have error > eps)."""
    d, rank, _, N = _check(d, rank, 1, N, "orthonormal")
    eps = check_float("--eps", eps, lo=0.0, hi=1.0, lo_open=True)
    L = _max_degree(max_degree)
    from workbench.core.bounds.sequence_length.n_keys import n_keys_heads_needed

    res = n_keys_heads_needed(d, rank, N, eps, value_class, max_degree=L)
    below = res.bound_below
    trunc = res.bound_at_heads.truncation
    assert trunc is not None  # the n-keys part always records its truncation
    payload = {
        "d": d, "r": rank, "N": N, "eps": eps, "class": value_class,
        "covers": COVERS[value_class], "heads_needed": res.heads,
        "heads_needed_exact": exact_decimal(res.heads), "readable": readable_int(res.heads),
        "bound": BOUND_NAME[value_class],
        "bound_at_heads": list(res.bound_at_heads.enclosure),
        "bound_below": None if below is None else list(below.enclosure),
        "degrees_summed": trunc.degrees_summed,
        "truncation_settled": not res.bound_at_heads.truncation_matters,
    }
    emit(payload, as_json, _human_heads)


def _human_heads(p: dict[str, Any]) -> str:
    lines = [f"d={p['d']} rank={p['r']} N={p['N']} eps={p['eps']:g}: at least {p['readable']} "
             f"head{'s' if p['heads_needed'] > 1 else ''} (bound {p['bound']}; every smaller H is "
             "certified to have error > eps)"]
    if p["bound_below"] is not None:
        lines.append(f"  at H = {p['heads_needed'] - 1} the bound is >= {p['bound_below'][0]:.8g}"
                     f" > eps; at H = {p['heads_needed']} it is {p['bound_at_heads'][0]:.8g}")
    if not p["truncation_settled"]:
        lines.append(f"  odd degrees <= {p['degrees_summed']} summed: the full series may need "
                     "more heads (--max-degree raises it); the value is a valid 'at least'")
    lines += [f"  class: {p['covers']}", f"  {error_meaning('nearest', p['N'], 'orthonormal')}"]
    return "\n".join(lines)
