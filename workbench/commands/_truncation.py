"""How every command reports a series bound's truncation (the rule of
``workbench/core/bounds/numerics/truncation.py``; docs/derivations/lower_bound.md, Lemma 6): the
same
JSON fields and the same text line wherever a bound is printed."""

from __future__ import annotations

from typing import Any

__all__ = ["truncation_payload", "truncation_line"]


def truncation_payload(tr: Any) -> dict[str, Any] | None:
    """The JSON of a :class:`~workbench.core.bounds.value.Truncation` (None: no series)."""
    if tr is None:
        return None
    from workbench.core.bounds.numerics.truncation import PRINTED_DIGITS

    return {"degrees_summed": tr.degrees_summed, "tail": tr.tail, "settled": tr.settled,
            "flag": tr.flag, "printed_digits": PRINTED_DIGITS,
            "guarantee": "the full series (every degree) lies in [lower_bound, lower_bound + "
            "tail]; settled: the tail cannot change the printed digits (or the question asked)"}


def truncation_line(t: dict[str, Any] | None, what: str = "the printed digits") -> str:
    """One line: settled, or that the truncation matters and the flag that lifts it."""
    if t is None:
        return "  truncation: none (no series)"
    if t["settled"]:
        return (f"  truncation settled: odd degrees <= {t['degrees_summed']} summed, the rest "
                f"counted; the full series is within {t['tail']:.2g} above ({what} cannot "
                "change)")
    nxt = 4 * t["degrees_summed"] + 1
    return (f"  TRUNCATION MATTERS: odd degrees <= {t['degrees_summed']} summed; the full "
            f"series may lie up to {t['tail']:.3g} above, which could change {what}; "
            f"{t['flag']} (e.g. {t['flag']} {nxt}) sums further")
