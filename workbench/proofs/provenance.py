"""Provenance: where in ``docs/`` a claim's statement is written, and how sure we are of it.

A claim's ``ref`` is ``"FILE#anchor"`` with ``FILE`` relative to ``docs/`` (``paper.md``,
``derivations/fiber_bound.md``) and ``anchor`` the GitHub-style slug of one of its headings; its
``mark`` is one of ``paper`` (the paper states it), ``ours`` (derived for this project, written
out in ``docs/derivations/``) or ``reading`` (our interpretation of a gap in the source), the
vocabulary of docs/paper.md. :func:`resolve` checks a reference against the documents.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def slug(heading: str) -> str:
    """The anchor of a Markdown heading, as GitHub renders it: lower case, punctuation other
    than ``-`` and ``_`` dropped, each space a hyphen."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@functools.cache
def anchors(path: Path) -> frozenset[str]:
    """The anchors of every heading of the Markdown file ``path`` (fenced code skipped)."""
    out, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)):
            out.add(slug(m.group(1)))
    return frozenset(out)


def resolve(ref: str, docs: Path = DOCS) -> Path:
    """The document a reference points at; raises ``ValueError`` naming what does not exist."""
    file, sep, anchor = ref.partition("#")
    if not sep or not file or not anchor:
        raise ValueError(f"ref must be 'FILE#anchor' relative to docs/ (got {ref!r})")
    path = docs / file
    if not path.is_file():
        raise ValueError(f"ref {ref!r}: docs/{file} does not exist")
    if anchor not in anchors(path):
        raise ValueError(f"ref {ref!r}: docs/{file} has no heading with anchor {anchor!r}")
    return path
