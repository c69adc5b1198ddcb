"""The exact-arithmetic references of the harmonic claims
(``workbench/proofs/support/exact_harmonics.py``) agree with the library's closed form."""

from __future__ import annotations

import math

import pytest

from workbench.core.harmonics import sign_coefficient_mp
from workbench.proofs.support import exact_harmonics


@pytest.mark.parametrize("d,l", [(2, 1), (2, 7), (5, 1), (6, 9), (64, 3)])
def test_exact_eta_squared(d: int, l: int) -> None:
    q, p = exact_harmonics.eta_squared_exact(d, l)
    assert p == (-2 if d % 2 == 0 else 0)
    assert float(q) * math.pi**p == pytest.approx(float(sign_coefficient_mp(d, l)) ** 2, rel=1e-14)
    assert exact_harmonics.eta_squared_exact(d, l + 1) == (0, 0)
