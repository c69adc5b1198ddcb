"""PROVISIONAL float evaluation of the N >= 3 bound B_N on D_N (docs/paper.md, "Beyond two keys"),
for testing the sandwich at N >= 3 only: a Monte Carlo estimate of Gamma_l = E gamma_l(kappa)^2,
never rigorous (``Part(rigorous=False)``). Replaced at merge by the proved enclosure of the same
name and signature."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import beta as beta_fn
from scipy.special import eval_gegenbauer

from workbench.core.bounds.value import BoundValue, Part, Truncation
from workbench.core.harmonics import dim_harmonics
from workbench.core.validation import check_layer, check_points

__all__ = ["n_keys_bound"]

_DRAWS = 200_000
_L = 61


@lru_cache(maxsize=64)
def _gammas(n: int, N: int) -> tuple[float, ...]:
    """Monte Carlo ``Gamma_l`` for odd l <= _L (seed 0): kappa = (sqrt2 max_{j>=3} g_j - g_u) /
    chi_n; gamma_l(kappa) in closed form, 0 for kappa >= 1."""
    rng = np.random.default_rng(0)
    g = rng.standard_normal((_DRAWS, N - 1))
    chi = np.sqrt(rng.chisquare(n, _DRAWS))
    kappa = (math.sqrt(2) * g[:, 1:].max(1) - g[:, 0]) / chi
    kp = np.clip(kappa, 0.0, 1.0)
    lam = (n - 2) / 2
    out = []
    for l in range(1, _L + 1, 2):
        integral = (1 - kp * kp) ** (lam + 0.5) * 2 * lam * eval_gegenbauer(l - 1, lam + 1, kp) \
            / (l * (l + 2 * lam))
        gam = 2 * math.sqrt(dim_harmonics(n, l)) / (beta_fn(0.5, lam + 0.5)
                                                     * eval_gegenbauer(l, lam, 1.0)) * integral
        out.append(float(np.mean(gam * gam)))
    return tuple(out)


def _I(k: int, r: int) -> int:
    return math.comb(k + r - 1, r - 1) if k >= 0 else 0


def n_keys_bound(d: int, r: int, H: int, N: int, value_class: str = "eq2") -> BoundValue:
    """B_N = (N-1)/2 sum_{l odd} Gamma_l (1 - min(1, H D_l / N(n,l))), n = d - N + 1
    (3 <= N <= d - 2, Eq. 2): a Monte Carlo estimate, not rigorous."""
    d, r, H = check_layer(d, r, H)
    N = check_points(N, "N")
    if not 3 <= N <= d - 2:
        raise ValueError(f"N must lie in 3..d-2 = 3..{d - 2} (got {N})")
    if value_class != "eq2":
        raise ValueError(f"value_class must be eq2 (got {value_class!r})")
    n = d - N + 1
    gam = _gammas(n, N)
    total = 0.0
    for i, G in enumerate(gam):
        l = 2 * i + 1
        D = _I(l - 2, r) + _I(l, r) + _I(l + 2, r) + min(N - 1, n) * (_I(l - 1, r) + _I(l + 1, r))
        total += G * (1 - min(1.0, H * D / dim_harmonics(n, l)))
    v = (N - 1) / 2 * total
    tail = max(0.0, (N - 1) / 2 * (2 / N - sum(gam)))
    return BoundValue((Part("n-keys (provisional)", (v, v + tail), False,
                            "Monte Carlo Gamma_l (provisional)",
                            Truncation(_L, tail, tail < 1e-3)),))
