"""Sympy encodings of the N = 2 targets (docs/paper.md §2; Theorem 3's biased family, inferred).

With ``z = <y, x1 - x2>``:

- nearest neighbour, sign decomposition: ``f = (x1+x2)/2 + sign(z) (x1-x2)/2``;
- soft (one full-rank head, Fact 1):
  ``X softmax(beta X^T y) = (x1+x2)/2 + tanh(beta z/2)(x1-x2)/2``;
- biased (bias b_i inside the scores): ``z -> z + b1 - b2``, hard or soft.
"""

from __future__ import annotations

import sympy as sp


def vector_symbols(name: str, dim: int) -> sp.Matrix:
    """A column of real symbols ``name_0 .. name_{dim-1}``."""
    return sp.Matrix(sp.symbols(f"{name}_0:{dim}", real=True))


def _z(x1: sp.Matrix, x2: sp.Matrix, y: sp.Matrix) -> sp.Expr:
    return (y.T * (x1 - x2))[0, 0]


def nn2_sign(x1: sp.Matrix, x2: sp.Matrix, y: sp.Matrix) -> sp.Matrix:
    """Hard nearest neighbour for N = 2 in its sign decomposition."""
    return (x1 + x2) / 2 + sp.sign(_z(x1, x2, y)) * (x1 - x2) / 2


def nn2_soft(x1: sp.Matrix, x2: sp.Matrix, y: sp.Matrix, b: sp.Expr) -> sp.Matrix:
    """Soft nearest neighbour ``(x1+x2)/2 + tanh(beta z / 2)(x1-x2)/2``."""
    return (x1 + x2) / 2 + sp.tanh(b * _z(x1, x2, y) / 2) * (x1 - x2) / 2


def nn2_biased(
    x1: sp.Matrix, x2: sp.Matrix, y: sp.Matrix, b1: sp.Expr, b2: sp.Expr
) -> sp.Matrix:
    """Biased nearest neighbour ``x_{argmax_i <x_i,y> + b_i}`` for N = 2 (inferred reading)."""
    return (x1 + x2) / 2 + sp.sign(_z(x1, x2, y) + b1 - b2) * (x1 - x2) / 2


def nn2_soft_biased(
    x1: sp.Matrix, x2: sp.Matrix, y: sp.Matrix, b1: sp.Expr, b2: sp.Expr, b: sp.Expr
) -> sp.Matrix:
    """Soft biased nearest neighbour ``X softmax(beta (X^T y + bias))`` in tanh form."""
    return (x1 + x2) / 2 + sp.tanh(b * (_z(x1, x2, y) + b1 - b2) / 2) * (x1 - x2) / 2


def softmax_head(
    x1: sp.Matrix, x2: sp.Matrix, y: sp.Matrix, b: sp.Expr, b1: sp.Expr = 0, b2: sp.Expr = 0
) -> sp.Matrix:
    """The full-rank head ``X softmax(beta (X^T y + bias))`` written literally (Fact 1)."""
    e1 = sp.exp(b * ((y.T * x1)[0, 0] + b1))
    e2 = sp.exp(b * ((y.T * x2)[0, 0] + b2))
    return (x1 * e1 + x2 * e2) / (e1 + e2)


def profile_soft(t: sp.Expr, b: sp.Expr) -> sp.Expr:
    """The N = 2 profile of the softmax head, ``psi_beta(t) = tanh(beta t / sqrt2)``, with
    ``t = <y, w>``, ``w = (x1 - x2)/sqrt2``: ``nn2_soft`` is ``(x1+x2)/2 + psi(z/sqrt2)(x1-x2)/2``
    (docs/derivations/soft_targets.md, step S0)."""
    return sp.tanh(b * t / sp.sqrt(2))


def monomial_energies(k: int, d: sp.Expr) -> dict[int, sp.Expr]:
    """``eta_l(t^k)^2`` for odd k, by degree: ``t^k`` is a polynomial of degree k, so only odd
    ``l <= k`` carry energy. Closed forms from the moments ``E t^(2j) = (2j-1)!! / prod_{i<j}
    (d + 2i)`` (t = <y, w>, y uniform on S^{d-1}): for ``k = 1``, ``eta_1^2 = 1/d``; for
    ``k = 3``, ``eta_1^2 = 9/(d (d+2)^2)`` (``eta_1 = sqrt(d) E t^4``) and ``eta_3^2 = E t^6 -
    eta_1^2`` (Parseval with two degrees)."""
    def moment(j: int) -> sp.Expr:
        return sp.factorial2(2 * j - 1) / sp.prod([d + 2 * i for i in range(j)])

    if k == 1:
        return {1: 1 / d}
    if k == 3:
        e1 = d * moment(2) ** 2
        return {1: sp.simplify(e1), 3: sp.simplify(moment(3) - e1)}
    raise ValueError(f"k must be 1 or 3 (got {k})")
