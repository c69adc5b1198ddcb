"""``workbench bounds lower --N N`` and ``bounds heads-needed --N N`` for ``3 <= N <= d``: the
certified bound at N >= 3 on D_N (``workbench.core.bounds.sequence_length.certified_n``: every
sequence-length bound that covers the point, the largest proved part deciding;
docs/derivations/beyond_two_keys.md). Kept apart from the N = 2 code of ``bounds.py``, which
calls :func:`lower_certified_n` and :func:`heads_needed_certified_n` when ``--N`` is not 2.
Where no bound covers ``(d, N)`` the answer says so (which N each bound covers) and its number is
``null`` with the reason; a bound that is 0 says it is vacuous.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.commands._bound_labels import label_fields, labels_text, part_text
from workbench.commands._common import emit, exact_decimal, readable_int
from workbench.commands._error_meaning import error_meaning
from workbench.commands._truncation import truncation_line, truncation_payload
from workbench.core.validation import check_float, check_int, check_layer

COVERS = {
    "eq2": "Eq. 2 models: one fixed value map M_h per head, scores any function of the keys "
    "and the query (generalized attention; standard attention is a case of it)",
    "query-dependent-values": "models whose value maps M_h(y) may depend on the query (also "
    "covers Eq. 2)",
}
LAW_TEXT = "N orthonormal keys (D_N), uniform query"
N_RANGE = "2..d"  # --N of bounds lower and heads-needed: 2 (the certified bound), 3..d (this)


def check_n(N: int, d: int) -> int:
    """``--N`` in ``2..d`` (the one range ``--help`` states), naming the flag."""
    N = check_int("--N", N, lo=1)
    if not 2 <= N <= d:
        raise ValueError(f"--N must be an integer in {N_RANGE} = 2..{d} for orthonormal keys (got "
                         f"--N {N}, --d {d}): 2 has the certified bound, 3..d the "
                         "sequence-length bounds")
    return N


def _check(d: int, rank: int, heads: int, N: int, points: str) -> tuple[int, int, int, int]:
    d, rank, heads = check_layer(d, rank, heads, ("--d", "--rank", "--heads"))
    if points != "orthonormal":
        raise ValueError(f"--N {N} with --points {points}: no bound covers i.i.d. keys at N >= 3 "
                         "(the sequence-length bounds are proved for orthonormal keys, D_N; "
                         "the i.i.d. transfer for N = 2 only)")
    return d, rank, heads, check_n(N, d)


def _max_degree(max_degree: int | None) -> int | None:
    from workbench.core.bounds.sequence_length.n_keys import MAX_DEGREE

    return None if max_degree is None else check_int("--max-degree", max_degree, lo=1,
                                                     hi=MAX_DEGREE)


def coverage(d: int, N: int, value_class: str, names: Sequence[str] | None) -> list[dict[str, Any]]:
    """Each sequence-length bound, the N it covers, and whether it covers ``(d, N)``."""
    from workbench.core.bounds.sequence_length.certified_n import entries

    return [{"name": e.name, "covers_N": e.N_text, "covers_here": e.covered(d, N) is None,
             "why_not": e.covered(d, N)} for e in entries(value_class, names)]


def _common(d: int, rank: int, N: int, value_class: str, registered: str,
            names: Sequence[str] | None) -> dict[str, Any]:
    from workbench.core.bounds.sequence_length.certified_n import ACROSS_N, not_covered

    return {"d": d, "r": rank, "N": N, "bound": registered, "class": value_class,
            "covers": COVERS[value_class], "law": "orthonormal", "law_text": LAW_TEXT,
            "coverage": coverage(d, N, value_class, names),
            "not_covered": not_covered(d, N, value_class, names), "across_n": ACROSS_N,
            "error_meaning": error_meaning("nearest", N, "orthonormal")}


def vacuous(bv: Any) -> str | None:
    """The sentence for a certified value of 0: the bound excludes no model."""
    if bv.certified > 0:
        return None
    return (f"vacuous: the certified bound is 0 here ({bv.source}): it excludes no model, says "
            "nothing")


def lower_certified_n(d: int, rank: int, heads: int, N: int, max_degree: int | None,
                      value_class: str, points: str, as_json: bool, registered: str,
                      names: Sequence[str] | None = None) -> None:
    """``bounds lower --N N`` for ``N >= 3``: every bound that covers the point (``names``:
    those only), the deciding one named; ``null`` with the reason where none covers."""
    d, rank, heads, N = _check(d, rank, heads, N, points)
    L = _max_degree(max_degree)
    from workbench.core.bounds.sequence_length.certified_n import certified_n_bound

    p = {**_common(d, rank, N, value_class, registered, names), "heads": heads}
    if p["not_covered"] is not None:
        p.update(lower_bound=None, enclosure=None, source=None, decided_by=None, parts=[],
                 truncation=None, vacuous=None,
                 null_reasons={k: p["not_covered"] for k in ("lower_bound", "enclosure",
                                                             "source", "decided_by")})
        emit(p, as_json, _human_lower)
        return
    bv = certified_n_bound(d, rank, heads, N, value_class, max_degree=L, names=names)
    p.update(**label_fields(bv), decided_by=bv.source, method=bv.chosen.method,
             truncation=truncation_payload(bv.truncation), vacuous=vacuous(bv))
    emit(p, as_json, _human_lower)


def _coverage_text(p: dict[str, Any]) -> str:
    return "; ".join(f"{c['name']} covers {c['covers_N']}"
                     + (" (here)" if c["covers_here"] else " (not here)") for c in p["coverage"])


def _human_lower(p: dict[str, Any]) -> str:
    head = f"d={p['d']} rank={p['r']} heads={p['heads']} N={p['N']}"
    if p["lower_bound"] is None:
        lines = [f"{head}: no certified bound: {p['not_covered']}",
                 f"  bounds at N >= 3: {_coverage_text(p)}"]
    else:
        lines = [
            f"{head}: every model of the class below has error >= {p['lower_bound']:.6g}  "
            f"(decided by {p['decided_by']}, the largest proved part here; bound {p['bound']})",
            f"  {labels_text(p)}",
            *[f"  {part_text(q)} (the full series)" for q in p["parts"]],
            truncation_line(p["truncation"]),
            *([f"  {p['vacuous']}"] if p["vacuous"] else []),
            f"  {p['method']}",
            f"  bounds at N >= 3: {_coverage_text(p)}",
        ]
    lines += [f"  covers: {p['covers']}", f"  law of the keys: {p['law_text']}; {p['across_n']}",
              f"  {p['error_meaning']}"]
    return "\n".join(lines)


def heads_needed_certified_n(d: int, rank: int, N: int, eps: float, max_degree: int | None,
                             value_class: str, as_json: bool) -> None:
    """``bounds heads-needed --N N`` for ``N >= 3``: the least H whose certified bound at N is at
    most eps (every smaller H is certified to have error > eps)."""
    d, rank, _, N = _check(d, rank, 1, N, "orthonormal")
    eps = check_float("--eps", eps, lo=0.0, hi=1.0, lo_open=True)
    L = _max_degree(max_degree)
    from workbench.core.bounds.sequence_length.certified_n import NAME, certified_n_heads_needed

    registered = NAME if value_class == "eq2" else f"{NAME}-query-values"
    p = {**_common(d, rank, N, value_class, registered, None), "eps": eps}
    if p["not_covered"] is not None:
        why = f"{p['not_covered']}: no bound excludes any H"
        p.update(heads_needed=None, heads_needed_exact=None, readable=None, decided_by=None,
                 bound_at_heads=None, bound_below=None, truncation_settled=None,
                 null_reasons={k: why for k in (
                     "heads_needed", "heads_needed_exact", "readable", "decided_by",
                     "bound_at_heads", "bound_below", "truncation_settled")})
        emit(p, as_json, _human_heads)
        return
    res = certified_n_heads_needed(d, rank, N, eps, value_class, max_degree=L)
    below = res.bound_below
    p.update(heads_needed=res.heads, heads_needed_exact=exact_decimal(res.heads),
             readable=readable_int(res.heads),
             decided_by=(below or res.bound_at_heads).source,
             bound_at_heads=list(res.bound_at_heads.enclosure),
             bound_below=None if below is None else list(below.enclosure),
             truncation_settled=not res.bound_at_heads.truncation_matters)
    if below is None:
        p["null_reasons"] = {"bound_below": "H = 1 already meets eps: no smaller H to exclude"}
    emit(p, as_json, _human_heads)


def _human_heads(p: dict[str, Any]) -> str:
    head = f"d={p['d']} rank={p['r']} N={p['N']} eps={p['eps']:g}"
    if p["heads_needed"] is None:
        lines = [f"{head}: no certified bound: {p['not_covered']}",
                 f"  bounds at N >= 3: {_coverage_text(p)}"]
    else:
        lines = [f"{head}: at least {p['readable']} head{'s' if p['heads_needed'] > 1 else ''} "
                 f"(decided by {p['decided_by']}; every smaller H is certified to have error > "
                 "eps)"]
        if p["bound_below"] is not None:
            lines.append(f"  at H = {p['heads_needed'] - 1} the bound is >= "
                         f"{p['bound_below'][0]:.8g} > eps; at H = {p['heads_needed']} it is "
                         f"{p['bound_at_heads'][0]:.8g}")
        if not p["truncation_settled"]:
            lines.append("  the series was truncated: the full bound may need more heads "
                         "(--max-degree raises it); the value is a valid 'at least'")
        lines.append(f"  bounds at N >= 3: {_coverage_text(p)}")
    lines += [f"  class: {p['covers']}", f"  law of the keys: {p['law_text']}; {p['across_n']}",
              f"  {p['error_meaning']}"]
    return "\n".join(lines)
