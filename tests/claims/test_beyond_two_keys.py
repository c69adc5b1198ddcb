"""Claims of workbench/proofs/paper/beyond_two_keys.py: each holds at quick scale, and each is
refuted by a realistic planted fault (a wrong fiber dimension, a dropped linear-form count,
energies 5 % off, the pairs' factor N - 1 replaced by N/2)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import pytest

from tests.claims.conftest import run_claim
from workbench.core.bounds.sequence_length.n_keys_energy import energy_enclosures
from workbench.testing import plant


@pytest.fixture(autouse=True)
def _fresh_energies() -> Iterator[None]:
    """Energies cached before a fault was planted would hide it."""
    energy_enclosures.cache_clear()
    yield
    energy_enclosures.cache_clear()


@pytest.mark.parametrize("cid", ["nkeys.steps", "nkeys.bound_value"])
def test_claims_hold_at_quick_scale(cid: str) -> None:
    verdict, ev = run_claim(cid)
    assert verdict == "holds", [e.describe() for e in ev if e.verdict != "holds"]


def _fiber_dim_off(f: Callable[[int, int], int]) -> Callable[[int, int], int]:
    return lambda d, N: f(d, N) - 1  # n = d - N in place of d - N + 1


def _no_linear_forms(f: Callable[..., tuple[int, int]]) -> Callable[..., tuple[int, int]]:
    return lambda n, N, vc: (f(n, N, vc)[0], 0)


def _energies_high(f: Callable[..., Any]) -> Callable[..., Any]:
    return lambda d, N, L: tuple((1.05 * lo, 1.05 * hi) for lo, hi in f(d, N, L))


def _half_n(f: Callable[[int], Fraction]) -> Callable[[int], Fraction]:
    return lambda N: Fraction(N, 4)  # (N/2)/2 in place of (N-1)/2


@pytest.mark.parametrize("target,wrap,cids", [
    ("workbench.core.bounds.sequence_length.n_keys_energy:fiber_dim", _fiber_dim_off,
     ["nkeys.bound_value"]),
    ("workbench.core.bounds.sequence_length.n_keys:form_counts", _no_linear_forms,
     ["nkeys.bound_value", "nkeys.steps"]),
    ("workbench.core.bounds.sequence_length.n_keys_energy:energy_enclosures", _energies_high,
     ["nkeys.bound_value", "nkeys.steps"]),
    ("workbench.core.bounds.sequence_length.n_keys:pair_factor", _half_n, ["nkeys.bound_value"]),
])
def test_claims_refute_a_planted_fault(target: str, wrap: Any, cids: list[str]) -> None:
    with plant(target, wrap):
        for cid in cids:
            assert run_claim(cid)[0] == "violated", (target, cid)
