"""The energies ``Gamma_l = E gamma_l(kappa)^2`` of the bound beyond two keys, as rigorous
enclosures (docs/derivations/beyond_two_keys.md, steps 5, 9 and 10, "Rigorous evaluation").

On the fiber ``S^{n-1}`` (``n = d - N + 1``) the target is ``t = sign(c) 1[|c| > kappa]`` and its
coefficient on the normalised Gegenbauer polynomial of odd degree l is

    gamma_l(k) = a_l (1 - k+^2)^{(n-1)/2} C_{l-1}^{n/2}(k+)   (0 for k >= 1),
    a_l = 2 (n - 2) sqrt(N(n,l)) / (B(1/2, (n-1)/2) C(l+n-3, l) l (l+n-2)),

so ``q_l(k) = gamma_l(k)^2`` is a polynomial in ``k`` on ``[0, 1]`` and

    Gamma_l = P(kappa <= 0) q_l(0) + int_0^1 q_l(k) f(k) dk,

with ``f`` the density of ``kappa = (sqrt2 max_{j<=m} g_j - g_u)/R`` (``m = N - 2`` Gaussians,
``R ~ chi_n``). ``f`` is elementary for N = 3 (a scaled Student t) and N = 4 (a skew-normal
ratio); for N >= 5 it is an integral over the maximum ``x`` of the Gaussians,
``f(k) = int m phi(x) Phi(x)^{m-1} h(k, sqrt2 x) dx``, with ``h(k, s)``, the density of
``(s - g_u)/R``, in closed form. Every integral is arb's ``acb.integral`` (truncation error
included, :mod:`workbench.core.rigorous`); the cut ``|x| <= X`` is counted: it changes
``Gamma_l`` by at most ``P(|max| > X) <= (m + 1) Phi(-X)`` because ``0 <= q_l <= 1``.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from workbench.core import rigorous as rig
from workbench.core.harmonics import dim_harmonics
from workbench.core.validation import check_int

__all__ = ["X_CUT", "TABLE_FILE", "atom_at_zero", "coefficient", "compute_enclosures",
           "density_bound", "energy_enclosures", "fiber_dim", "kappa_density", "table_degree",
           "table_pairs"]

_BITS = 64
X_CUT = 10  # the maximum of the Gaussians is integrated over [-X_CUT, X_CUT]


def fiber_dim(d: int, N: int) -> int:
    """``n = d - N + 1``: the dimension of the space E that the pair direction
    ``w = (x1 - x2)/sqrt2`` ranges over once ``u = (x1 + x2)/sqrt2`` and ``x_3..x_N`` are fixed
    (step 4)."""
    return d - N + 1


def _check(d: int, N: int) -> tuple[int, int]:
    d = check_int("d", d, lo=5)
    N = check_int("N", N, lo=3, hi=d - 2)
    return d, fiber_dim(d, N)


def _gegenbauer(j: int, mu: Any, x: Any) -> Any:
    """``C_j^mu(x)`` by the three-term recurrence, in balls (real or complex)."""
    c0 = x * 0 + 1
    if j == 0:
        return c0
    c1 = 2 * mu * x
    for i in range(1, j):
        c0, c1 = c1, (2 * (i + mu) * x * c1 - (i + 2 * mu - 1) * c0) / (i + 1)
    return c1


def _a_squared(n: int, l: int) -> Any:
    """``a_l^2`` as a ball (exact integers over ``B(1/2, (n-1)/2)^2``)."""
    num = 4 * (n - 2) ** 2 * dim_harmonics(n, l)
    den = (math.comb(l + n - 3, l) * l * (l + n - 2)) ** 2
    b = rig.beta(rig.arb(1) / 2, rig.arb(n - 1) / 2)
    return rig.arb(num) / rig.arb(den) / (b * b)


def coefficient(n: int, l: int, k: Any) -> Any:
    """``gamma_l(k)`` on ``S^{n-1}`` (a ball; ``k`` a real ball in ``[-1, 1)``; k <= 0 gives
    the coefficient of ``sign``)."""
    k = rig.arb(k)
    kp = k if k > 0 else rig.arb(0)
    return (_a_squared(n, l).sqrt() * (1 - kp * kp) ** (rig.arb(n - 1) / 2)
            * _gegenbauer(l - 1, rig.arb(n) / 2, kp))


def _q(n: int, l: int, k: Any, a2: Any) -> Any:
    """``q_l(k) = gamma_l(k)^2`` for ``0 <= k <= 1`` (a polynomial: entire in complex k)."""
    g = _gegenbauer(l - 1, rig.arb(n) / 2, k)
    return a2 * (1 - k * k) ** (n - 1) * g * g


def _phi_cdf(z: Any) -> Any:
    """``Phi(z) = erfc(-z/sqrt2)/2`` (entire)."""
    return (-z / rig.arb(2).sqrt()).erfc() / 2


def _nan() -> Any:
    return rig.acb(rig.arb("nan"))


def _density_n3(n: int, k: Any, analytic: bool) -> Any:
    """N = 3: ``kappa sqrt(n/3)`` is Student t with n degrees."""
    s = (1 + k * k / 3).sqrt(analytic=analytic)
    c = (rig.arb(n + 1) / 2).gamma() / ((rig.arb(n) / 2).gamma() * (3 * rig.pi()).sqrt())
    return c / s ** (n + 1)


def _density_n4(n: int, k: Any, analytic: bool) -> Any:
    """N = 4: ``f(k) = (2/sqrt3) c_n/sqrt(2 pi) I_n(a, b)``, ``a = 1 + k^2/3``,
    ``b = k/sqrt6``, ``I_j = int_0^inf r^j e^{-a r^2/2} Phi(b r) dr`` by its recurrence."""
    a = 1 + k * k / 3
    b = k / rig.arb(6).sqrt()
    c = a + b * b
    sa, sc = a.sqrt(analytic=analytic), c.sqrt(analytic=analytic)
    z = b / sa
    if analytic and not (z.abs_upper() < 1):  # atan is analytic on the unit disc
        return _nan()
    two_pi = 2 * rig.pi()
    i_prev = (two_pi / a).sqrt(analytic=analytic) * (rig.arb(1) / 4 + z.atan() / two_pi)
    i_cur = 1 / (2 * a) + b / (2 * a * sc)
    k_prev, k_cur = 1 / (2 * sc), 1 / (c * two_pi.sqrt())  # K_0, K_1 (K_j of e^{-c r^2/2})
    if n == 0:
        i_cur = i_prev
    for j in range(2, n + 1):  # I_j = (j-1)/a I_{j-2} + b/a K_{j-1}
        i_prev, i_cur = i_cur, (j - 1) / a * i_prev + b / a * k_cur
        k_prev, k_cur = k_cur, (j - 1) / c * k_prev  # K_j = (j-1)/c K_{j-2}
    cn = 1 / (2 ** (rig.arb(n) / 2 - 1) * (rig.arb(n) / 2).gamma())
    return 2 / rig.arb(3).sqrt() * cn / two_pi.sqrt() * i_cur


def _h(n: int, k: Any, s: Any, analytic: bool) -> Any:
    """Density of ``(s - g)/R`` at k (``g`` standard normal, ``R ~ chi_n``):
    ``c_n/sqrt(2 pi) e^{-s^2/(2 alpha)} J_n``, ``alpha = 1 + k^2``,
    ``J_j = int_0^inf r^j e^{-alpha (r - mu)^2/2} dr``, ``mu = s k/alpha``."""
    alpha = 1 + k * k
    sa = alpha.sqrt(analytic=analytic)
    mu = s * k / alpha
    two_pi = 2 * rig.pi()
    j_prev = two_pi.sqrt() / sa * _phi_cdf(mu * sa)
    j_cur = mu * j_prev + (-alpha * mu * mu / 2).exp() / alpha
    for j in range(2, n + 1):
        j_prev, j_cur = j_cur, mu * j_cur + (j - 1) / alpha * j_prev
    cn = 1 / (2 ** (rig.arb(n) / 2 - 1) * (rig.arb(n) / 2).gamma())
    return cn / two_pi.sqrt() * (-s * s / (2 * alpha)).exp() * j_cur


def _density_general(n: int, m: int, k: Any, analytic: bool) -> Any:
    """``f(k) = int_{-X}^{X} m phi(x) Phi(x)^{m-1} h(k, sqrt2 x) dx`` (the cut is counted by
    the caller)."""
    r2 = rig.arb(2).sqrt()
    norm = 1 / (2 * rig.pi()).sqrt()

    def g(x: Any, an: bool) -> Any:
        return m * norm * (-x * x / 2).exp() * _phi_cdf(x) ** (m - 1) * _h(n, k, r2 * x, an)

    return rig.integrate_complex(g, -X_CUT, X_CUT, rel_tol=2.0 ** -30)


def kappa_density(d: int, N: int, k: Any, analytic: bool = False) -> Any:
    """The density of kappa at ``k`` (a complex ball; ``0 <= Re k <= 1``), without the counted
    cut ``|max| <= X_CUT`` for N >= 5."""
    d, n = _check(d, N)
    return _density(n, N, rig.acb(k) if isinstance(k, int | float) else k * 1, analytic)


def _density(n: int, N: int, k: Any, analytic: bool) -> Any:
    if N == 3:
        return _density_n3(n, k, analytic)
    if N == 4:
        return _density_n4(n, k, analytic)
    return _density_general(n, N - 2, k, analytic)


def atom_at_zero(d: int, N: int) -> Any:
    """``P(kappa <= 0) = P(sqrt2 max_j g_j <= g_u) = E Phi(g/sqrt2)^m`` as a ball."""
    d, n = _check(d, N)
    m = N - 2
    if m == 1:
        return rig.arb(1) / 2
    if m == 2:  # the orthant of two Gaussians with correlation 1/3
        return rig.arb(1) / 4 + (rig.arb(1) / 3).asin() / (2 * rig.pi())
    r2 = rig.arb(2).sqrt()
    norm = 1 / (2 * rig.pi()).sqrt()
    val = rig.integrate(lambda x, _: norm * (-x * x / 2).exp() * _phi_cdf(x / r2) ** m,
                        -X_CUT, X_CUT)
    return val + rig.ball(0, 2 * _cut_mass(1))


def _cut_mass(m: int) -> float:
    """An upper bound on ``P(|max of m Gaussians| > X_CUT) <= (m+1) Phi(-X_CUT)``."""
    tail = rig.upper_float(_phi_cdf(rig.arb(-X_CUT)))
    return (m + 1) * tail


_RHO = 2  # Bernstein ellipse parameter of the Gauss-Legendre error bound
_ARCS = 256  # complex balls covering the ellipse's boundary (bound on |q_l| there)


TABLE_FILE = Path(__file__).with_name("n_keys_table.json")
TABLE_D = 55  # the shipped table covers 5 <= N <= d - 2 for every d <= TABLE_D (and some more)


def table_degree(n: int) -> int:
    """The degree the shipped table goes to on a fiber of dimension n: 61 where the tail
    decays slowly (``n < 16``; 128 nodes), else 21 (64 nodes: the rule rarely needs more)."""
    return 61 if n < 16 else 21


def table_pairs() -> list[tuple[int, int]]:
    """The ``(d, N)`` of the shipped table: ``N >= 5`` (N = 3, 4 have elementary densities and
    take milliseconds), ``N <= d - 2``, ``d <= TABLE_D``."""
    return [(d, N) for d in range(7, TABLE_D + 1) for N in range(5, d - 1)]


@lru_cache(maxsize=1)
def _table() -> dict[str, list[list[float]]]:
    if not TABLE_FILE.exists():
        return {}
    return dict(json.loads(TABLE_FILE.read_text())["enclosures"])


@lru_cache(maxsize=256)
def energy_enclosures(d: int, N: int, L: int) -> tuple[tuple[float, float], ...]:
    """``(lo, hi)`` enclosures of ``Gamma_l`` for the odd ``l <= L`` (index ``(l-1)/2``): from
    the shipped table (``benchmarks/build_n_keys_table.py``: :func:`compute_enclosures` once,
    the same proved enclosures) where it reaches L, else :func:`compute_enclosures`."""
    d, n = _check(d, N)
    L = check_int("max_degree", L, lo=1)
    row = _table().get(f"{d} {N}")
    if row is not None and len(row) >= (L + 1) // 2:
        return tuple((lo, hi) for lo, hi in row[: (L + 1) // 2])
    return compute_enclosures(d, N, L)


def compute_enclosures(d: int, N: int, L: int) -> tuple[tuple[float, float], ...]:
    """``(lo, hi)`` enclosures of ``Gamma_l`` for the odd ``l <= L``, computed.

    ``int_0^1 q_l f`` by Gauss-Legendre on ``[0, 1]`` with the proved error bound of
    Trefethen's Theorem 19.3 (``64 M / (15 (rho^2 - 1) rho^{2 nodes})``, halved for ``[0, 1]``),
    ``M`` the product of ``max |q_l|`` over balls covering the ellipse's boundary (maximum
    modulus) and the analytic bound :func:`density_bound` on ``|f|`` there; the nodes are
    added until every error is below ``2^-60`` (docs/derivations/beyond_two_keys.md,
    "Rigorous evaluation")."""
    d, n = _check(d, N)
    L = check_int("max_degree", L, lo=1)
    with rig.precision(_BITS + 4 * L):  # the recurrences lose about 4 bits a degree on balls
        degrees = list(range(1, L + 1, 2))
        a2 = [_a_squared(n, l) for l in degrees]
        q_max = _q_max_on_ellipse(n, L, a2)
        rho = rig.arb(_RHO)
        f_max = density_bound(n, (rho - 1 / rho) / 4)
        nodes = 32
        while True:
            err = [64 * qm * f_max / (15 * (rho * rho - 1) * rho ** (2 * nodes)) / 2
                   for qm in q_max]
            if max(rig.upper_float(e) for e in err) <= 2.0 ** -60 or nodes >= 512:
                break
            nodes *= 2
        sums = _gauss_sums(d, N, n, L, a2, nodes)
        p0 = atom_at_zero(d, N)
        cut = rig.ball(0, _cut_mass(N - 2)) if N >= 5 else rig.arb(0)
        out = []
        for i, l in enumerate(degrees):
            at0 = _q(n, l, rig.arb(0), a2[i])
            val = p0 * at0 + sums[i] + rig.ball(0, rig.upper_float(err[i])) + cut
            out.append(rig.to_interval(val))
    return tuple(out)


def density_bound(n: int, b: Any) -> Any:
    """An upper bound on ``|f(k)|`` for complex k with ``|Im k| <= b < 1``, every N:
    ``|phi(s - k r)| <= e^{b^2 r^2/2}/sqrt(2 pi)`` gives ``|f(k)| <= E[R e^{b^2 R^2/2}]/
    sqrt(2 pi) = E[R] (1 - b^2)^{-(n+1)/2}/sqrt(2 pi)``, ``E R = sqrt2 Gamma((n+1)/2)/
    Gamma(n/2)``."""
    mean_r = rig.arb(2).sqrt() * (rig.arb(n + 1) / 2).gamma() / (rig.arb(n) / 2).gamma()
    return mean_r / (1 - b * b) ** (rig.arb(n + 1) / 2) / (2 * rig.pi()).sqrt()


def _q_max_on_ellipse(n: int, L: int, a2: list[Any]) -> list[Any]:
    """Upper bounds of ``|q_l|`` on the ellipse ``k = (1 + (rho e^{it} + e^{-it}/rho)/2)/2``:
    balls centred on ``_ARCS`` points whose radius covers each arc (``|dk/dt| <=
    (rho + 1/rho)/4``)."""
    rho = rig.arb(_RHO)
    two_pi = 2 * rig.pi()
    rad = rig.upper_float((rho + 1 / rho) / 4 * two_pi / _ARCS / 2 * rig.arb("1.01"))
    mu = rig.arb(n) / 2
    best = [rig.arb(0)] * len(a2)
    for j in range(_ARCS):
        t = two_pi * (2 * j + 1) / (2 * _ARCS)
        c, s_ = t.cos(), t.sin()
        re = (1 + (rho + 1 / rho) / 2 * c) / 2
        im = (rho - 1 / rho) / 2 * s_ / 2
        k = rig.acb(rig.ball(re.mid(), rad), rig.ball(im.mid(), rad))
        base = (1 - k * k) ** (n - 1)
        gs = _gegenbauer_all(2 * len(a2) - 2, mu, k)
        for i in range(len(a2)):
            val = rig.arb((a2[i] * base * gs[2 * i] * gs[2 * i]).abs_upper())
            best[i] = rig.arb(max(best[i].upper(), val.upper()))
    return best


def _gegenbauer_all(J: int, mu: Any, x: Any) -> list[Any]:
    """``[C_0^mu(x), ..., C_J^mu(x)]`` by the three-term recurrence."""
    out = [x * 0 + 1, 2 * mu * x]
    for i in range(1, J):
        out.append((2 * (i + mu) * x * out[i] - (i + 2 * mu - 1) * out[i - 1]) / (i + 1))
    return out[: J + 1]


@lru_cache(maxsize=64)
def _node_densities(n: int, N: int, nodes: int) -> tuple[Any, ...]:
    """``f(k_i)`` at the Gauss-Legendre nodes of ``[0, 1]``, computed once per node set at
    ``_BITS`` bits: ``f`` is smooth and its integral's tolerance is ``2^-30``, so the degree's
    precision (which the Gegenbauer recurrences need) buys it nothing; each ball encloses
    ``f`` on a ball that contains the node, so it encloses ``f(k_i)``. Raising L reuses it."""
    import flint

    with rig.precision(_BITS):
        return tuple(_density(n, N, rig.acb((1 + flint.arb.legendre_p_root(nodes, i)) / 2),
                              False).real for i in range(nodes))


def _gauss_sums(d: int, N: int, n: int, L: int, a2: list[Any], nodes: int) -> list[Any]:
    """``sum_i w_i q_l(k_i) f(k_i)`` over the Gauss-Legendre nodes of ``[0, 1]``."""
    import flint

    dens = _node_densities(n, N, nodes)
    sums = [rig.arb(0)] * len(a2)
    for i in range(nodes):
        u, w = flint.arb.legendre_p_root(nodes, i, weight=True)
        k = (1 + u) / 2
        fk = dens[i] * w / 2
        base = (1 - k * k) ** (n - 1) * fk
        gs = _gegenbauer_all(2 * len(a2) - 2, rig.arb(n) / 2, k)
        for j in range(len(a2)):
            sums[j] = sums[j] + a2[j] * base * gs[2 * j] * gs[2 * j]
    return sums
