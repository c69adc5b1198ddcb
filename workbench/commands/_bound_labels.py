"""How every command prints a bound's labels: one JSON block and one line of text, both read
from the bound's :class:`~workbench.core.bounds.value.BoundValue` (the one home of its labels),
so no command words them on its own."""

from __future__ import annotations

import re
from typing import Any

from workbench.commands._truncation import truncation_payload
from workbench.core.bounds.value import BoundValue

# the text line, parsed back by tests that compare every command's labels
LABELS_RE = re.compile(r"labels: (proved|conjectured), (rigorous|not rigorous), certified >= "
                       r"(\S+), from (.+?)(?:;|$)", re.M)


LABEL_KEYS = ("lower_bound", "rigorous", "status", "certified", "source")  # the short form


def label_fields(bv: BoundValue) -> dict[str, Any]:
    """The bound's number and labels as JSON fields (``lower_bound`` is ``value``, the largest
    lower end over the parts), with each part's own."""
    return {
        "lower_bound": bv.value,
        "enclosure": list(bv.enclosure),
        "source": bv.source,
        "rigorous": bv.rigorous,
        "status": bv.status,
        "certified": bv.certified,
        "truncation_matters": bv.truncation_matters,
        "parts": [part_fields(p) for p in bv.parts],
    }


def part_fields(p: Any) -> dict[str, Any]:
    """One part as JSON (a :class:`~workbench.core.bounds.value.Part`)."""
    return {"name": p.name, "lower_bound": p.lower, "enclosure": list(p.enclosure),
            "rigorous": p.rigorous, "proved": p.proved, "beside": p.beside, "method": p.method,
            "truncation": truncation_payload(p.truncation)}


def labels_text(p: dict[str, Any]) -> str:
    """The labels of :func:`label_fields` as one line of text."""
    return (f"labels: {p['status']}, {'rigorous' if p['rigorous'] else 'not rigorous'}, "
            f"certified >= {p['certified']:.6g}, from {p['source']}")


def part_text(p: dict[str, Any]) -> str:
    """One part of :func:`part_fields` as text."""
    kind = ("rigorous enclosure" if p["rigorous"] else
            "a statistical limit beside the proved parts, never certified" if p.get("beside")
            else "enclosure, not rigorous")
    t = p["truncation"]
    cut = ("" if t is None or t["settled"] else
           f" (truncated at degree {t['degrees_summed']}: up to {t['tail']:.3g} more could "
           f"change the digits; {t['flag']} sums further)")
    return (f"{p['name']}: >= {p['lower_bound']:.6g}, {kind} [{p['enclosure'][0]:.17g}, "
            f"{p['enclosure'][1]:.17g}]{cut}")
