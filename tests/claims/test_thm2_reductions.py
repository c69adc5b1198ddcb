"""Theorem 2, Lemmas 1-3 (``workbench/proofs/paper/thm2/reductions.py``): the claims hold at quick
scale, and each is violated by a planted fault: the sign of ``s``, a wrong reflection of the
query, a sampler of ``u`` that is not rotation invariant."""

from __future__ import annotations

import pytest
import torch

import workbench.proofs.support.eq2_models as eq2
from tests.claims.conftest import assert_module_holds, run_claim
from workbench.testing import edited, plant

REFLECTED = "workbench.proofs.paper.thm2.reductions:_at_reflected_query"


def test_reductions_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.thm2.reductions")


def _sign_slip(f):  # type: ignore[no-untyped-def]
    """``decompose`` with ``s = -sign<y, w>``."""

    def g(X, y):  # type: ignore[no-untyped-def]
        u, w, s = f(X, y)
        return u, w, -s

    return g


def test_projection_reduction_refutes_a_sign_slip_in_s() -> None:
    with plant("workbench.proofs.support.eq2_models:decompose", _sign_slip):
        verdict, ev = run_claim("thm2.projection_reduction")
    assert verdict == "violated" and all(e.method == "identity" for e in ev)


def _reflected(fake_G):  # type: ignore[no-untyped-def]
    """``_at_reflected_query`` with ``G(-y)`` replaced by ``fake_G(model, X, y, G(-y))``."""

    def wrap(real):  # type: ignore[no-untyped-def]
        def fake(model, X, y):  # type: ignore[no-untyped-def]
            s_neg, G_neg = real(model, X, y)
            return s_neg, fake_G(model, X, y, G_neg)

        return fake

    return wrap


@pytest.mark.parametrize(
    "name,fake_G",
    [
        # noise with the variance of G(-y): the old pair identity held for it
        ("noise", lambda m, X, y, Gn: Gn.std(-1, keepdim=True) * torch.randn(
            Gn.shape, generator=torch.Generator().manual_seed(5), dtype=Gn.dtype)),
        ("sign slip: G(y) for G(-y)", lambda m, X, y, Gn: eq2.G(m, X, y)),
    ],
)
def test_odd_reduction_refutes_a_wrong_reflection(name, fake_G) -> None:  # type: ignore[no-untyped-def]
    with plant(REFLECTED, _reflected(fake_G)):
        assert run_claim("thm2.odd_reduction")[0] == "violated", name


def _even_s(real):  # type: ignore[no-untyped-def]
    return lambda m, X, y: (-real(m, X, y)[0], real(m, X, y)[1])


def test_odd_reduction_refutes_an_even_s() -> None:
    """s(-y) is computed from the data: a sign rule that is not odd is caught."""
    with plant(REFLECTED, _even_s):
        _, ev = run_claim("thm2.odd_reduction")
    assert any(e.verdict == "violated" and e.method == "identity" for e in ev)


def test_conditional_law_refutes_a_sampler_that_is_not_rotation_invariant() -> None:
    """``u`` drawn from a uniform cube (``rand`` for ``randn``) before the projection on
    ``w^perp``: its law then depends on more of ``w`` than ``W w``."""
    with plant("workbench.proofs.paper.thm2.reductions:_uniform_orthogonal",
               edited("torch.randn(n, w.shape[0]", "torch.rand(n, w.shape[0]")):
        verdict, ev = run_claim("thm2.conditional_law")
    assert verdict == "violated"
    assert {e.params["pair"] for e in ev if e.verdict == "violated"} == {"equal W w"}
