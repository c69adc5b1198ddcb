"""The law at each level of the multi-level bound (docs/derivations/long_contexts_evaluation.md):
``F_{K,D}`` against exact values and an identity, the level target against brute force over
Haar frames, and the counts against hand arithmetic from the statement
(docs/derivations/long_contexts.md, steps 2-5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from workbench.core.bounds.sequence_length.multi_level_law import (
    level_degree_count,
    level_target,
    linear_forms,
    max_coordinate_law,
)


@pytest.mark.parametrize("s", [-0.6, -0.3, 0.0, 0.2, 0.5, 0.7])
def test_law_on_the_circle_is_the_arc_length(s: float) -> None:
    """``F_{2,2}(s) = 1/4 + asin(s)/pi`` on ``[-1/sqrt2, 1/sqrt2]`` (both coordinates of a
    uniform point of the circle below s: one arc of length pi/2 + 2 asin s)."""
    assert max_coordinate_law(2, 2, s) == pytest.approx(0.25 + math.asin(s) / math.pi, abs=2e-4)


@pytest.mark.parametrize("K", [2, 3, 5, 8])
def test_law_at_zero_on_the_full_sphere_is_the_orthant(K: int) -> None:
    """``F_{K,K}(0) = 2^-K``: every coordinate negative."""
    assert max_coordinate_law(K, K, 0.0) == pytest.approx(2.0 ** -K, abs=2e-4)


@pytest.mark.parametrize("K,D", [(2, 7), (3, 9), (6, 6), (5, 20), (14, 30)])
def test_gaussian_mixture_identity(K: int, D: int) -> None:
    """``E F_{K,D}(a/tau) = Phi(a)^K`` for ``tau ~ chi_D``: tau times a uniform point of
    ``S^{D-1}`` is standard Gaussian. A law of the wrong dimension fails it."""
    t = np.linspace(1e-9, math.sqrt(D) + 12.0, 40001)  # chi_D has mass < 1e-30 beyond
    dens = stats.chi(D).pdf(t)
    for a in (-0.5, 0.4, 1.3):
        val = integrate.trapezoid(np.asarray(max_coordinate_law(K, D, a / t)) * dens, t)
        assert val == pytest.approx(stats.norm.cdf(a) ** K, abs=1.5e-3)


def test_law_of_one_coordinate_and_the_exact_high_range() -> None:
    """``F_{1,D}`` against draws' empirical law would be weak; against the closed form of
    ``|z_1|^2 ~ Beta(1/2, (D-1)/2)``, and above ``1/sqrt2`` the one-exceedance formula."""
    th = np.array([-0.4, 0.1, 0.3])
    want = 0.5 + np.sign(th) * stats.beta(0.5, 4.5).cdf(th ** 2) / 2
    assert np.allclose(max_coordinate_law(1, 10, th), want, atol=1e-12)
    hi = 0.8
    assert max_coordinate_law(4, 10, hi) == pytest.approx(
        1 - 4 * (1 - max_coordinate_law(1, 10, hi)), abs=1e-12)
    assert max_coordinate_law(0, 5, -3.0) == 1.0


def _frames_in_complement(rng: np.random.Generator, basis: np.ndarray, draws: int, m: int
                          ) -> np.ndarray:
    """``draws`` Haar m-frames (draws x d x m) in the complement of the columns of ``basis``."""
    g = rng.standard_normal((draws, basis.shape[0], m))
    g -= basis @ np.einsum("ji,bjm->bim", basis, g)
    q, r = np.linalg.qr(g)
    return q * np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]


@pytest.mark.parametrize("d,N,k", [(8, 5, 3), (10, 6, 2), (9, 5, 5)])
def test_level_target_against_brute_force_over_unseen_frames(d: int, N: int, k: int) -> None:
    """For fixed ``(u, x_3..x_k, w, y)``, the mean of t over Haar completions of the unseen keys
    equals ``level_target`` (Hoeffding, 99.99 % each)."""
    rng = np.random.default_rng(11)
    draws = 20000
    for _ in range(3):
        q = np.linalg.qr(rng.standard_normal((d, d)))[0]
        u, seen, rest = q[:, 0], q[:, 1:k - 1], q[:, k - 1:]
        w = rest @ rng.standard_normal(rest.shape[1])
        w /= np.linalg.norm(w)
        g = rng.standard_normal(d) + 0.8 * w  # push the pole towards w: t not always 0
        x1, x2 = (u + w) / math.sqrt(2), (u - w) / math.sqrt(2)
        basis = np.column_stack([u, seen, w])
        fixed = np.concatenate([[g @ x1, g @ x2], g @ seen])
        if N > k:
            unseen = np.einsum("j,bjm->bm", g, _frames_in_complement(rng, basis, draws, N - k))
            scores = np.concatenate([np.broadcast_to(fixed, (draws, fixed.size)), unseen], 1)
        else:
            scores = np.broadcast_to(fixed, (draws, fixed.size))
        best = scores.argmax(axis=1)
        t = (best == 0).astype(float) - (best == 1)
        pe = rest @ (rest.T @ g)
        rho = np.linalg.norm(pe)
        want = level_target(d, N, k, g @ u, max(g @ seen, default=-np.inf), rho,
                            float(pe @ w / rho))
        tol = math.sqrt(math.log(2 / 1e-4) / (2 * draws)) * 2
        assert abs(t.mean() - float(want)) <= tol


def test_linear_forms_and_counts_by_hand() -> None:
    """``lambda_k = min(r + k - 1, d - k + 1)``; ``D_l = I(l-2) + I(l) + I(l+2) + lambda_k (I(l-1)
    + I(l+1))``, ``I(j) = C(j + r - 1, r - 1)``, and ``D_1 <= 2r + lambda_k`` (hand values)."""
    assert linear_forms(16, 2, 8, 5) == 6
    assert linear_forms(16, 1, 16, 14) == 3  # capped by the fiber, n = 3
    assert linear_forms(64, 1, 4, 2) == 2
    # r = 2: I(j) = j + 1; lambda = 6
    assert level_degree_count(16, 2, 8, 5, 3) == (2 + 4 + 6) + 6 * (3 + 5)
    assert level_degree_count(16, 2, 8, 5, 1) == 2 * 2 + 6
    # r = 1: every I(j) = 1 (j >= 0); lambda = 2 at level 2
    assert level_degree_count(64, 1, 4, 2, 1) == 4
    assert level_degree_count(64, 1, 4, 2, 5) == 3 + 2 * 2
    # query-dependent values: every quadratic (n(n+1)/2) and linear (n) form, n = 13
    assert level_degree_count(16, 1, 8, 4, 1, "query-dependent-values") == 91 * 2 + 13 * 2


def test_bad_input_names_the_parameter() -> None:
    with pytest.raises(ValueError, match="K"):
        max_coordinate_law(-1, 3, 0.1)
    with pytest.raises(ValueError, match="D"):
        max_coordinate_law(4, 3, 0.1)
    with pytest.raises(ValueError, match="k"):
        linear_forms(16, 1, 8, 9)
    with pytest.raises(ValueError, match="value_class"):
        level_degree_count(16, 1, 8, 4, 1, "other")
