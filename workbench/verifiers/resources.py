"""Memory a computation needs, estimated from its arguments before it starts, and the check of
that estimate against the memory available now (the size checks of ``workbench construct``,
``workbench train`` and :func:`workbench.verifiers.construct.run_construction`).

The estimates count the tensors the code allocates whose size grows with the arguments (their
shapes are named with each term), so they are lower bounds on the peak: a size is refused only
when even these tensors do not fit in the memory available now. Available memory is read from
``/proc/meminfo`` (``MemAvailable``), else from ``os.sysconf``; torch is never imported. With no
way to read it, nothing is refused.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

FLOAT32, FLOAT64 = 4, 8
SIZE_FLAGS = ("--d", "--rank", "--heads", "--N")  # a bare byte count is blamed on one of these


@dataclass(frozen=True)
class Term:
    """``bytes`` of the tensors ``what``, whose size grows with the arguments ``flags``."""

    what: str
    flags: tuple[str, ...]
    bytes: int


def available_bytes() -> int | None:
    """Memory available to a new allocation now, or None when it cannot be read."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def readable_bytes(n: float) -> str:
    """``1.5 GB``-style size (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    raise AssertionError("unreachable")


def check_fits(terms: Sequence[Term], values: Mapping[str, int],
               available: int | None = None) -> None:
    """Raise ``ValueError`` naming the flag most responsible when ``terms`` need more memory
    than is available; the flag blamed is the largest argument of the largest term."""
    need = sum(t.bytes for t in terms)
    have = available_bytes() if available is None else available
    if have is None or need <= have or not terms:
        return
    big = max(terms, key=lambda t: t.bytes)
    flag = max(big.flags, key=lambda f: values.get(f, 0)) if big.flags else "the arguments"
    shown = f"{flag} {values[flag]}" if flag in values else flag
    raise ValueError(f"{shown} needs at least ~{readable_bytes(need)} of memory ({big.what}: "
                     f"~{readable_bytes(big.bytes)}); this machine has {readable_bytes(have)} "
                     "available")


def size_values(d: int, rank: int, heads: int, N: int,
                params: Mapping[str, Any] | None = None) -> dict[str, int]:
    """The flags a construction's estimate may blame, with their values: ``--d``, ``--rank``,
    ``--heads``, ``--N`` and ``--param K`` for each integer parameter."""
    out = dict(zip(SIZE_FLAGS, (d, rank, heads, N), strict=True))
    out.update({f"--param {k}": int(v) for k, v in (params or {}).items()
                if isinstance(v, numbers.Integral) and not isinstance(v, bool)
                and f"--{k}" not in SIZE_FLAGS})
    return out


def as_terms(estimate: int | Sequence[Term], what: str = "the construction's tensors "
             "(its own estimate)") -> list[Term]:
    """A construction's memory estimate as terms: its terms, or a byte count as one term
    blamed on the largest of ``--d``, ``--rank``, ``--heads`` and ``--N``."""
    if isinstance(estimate, numbers.Integral) and not isinstance(estimate, bool):
        if estimate < 0:
            raise ValueError(f"a memory estimate must be a byte count >= 0 (got {estimate})")
        return [Term(what, SIZE_FLAGS, int(estimate))]
    terms = list(estimate)  # type: ignore[arg-type]
    if not all(isinstance(t, Term) for t in terms):
        raise ValueError("a memory estimate must be a byte count or a sequence of Term")
    return terms


def rank_one_terms(d: int, heads: int, dense_up_to: int = 4096) -> list[Term]:
    """A layer of ``heads`` rank-1 hardmax heads with values ``M_h = a_h I`` (random features):
    ``W``, ``Q`` (H x d) and ``M`` (H x d x d) in float64, and the H x H Gram matrix of the
    Cholesky solve (used up to ``dense_up_to`` heads; beyond, CG's blocks of 8 rows)."""
    return [
        Term("the value maps M, H x d x d float64", ("--heads", "--d"), FLOAT64 * heads * d * d),
        Term("the key and query maps, 2 x H x d float64", ("--heads", "--d"),
             FLOAT64 * 2 * heads * d),
        Term("the kernel matrix, H x H float64", ("--heads",),
             FLOAT64 * heads * heads if heads <= dense_up_to else FLOAT64 * 8 * heads),
    ]


def hardmax_rank1_terms(d: int, heads: int, steps: int) -> list[Term]:
    """The sandwich's optimised rank-1 witness: the random-features layer it becomes, with its
    kernel matrix always dense (H x H, the optimiser's solve), and the directions being
    optimised (H x d float64), with their gradient and Adam's two moments when it takes steps
    (4 x H x d)."""
    copies = 4 if heads > 1 and steps > 0 else 1
    return [*rank_one_terms(d, heads, dense_up_to=heads),
            Term("the directions with gradient and Adam state, 4 x H x d float64",
                 ("--heads", "--d"), FLOAT64 * copies * heads * d)]


def bayes_heads_terms(d: int, rank: int, heads: int, n_fit: int, n_eval: int) -> list[Term]:
    """The sandwich's Bayes heads: the identity the first row space is cut from (d x d), the
    row spaces B (H x r x d), the fitting and the evaluation sample (n x 3 x d: two keys and a
    query each) and every head's Bayes scores on them (n x H each; all alive together), and the
    Gram matrix of the least-squares values (H x H), all float64."""
    return [
        Term("the identity the first row space is cut from, d x d float64", ("--d",),
             FLOAT64 * d * d),
        Term("the row spaces B, H x r x d float64", ("--heads", "--rank", "--d"),
             FLOAT64 * heads * rank * d),
        Term("the fitting and evaluation samples, (n_fit + n_eval) x 3 x d float64",
             ("--param n_fit", "--param n_eval", "--d"), FLOAT64 * (n_fit + n_eval) * 3 * d),
        Term("the Bayes scores on the fitting sample, n_fit x H float64",
             ("--param n_fit", "--heads"), FLOAT64 * n_fit * heads),
        Term("the Bayes scores on the evaluation sample, n_eval x H float64",
             ("--param n_eval", "--heads"), FLOAT64 * n_eval * heads),
        Term("the Gram matrix, H x H float64", ("--heads",), FLOAT64 * heads * heads),
    ]


def biased_terms(d: int, N: int) -> list[Term]:
    """Theorem 3's construction: ``J = 2 d^2 + 1`` full-rank heads, ``W``, ``Q`` and ``M``
    of shape (J, d, d) in float64, and the biases (J, N)."""
    J = 2 * d * d + 1
    return [Term("the 2d^2+1 heads' W, Q and M, 3 x (2d^2 + 1) x d x d float64", ("--d",),
                 FLOAT64 * 3 * J * d * d),
            Term("the biases, (2d^2 + 1) x N float64", ("--d", "--N"), FLOAT64 * J * N)]


def full_rank_terms(d: int) -> list[Term]:
    """Fact 1's head: ``Wq, Wk, Wv, Wo`` of shape (1, 1, d, d) in float64."""
    return [Term("the head's four d x d maps, float64", ("--d",), FLOAT64 * 4 * d * d)]


def majority_vote_terms(d: int, heads: int) -> list[Term]:
    """Theorem 5's voting heads: at least the directions (H x d) and the four maps of the vote
    layer (H x D each, with the scratch width D >= d), in float64."""
    return [Term("the votes' directions and four maps, at least 5 x H x d float64",
                 ("--heads", "--d"), FLOAT64 * 5 * heads * d)]
