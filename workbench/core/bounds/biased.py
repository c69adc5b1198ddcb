"""Lower bound for rank-r generalized attention on Theorem 3's biased target, N = 2, D_2 keys,
Gaussian queries (docs/paper.md §3 Theorem 3, lower side; docs/derivations/biased_lower_bound.md).

For ``f* = sum_j c_j x_{argmax_i(<x_i,y> + tau_j [i = 2])}`` the w-component of ``f*`` is
``S(t)/sqrt2`` with ``t = <x1 - x2, y>`` and the step function ``S = 2 g - sum_j c_j``,
``g(t) = sum_j c_j [t > tau_j]``. Projecting on ``w`` (Lemma 1 of the certified bound) and
conditioning on ``rho = ||y||`` (``y/rho`` is uniform and independent of ``rho``), Lemmas 3-5
apply at each fixed ``rho`` and give

    err >= B = 1/2 E_rho sum_l eta_l(rho)^2 (1 - min(1, H D_l / N(d,l)))

with ``eta_l(rho)`` the normalised Gegenbauer coefficient of ``c -> S(sqrt2 rho c)`` on
S^{d-1}. ``eta_l(rho)`` is exact up to float rounding: ``S`` is piecewise constant and the weighted
Gegenbauer polynomial has the closed antiderivative

    int_{-1}^c P_l^{(d)} w_d = -(1 - c^2)^((d-1)/2) P_{l-1}^{(d+2)}(c) / ((d-1) B(1/2, (d-1)/2)).

Degrees above ``max_degree`` are dropped (never counted as lost: conservative). ``E_rho`` is a
stratified Monte Carlo mean over the chi_d law; every stratum's term lies in ``[0, max S^2 / 2]``,
so a Hoeffding interval is valid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.core.bounds import QUERY_VALUES
from workbench.core.bounds.harmonic_count.harmonic import degree_dimension_bound
from workbench.core.bounds.value import THEOREM3_LOWER, Part
from workbench.core.harmonics import dim_harmonics, legendre_d
from workbench.core.validation import check_dim, check_float, check_heads, check_int, check_rank

# The count d(d+1)/2 D'_l (QUERY_VALUES) of docs/derivations/biased_lower_bound.md (every
# quadratic form): the derivation there does not use the tighter one-form count D'_l, so neither
# does the code.

_TABLE_SIZE = 1 << 20  # entries of one table of P_l(cut): small tables stay in reused memory

__all__ = [
    "BiasedBound", "DegreeEnergies", "biased_lower_bound", "degree_energies", "step_coefficients",
    "step_values",
]


@dataclass(frozen=True)
class BiasedBound:
    """Result of :func:`biased_lower_bound`: ``ci[0]`` is the number, valid with probability
    ``level``; its labels are those of :meth:`part`."""

    d: int
    r: int
    heads: int
    value: float  # stratified Monte Carlo mean of the bound
    ci: tuple[float, float]  # Hoeffding interval at ``level``
    level: float
    energy: float  # E S^2 / 2: the bound when no degree is captured
    energy_summed: float  # the part of ``energy`` at degrees <= max_degree (mean over rho)
    max_degree: int
    samples: int

    def part(self) -> Part:
        """This bound as a part of a :class:`~workbench.core.bounds.value.BoundValue`."""
        return THEOREM3_LOWER.at(self.ci, f"Hoeffding interval at level {self.level:g} over "
                                 f"{self.samples} strata, degrees <= {self.max_degree}")


def step_values(thresholds: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """``S`` on the ``J + 1`` intervals cut by the sorted thresholds: ``2 g - sum_j c_j``."""
    order = np.argsort(thresholds, kind="stable")
    c = np.asarray(coefficients, dtype=np.float64)[order]
    g = np.concatenate([[0.0], np.cumsum(c)])  # g on (-inf, tau_1), (tau_1, tau_2), ...
    return 2 * g - c.sum()


def step_coefficients(
    d: int, rho: np.ndarray, thresholds: np.ndarray, coefficients: np.ndarray, max_degree: int
) -> np.ndarray:
    """``eta_l(rho)`` for ``l = 0..max_degree`` and every ``rho``: shape ``(L + 1, len(rho))``."""
    from scipy.special import beta as beta_fn
    from scipy.special import betainc
    d = check_dim(d)
    L = check_int("max_degree", max_degree, lo=1)
    tau = np.sort(np.asarray(thresholds, dtype=np.float64))
    S = step_values(np.asarray(thresholds, dtype=np.float64), coefficients)  # (J + 1,)
    rho = np.asarray(rho, dtype=np.float64)
    cuts = np.clip(tau[None, :] / (math.sqrt(2.0) * rho[:, None]), -1.0, 1.0)  # (n, J)
    # Summation by parts: sum_k S_k (F_l(cut_k) - F_l(cut_{k-1})), with F_l(-1) = 0 and
    # F_l(1) = [l = 0], is sum_j F_l(cut_j) (S_j - S_{j+1}) + S_J [l = 0]; F_0 = betainc and
    # F_l = -(1 - c^2)^a P_{l-1}^{(d+2)}(c) / ((d - 1) B(1/2, a)) for l >= 1, so one contraction
    # over the cuts replaces the table of F.
    a = (d - 1) / 2
    dS = S[:-1] - S[1:]  # (J,)
    raw = np.empty((L + 1, len(rho)))
    raw[0] = betainc(a, a, (1 + cuts) / 2) @ dS + S[-1]
    weight = ((1 - cuts * cuts) ** a) * (-dS / ((d - 1) * beta_fn(0.5, a)))  # (n, J)
    rows = max(1, _TABLE_SIZE // (L * max(1, len(tau))))  # rho values per Gegenbauer table
    for i in range(0, len(rho), rows):
        P = legendre_d(d + 2, L - 1, cuts[i:i + rows])  # (L, rows, J)
        raw[1:, i:i + rows] = np.einsum("lnj,nj->ln", P, weight[i:i + rows])
    scale = np.array([math.sqrt(dim_harmonics(d, l)) for l in range(L + 1)])
    return raw * scale[:, None]


@dataclass(frozen=True)
class DegreeEnergies:
    """``eta_l(rho_i)^2`` for stratified ``rho_i ~ chi_d``: ``eta2`` ``(L + 1, samples)``."""

    d: int
    eta2: np.ndarray
    top: float  # max S^2 / 2: the range of every stratum's term
    energy: float  # E S^2 / 2

    @property
    def max_degree(self) -> int:
        return int(self.eta2.shape[0]) - 1


def degree_energies(
    d: int,
    thresholds: np.ndarray,
    coefficients: np.ndarray,
    *,
    max_degree: int,
    samples: int = 2000,
    seed: int = 0,
) -> DegreeEnergies:
    """The per-degree energies of ``S(sqrt2 rho c)`` at one ``rho`` per chi_d stratum."""
    from scipy.stats import chi
    d = check_dim(d)
    samples = check_int("samples", samples, lo=2)
    L = check_int("max_degree", max_degree, lo=1)
    g = np.random.default_rng(check_int("seed", seed, lo=0))
    u = (np.arange(samples) + g.random(samples)) / samples  # one draw per stratum
    rho = chi.ppf(u, d)
    tau = np.asarray(thresholds, dtype=np.float64)
    eta2 = step_coefficients(d, rho, tau, coefficients, L) ** 2
    S = step_values(tau, coefficients)
    return DegreeEnergies(d, eta2, 0.5 * float(np.max(S * S)), _step_energy(S, np.sort(tau)))


def biased_lower_bound(
    energies: DegreeEnergies, r: int, H: int, *, level: float = 0.999
) -> BiasedBound:
    """Lower bound ``B`` on ``E||f* - A||^2`` for H rank-r generalized-attention heads (N = 2,
    D_2 keys, Gaussian queries), with a Hoeffding interval over the chi_d average."""
    d = energies.d
    r = check_rank(r, d)
    H = check_heads(H)
    level = check_float("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    L, eta2 = energies.max_degree, energies.eta2
    lost = np.array(
        [max(0.0, 1.0 - H * degree_dimension_bound(d, r, l, QUERY_VALUES) / dim_harmonics(d, l))
         for l in range(L + 1)]
    )
    z = 0.5 * (lost[:, None] * eta2).sum(0)  # per stratum, in [0, max S^2 / 2]
    n = eta2.shape[1]
    half = energies.top * math.sqrt(math.log(2 / (1 - level)) / (2 * n))
    mean = float(z.mean())
    return BiasedBound(d, r, H, mean, (max(0.0, mean - half), mean + half), level,
                       energies.energy, float(0.5 * eta2.sum(0).mean()), L, n)


def _step_energy(S: np.ndarray, tau: np.ndarray) -> float:
    """``E S(t)^2 / 2`` for ``t = <x1 - x2, y> ~ N(0, 2)`` (exact normal probabilities)."""
    from scipy.stats import norm

    edges = np.concatenate([[-np.inf], tau, [np.inf]])
    p = np.diff(norm.cdf(edges / math.sqrt(2.0)))
    return float(0.5 * (p * S * S).sum())
