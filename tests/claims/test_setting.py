"""The setting's claims (``workbench/proofs/paper/setting.py``) hold at quick scale, and each
fails on a planted fault in the samplers or the attention classes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from tests.claims.conftest import assert_module_holds, run_claim
from workbench.core.sphere import gaussian, uniform_sphere
from workbench.proofs.claim import combine
from workbench.testing import plant, replaced


def test_setting_claims_hold_at_quick_scale(quick_results) -> None:
    assert_module_holds(quick_results, "workbench.proofs.paper.setting")


def _anisotropic(*shape: int, d: int, generator: Any = None, device: Any = None,
                 dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Points on the sphere from a Gaussian whose first coordinate is 10 % too wide."""
    z = gaussian(*shape, d, generator=generator, device=device, dtype=dtype)
    z[..., 0] *= 1.1
    return z / z.norm(dim=-1, keepdim=True)


def test_sphere_sampler_with_a_covariance_ten_percent_off_is_violated() -> None:
    """Unit norms and mean 0 survive; the second moment ``E y_1^2 = 1/d`` does not."""
    with plant("workbench.core.sphere:uniform_sphere", replaced(_anisotropic)):
        ev = run_claim("setting.sphere_law")[1]
    assert combine(ev, "lemma") == "violated"
    bad = [e for e in ev if e.verdict == "violated"]
    assert bad and all(e.params.get("statistic") == "second_moment" for e in bad)


def _not_orthogonalised(batch: int, N: int, d: int, generator: Any = None, device: Any = None,
                        dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """D_N keys drawn i.i.d. on the sphere: the orthogonalisation forgotten."""
    return uniform_sphere(batch, N, d=d, generator=generator, device=device, dtype=dtype)


def test_keys_that_are_not_orthogonalised_are_violated() -> None:
    with plant("workbench.core.sphere:orthonormal_points", replaced(_not_orthogonalised)):
        ev = run_claim("setting.dn_orthonormal")[1]
    assert combine(ev, "lemma") == "violated"
    assert {e.params["d"] for e in ev if e.verdict == "violated"} == {2, 5, 16}


def _transposed_value_map(f: Callable[..., Any]) -> Callable[..., Any]:
    """``M = Wv^T Wo`` in place of ``Wo^T Wv``."""

    def to_generalized(self: Any) -> Any:
        g = f(self)
        with torch.no_grad():
            g.M.copy_(g.M.transpose(-1, -2).clone())
        return g

    return to_generalized


def test_transposed_value_map_is_violated() -> None:
    with plant("workbench.models.attention:MultiHeadAttention.to_generalized",
               _transposed_value_map):
        ev = run_claim("setting.generalized_covers_standard")[1]
    assert combine(ev, "lemma") == "violated"
