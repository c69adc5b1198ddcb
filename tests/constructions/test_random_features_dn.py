"""Random features on D_N (``workbench.constructions.random_features_dn``): uniform attention's
exact error at beta = 0, the model's output equal to the solved combination of its heads' mixed
keys, least-squares optimality of the values, never below the certified bound at N, and the
witness replayed from its weights alone by ``workbench witness verify FILE``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from tests.cli.run_cli import run_cli
from workbench.constructions import random_features_dn as rfd
from workbench.constructions.optimized import STATE_PREFIX, Witness
from workbench.constructions.witness_setting import Setting
from workbench.core.bounds.sequence_length.certified_n import certified_n_bound
from workbench.core.sphere import sample_instances
from workbench.core.targets import nearest_neighbour
from workbench.testing import plant


def test_beta_zero_is_uniform_attention_with_its_exact_error() -> None:
    for N in (3, 6):
        r = rfd.random_features_dn(8, 1, N, n_solve=4000, n_eval=20_000, betas=(0.0,), seed=3)
        assert r.beta == 0.0 and r.a[0] == pytest.approx(1.0, abs=0.05)  # E<F,f> = E|F|^2 = 1/N
        assert r.ci[0] <= 1 - 1 / N <= r.ci[1] and r.ci[1] - r.ci[0] < 0.02


def _loss(r: Any, a: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> float:
    F = rfd._features(r.model, X, y)
    return float(((nearest_neighbour(X, y) - torch.einsum("h,bhd->bd", a, F)) ** 2)
                 .sum(-1).mean())


def _check_solved(r: Any, N: int) -> None:
    X, y = sample_instances(3000, N, 8, "orthonormal", "uniform", 99)
    a = torch.from_numpy(r.a)
    out = r.model(X, y)[0]  # the layer itself
    F = rfd._features(r.model, X, y)
    assert torch.allclose(out, torch.einsum("h,bhd->bd", a, F), atol=1e-12)
    X2, y2 = sample_instances(20_000, N, 8, "orthonormal", "uniform", r.stream - 1)  # solve's
    best = _loss(r, a, X2, y2)
    for s in (0.97, 1.03):  # the least-squares values: any rescaling does worse there
        assert _loss(r, a * s, X2, y2) > best


def test_values_are_the_least_squares_solution_and_the_layer_computes_them() -> None:
    r = rfd.random_features_dn(8, 4, 4, n_solve=20_000, n_eval=10_000, seed=5)
    _check_solved(r, 4)


def test_the_check_fails_when_the_solve_is_off_by_a_few_percent() -> None:
    """Planted: the right-hand side b of the normal equations 3 % high."""
    def off(orig: Any) -> Any:
        return lambda F, f, n: orig(F, 1.03 * f, n)

    with plant("workbench.constructions.random_features_dn:_solve", off):
        r = rfd.random_features_dn(8, 4, 4, n_solve=20_000, n_eval=10_000, seed=5)
    with pytest.raises(AssertionError):
        _check_solved(r, 4)


@pytest.mark.parametrize("H,N", [(1, 4), (8, 4), (8, 6)])
def test_never_below_the_certified_bound_at_n(H: int, N: int) -> None:
    r = rfd.random_features_dn(8, H, N, n_solve=10_000, n_eval=20_000, seed=7)
    bv = certified_n_bound(8, 1, H, N)
    assert r.ci[1] >= bv.certified and r.error < 1 - 1 / N + 0.01


def test_bad_arguments_name_the_parameter() -> None:
    for kw, words in (({"N": 9}, "N must"), ({"H": 0}, "H must"), ({"betas": (-1.0,)}, "betas")):
        args = {"d": 8, "H": 1, "N": 4, **kw}
        with pytest.raises(ValueError, match=words):
            rfd.random_features_dn(args.pop("d"), args.pop("H"), args.pop("N"), **args)


def test_witness_file_replays_from_its_weights(capsys: Any, tmp_path: Path) -> None:
    r = rfd.random_features_dn(8, 2, 4, n_solve=5000, n_eval=20_000, seed=11)
    state = {STATE_PREFIX + k: v.detach().numpy() for k, v in r.model.state_dict().items()}
    w = Witness(rfd.METHOD, 8, 1, 2, r.error, r.ci, state, r.n_eval, r.stream, Setting(4))
    f = w.save(tmp_path / "rf.npz")
    rc, p, err = run_cli(capsys, "witness", "verify", str(f), "--eval-samples", "20000",
                         "--json")
    assert rc == 0, err
    assert p["reproduced"] and p["bound"].startswith("certified-n (")
    assert p["certified"] == certified_n_bound(8, 1, 2, 4).certified
