"""From a statement to the test that shows it can fail in two files (docs/paper.md, "Where each
statement is checked"): docs/paper.md links each statement to its claim modules, and each claim
module's docstring names its test file."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from workbench.proofs.provenance import slug
from workbench.proofs.registry import builtin_claims

ROOT = Path(__file__).resolve().parents[2]
PAPER = ROOT / "docs" / "paper.md"
CLAIMS = ROOT / "workbench" / "proofs" / "paper"
LINK = re.compile(r"\]\(\.\./(workbench/proofs/paper/[\w/]+\.py)\)")


def claim_modules() -> dict[str, Path]:
    """Dotted name -> file of every module that registers a built-in claim."""
    return {c.module: ROOT / (c.module.replace(".", "/") + ".py")
            for c in builtin_claims().values()}


def unnamed_tests(files: dict[str, str]) -> list[str]:
    """Claim modules (path -> source) whose docstring names no existing ``tests/claims/`` file."""
    out = []
    for path, src in sorted(files.items()):
        named = re.findall(r"tests/claims/test_\w+\.py", ast.get_docstring(ast.parse(src)) or "")
        if not named or not all((ROOT / n).is_file() for n in named):
            out.append(path)
    return out


def sections(text: str) -> dict[str, str]:
    """Heading anchor -> its section's text (to the next heading of the same or a higher level)."""
    lines = text.split("\n")
    heads = [(i, len(m.group(1)), slug(m.group(2))) for i, line in enumerate(lines)
             if (m := re.match(r"(#+) (.*)", line))]
    out = {}
    for k, (i, level, anchor) in enumerate(heads):
        end = next((j for j, lv, _ in heads[k + 1:] if lv <= level), len(lines))
        out[anchor] = "\n".join(lines[i:end])
    return out


def unlinked_statements(text: str) -> list[str]:
    """Claims whose ``ref`` is a heading of docs/paper.md whose section does not link the
    claim's module, statements (the headings under "The statements") that link no claim
    module, and claim modules the page never links; also links to missing files."""
    secs = sections(text)
    out = [f"{c.id}: paper.md#{c.ref.partition('#')[2]} does not link {c.module}"
           for c in builtin_claims().values() if c.ref.startswith("paper.md#")
           and c.module.replace(".", "/") + ".py" not in LINK.findall(
               secs.get(c.ref.partition("#")[2], ""))]
    statements = sections(secs["3-the-statements"])
    out += [f"statement {a} links no claim module" for a, s in statements.items()
            if a != "3-the-statements" and not LINK.search(s)]
    linked = set(LINK.findall(text))
    out += [f"{p} is never linked" for p in sorted(
        str(f.relative_to(ROOT)) for f in claim_modules().values()) if p not in linked]
    out += [f"{p} does not exist" for p in sorted(linked) if not (ROOT / p).is_file()]
    return out


def _sources() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text() for p in claim_modules().values()}


def test_every_claim_module_names_its_test_file() -> None:
    assert unnamed_tests(_sources()) == []


def test_a_claim_module_without_its_test_file_is_caught() -> None:
    files = _sources()
    fact1 = "workbench/proofs/paper/fact1.py"
    files[fact1] = files[fact1].replace("tests/claims/test_fact1.py", "tests/claims/test_f1.py")
    assert unnamed_tests(files) == [fact1]


def test_every_statement_links_its_claim_modules() -> None:
    assert unlinked_statements(PAPER.read_text()) == []


def test_a_statement_without_its_link_is_caught() -> None:
    text = PAPER.read_text().replace("(../workbench/proofs/paper/remark4.py)", "(remark4.py)")
    found = unlinked_statements(text)
    assert "statement remark-4 links no claim module" in found, found
    assert "workbench/proofs/paper/remark4.py is never linked" in found, found
    line = ("Claim module (each names its test file): "
            "[`fact1.py`](../workbench/proofs/paper/fact1.py).")
    fact1 = PAPER.read_text().replace(line, "", 1)  # the first: under "Full rank"
    assert any("paper.md#full-rank does not link" in f for f in unlinked_statements(fact1))
