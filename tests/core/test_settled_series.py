"""Settled by default (issue 46): the n-keys bound, its heads-needed and the soft profiles'
fiber part follow the one truncation rule (workbench/core/bounds/numerics/truncation.py;
docs/derivations/lower_bound.md, "The truncation rule") until the printed digits, or the
question asked, cannot change; each against a computation that does not share the rule."""

from __future__ import annotations

import json
import math

import pytest

from workbench.core.bounds.numerics.truncation import settle_degrees
from workbench.core.bounds.profiles.profile_fiber import profile_fiber_parts
from workbench.core.bounds.sequence_length import n_keys_energy as ne
from workbench.core.bounds.sequence_length.n_keys import (
    degree_count,
    n_keys_bound,
    n_keys_heads_needed,
    pair_factor,
)
from workbench.core.harmonics import dim_harmonics
from workbench.core.profiles import tanh_profile
from workbench.proofs.support.n_keys_fiber import independent_energies


def test_the_rule_keeps_a_prediction_inside_its_schedule() -> None:
    """A predicted degree is taken, but never beyond ``4 L + 1``, below ``L + 2`` or past the
    cap; every degree is odd."""
    seen: list[int] = []

    def run(pred: int, cap: int) -> list[int]:
        seen.clear()
        settle_degrees(lambda L: seen.append(L) or L, lambda L: False, 5, cap,
                       next_degree=lambda L, _: pred)
        return list(seen)

    assert run(10**6, 200) == [5, 21, 85, 199]  # an even cap ends at the odd degree below
    assert run(0, 13) == [5, 7, 9, 11, 13]
    assert run(31, 41) == [5, 21, 31, 33, 35, 37, 39, 41]  # 31 from 21; then at least L + 2
    assert all(L % 2 for L in run(30, 99))


def _series(d: int, r: int, H: int, N: int, energies: list[float]) -> tuple[float, float]:
    """The n-keys series with the given energies (odd l = 1, 3, ...): summed below, and with
    the rest of the 2/N energy fully lost above (Parseval; no counted tail)."""
    n = ne.fiber_dim(d, N)
    kept = sum(g * max(0.0, 1 - H * degree_count(d, r, N, 2 * i + 1) / dim_harmonics(n, 2 * i + 1))
               for i, g in enumerate(energies))
    half = float(pair_factor(N))
    return half * kept, half * (kept + 2 / N - sum(energies))


def test_n_keys_issue_case_is_settled_and_inside_the_degree_21_enclosure() -> None:
    """(16, 1, 8), N = 8 printed TRUNCATION MATTERS at degree 21; by default it is settled now,
    its lower end inside the degree-21 enclosure of the full series (which moved the 6th
    digit), and it agrees with degree 2 L + 1 to the printed digits."""
    at21 = n_keys_bound(16, 1, 8, 8, max_degree=21)
    assert at21.truncation_matters
    b = n_keys_bound(16, 1, 8, 8)
    assert not b.truncation_matters and b.truncation is not None
    L = b.truncation.degrees_summed
    assert L > 21
    assert at21.enclosure[0] <= b.enclosure[0] <= at21.enclosure[1]
    more = n_keys_bound(16, 1, 8, 8, max_degree=2 * L + 1)
    assert f"{more.value:.6g}" == f"{b.value:.6g}"
    assert more.enclosure[0] <= b.enclosure[1] and b.enclosure[0] <= more.enclosure[1]


@pytest.mark.parametrize("d,N,H", [(10, 3, 4), (11, 5, 2)])
def test_n_keys_settled_value_against_independent_energies(d: int, N: int, H: int) -> None:
    """The settled enclosure against the series on float tensor-quadrature energies (odd
    l <= 41, from kappa's definition, not the arb code): it must meet the independent bracket
    (summed below; every unsummed degree lost above), whose width here is the tail."""
    b = n_keys_bound(d, 1, H, N)
    assert not b.truncation_matters
    lo_ind, hi_ind = _series(d, 1, H, N, list(independent_energies(d, N, 41, grid=120)))
    assert lo_ind - 1e-8 <= b.enclosure[1] and b.enclosure[0] <= hi_ind + 1e-8
    assert b.enclosure[0] >= lo_ind - 1e-8  # the counted tail only adds to the summed part


def test_n_keys_heads_needed_settles_the_question() -> None:
    """heads-needed --d 16 --rank 1 --N 4 --eps 0.1 said 3,469 at degree 21; the full series
    gives 3,470: at H = 3469 the bound at degree 61 still exceeds eps, at 3470 its upper end
    (every degree counted) does not."""
    res = n_keys_heads_needed(16, 1, 4, 0.1)
    assert res.heads == 3470 and not res.bound_at_heads.truncation_matters
    assert n_keys_bound(16, 1, 3469, 4, max_degree=61).enclosure[0] > 0.1
    assert n_keys_bound(16, 1, 3470, 4, max_degree=61).enclosure[1] <= 0.1
    assert n_keys_heads_needed(16, 1, 4, 0.1, max_degree=21).heads == 3469  # less, by hand


def test_the_shipped_table_covers_its_pairs_and_matches_a_recomputation() -> None:
    """Every pair of ``table_pairs`` is in the table (a few more may be), each to
    ``table_degree``, each entry an interval, their sum within Parseval's 2/N; sampled entries
    (one slow-tail fiber, one fast) equal the library's computation bit for bit, and the
    default route reads the table."""
    table = json.loads(ne.TABLE_FILE.read_text())["enclosures"]
    assert {f"{d} {N}" for d, N in ne.table_pairs()} <= set(table)
    for key, row in table.items():
        d, N = map(int, key.split())
        assert 5 <= N <= d - 2
        assert len(row) == (ne.table_degree(ne.fiber_dim(d, N)) + 1) // 2
        assert all(0 <= lo <= hi and math.isfinite(hi) for lo, hi in row)
        assert sum(lo for lo, _ in row) <= 2 / N  # Parseval: the energies sum to 2/N
    for d, N in ((9, 5), (30, 9)):
        L = ne.table_degree(ne.fiber_dim(d, N))
        assert [list(e) for e in ne.compute_enclosures(d, N, L)] == table[f"{d} {N}"]
        assert ne.energy_enclosures(d, N, L) == ne.compute_enclosures(d, N, L)


def test_soft_fiber_part_is_settled_at_beta_4() -> None:
    """(16, 1, 8), beta = 4 printed TRUNCATION MATTERS (fiber part at degree 7); by default the
    part is settled, inside the degree-7 enclosure of the full series ``[lo_7, lo_7 + tail_7]``
    (Lemma P4), and equal to degree 2 L + 1 to the printed digits."""
    psi = tanh_profile(4.0)
    at7 = next(p for p in profile_fiber_parts(psi, 16, 1, 8, max_degree=7) if p.name == "fiber")
    part = next(p for p in profile_fiber_parts(psi, 16, 1, 8) if p.name == "fiber")
    assert at7.truncation is not None and not at7.truncation.settled
    assert part.truncation is not None and part.truncation.settled
    assert at7.enclosure[0] <= part.enclosure[0] <= at7.enclosure[0] + at7.truncation.tail
    L = part.truncation.degrees_summed
    more = next(p for p in profile_fiber_parts(psi, 16, 1, 8, max_degree=2 * L + 1)
                if p.name == "fiber")
    assert f"{more.enclosure[0]:.6g}" == f"{part.enclosure[0]:.6g}"
