"""The one-head Bayes witness beyond two keys: hardmax nearest neighbour on ``D_N`` (docs/
derivations/witnesses_beyond_two.md, "One head, N keys").

One head of key-rank ``r`` (keys seen through the first ``r`` coordinates, ``Z = P X``), value
map ``M = I`` and the score ``phi = p``, ``p_j = Pr[i* = j | Z, y]``: for ``M = I`` the error is
``E[(1 - phi_{i*})^2 + sum_{j != i*} phi_j^2]``, whose conditional mean given ``(Z, y)`` is
``|phi - p|^2 + 1 - |p|^2``, so ``p`` is the Bayes score and the least error of such a head is
``1 - E|p|^2``. Given ``Z`` the unseen block is ``Xi = U S^{1/2}`` with ``S = I - Z^T Z`` and
``U`` Haar on the orthonormal N-frames of ``R^m`` (``m = d - r >= N``), so the inner products
are ``c = Z^T y_P + |y_Q| S^{1/2} v`` with ``v`` the first N coordinates of a uniform point of
``S^{m-1}``.

The witness computes ``p`` from ``K`` inner draws of ``v`` fixed once (seed ``inner_seed``):
``phi`` is then one deterministic function of ``(Z, y)``, an Eq. 2 score, and its error is
measured by an outer Monte Carlo on fresh ``D_N`` samples with the keys and the output formed
explicitly (empirical-Bernstein interval; each loss lies in ``[0, 2]``). The finite ``K`` costs
``E|phi - p|^2`` over the Bayes error; :func:`bayes_error_estimate` estimates the Bayes error
itself without that cost (two independent inner sets: ``1 - p_1 . p_2`` is unbiased).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from workbench.core.sphere import make_generator, sample_instances
from workbench.core.validation import check_dim, check_int, check_key_rank

__all__ = ["bayes_error_estimate", "inner_draws", "nkeys_bayes_score", "nkeys_one_head_losses"]

INNER = 1024  # inner draws of the unseen coordinates
CHUNK = 256  # outer samples per batch (memory: CHUNK x INNER x N)


def check_nkeys(d: object, r: object, N: object) -> tuple[int, int, int]:
    """``(d, r, N)`` with ``2 <= N <= d - r`` (the unseen block must hold an N-frame)."""
    dd = check_dim(d)
    rr = check_key_rank(r, dd)
    NN = check_int("N", N, lo=2)
    if NN > dd - rr:
        raise ValueError(f"N must lie in 2..d - r = 2..{dd - rr} for the one-head Bayes "
                         f"witness (got N = {NN}, d = {dd}, r = {rr})")
    return dd, rr, NN


def inner_draws(m: int, N: int, K: int, seed: int) -> np.ndarray:
    """``K`` draws of the first ``N`` coordinates of a uniform point of ``S^{m-1}``: ``(K, N)``."""
    g = np.random.default_rng(seed).standard_normal((K, m))
    return g[:, :N] / np.linalg.norm(g, axis=1, keepdims=True)


def nkeys_bayes_score(Z: np.ndarray, y: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``p_j = Pr[argmax_i c_i = j | Z, y]`` by the inner draws ``V`` ``(K, N)``: ``Z``
    ``(n, r, N)`` (the seen coordinates of the keys, as columns), ``y`` ``(n, d)``; returns
    ``(n, N)``."""
    r = Z.shape[1]
    N = Z.shape[2]
    known = np.einsum("nri,nr->ni", Z, y[:, :r])  # (n, N)
    S = np.eye(N)[None] - np.einsum("nri,nrj->nij", Z, Z)
    lam, Q = np.linalg.eigh(S)
    root = np.einsum("nij,nj,nkj->nik", Q, np.sqrt(np.clip(lam, 0, None)), Q)  # S^{1/2}
    scale = np.linalg.norm(y[:, r:], axis=1)  # |y_Q|
    c = known[:, None, :] + scale[:, None, None] * np.matmul(V, root.transpose(0, 2, 1))
    win = c.argmax(-1)  # (n, K)
    return np.stack([(win == j).mean(1) for j in range(N)], 1)


def _sample(n: int, N: int, d: int, gen: Any) -> tuple[np.ndarray, np.ndarray]:
    X, y = sample_instances(n, N, d, points="orthonormal", generator=gen)
    return X.double().numpy(), y.double().numpy()


def nkeys_one_head_losses(d: int, r: int, N: int, n: int, seed: int, *, inner: int = INNER,
                          inner_seed: int = 0) -> np.ndarray:
    """Per-sample errors ``||x_{i*} - X^T phi||^2`` of the witness on ``n`` samples of ``D_N``
    (stream ``seed``), the output formed from the keys; each in ``[0, 2]``."""
    d, r, N = check_nkeys(d, r, N)
    n = check_int("n", n, lo=2)
    inner = check_int("inner", inner, lo=1)
    V = inner_draws(d - r, N, inner, inner_seed)
    gen = make_generator(seed)
    out = []
    for start in range(0, n, CHUNK):
        X, y = _sample(min(CHUNK, n - start), N, d, gen)  # X (b, N, d)
        phi = nkeys_bayes_score(X[:, :, :r].transpose(0, 2, 1), y, V)
        A = np.einsum("bi,bid->bd", phi, X)
        best = np.einsum("bid,bd->bi", X, y).argmax(1)
        f = X[np.arange(len(X)), best]
        out.append(((f - A) ** 2).sum(-1))
    return np.concatenate(out)


def bayes_error_estimate(d: int, r: int, N: int, n: int, seed: int, *,
                         inner: int = INNER) -> tuple[float, float]:
    """``1 - E|p|^2`` (the Bayes error of one head with ``M = I``) estimated without the finite-
    ``K`` cost: ``1 - p_1 . p_2`` with two independent inner sets is unbiased. Each batch of
    ``CHUNK`` outer samples draws its own inner sets (a set shared by all samples would bias the
    mean by its own fluctuation), so the batch means are i.i.d.: returns their mean and its
    standard error (``n`` rounded up to whole batches, at least 2)."""
    d, r, N = check_nkeys(d, r, N)
    rng = np.random.default_rng(seed)
    gen = make_generator(seed)
    means = []
    for _ in range(max(2, -(-n // CHUNK))):
        V1, V2 = (inner_draws(d - r, N, inner, int(rng.integers(2**62))) for _ in range(2))
        X, y = _sample(CHUNK, N, d, gen)
        Z = X[:, :, :r].transpose(0, 2, 1)
        vals = 1 - (nkeys_bayes_score(Z, y, V1) * nkeys_bayes_score(Z, y, V2)).sum(1)
        means.append(float(vals.mean()))
    m = np.array(means)
    return float(m.mean()), float(m.std(ddof=1) / math.sqrt(len(m)))
