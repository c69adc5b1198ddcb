"""The exact one-head witness for any N = 2 target profile (docs/derivations/
witnesses_beyond_two.md, "One head, any profile").

For a target ``f = (u + psi(<y, w>) w)/sqrt2`` on ``D_2`` (``psi`` odd, ``|psi| <= 1``; hardmax
``psi = sign``, soft-nearest ``psi = tanh(beta t/sqrt2)``), one head with value map ``M = I``,
keys seen through the first ``r`` coordinates (``z = P w``) and the Bayes score
``psi_h = E[psi(<y, w>) | z, y]`` (in ``[-1, 1]``: a probability vector ``((1 + psi_h)/2,
(1 - psi_h)/2)``) has the error

    err_1(psi) = 1/2 (E psi^2 - sum_l eta_l(psi)^2 C(l+r-1, r-1) / N(d,l)),

``eta_l(psi)`` the profile's harmonic coefficients
(:mod:`workbench.core.bounds.profiles.profile_energy`).
:func:`profile_one_head_error` encloses it (degrees above the summed ones only lower it, so the
upper end is a valid witness error for any truncation); :func:`profile_bayes_score` computes the
score by Gauss-Jacobi quadrature over the unseen part of ``w``, and
:func:`profile_one_head_losses` measures the head by Monte Carlo, its output formed from the
keys, against any target map: the independent check of the formula.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.special import roots_jacobi

from workbench.core.bounds.harmonic_count.harmonic import _tables
from workbench.core.bounds.profiles.profile_energy import profile_energies
from workbench.core.bounds.profiles.profile_harmonic import _down, _up, profile_degree
from workbench.core.profiles import Profile
from workbench.core.sphere import make_generator, sample_instances
from workbench.core.validation import check_dim, check_int, check_key_rank

__all__ = ["OneHeadError", "profile_bayes_score", "profile_one_head_error",
           "profile_one_head_losses"]

QUAD_NODES = 192  # Gauss-Jacobi nodes of the score's integral over the unseen coordinate


@dataclass(frozen=True)
class OneHeadError:
    """``enclosure`` of ``err_1(psi)`` at ``(d, r)``; ``rigorous``: from proved energies (arb)
    with outward rounding, else quadrature values (an estimate). ``degrees_summed``: the odd
    degrees counted; the rest could lower the error by at most ``tail`` (already inside the
    enclosure)."""

    d: int
    r: int
    profile: str
    enclosure: tuple[float, float]
    rigorous: bool
    degrees_summed: int
    tail: float

    @property
    def value(self) -> float:
        """The upper end: the error the witness is claimed to have at most."""
        return self.enclosure[1]


def profile_one_head_error(profile: Profile, d: int, r: int, *,
                           max_degree: int | None = None) -> OneHeadError:
    """Enclosure of the one-head Bayes witness's error ``1/2 (E psi^2 - sum_l eta_l^2
    C(l+r-1, r-1)/N(d,l))`` for ``1 <= r < d`` (exact rational weights, outward rounding)."""
    d = check_dim(d)
    r = check_key_rank(r, d)
    if r >= d:
        raise ValueError(f"r must be < d for the one-head Bayes witness (got r={r}, d={d})")
    if max_degree is None:
        L = profile_degree(profile, d)
    else:
        L = check_int("max_degree", max_degree, lo=1)
        L -= 1 - L % 2
    e = profile_energies(profile, d, L)
    degrees, Ns, _ = _tables(d, r, L)
    frac = [Fraction(math.comb(l + r - 1, r - 1), n) for l, n in zip(degrees, Ns)]
    cap_lo = sum((Fraction(x) * f for x, f in zip(e.lo, frac)), Fraction(0))
    cap_hi = sum((Fraction(x) * f for x, f in zip(e.hi, frac)), Fraction(0))
    # the degrees above L hold at most E psi^2 - sum lo_l, of which a fraction <= 1 is captured
    tail = max(Fraction(0), Fraction(e.total[1]) - sum(map(Fraction, e.lo), Fraction(0)))
    hi = (Fraction(e.total[1]) - cap_lo) / 2
    lo = max(Fraction(0), (Fraction(e.total[0]) - cap_hi - tail) / 2)
    return OneHeadError(d, r, profile.label, (_down(lo), _up(hi)), e.rigorous, L,
                        _up(tail / 2))


def profile_bayes_score(psi: Callable[[np.ndarray], np.ndarray], z: np.ndarray, y: np.ndarray,
                        nodes: int = QUAD_NODES) -> np.ndarray:
    """``E[psi(<y, w>) | P w = z, y]`` for ``w`` uniform on ``S^{d-1}``, ``P`` the first ``r``
    coordinates: given ``z``, ``w = (z, rho v)`` with ``rho^2 = 1 - |z|^2`` and ``v`` uniform on
    ``S^{m-1}`` (``m = d - r``), so ``<y, w> = <y_P, z> + rho |y_Q| v_1`` and ``v_1`` has the
    density ``~ (1 - v^2)^{(m-3)/2}`` (``+-1`` with equal weight for ``m = 1``). ``z`` ``(n, r)``,
    ``y`` ``(n, d)``; returns ``(n,)``."""
    r = z.shape[1]
    m = y.shape[1] - r
    known = (z * y[:, :r]).sum(-1)
    spread = np.sqrt(np.clip(1 - (z * z).sum(-1), 0, None)) * np.linalg.norm(y[:, r:], axis=1)
    if m == 1:
        v, wv = np.array([-1.0, 1.0]), np.array([0.5, 0.5])
    else:
        v, wv = roots_jacobi(nodes, (m - 3) / 2, (m - 3) / 2)
        wv = wv / wv.sum()
    t = np.clip(known[:, None] + spread[:, None] * v[None, :], -1.0, 1.0)
    return np.asarray(psi(t) @ wv)


def profile_one_head_losses(
    psi: Callable[[np.ndarray], np.ndarray], d: int, r: int, n: int, seed: int,
    target: Callable[[Any, Any], Any] | None = None, chunk: int = 20_000,
) -> np.ndarray:
    """Per-sample errors ``||f - A||^2`` of the one-head Bayes witness on ``n`` samples of
    ``D_2`` (stream ``seed``): the head's output ``A = X phi`` with ``phi = ((1 + psi_h)/2,
    (1 - psi_h)/2)`` formed from the keys, ``f = target(X, y)`` (torch, ``(n, 2, d)`` and
    ``(n, d)``; default ``(u + psi(<y, w>) w)/sqrt2``). Each loss lies in ``[0, 2]``."""
    d = check_dim(d)
    r = check_key_rank(r, d)
    n = check_int("n", n, lo=2)
    gen = make_generator(seed)
    out = []
    for start in range(0, n, chunk):
        X, y = sample_instances(min(chunk, n - start), 2, d, points="orthonormal",
                                generator=gen)
        Xn, yn = X.double().numpy(), y.double().numpy()
        w = (Xn[:, 0] - Xn[:, 1]) / math.sqrt(2)
        ph = profile_bayes_score(psi, w[:, :r], yn)
        A = Xn[:, 0] * ((1 + ph) / 2)[:, None] + Xn[:, 1] * ((1 - ph) / 2)[:, None]
        if target is None:
            u = (Xn[:, 0] + Xn[:, 1]) / math.sqrt(2)
            f = (u + psi((yn * w).sum(-1))[:, None] * w) / math.sqrt(2)
        else:
            f = np.asarray(target(X.double(), y.double()).detach().numpy(), dtype=np.float64)
        out.append(((f - A) ** 2).sum(-1))
    return np.concatenate(out)
