"""Argument validation shared by every public entry point.

Each checker raises ``ValueError`` whose message names the parameter and the allowed range,
so the CLI can print it as one line and exit with code 2.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported only by check_tensor, so validating is cheap
    import torch

# the one range of a random seed: every generator the workbench seeds (torch, numpy, the
# hashes of ``derive_seed``) takes it, with the small offsets the claims add, and a SQLite
# store holds it
SEED_MAX = 2**32 - 1
# the largest count any integer flag takes: a signed 64-bit integer (SQLite, torch, numpy)
INT64_MAX = 2**63 - 1


def check_int(name: str, value: object, lo: int | None = None, hi: int | None = None) -> int:
    """Return ``value`` as an int, or raise naming ``name`` and the range ``lo..hi``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be {int_range_words(lo, hi)} (got {value!r})")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be {int_range_words(lo, hi)} (got {v})")
    return v


def int_range_words(lo: int | None = None, hi: int | None = None) -> str:
    """``an integer in 0..10`` (or ``>= 0``, ``<= 10``): the words of :func:`check_int`."""
    return f"an integer{_range_text(lo, hi)}"


def float_range_words(lo: float | None = None, hi: float | None = None, *,
                      lo_open: bool = False, hi_open: bool = False) -> str:
    """``a finite number in (0, 1]``: the words of :func:`check_float`."""
    lo_s = "-inf" if lo is None else f"{lo:g}"
    hi_s = "inf" if hi is None else f"{hi:g}"
    interval = ("(" if lo_open or lo is None else "[") + f"{lo_s}, {hi_s}"
    interval += ")" if hi_open or hi is None else "]"
    return f"a finite number in {interval}"


def check_float(
    name: str,
    value: object,
    lo: float | None = None,
    hi: float | None = None,
    *,
    lo_open: bool = False,
    hi_open: bool = False,
) -> float:
    """Return ``value`` as a finite float in the given (optionally open) interval."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite real number (got {value!r})")
    v = float(value)
    lo_bad = lo is not None and (v <= lo if lo_open else v < lo)
    hi_bad = hi is not None and (v >= hi if hi_open else v > hi)
    if not math.isfinite(v) or lo_bad or hi_bad:
        what = float_range_words(lo, hi, lo_open=lo_open, hi_open=hi_open)
        raise ValueError(f"{name} must be {what} (got {value!r})")
    return v


def check_seed(seed: object, name: str = "seed") -> int:
    """A random seed: an integer in ``0..SEED_MAX``."""
    return check_int(name, seed, lo=0, hi=SEED_MAX)


def check_dim(d: object, name: str = "d") -> int:
    """Ambient dimension: an integer >= 2."""
    return check_int(name, d, lo=2)


def check_rank(r: object, d: int, name: str = "r") -> int:
    """Head rank: an integer in 1..d."""
    return check_int(name, r, lo=1, hi=d)


def check_heads(h: object, name: str = "H") -> int:
    """Number of heads: an integer >= 1."""
    return check_int(name, h, lo=1)


def check_points(n: object, name: str = "N") -> int:
    """Number of keys: an integer >= 1."""
    return check_int(name, n, lo=1)


def check_layer(d: object, r: object, H: object,
                names: tuple[str, str, str] = ("d", "r", "H")) -> tuple[int, int, int]:
    """``(d, r, H)`` of H heads of rank r on R^d: :func:`check_dim`, :func:`check_rank` and
    :func:`check_heads`, in that order (errors say ``names``)."""
    d = check_dim(d, names[0])
    return d, check_rank(r, d, names[1]), check_heads(H, names[2])


def check_key_rank(r: object, d: int, name: str = "r") -> int:
    """Key rank: an integer >= 1 (said without ``d`` when it is not), at most ``d``."""
    return check_rank(check_int(name, r, lo=1), d, name)


def check_orthonormal_keys(points: str, N: int, d: int, name: str = "N") -> int:
    """``N`` keys of the point law ``points``: orthonormal points (``D_N``) need ``N <= d``."""
    if points == "orthonormal" and N > d:
        raise ValueError(f"{name} must be an integer in 1..d = 1..{d} for orthonormal points "
                         f"(got {N})")
    return N


def check_positive(name: str, value: object) -> float:
    """A finite number > 0."""
    return check_float(name, value, lo=0.0, lo_open=True)


def check_index(name: str, k: object, size: int) -> int:
    """An index into ``size`` items: an integer in ``0..size-1``."""
    return check_int(name, k, lo=0, hi=size - 1)


def check_temperature(beta: object, name: str = "beta") -> float:
    """Inverse temperature: finite and >= 0."""
    return check_float(name, beta, lo=0.0)


def check_choice(name: str, value: object, allowed: Sequence[str]) -> str:
    """A string among ``allowed``."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))} (got {value!r})")
    return str(value)


def check_tensor(
    name: str, t: object, shape: Sequence[int | None], *, dtype_floating: bool = True
) -> torch.Tensor:
    """A tensor of the given shape (``None`` matches any size), finite if floating."""
    import torch

    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor (got {type(t).__name__})")
    want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
    if t.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, t.shape)):
        raise ValueError(f"{name} must have shape {want} (got {tuple(t.shape)})")
    if dtype_floating and not t.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor (got {t.dtype})")
    return t


def int_text(n: int) -> str:
    """``n`` as written in a range: ``2**63 - 1`` for the large powers of two less one."""
    if n >= 2**31 and (n + 1) & n == 0:
        return f"2**{n.bit_length()} - 1"
    return str(n)


def _range_text(lo: int | None, hi: int | None) -> str:
    if lo is not None and hi is not None:
        return f" in {int_text(lo)}..{int_text(hi)}"
    if lo is not None:
        return f" >= {int_text(lo)}"
    if hi is not None:
        return f" <= {int_text(hi)}"
    return ""
