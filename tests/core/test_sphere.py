"""Samplers have the right law (docs/paper.md §2): norms, orthonormality, moments, determinism."""

import math

import pytest
import torch

from workbench.core.sphere import (
    gaussian,
    make_generator,
    orthonormal_points,
    sample_instances,
    sample_points,
    sample_queries,
    uniform_sphere,
)

Z = 5.0  # moment checks use z = 5 standard errors: the seeds are fixed, a fluke is ~1e-6


def _sphere_moment_checks(P: torch.Tensor) -> None:
    """``P`` is ``(n, d)`` with rows claimed uniform on S^{d-1}."""
    n, d = P.shape
    # E[y] = 0; Var(y_i) = 1/d
    assert (P.mean(0).abs() <= Z * math.sqrt(1 / d / n)).all()
    # E[y y^T] = I/d; Var(y_i^2) = 3/(d(d+2)) - 1/d^2, Var(y_i y_j) = 1/(d(d+2))
    cov = P.T @ P / n
    sd_diag = math.sqrt((3 / (d * (d + 2)) - 1 / d**2) / n)
    sd_off = math.sqrt(1 / (d * (d + 2)) / n)
    eye = torch.eye(d, dtype=P.dtype)
    assert ((cov.diagonal() - 1 / d).abs() <= Z * sd_diag).all()
    assert ((cov - cov.diagonal().diag_embed()).abs() <= Z * sd_off + eye).all()
    # Var(y_1 y_2) pins the fourth moment: E[y_1^2 y_2^2] = 1/(d(d+2))
    if d >= 2:
        m4 = (P[:, 0] ** 2 * P[:, 1] ** 2).mean()
        sd4 = math.sqrt((P[:, 0] ** 2 * P[:, 1] ** 2).var() / n)
        assert abs(m4 - 1 / (d * (d + 2))) <= Z * sd4


@pytest.mark.parametrize("d", [2, 3, 7, 32])
def test_uniform_sphere_law(d):
    y = uniform_sphere(20000, d=d, generator=d)
    assert torch.allclose(y.norm(dim=-1), torch.ones(20000, dtype=y.dtype), atol=1e-12)
    _sphere_moment_checks(y)


@pytest.mark.parametrize("d,N", [(2, 2), (5, 2), (6, 4), (8, 8)])
def test_orthonormal_points_law(d, N):
    X = orthonormal_points(20000, N, d, generator=100 + d)
    gram = X @ X.transpose(1, 2)
    assert torch.allclose(gram, torch.eye(N, dtype=X.dtype).expand_as(gram), atol=1e-12)
    for i in range(N):  # each key is marginally uniform
        _sphere_moment_checks(X[:, i])
    # keys are exchangeable and isotropic jointly: E[(x_1 . e)(x_2 . e)] = 0 for a fixed e
    prod = X[:, 0, 0] * X[:, 1, 0]
    assert prod.mean().abs() <= Z * prod.std() / math.sqrt(prod.numel())


@pytest.mark.parametrize("d,N", [(2, 2), (3, 2), (8, 4), (8, 6), (8, 7), (16, 16)])
def test_orthonormal_points_are_the_sign_fixed_qr_frame(d, N):
    """The frames are the Q factor of the Gaussian draw whose R has a positive diagonal (the
    Haar frame), computed here by numpy's QR, independently."""
    import numpy as np

    from workbench.core.sphere import gram_schmidt

    X = orthonormal_points(500, N, d, generator=7)
    z = gaussian(500, d, N, generator=7).numpy()
    q, r = np.linalg.qr(z)
    ref = (q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[:, None, :]).transpose(0, 2, 1)
    assert np.abs(X.numpy() - ref).max() <= 1e-11
    frames = gram_schmidt(torch.from_numpy(z).transpose(-1, -2))  # whatever N is
    assert np.abs(frames.numpy() - ref).max() <= 1e-11
    shuffled = gram_schmidt(torch.from_numpy(z[..., ::-1].copy()).transpose(-1, -2))
    assert np.abs(shuffled.numpy() - ref).max() > 1e-3  # the order of the rows matters


def test_gaussian_law():
    z = gaussian(50000, 3, generator=1)
    assert (z.mean(0).abs() <= Z / math.sqrt(50000)).all()
    assert ((z.var(0) - 1).abs() <= Z * math.sqrt(2 / 50000)).all()


def test_queries_and_instances_shapes_and_laws():
    X, y = sample_instances(64, 3, 5, points="orthonormal", generator=3)
    assert X.shape == (64, 3, 5) and y.shape == (64, 5)
    g = sample_queries(40000, 4, law="gaussian", generator=5)
    assert abs(float((g**2).sum(-1).mean()) - 4) <= Z * math.sqrt(8 / 40000)


def test_determinism_under_seed():
    a = sample_instances(16, 4, 6, points="orthonormal", generator=42)
    b = sample_instances(16, 4, 6, points="orthonormal", generator=42)
    c = sample_instances(16, 4, 6, points="orthonormal", generator=43)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], c[0])
    g1, g2 = make_generator(9), make_generator(9)
    assert torch.equal(uniform_sphere(5, d=3, generator=g1), uniform_sphere(5, d=3, generator=g2))


def test_consecutive_draws_from_a_seed_are_independent():
    X, y = sample_instances(1, 1, 8, generator=0)
    assert not torch.allclose(X[0, 0], y[0])


def test_dtype_and_device_arguments():
    y = uniform_sphere(3, d=4, generator=0, dtype=torch.float32, device="cpu")
    assert y.dtype == torch.float32 and y.device.type == "cpu"


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: uniform_sphere(3, d=1), "d"),
        (lambda: orthonormal_points(3, 5, 4), "N"),
        (lambda: orthonormal_points(3, 0, 4), "N"),
        (lambda: sample_points(3, 0, 4), "N"),
        (lambda: sample_points(3, 2, 4, law="gauss"), "law"),
        (lambda: sample_queries(-1, 4), "batch"),
        (lambda: make_generator(-1), "seed"),
        (lambda: uniform_sphere(3, d=2.5), "d"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()
