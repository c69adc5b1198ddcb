"""Memory a command's computation needs, estimated from its arguments before it starts.

The estimates count the tensors the code allocates whose size grows with the arguments (their
shapes are named with each term), so they are lower bounds on the peak: a size is refused only
when even these tensors do not fit in the memory available now. Available memory is read from
``/proc/meminfo`` (``MemAvailable``), else from ``os.sysconf``; torch is never imported. With no
way to read it, nothing is refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

FLOAT32, FLOAT64 = 4, 8
ADAM_COPIES = 4  # a trained parameter, its gradient and Adam's two moment estimates
FFN_WIDTH = 2048  # workbench.verifiers.models.EncoderStack's default FFN width
EVAL_BATCH = 2048  # workbench.verifiers.train.TrainConfig's default held-out batch


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


def train_terms(arch: str, d: int, N: int, rank: int, heads: int, layers: int, seeds: int,
                batch: int, eval_batch: int, steps: int, width: int) -> list[Term]:
    """``workbench train``'s stacked models (``seeds`` of them trained together): parameters
    with their gradients and Adam state, one step's batch and its key projections, the held-out
    batches, and the loss history. ``width`` is the model width (d, or the regression stack's)."""
    K, H, r, L = seeds, heads, rank, layers
    if arch == "generalized":  # W_h, the dot score's Q_h (rank x d each) and M_h (d x d)
        params, what = K * H * (2 * r * d + d * d), "parameters K x H x (2 r d + d^2)"
    else:  # Wq, Wk, Wv, Wo of shape (K, H r, width) per layer, and the encoders' FFN
        ffn = 2 * width * FFN_WIDTH if arch != "attention" else 0
        params = K * L * (4 * H * r * width + ffn)
        what = "parameters K x L x (4 H r width + FFN)"
    flags = ("--seeds", "--heads", "--rank", "--d", "--layers")
    return [
        Term(f"{what} with gradients and Adam state, float32", flags,
             ADAM_COPIES * FLOAT32 * params),
        Term("one step's keys and queries K x batch x (N + 1) x d, float32",
             ("--seeds", "--batch", "--N", "--d"), FLOAT32 * K * batch * (N + 1) * d),
        Term("one step's per-head projections K x batch x N x H r (x d: generalized "
             "attention's M_h X), float32",
             ("--seeds", "--batch", "--N", "--heads", "--rank"),
             FLOAT32 * K * batch * N * H * r * (d if arch == "generalized" else 1)),
        Term("a held-out batch eval-batch x (N + 1) x d, float32", ("--N", "--d"),
             FLOAT32 * eval_batch * (N + 1) * d),
        Term("the loss history steps x K, float32", ("--steps", "--seeds"), FLOAT32 * steps * K),
    ]


def rank_one_terms(d: int, heads: int) -> list[Term]:
    """A layer of ``heads`` rank-1 hardmax heads with values ``M_h = a_h I`` (random features):
    ``W``, ``Q`` (H x d) and ``M`` (H x d x d) in float64, and the H x H Gram matrix of the
    Cholesky solve (used up to 4096 heads)."""
    return [
        Term("the value maps M, H x d x d float64", ("--heads", "--d"), FLOAT64 * heads * d * d),
        Term("the key and query maps, 2 x H x d float64", ("--heads", "--d"),
             FLOAT64 * 2 * heads * d),
        Term("the kernel matrix, H x H float64", ("--heads",),
             FLOAT64 * heads * heads if heads <= 4096 else FLOAT64 * 8 * heads),
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
