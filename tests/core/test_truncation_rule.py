"""The one truncation rule (workbench/core/bounds/numerics/truncation.py;
docs/derivations/lower_bound.md,
Lemma 6, "The counted tail" and "The truncation rule"), the soft count's step S6
(docs/derivations/soft_targets.md) and the law of heads-needed in beta."""

from __future__ import annotations

import json
import math

import mpmath as mp
import numpy as np
import pytest

from workbench.cli import main
from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound, heads_needed_search
from workbench.core.bounds.profiles.profile_harmonic import profile_bound, profile_heads_needed
from workbench.core.bounds.profiles.soft_limit import distance_to_sign
from workbench.core.harmonics import sign_coefficients
from workbench.core.profiles import tanh_profile

GRID = [(16, 1, 0.05, "eq2"), (8, 1, 0.1, "eq2"), (8, 2, 0.05, "eq2"), (6, 1, 0.2, "eq2"),
        (12, 3, 0.1, "eq2"), (16, 2, 0.1, "query-dependent-values"),
        (8, 1, 0.05, "query-dependent-values")]


@pytest.mark.parametrize("d,r,eps,vc", GRID)
def test_heads_needed_and_lower_agree_at_h_star(d: int, r: int, eps: float, vc: str) -> None:
    res = heads_needed_search(d, r, eps, value_class=vc)
    assert not res.truncation_limited and res.truncation is not None and res.truncation.settled
    H = res.heads
    assert harmonic_bound(d, r, H - 1, value_class=vc).enclosure[0] > eps
    assert harmonic_bound(d, r, H, value_class=vc).enclosure[0] <= eps


def test_the_issue_case_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bounds", "heads-needed", "--d", "16", "--rank", "1", "--eps", "0.05",
                 "--json"]) == 0
    H = json.loads(capsys.readouterr().out)["heads_needed"]
    for h, above in ((H - 1, True), (H, False)):
        assert main(["bounds", "lower", "--d", "16", "--rank", "1", "--heads", str(h),
                     "--json"]) == 0
        p = json.loads(capsys.readouterr().out)
        assert (p["lower_bound"] > 0.05) is above
        assert p["truncation"]["settled"] and not p["truncation_matters"]
        assert p["truncation"]["flag"] == "--max-degree"


def test_truncation_that_matters_is_said_with_its_flag(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    assert main(["bounds", "lower", "--d", "8", "--rank", "1", "--heads", "4",
                 "--max-degree", "3"]) == 0
    out = capsys.readouterr().out
    assert "TRUNCATION MATTERS" in out and "--max-degree" in out


@pytest.mark.parametrize("d,r,H", [(16, 1, 16), (8, 1, 4), (6, 2, 3), (64, 1, 16384),
                                   (12, 5, 64), (5, 1, 10**6)])
def test_printed_digits_unchanged_by_more_degrees(d: int, r: int, H: int) -> None:
    base = harmonic_bound(d, r, H)
    assert base.truncation is not None and base.truncation.settled
    L = base.degrees_summed
    for more in (4 * L + 1, 16 * L + 1):
        hi = harmonic_bound(d, r, H, max_degree=min(more, 60001))
        assert f"{hi.enclosure[0]:.6g}" == f"{base.enclosure[0]:.6g}"
        assert base.enclosure[0] <= hi.enclosure[0] <= base.enclosure[1]  # monotone in L


@pytest.mark.parametrize("d,r,H", [(16, 1, 16), (8, 1, 16), (6, 2, 3)])
def test_full_series_against_a_long_float_sum(d: int, r: int, H: int) -> None:
    """Independent: the float sign energies to L' = 20001 (numpy recurrence), the truncated sum
    below and plus the whole tail above; the library's enclosure at a small L must meet it, and
    its lower end must not pass the independent upper end (counting the tail as fully lost at
    L = 9 would)."""
    Lp = 20001
    e = sign_coefficients(d, Lp)[1::2] ** 2
    ls = np.arange(1, Lp + 1, 2)
    N = np.array([math.comb(l + d - 2, d - 2) + math.comb(l + d - 3, d - 2) for l in ls],
                 dtype=float)
    D = np.array([sum(math.comb(k + r - 1, r - 1) for k in (l - 2, l, l + 2) if k >= 0)
                  for l in ls], dtype=float)
    trunc = float(np.sum(e * np.clip(1 - H * D / N, 0, None))) / 2
    upper = trunc + (1 - float(e.sum())) / 2
    for L in (9, None):
        lb = harmonic_bound(d, r, H, max_degree=L)
        assert lb.enclosure[0] <= upper + 1e-12 and lb.enclosure[1] >= trunc - 1e-12


# ------------------------------------------------------------------ the soft count and S6
def _mp_distance(beta: float, d: int) -> float:
    rho = mp.gamma(mp.mpf(d) / 2) / (mp.sqrt(mp.pi) * mp.gamma(mp.mpf(d - 1) / 2))
    pts = [0, 1 / beta, 10 / beta, 100 / beta, 1] if beta > 100 else [0, 1]
    return float(2 * rho * mp.quad(lambda t: (1 - mp.tanh(beta * t / mp.sqrt(2))) ** 2
                                   * (1 - t * t) ** (mp.mpf(d - 3) / 2), pts))


@pytest.mark.parametrize("beta,d", [(4.0, 8), (64.0, 6), (1024.0, 6), (1e6, 16)])
def test_distance_to_sign_contains_an_mpmath_quadrature(beta: float, d: int) -> None:
    lo, hi = distance_to_sign(beta, d)
    ref = _mp_distance(beta, d)
    assert lo <= ref * (1 + 1e-12) and ref <= hi * (1 + 1e-12) and hi - lo < 1e-12 * hi


def test_soft_full_series_at_beta_4_and_the_s6_part() -> None:
    """(8, 1, 4), beta = 4: the full series (0.0090935..., not the truncated 0.0081373);
    independently, mpmath energies to L = 41 below and plus the rest of E psi^2 above."""
    d, r, H, beta = 8, 1, 4, 4.0
    b = profile_bound(tanh_profile(beta), d, r, H)
    rho = mp.gamma(mp.mpf(d) / 2) / (mp.sqrt(mp.pi) * mp.gamma(mp.mpf(d - 1) / 2))
    w = lambda t: (1 - t * t) ** (mp.mpf(d - 3) / 2)  # noqa: E731
    psi = lambda t: mp.tanh(beta * t / mp.sqrt(2))  # noqa: E731
    total = float(2 * rho * mp.quad(lambda t: psi(t) ** 2 * w(t), [0, 1]))
    trunc, energy = 0.0, 0.0
    for l in range(1, 42, 2):
        N = math.comb(l + d - 2, d - 2) + math.comb(l + d - 3, d - 2)
        eta = float(2 * rho * mp.quad(lambda t, l=l, N=N: psi(t) * mp.sqrt(N) * mp.gegenbauer(
            l, mp.mpf(d - 2) / 2, t) / mp.gegenbauer(l, mp.mpf(d - 2) / 2, 1) * w(t), [0, 1]))
        Dl = sum(math.comb(k + r - 1, r - 1) for k in (l - 2, l, l + 2) if k >= 0)
        trunc += eta**2 * max(0.0, 1 - H * Dl / N) / 2
        energy += eta**2
    upper = trunc + (total - energy) / 2
    assert trunc - 1e-12 <= b.enclosure[1] and b.enclosure[0] <= upper + 1e-12
    assert b.enclosure[0] > 0.00909 and b.truncation is not None and b.truncation.settled
    s6 = b.bound_value.part("harmonic count via hardmax (S6)")
    assert s6.rigorous and s6.enclosure[0] <= b.enclosure[1]  # the same series, enclosed twice


def test_soft_at_beta_1e6_meets_hardmax() -> None:
    hard = harmonic_bound(16, 1, 16).enclosure[0]
    soft = profile_bound(tanh_profile(1e6), 16, 1, 16)
    assert abs(soft.enclosure[0] - hard) < 1e-3
    s6 = soft.bound_value.part("harmonic count via hardmax (S6)").enclosure[0]
    assert hard - s6 < 1e-3  # S6 alone meets it too (delta ~ 1.3e-3, times sqrt(2 LB))


def _eps_window(eps: float, delta: float) -> tuple[float, float]:
    """S6 at fixed eps: H*_sign(e_hi) <= H*_beta(eps) <= H*_sign(e_lo) (soft_targets.md,
    "heads-needed as a function of beta")."""
    e_lo = (math.sqrt(eps) - delta / math.sqrt(2)) ** 2
    e_hi = (delta / math.sqrt(2) + math.sqrt(delta**2 / 2 + eps)) ** 2
    return e_lo, e_hi


def test_heads_needed_saturates_in_beta_at_fixed_eps() -> None:
    """The law: H*_beta(eps) is held between two hardmax answers at eps moved by delta_beta
    (-> 0), so it saturates at the hardmax H* as beta grows: not H* ~ beta^(d-2)."""
    d, eps = 8, 0.1
    heads = {}
    for beta in (256.0, 1024.0, 4096.0):
        delta = math.sqrt(distance_to_sign(beta, d)[1])
        e_lo, e_hi = _eps_window(eps, delta)
        h = profile_heads_needed(tanh_profile(beta), d, 1, eps)
        assert not h.truncation_limited
        heads[beta] = h.heads
        assert heads_needed_search(d, 1, e_hi).heads <= h.heads
        assert h.heads <= heads_needed_search(d, 1, e_lo).heads
    hard = heads_needed_search(d, 1, eps).heads
    assert heads[4096.0] <= 1.2 * hard  # saturated near hardmax ...
    assert heads[1024.0] / heads[256.0] < 4.0 ** (d - 2) / 100  # ... far from beta^(d-2)


@pytest.mark.parametrize("m,k", [(2, 0), (3, 0), (3, 1), (5, 2)])
def test_r2_series_is_finite_at_one_because_gamma_minus_a_minus_b(m: int, k: int) -> None:
    """docs/derivations/fiber_bound.md, Lemma R2 step 2: ``T_{k,n} ~ n^{-(m/2+k)-1}
    Gamma(g)/(2 Gamma(a) Gamma(b))`` with ``g - a - b = m/2 - 1 + k >= 0`` (a = 1/2, b = m/2,
    g = m - 1/2 + k), by the ratio of Lemma R2 (independent of the library)."""
    a, b, g = 0.5, m / 2, m - 0.5 + k
    T, n_max = 1.0, 200000
    for n in range(n_max):
        T *= (2 * n + 1) ** 2 * (2 * n + m) / (2 * (2 * n + 2 * m - 1 + 2 * k) * (n + 1)
                                                * (2 * n + 3))
    want = math.gamma(g) / (2 * math.gamma(a) * math.gamma(b))
    got = n_max ** (m / 2 + k + 1) * T
    assert got == pytest.approx(want, rel=2e-2)
    assert g - a - b >= 0


@pytest.mark.parametrize("beta,d,eps", [(32.0, 8, 0.1), (1024.0, 8, 0.1), (16.0, 16, 0.05)])
def test_soft_heads_needed_and_lower_agree(beta: float, d: int, eps: float,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The soft count: heads-needed --target and bounds lower --target at H* - 1 and H*."""
    spec = ["--target", "soft-nearest", "--target-param", f"beta={beta}"]
    assert main(["bounds", "heads-needed", "--d", str(d), "--rank", "1", "--eps", str(eps),
                 "--json", *spec]) == 0
    H = json.loads(capsys.readouterr().out)["heads_needed"]
    for h, above in ((H - 1, True), (H, False)):
        assert main(["bounds", "lower", "--d", str(d), "--rank", "1", "--heads", str(h),
                     "--json", *spec]) == 0
        assert (json.loads(capsys.readouterr().out)["lower_bound"] > eps) is above
