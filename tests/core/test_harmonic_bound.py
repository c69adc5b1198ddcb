"""The harmonic count (Theorem 2's D'_l count, one part of the certified N = 2 lower bound) and its
lemmas (docs/paper.md §4, derivations)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
import torch

from workbench.core.bounds.harmonic_count.harmonic import (
    degree_dimension_bound,
    harmonic_bound,
    heads_needed,
)
from workbench.core.harmonics import dim_harmonics, legendre_d, sign_coefficient_exact
from workbench.core.head_kernels import agreement_kernel, head_target_agreement, kernel_error
from workbench.core.invariant_harmonics import invariant_harmonic_rank
from workbench.core.sphere import sample_instances, uniform_sphere
from workbench.testing import plant, scaled

Z = 5.0


# ---------------------------------------------------------------- Lemmas 1-2 on a random model
def _random_model(d: int, r: int, H: int, g: torch.Generator):
    W = torch.randn(H, r, d, generator=g, dtype=torch.float64)
    M = torch.randn(H, d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    A1 = torch.randn(H, 8, r + d, generator=g, dtype=torch.float64)
    c1 = torch.randn(H, 8, generator=g, dtype=torch.float64)
    v = torch.randn(H, 8, generator=g, dtype=torch.float64) * 2

    def phi(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Scores of an MLP on (W_h x_i, y): generalized attention with y-dependence (n, H, 2)."""
        WX = torch.einsum("hrd,nid->nhir", W, X)
        inp = torch.cat([WX, y[:, None, None, :].expand(-1, H, 2, -1)], dim=-1)
        hid = torch.tanh(torch.einsum("hkj,nhij->nhik", A1, inp) + c1[None, :, None, :])
        return torch.softmax(torch.einsum("hk,nhik->nhi", v, hid), dim=-1)

    def model(X: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        p = phi(X, y)
        out = torch.einsum("hde,nie,nhi->nd", M, X, p)
        return out, p

    return M, model


def test_lemmas_1_2_projection_and_odd_reduction() -> None:
    d, r, H, n = 6, 2, 3, 4000
    g = torch.Generator().manual_seed(7)
    M, model = _random_model(d, r, H, g)
    X, y = sample_instances(n, 2, d, points="orthonormal", generator=g)
    u = (X[:, 0] + X[:, 1]) / math.sqrt(2)
    w = (X[:, 0] - X[:, 1]) / math.sqrt(2)
    s = torch.sign((y * w).sum(-1))
    f = torch.where(s[:, None] > 0, X[:, 0], X[:, 1])
    A, p = model(X, y)
    A_neg, p_neg = model(X, -y)
    psi, psi_neg = p[..., 0] - p[..., 1], p_neg[..., 0] - p_neg[..., 1]
    wMu = torch.einsum("nd,hde,ne->nh", w, M, u)
    wMw = torch.einsum("nd,hde,ne->nh", w, M, w)
    G = (wMu + psi * wMw).sum(-1)
    G_neg = (wMu + psi_neg * wMw).sum(-1)
    assert torch.allclose(math.sqrt(2) * (A_neg * w).sum(-1), G_neg, atol=1e-12)
    # Lemma 1: <w, f - A> = (s - G)/sqrt2 exactly, hence ||f - A||^2 >= (s - G)^2 / 2 pointwise
    assert torch.allclose(((f - A) * w).sum(-1) * math.sqrt(2), s - G, atol=1e-12)
    assert torch.all(((f - A) ** 2).sum(-1) >= (s - G) ** 2 / 2 - 1e-12)

    # Lemma 2 rests on the target being odd in y: its w-coordinate flips with y. Here the target
    # is recomputed from the data (argmax <x_i, y>), not from s, so a wrong sign convention or a
    # target that is not odd in y (e.g. the farthest point in only one of the pair) would fail.
    def target(q: torch.Tensor) -> torch.Tensor:
        return X[torch.arange(n), torch.argmax(torch.einsum("nid,nd->ni", X, q), dim=1)]

    t, t_neg = math.sqrt(2) * (target(y) * w).sum(-1), math.sqrt(2) * (target(-y) * w).sum(-1)
    assert torch.allclose(t, s, atol=1e-12) and torch.allclose(t_neg, -s, atol=1e-12)
    # the pair bound with G read off the model's own outputs at y and -y
    Gy, Gy_neg = math.sqrt(2) * (A * w).sum(-1), math.sqrt(2) * (A_neg * w).sum(-1)
    G_odd = (Gy - Gy_neg) / 2
    pair = (t - Gy) ** 2 + (t_neg - Gy_neg) ** 2
    assert torch.all(pair >= 2 * (t - G_odd) ** 2 - 1e-10)
    assert torch.allclose(Gy, G, atol=1e-12) and torch.allclose(Gy_neg, G_neg, atol=1e-12)


def test_chain_bound_is_close_below_the_one_head_bayes_model() -> None:
    """The harmonic count lies below the error of the best known model, and within 10% of it at
    d = 16, r = 1, H = 1 (the exact one-head witness, Monte Carlo): a bound that was 10x too small
    or 10% too large would fail."""
    from workbench.constructions.optimized import _losses, bernstein_ci

    d = 16
    loss = _losses({"B": np.eye(d)[:1][None], "a": np.ones(1)}, d, 60_000, 11)
    lo, hi = bernstein_ci(loss, 2.0)
    lb = harmonic_bound(d, 1, 1).enclosure[0]
    assert lb <= hi and lo <= 1.10 * lb


# ---------------------------------------------------------------- Lemma 3: conditional law
def _uniform_orthogonal(w: torch.Tensor, n: int, g: torch.Generator) -> torch.Tensor:
    z = torch.randn(n, w.shape[0], generator=g, dtype=torch.float64)
    z = z - (z @ w)[:, None] * w
    return z / z.norm(dim=1, keepdim=True)


def test_lemma_3_law_of_Wu_given_w_depends_only_on_Ww() -> None:
    d, r, n = 7, 2, 60_000
    g = torch.Generator().manual_seed(5)
    W = torch.randn(r, d, generator=g, dtype=torch.float64)
    P = torch.linalg.pinv(W) @ W  # projection on the row space
    w = uniform_sphere(d=d, generator=g)
    k = (torch.eye(d, dtype=torch.float64) - P) @ torch.randn(d, generator=g, dtype=torch.float64)
    w2 = P @ w + k / k.norm() * ((torch.eye(d, dtype=torch.float64) - P) @ w).norm()
    assert torch.allclose(W @ w, W @ w2) and abs(w2.norm().item() - 1) < 1e-12
    c = torch.tensor([0.7, -1.3], dtype=torch.float64)

    def stat(ww: torch.Tensor) -> torch.Tensor:
        Wu = _uniform_orthogonal(ww, n, g) @ W.T
        return torch.cos(Wu @ c) + Wu[:, 0] ** 2 * Wu[:, 1] + (Wu**2).sum(-1)

    s1, s2 = stat(w), stat(w2)
    se = math.sqrt(s1.var().item() / n + s2.var().item() / n)
    assert abs(s1.mean().item() - s2.mean().item()) <= Z * se
    # negative control: a w with a different W w changes the law detectably
    w3 = torch.linalg.svd(W).Vh[0]  # top right singular vector: largest ||W w||
    s3 = stat(w3)
    se3 = math.sqrt(s1.var().item() / n + s3.var().item() / n)
    assert abs(s1.mean().item() - s3.mean().item()) > Z * se3


# ---------------------------------------------------------------- Lemma 4: isotropy identity
def _zonal(d: int, l: int, a: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    return legendre_d(d, l, (y @ a.T).numpy())[l]  # P_l(<a_i, y>), shape (n, k)


@pytest.mark.parametrize("d,l,k", [(4, 3, 5), (5, 2, 3), (3, 5, 6)])
def test_lemma_4_isotropy_identity(d: int, l: int, k: int) -> None:
    g = torch.Generator().manual_seed(100 * d + l)
    N = dim_harmonics(d, l)
    a = uniform_sphere(k, d=d, generator=g)  # S = span of k zonal harmonics: random dim-k subspace
    gram = legendre_d(d, l, (a @ a.T).numpy())[l]  # <Zbar_a, Zbar_b> = P_l(<a,b>) (addition thm)
    # check the addition theorem used for the Gram matrix by Monte Carlo over w
    n = 40_000
    wpts = uniform_sphere(n, d=d, generator=g)
    feats = _zonal(d, l, a, wpts) * math.sqrt(N)
    mc = feats.T @ feats / n
    sd = np.sqrt(((feats[:, :, None] * feats[:, None, :]) ** 2).mean(0) / n)
    assert np.all(np.abs(mc - gram) <= Z * sd + 1e-12)
    # E_y ||P_S Zbar_{l,y}||^2 = dim S / N(d,l)
    y = uniform_sphere(n, d=d, generator=g)
    gy = _zonal(d, l, a, y)
    vals = np.einsum("ni,ij,nj->n", gy, np.linalg.inv(gram), gy)
    assert abs(vals.mean() - k / N) <= Z * vals.std() / math.sqrt(n) + 1e-10
    # S = all of H_l: the projection keeps each unit zonal harmonic whole
    full = uniform_sphere(3 * N, d=d, generator=g)
    G_full = legendre_d(d, l, (full @ full.T).numpy())[l]
    gy_full = _zonal(d, l, full, y[:50])
    proj = np.einsum("ni,ij,nj->n", gy_full, np.linalg.pinv(G_full, rcond=1e-10), gy_full)
    assert np.allclose(proj, 1.0, atol=1e-8)


# ---------------------------------------------------------------- Lemma 5: invariant harmonics
@pytest.mark.parametrize(
    "d,r,k", [(5, 2, 3), (6, 3, 4), (6, 2, 5), (7, 1, 5), (5, 4, 3), (8, 3, 2)]
)
def test_lemma_5_invariant_harmonic_dimension(d: int, r: int, k: int) -> None:
    assert invariant_harmonic_rank(d, r, k, seed=d + 10 * r + 100 * k) == math.comb(
        k + r - 1, r - 1
    )


@pytest.mark.parametrize("d,r,l", [(6, 2, 3), (7, 1, 4), (6, 3, 1)])
def test_lemma_5_degree_dimension_bound_from_measured_invariant_dimensions(d, r, l) -> None:
    """D'_l is the sum of the measured invariant dimensions at degrees l-2, l, l+2, and the
    query-dependent count is d(d+1)/2 times it (the sympy encoding gives the same numbers)."""
    from workbench.core.symbolic.bounds import degree_count
    from workbench.core.symbolic.symbols import d as d_
    from workbench.core.symbolic.symbols import r as r_

    ranks = sum(invariant_harmonic_rank(d, r, k, seed=k + d) for k in (l - 2, l, l + 2) if k >= 0)
    assert degree_dimension_bound(d, r, l) == ranks
    assert degree_dimension_bound(d, r, l, "query-dependent-values") == d * (d + 1) // 2 * ranks
    for vc in ("eq2", "query-dependent-values"):
        expr = degree_count(vc).subs({d_: d, r_: r, sp.Symbol("l", integer=True, positive=True): l})
        assert int(expr) == degree_dimension_bound(d, r, l, vc)


@pytest.mark.parametrize("d,r,l,p", [(5, 2, 3, 4), (16, 1, 5, 3), (16, 2, 3, 4), (11, 1, 7, 3)])
def test_lemma_5_prime_measured_rank_at_most_d_prime(d, r, l, p) -> None:
    from workbench.core.invariant_harmonics import fixed_form_degree_rank

    rank, cap = fixed_form_degree_rank(d, r, l, p, seed=3)
    assert 0 < rank <= degree_dimension_bound(d, r, l)
    if r == 1:  # attained at rank 1
        assert rank == degree_dimension_bound(d, r, l)


def test_lemma_5_prime_fixed_form_below_all_forms() -> None:
    from workbench.core.invariant_harmonics import head_degree_dimension

    d, r, l = 4, 2, 3
    fixed = head_degree_dimension(d, r, l, seed=1, fixed_form=True)
    full = head_degree_dimension(d, r, l, seed=1)
    assert fixed <= degree_dimension_bound(d, r, l) < full


# ---------------------------------------------------------------- the bound itself
def test_enclosure_contains_exact_sympy_value() -> None:
    """The enclosure of the full series at L = 41 against a sympy-exact evaluation: the
    truncated sum plus the tail energy ``T = 1 - sum eta_l^2`` counted with the largest capture
    fraction met among the next degrees (at least the library's proved one), and at most T."""
    d, r, H, L = 5, 1, 2, 41
    exact = energy = sp.Integer(0)
    for l in range(1, L + 1, 2):
        N = dim_harmonics(d, l)
        Dl = degree_dimension_bound(d, r, l)
        m = min(Fraction(1), Fraction(H * Dl, N))
        e2 = sp.expand(sign_coefficient_exact(d, l) ** 2)
        exact += e2 * sp.Rational(1 - m)
        energy += e2
    worst = max(Fraction(H * degree_dimension_bound(d, r, l), dim_harmonics(d, l))
                for l in range(L + 2, 20 * L, 2))
    T = 1 - energy
    lowest = float(sp.N((exact + T * (1 - sp.Rational(worst))) / 2, 30))
    highest = float(sp.N((exact + T) / 2, 30))
    lb = harmonic_bound(d, r, H, max_degree=L)
    lo, hi = lb.enclosure
    assert float(sp.N(exact / 2, 30)) < lo <= lowest * (1 + 1e-15)
    assert hi >= highest * (1 - 1e-15) and lo <= lb.value <= hi and lb.degrees_summed == L
    # what is left open is the capture of the tail, no more (the truncation's record says so)
    assert hi - lo <= (highest - lowest) * 1.01 + 1e-15 and lb.tail == hi - lo
    assert lb.truncation is not None and not lb.truncation.settled  # 0.5 % of the value


def test_paper_sanity_values_d64_r1() -> None:
    q = "query-dependent-values"
    assert harmonic_bound(64, 1, 1, value_class=q).value == pytest.approx(0.17, abs=0.01)
    assert harmonic_bound(64, 1, 16384, value_class=q).value == pytest.approx(0.09, abs=0.012)
    assert harmonic_bound(64, 1, 1).value == pytest.approx(0.489, abs=0.002)
    assert harmonic_bound(64, 1, 16).value == pytest.approx(0.339, abs=0.002)
    assert harmonic_bound(64, 1, 16384).value == pytest.approx(0.124, abs=0.002)
    assert harmonic_bound(64, 64, 1).value == 0.0


def test_truncation_keeps_r_near_d_positive_for_large_d() -> None:
    for d in (32, 64):
        assert harmonic_bound(d, d - 2, 1).enclosure[0] > 1e-3
    assert harmonic_bound(32, 30, 1, value_class="query-dependent-values").enclosure[0] > 0


def test_value_class_is_validated_and_ordered() -> None:
    with pytest.raises(ValueError, match="value_class"):
        harmonic_bound(8, 1, 1, value_class="eq3")
    for d, r, H in ((8, 2, 3), (16, 1, 16)):
        wide = harmonic_bound(d, r, H, value_class="query-dependent-values").enclosure[1]
        assert wide < harmonic_bound(d, r, H).enclosure[0]


@pytest.mark.parametrize("d", [6, 12])
def test_monotone_in_heads_and_rank(d: int) -> None:
    Hs = [1, 2, 3, 8, 64, 1000, 10**5, 10**9]
    for r in range(1, d + 1):
        vals = [harmonic_bound(d, r, H).enclosure[0] for H in Hs]
        assert all(a >= b for a, b in zip(vals, vals[1:]))
    for H in [1, 50]:
        vals = [harmonic_bound(d, r, H).enclosure[0] for r in range(1, d + 1)]
        assert all(a >= b for a, b in zip(vals, vals[1:]))
        assert vals[-1] == 0.0 and vals[-2] == 0.0  # r = d and r = d-1


@pytest.mark.parametrize("d", [5, 6, 8, 16])
def test_positive_for_rank_at_most_d_minus_2(d: int) -> None:
    for r in range(1, d - 1):
        assert harmonic_bound(d, r, 1).enclosure[0] > 0


@pytest.mark.parametrize("H", [1, 3, 16, 128])
def test_never_exceeds_best_rank1_random_features(H: int) -> None:
    d = 8
    g = torch.Generator().manual_seed(H)
    Q = uniform_sphere(H, d=d, generator=g)
    K = uniform_sphere(H, d=d, generator=g)
    C = agreement_kernel(Q, K)
    b = head_target_agreement(d, (Q * K).sum(-1))
    a = torch.linalg.lstsq(C, b.unsqueeze(1), rcond=1e-12, driver="gelsd").solution.squeeze(1)
    err = kernel_error(a, b, C)
    assert harmonic_bound(d, 1, H).enclosure[1] <= err + 1e-9


def test_heads_needed_is_the_first_h_the_bound_allows() -> None:
    d, r, eps = 16, 1, 0.12
    H = heads_needed(d, r, eps)
    assert H > 1
    assert harmonic_bound(d, r, H).enclosure[0] <= eps < harmonic_bound(d, r, H - 1).enclosure[0]
    assert heads_needed(d, r, 0.49) == 1 and heads_needed(d, d - 1, 0.01) == 1
    assert heads_needed(d, r, eps / 2) >= H


def test_validation() -> None:
    with pytest.raises(ValueError, match="r must"):
        harmonic_bound(8, 9, 1)
    with pytest.raises(ValueError, match="H must"):
        harmonic_bound(8, 1, 0)
    with pytest.raises(ValueError, match="eps must"):
        heads_needed(8, 1, 0.0)
    with pytest.raises(ValueError, match="d must"):
        harmonic_bound(1, 1, 1)


def test_cli_lower_class_flag(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from workbench.cli import main
    from workbench.core.bounds.certified import certified_lower_bound

    for vc in ("eq2", "query-dependent-values"):
        code = main(["bounds", "lower", "--d", "12", "--r", "2", "--heads", "4", "--class", vc,
                     "--json"])
        p = json.loads(capsys.readouterr().out)
        assert code == 0 and p["class"] == vc
        assert ("Eq. 2" if vc == "eq2" else "depend on the query") in p["covers"]
        # the larger of the harmonic count and the fiber bound of the same class
        harmonic = harmonic_bound(12, 2, 4, value_class=vc).enclosure[0]
        assert p["harmonic_count"]["lower_bound"] == harmonic
        assert p["lower_bound"] == certified_lower_bound(12, 2, 4, vc).value
    assert main(["bounds", "lower", "--d", "12", "--r", "2", "--heads", "4", "--class", "x"]) == 2
    assert "class" in capsys.readouterr().err.lower()


def test_heads_needed_search_says_when_the_truncation_sets_the_answer() -> None:
    """Not limited: a truncation eight times higher gives the same H (independent of the
    tail test). Limited: a higher truncation does raise H, and H stays a valid 'at least'."""
    from workbench.core.bounds.harmonic_count.harmonic import heads_needed_search

    for d, r, eps in ((8, 1, 0.3), (16, 1, 0.3), (16, 2, 0.2)):
        res = heads_needed_search(d, r, eps)
        assert not res.truncation_limited and not res.raised
        assert res.bound_at_heads <= eps  # the full series' upper end
        assert heads_needed(d, r, eps, max_degree=8 * res.max_degree + 1) == res.heads
    # settled at L = 201 (the counted tail): a truncation ten times higher gives the same H
    mid = heads_needed_search(8, 1, 0.05, max_degree=201)
    assert not mid.truncation_limited and heads_needed(8, 1, 0.05, max_degree=2001) == mid.heads
    low = heads_needed_search(8, 1, 0.01, max_degree=201)
    assert low.truncation_limited and low.max_degree == 201 and not low.raised
    assert low.truncation is not None and not low.truncation.settled
    assert harmonic_bound(8, 1, low.heads - 1, max_degree=201).enclosure[0] > 0.01
    assert heads_needed(8, 1, 0.01, max_degree=2001) > low.heads  # the truncation did set it
    auto = heads_needed_search(16, 1, 1e-6)
    assert auto.raised and auto.max_degree == auto.degree_cap and auto.truncation_limited
    # heads_needed is the search itself; at the starting truncation alone the answer is smaller
    assert auto.heads == heads_needed(16, 1, 1e-6) > heads_needed(16, 1, 1e-6, max_degree=961)


def test_heads_needed_search_class_and_cap() -> None:
    from workbench.core.bounds.harmonic_count.harmonic import (
        SEARCH_COST,
        heads_needed_search,
        search_degree_cap,
    )

    qv = heads_needed_search(64, 1, 0.1, max_degree=1977, value_class="query-dependent-values")
    eq = heads_needed_search(64, 1, 0.1, max_degree=1977)
    # query-dependent values need fewer heads (d(d+1)/2 times the count); each is its class's
    # least H: the class's own bound excludes H - 1 and allows H
    assert qv.heads < eq.heads
    for res, vc in ((qv, "query-dependent-values"), (eq, "eq2")):
        lo = harmonic_bound(64, 1, res.heads - 1, max_degree=1977, value_class=vc).enclosure[0]
        assert lo > 0.1 >= harmonic_bound(64, 1, res.heads, max_degree=1977,
                                          value_class=vc).enclosure[0]
    for d in (3, 16, 200):  # the cap is the largest odd L within the cost budget
        L = search_degree_cap(d)
        assert L % 2 == 1
        cost = [Lx * max(1.0, math.log10(dim_harmonics(d, Lx))) for Lx in (L, L + 2)]
        assert cost[0] <= SEARCH_COST < cost[1]


def _next_odd(f):  # type: ignore[no-untyped-def]
    def g(d, max_degree):  # type: ignore[no-untyped-def]
        e = f(d, max_degree + 2).copy()
        e[1:-2:2] = e[3::2]
        return e[: max_degree + 1]

    return g


@pytest.mark.parametrize("wrap", [_next_odd, scaled(1.02)])
def test_a_slip_in_the_sign_energies_fails_before_the_truncation_search(wrap) -> None:
    """eta_l for the next odd degree, or 2 % off: the check against the exact eta_1^2 and
    eta_3^2 / eta_1^2 raises at once instead of sending the degree search to its cap."""
    from workbench.core.bounds.harmonic_count import harmonic as hb

    hb._choose_degree.cache_clear()
    try:
        with plant("workbench.core.harmonics:sign_coefficients", wrap):
            with pytest.raises(ArithmeticError, match="sign energies"):
                hb._choose_degree(12, 1e-3)
    finally:
        hb._choose_degree.cache_clear()
    assert hb._choose_degree(12, 1e-3) >= 1
