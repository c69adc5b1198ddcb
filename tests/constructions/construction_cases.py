"""Shared edge cases and brute-force reference interpreters for the construction tests (tracr
pattern: one table, every construction checked against the reference on all of it).

Each case is one instance ``X`` ``(1, N, d)``, ``y`` ``(1, d)``, float64. ``tie`` marks an exact
tie in ``<x_i, y>`` between the two best keys (any of them is a correct answer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class Case:
    name: str
    X: torch.Tensor
    y: torch.Tensor
    tie: bool = False

    @property
    def N(self) -> int:
        return self.X.shape[1]

    @property
    def d(self) -> int:
        return self.X.shape[2]


def _t(a) -> torch.Tensor:
    return torch.tensor(np.asarray(a, dtype=np.float64))


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def _rand_case(name: str, N: int, d: int, seed: int, orthonormal: bool) -> Case:
    rng = np.random.default_rng(seed)
    if orthonormal:
        q, _ = np.linalg.qr(rng.standard_normal((d, N)))
        X = q.T
    else:
        X = np.stack([_unit(rng.standard_normal(d)) for _ in range(N)])
    return Case(name, _t(X[None]), _t(_unit(rng.standard_normal(d))[None]))


def _cases() -> list[Case]:
    e = np.eye(3)
    s = 1 / math.sqrt(2)
    c = [
        Case("tie_orthonormal_d3", _t([[e[0], e[1]]]), _t([_unit(e[0] + e[1])]), tie=True),
        Case(
            "near_tie_d3", _t([[e[0], e[1]]]), _t([_unit(e[0] + e[1] + 1e-9 * e[0] + 0.3 * e[2])])
        ),
        Case("N1_d3", _t([[_unit([1.0, 2.0, -1.0])]]), _t([_unit([0.3, -0.2, 0.9])])),
        Case("N1_d2", _t([[[0.6, 0.8]]]), _t([[-1.0, 0.0]])),
        Case("d2_orthonormal", _t([[[1.0, 0.0], [0.0, 1.0]]]), _t([_unit([0.9, 0.2])])),
        Case(
            "d2_close_keys",
            _t([[_unit([1.0, 0.01]), _unit([1.0, -0.01])]]),
            _t([_unit([0.2, 1.0])]),
        ),
        Case(
            "antipodal_d3",
            _t([[_unit([1.0, 2.0, 2.0]), -_unit([1.0, 2.0, 2.0])]]),
            _t([_unit([0.1, -0.5, 0.3])]),
        ),
        Case("antipodal_d2", _t([[[s, s], [-s, -s]]]), _t([_unit([-0.3, 0.1])])),
        Case("query_equals_key", _t([[e[0], e[2]]]), _t([e[2]])),
        Case("query_opposite_key", _t([[e[0], e[2]]]), _t([-e[0]])),
        _rand_case("random_d2_N2", 2, 2, 1, True),
        _rand_case("random_d5_N2", 2, 5, 2, True),
        _rand_case("random_iid_d4_N2", 2, 4, 3, False),
    ]
    return c


CASES: list[Case] = _cases()
CASES_N2: list[Case] = [c for c in CASES if c.N == 2]


def many_cases(
    N: int, d: int, n: int, seed: int, orthonormal: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` random instances drawn with numpy (independent of the core samplers)."""
    rng = np.random.default_rng(seed)
    if orthonormal:
        q, _ = np.linalg.qr(rng.standard_normal((n, d, N)))
        X = np.transpose(q, (0, 2, 1))
    else:
        X = rng.standard_normal((n, N, d))
        X /= np.linalg.norm(X, axis=-1, keepdims=True)
    y = rng.standard_normal((n, d))
    y /= np.linalg.norm(y, axis=-1, keepdims=True)
    return _t(X), _t(y)


# --- reference interpreters (plain numpy loops) --------------------------------------------


def brute_nearest(X: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """``x_{argmax_i <x_i, y>}`` by looping (ties: lowest index)."""
    Xn, yn = X.numpy(), y.numpy()
    out = np.empty((Xn.shape[0], Xn.shape[2]))
    for b in range(Xn.shape[0]):
        best, arg = -np.inf, 0
        for i in range(Xn.shape[1]):
            v = float(Xn[b, i] @ yn[b])
            if v > best:
                best, arg = v, i
        out[b] = Xn[b, arg]
    return out


def nearest_set(X: torch.Tensor, y: torch.Tensor, tol: float = 1e-12) -> list[list[int]]:
    """All keys within ``tol`` of the best inner product, per instance."""
    s = np.einsum("bnd,bd->bn", X.numpy(), y.numpy())
    return [list(np.flatnonzero(row >= row.max() - tol)) for row in s]


def brute_biased(
    X: torch.Tensor, y: torch.Tensor, biases: np.ndarray, coeffs: np.ndarray
) -> np.ndarray:
    """``sum_j c_j x_{argmax_i (<x_i,y> + b_ji)}`` by looping."""
    Xn, yn = X.numpy(), y.numpy()
    out = np.zeros((Xn.shape[0], Xn.shape[2]))
    for b in range(Xn.shape[0]):
        for bias, c in zip(biases, coeffs):
            scores = [float(Xn[b, i] @ yn[b]) + bias[i] for i in range(Xn.shape[1])]
            out[b] += c * Xn[b, int(np.argmax(scores))]
    return out


def random_rotation(d: int, seed: int) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return _t(q * np.sign(np.diag(r)))
