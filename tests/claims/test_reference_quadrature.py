"""The node counts of the claims' independent fiber references (``proofs/support/
fiber_reference.direct_spectrum``: 64 Gauss-Legendre nodes from m = 4 on; ``soft_reference.
fiber_values``: ``L // 2 + 4`` Gauss-Jacobi nodes) give the same fiber values as the dense
rules they replaced (256 and 160 nodes), and a much smaller rule does not."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.proofs.support.fiber_reference import direct_spectrum
from workbench.proofs.support.soft_reference import fiber_values, scipy_energies


def _c(n: int = 4000) -> np.ndarray:
    c = np.random.default_rng(7).beta(0.5, 2.0, size=n)
    return np.concatenate([c, [0.0, 0.5, 1.0 - 1e-9, 1.0]])


@pytest.mark.parametrize("m", [4, 6, 8, 12, 30])
def test_direct_spectrum_default_nodes_match_256(m: int) -> None:
    c = _c()
    dense, mult = direct_spectrum(m, c, 256)
    vals, mult_default = direct_spectrum(m, c)
    assert mult_default == mult
    assert np.abs(vals - dense).max() < 1e-12


def test_direct_spectrum_too_few_nodes_is_seen() -> None:
    c = _c()
    dense, _ = direct_spectrum(4, c, 256)
    assert np.abs(direct_spectrum(4, c, 8)[0] - dense).max() > 1e-6


def test_direct_spectrum_rejects_no_nodes() -> None:
    with pytest.raises(ValueError, match="nodes"):
        direct_spectrum(4, _c(10), 0)


@pytest.mark.parametrize(("beta", "d", "m", "L"), [(4.0, 8, 4, 21), (16.0, 8, 6, 41),
                                                   (8.0, 8, 6, 31)])
def test_soft_fiber_values_exact_rule_matches_160_nodes(beta: float, d: int, m: int,
                                                        L: int) -> None:
    from scipy.special import roots_jacobi

    from workbench.proofs.support.soft_reference import gegenbauer_normalized

    e = scipy_energies(beta, d, L)
    c = _c(2000)
    vals, _ = fiber_values(e, d, m, c)
    t, w = roots_jacobi(160, (m - 3) / 2, (m - 3) / 2)
    w = w / w.sum()
    x = c[:, None] + (1 - c[:, None]) * t[None, :]
    k = sum(v * gegenbauer_normalized(d, l, x) for l, v in e.items())
    dense = np.stack([k @ w * 1.0, (k @ (w * t)) * (c + (1 - c) / m),
                      (k @ (w * (m * t * t - 1) / (m - 1))) * 2 * (1 - c) / (m + 2)])
    assert np.abs(vals - dense).max() < 1e-12
    # the comparison sees a rule that is too small (4 nodes: exact to degree 7 only)
    t2, w2 = roots_jacobi(4, (m - 3) / 2, (m - 3) / 2)
    w2 = w2 / w2.sum()
    k2 = sum(v * gegenbauer_normalized(d, l, c[:, None] + (1 - c[:, None]) * t2[None, :])
             for l, v in e.items())
    assert np.abs(k2 @ w2 - dense[0]).max() > 1e-10  # far outside the 1e-12 above
