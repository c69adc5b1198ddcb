"""Theorem 2's fiber bound (``workbench/proofs/paper/thm2/fiber.py``): the claims hold at quick
scale, and each is violated by a planted fault: the fiber kernel 5 % off, the captured energy 1 %
low, ``lambda_1`` four times too large."""

from __future__ import annotations

import numpy as np

from tests.claims.conftest import assert_module_holds, run_claim
from workbench.testing import plant, scaled


def test_fiber_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.thm2.fiber")


def test_fiber_spectrum_refutes_a_kernel_five_percent_off() -> None:
    """The arcsine kernel's eigenvalues 5 % high: the brute-force spectrum, the Monte Carlo and
    the sympy integrals all disagree with the library."""
    with plant("workbench.core.bounds.fiber_bound.fiber:_eigen", scaled(1.05)):
        verdict, ev = run_claim("thm2.fiber_spectrum")
    bad = {e.method for e in ev if e.verdict == "violated"}
    assert verdict == "violated" and bad == {"identity", "monte_carlo"}


def _captured_low(f):  # type: ignore[no-untyped-def]
    return lambda d, rs, H: (0.99 * f(d, rs, H)[0], 1e-13)


def test_fiber_bound_refutes_captured_energy_one_percent_low() -> None:
    """The bound then rises above the exact one-head witness at the tight points."""
    with plant("workbench.core.bounds.fiber_bound.fiber:_captured", _captured_low):
        assert run_claim("thm2.fiber_bound")[0] == "violated"


def _lambda1_four_times(f):  # type: ignore[no-untyped-def]
    def eigen(m, c):  # type: ignore[no-untyped-def]
        lam = np.array(f(m, c))
        lam[1] *= 4
        return lam

    return eigen


def test_one_head_optimum_refutes_lambda1_four_times_too_large() -> None:
    """The vector sector then pays off for a fixed M: the search finds one beating M = I."""
    with plant("workbench.core.bounds.fiber_bound.fiber:_eigen", _lambda1_four_times):
        verdict, ev = run_claim("thm2.one_head_optimum")
    assert verdict == "violated" and any(e.params["d"] == 3 for e in ev if e.verdict == "violated")
