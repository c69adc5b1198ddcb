"""How the harmonic count's ``H*(d, r, eps)`` grows in ``1/eps`` (docs/derivations/regimes.md,
"Why the data cannot refute 1/eps^2", steps 1-4): the sign target's energies tend to the Hermite
energies ``c_l^2 ~ (2/pi)^(3/2) l^(-3/2)``, their tail to ``(2/pi)^(3/2) L^(-1/2)``, the degree
``L*(eps)`` error eps needs to ``(2/pi)^3 / (4 eps^2)``, and ``log H*`` to ``L*(eps) log d``."""

from __future__ import annotations

import math

import pytest
import sympy as sp

from workbench.core.bounds.harmonic_count.exact_energy import eta2_enclosures, eta2_ratio
from workbench.core.bounds.harmonic_count.harmonic import heads_needed

K = (2 / math.pi) ** 1.5  # the constant of c_l^2 ~ K l^(-3/2)


def hermite_energies(L: int) -> dict[int, float]:
    """``c_l^2 = (2/pi) ((l-2)!!)^2 / l!`` for odd ``l <= L``: the energies of sign(t) in the
    normalised Hermite basis, by the ratio ``l^2 / ((l+1)(l+2))``."""
    out, c = {}, 2 / math.pi
    for l in range(1, L + 1, 2):
        out[l] = c
        c *= l * l / ((l + 1) * (l + 2))
    return out


def limit_degree(eps: float) -> int:
    """``L*(eps)``: the least odd L whose Hermite tail beyond L is below ``2 eps``."""
    total, l, c = 0.0, 1, 2 / math.pi
    while True:
        total += c
        if 1 - total < 2 * eps:
            return l
        c *= l * l / ((l + 1) * (l + 2))
        l += 2


def test_step1_sign_energies_tend_to_the_hermite_energies() -> None:
    dd, ll = sp.symbols("d l", positive=True)
    m = (ll - 1) / 2
    num = (2 * ll + dd + 2) * (ll + dd - 1) * (ll + dd - 2) * (2 * m + 1) ** 2
    den = (2 * ll + dd - 2) * (ll + 2) * (ll + 1) * (2 * m + dd + 1) ** 2
    assert sp.simplify(sp.limit(num / den, dd, sp.oo) - ll**2 / ((ll + 1) * (ll + 2))) == 0
    assert eta2_ratio(7, 5) == (int(num.subs({dd: 7, ll: 5})), int(den.subs({dd: 7, ll: 5})))
    herm = hermite_energies(51)

    def deviation(d: int) -> float:  # max relative deviation from c_l^2 over odd l <= 51
        lo, _ = eta2_enclosures(d, 51, 64)
        return max(abs(v / 2**64 / herm[2 * i + 1] - 1) for i, v in enumerate(lo))

    # O(1/d): a quarter at four times d (up to the next order)
    assert 0.2 < deviation(16000) / deviation(4000) < 0.3

def test_step2_energies_and_tail_decay_like_l_to_the_minus_three_halves() -> None:
    c = hermite_energies(100001)
    assert c[100001] * 100001**1.5 / K == pytest.approx(1, abs=1e-5)
    tail = 1 - sum(v for l, v in c.items() if l <= 10001)  # sum c_l^2 = E sign^2 = 1
    assert tail * math.sqrt(10001) / K == pytest.approx(1, abs=1e-3)


def test_step3_the_degree_needed_grows_like_eps_to_the_minus_two() -> None:
    assert limit_degree(1e-3) * 1e-6 == pytest.approx(K**2 / 4, rel=1e-3)
    assert [limit_degree(e) for e in (0.05, 0.065)] == [25, 15]  # the quick grid's eps


@pytest.mark.parametrize("eps", [0.05, 0.065])
def test_step4_log_heads_grows_like_the_limit_degree_times_log_d(eps: float) -> None:
    # log H* = L*(eps) log d + O(1): the slope in log d identifies the degree (odd: within 1)
    lo, hi = (math.log(heads_needed(d, 1, eps)) for d in (1024, 4096))
    assert abs((hi - lo) / math.log(4) - limit_degree(eps)) < 1
