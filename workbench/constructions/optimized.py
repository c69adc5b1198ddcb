"""Explicit models for the upper side of the sandwich (docs/derivations/lower_bound.md, "The
sandwich"): every number is the error of a model whose weights are saved and can be replayed.

- ``bayes_heads``: H heads of key-rank r (random row spaces, the first one the coordinate
  subspace), each with the Bayes-optimal score ``psi_h = E[s | P_h w, y]``, and scalar value maps
  ``a_h I`` fitted by least squares on one sample; the error is measured on a fresh sample.
- ``hardmax_rank1``: H rank-1 hardmax heads with ``q_h = k_h``, directions optimised by Adam on the
  exact kernel error ``1 - 2 a.b + a.C.a`` (docs/paper.md §4) with ``C a = b``; the error is exact.
- ``witness_model``, ``witness_claim``: a witness as a construction's ``(model, claimed)``
  (registered as ``hardmax-rank1`` and ``bayes-heads``, docs/extending.md);
- ``one_head_exact_error``: the closed form of one Bayes head with M = I,
  ``1/2 (1 - sum_{l odd} eta_l^2 C(l+r-1, r-1)/N(d,l))``, with a rigorous truncation enclosure.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from scipy.special import betainc

from workbench.constructions._montecarlo import ClaimedError
from workbench.constructions.rank_one import rank_one_model
from workbench.constructions.witness_setting import NEAREST_2, Setting
from workbench.core.harmonics import dim_harmonics, sign_coefficients
from workbench.core.head_kernels import head_target_agreement
from workbench.core.safe_files import write_file
from workbench.core.sphere import make_generator, sample_instances
from workbench.core.validation import check_dim, check_heads, check_key_rank

__all__ = [
    "Witness",
    "bayes_score",
    "one_head_exact_error",
    "bayes_heads",
    "hardmax_rank1",
    "replay",
    "bernstein_ci",
    "witness_claim",
    "witness_model",
]

DELTA = 1e-3  # two-sided failure probability of every Monte Carlo interval


@dataclass
class Witness:
    """An explicit model and its error: ``ci`` is rigorous (exact) or holds with 1 - DELTA."""

    method: str
    d: int
    r: int
    heads: int
    error: float
    ci: tuple[float, float]
    params: dict[str, np.ndarray]
    n_eval: int = 0
    seed: int = 0
    setting: Setting = NEAREST_2  # N keys and target (witness_setting.py); saved as ``task``

    def save(self, path: str | Path, name: str = "path", *, compressed: bool = False) -> Path:
        """Write the witness to ``path`` (``.npz`` added if missing) as an ``.npz`` of numbers
        (``compressed``: deflated) by ``safe_files.write_file``, whose errors name ``name``;
        the path written."""
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_name(path.name + ".npz")
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = np.array([self.d, self.r, self.heads, self.n_eval, self.seed])
        arrays: dict[str, np.ndarray] = {
            "method": np.array(self.method),
            "meta": meta,
            "error": np.array([self.error, *self.ci]),
            **self.params,
            **task_array(self.setting),
        }
        savez = np.savez_compressed if compressed else np.savez
        return write_file(path, lambda fh: savez(fh, **arrays), name)  # type: ignore[arg-type]

    @staticmethod
    def load(path: str | Path) -> Witness:
        """The witness saved at ``path``: numbers only (``allow_pickle=False``), its arrays'
        names, dtypes and shapes checked against its method and ``(d, r, H)``
        (``WITNESS_PARAMS``). Anything else raises a one-line ``ValueError`` naming ``witness``
        (docs/sweeps.md, "Files the workbench reads")."""
        where = repr(str(path))

        def bad(why: str) -> ValueError:
            return ValueError(f"witness must be a witness file written by workbench bounds "
                              f"sandwich ({where} {why})")

        try:
            with open(path, "rb") as f:
                zipped = f.read(4) == b"PK\x03\x04"  # np.savez writes a zip archive
            z = np.load(path, allow_pickle=False)
        except OSError as e:
            raise bad(f"cannot be read: {e.strerror or e}") from None
        except Exception:  # noqa: BLE001 - np.load takes anything else for a pickle
            raise bad("is truncated or damaged" if zipped else "is not an .npz archive") \
                from None
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise bad("is a single array, not an .npz archive")
        try:
            with z:
                arrays = {k: z[k] for k in z.files}
        except Exception as e:  # noqa: BLE001 - a damaged member, or an object array
            pickled = "allow_pickle" in str(e)
            raise bad("holds objects other than numbers, which are never unpickled" if pickled
                      else "is truncated or damaged") from None
        method, meta, error = (arrays.pop(k, None) for k in ("method", "meta", "error"))
        setting = read_task_array(arrays.pop("task", None), bad)
        if method is None or method.shape != () or method.dtype.kind != "U":
            raise bad("has no method name")
        name = str(method)
        if name not in WITNESS_PARAMS:
            raise bad(f"names the method {name!r}, not one of {', '.join(WITNESS_PARAMS)}")
        if meta is None or meta.shape != (5,) or meta.dtype.kind not in "iu":
            raise bad("has no meta array of 5 integers (d, r, heads, n_eval, seed)")
        if error is None or error.shape != (3,) or error.dtype.kind != "f":
            raise bad("has no error array of 3 floats (error, CI low, CI high)")
        d, r, H, n, seed = (int(v) for v in meta)
        if d < 2 or not 1 <= r <= d or H < 1 or n < 0 or seed < 0:
            raise bad(f"records d={d}, r={r}, heads={H}, n_eval={n}, seed={seed}")
        shapes = WITNESS_PARAMS[name](d, r, H)
        if name in STATE_METHODS:  # its weights, checked against the model when loaded
            shapes.update({k: arrays[k].shape for k in arrays if k.startswith(STATE_PREFIX)})
        if set(arrays) != set(shapes):
            raise bad(f"holds the arrays {sorted(arrays)}, not {sorted(shapes)} of {name}")
        for k, shape in shapes.items():
            if arrays[k].shape != shape or arrays[k].dtype.kind != "f":
                raise bad(f"holds {k} of shape {arrays[k].shape}, not a float array of shape "
                          f"{shape} for d={d}, r={r}, heads={H}")
        return Witness(name, d, r, H, float(error[0]), (float(error[1]), float(error[2])), arrays,
                       n, seed, setting)


def task_array(setting: Setting) -> dict[str, np.ndarray]:
    """The ``task`` entry of a witness ``.npz`` (none for N = 2, hardmax)."""
    return {} if setting.is_default else {"task": np.array(setting.to_json())}


def read_task_array(raw: np.ndarray | None, bad: Callable[[str], ValueError]) -> Setting:
    """The setting saved as ``task`` (a JSON string), or N = 2, hardmax when absent."""
    if raw is None:
        return NEAREST_2
    if raw.shape != () or raw.dtype.kind != "U":
        raise bad("holds a task entry that is not one string")
    try:
        return Setting.from_dict(json.loads(str(raw)), "task")
    except (ValueError, json.JSONDecodeError) as e:
        raise bad(f"holds an unreadable task entry ({e})") from None


# the arrays of each method's witness and their shapes at (d, r, H); a trained witness keeps its
# weights beside the witness (workbench/verifiers/sandwich.py) or inside it, each state-dict
# entry as an array named STATE_PREFIX + its key (workbench/verifiers/witness_record.py)
STATE_PREFIX = "state."
# the witnesses that are a state dict of generalized attention, rebuilt from it to be replayed:
# trained ones, and the random features on D_N (workbench/constructions/random_features_dn.py)
STATE_METHODS = ("trained_generalized", "random_features_solved")
WITNESS_PARAMS: dict[str, Any] = {
    "one_head_bayes": lambda d, r, H: {"B": (H, r, d), "a": (H,)},
    "bayes_heads": lambda d, r, H: {"B": (H, r, d), "a": (H,)},
    "hardmax_rank1": lambda d, r, H: {"Q": (H, d), "a": (H,)},
    "random_features": lambda d, r, H: {"Q": (H, d), "K": (H, d), "a": (H,)},
    **{m: (lambda d, r, H: {}) for m in STATE_METHODS},
}


def bernstein_ci(x: np.ndarray, bound: float, delta: float = DELTA) -> tuple[float, float]:
    """Empirical-Bernstein interval (Maurer and Pontil 2009) for the mean of i.i.d. values in
    ``[0, bound]``, two-sided with failure probability ``delta``."""
    n = len(x)
    m = float(x.mean())
    lg = math.log(4 / delta)
    half = math.sqrt(2 * float(x.var(ddof=1)) * lg / n) + 7 * bound * lg / (3 * (n - 1))
    return max(0.0, m - half), min(bound, m + half)  # the mean lies in [0, bound]


def bayes_score(B: np.ndarray, w: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``E[sign<y,w> | B w, y]`` for w uniform on S^{d-1}; ``B`` (r, d) has orthonormal rows."""
    d = B.shape[1]
    m = d - B.shape[0]
    v, py = w @ B.T, y @ B.T
    known = (v * py).sum(-1)
    rest = np.sqrt(np.clip(1 - (v * v).sum(-1), 0, None) * np.clip(1 - (py * py).sum(-1), 0, None))
    c = np.divide(known, rest, out=np.full_like(known, np.inf) * np.sign(known), where=rest > 0)
    if m == 1:
        return np.where(np.abs(c) >= 1, np.sign(c), 0.0)
    # t = <unit kernel part of y, unit kernel part of w> has density ~ (1-t^2)^((m-3)/2);
    # P(t > -c) = P(B > (1-c)/2), B ~ Beta((m-1)/2, (m-1)/2)
    a = (m - 1) / 2
    u = np.clip((1 + c) / 2, 0, 1)
    return 2 * betainc(a, a, u) - 1


def one_head_exact_error(d: int, r: int, max_degree: int = 4001) -> tuple[float, float]:
    """Enclosure of ``1/2 (1 - sum_{l odd} eta_l^2 C(l+r-1, r-1)/N(d,l))``: the degrees above
    ``max_degree`` capture at most the uncounted energy ``1 - sum_{l<=L} eta_l^2`` (float64)."""
    d, r = check_dim(d), check_key_rank(r, d)
    e2 = sign_coefficients(d, max_degree)[1::2] ** 2
    ls = range(1, max_degree + 1, 2)
    frac = np.array([min(1.0, math.comb(l + r - 1, r - 1) / dim_harmonics(d, l)) for l in ls])
    hi = 0.5 * (1 - float((e2 * frac).sum()))
    lo = hi - 0.5 * max(0.0, 1 - float(e2.sum()))
    return lo - 1e-12, hi + 1e-12


def _subspaces(d: int, r: int, H: int, rng: np.random.Generator) -> np.ndarray:
    Bs = [np.eye(d)[:r]]
    for _ in range(H - 1):
        Bs.append(np.linalg.qr(rng.standard_normal((d, r)))[0].T)
    return np.stack(Bs)


def _scores(Bs: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample Bayes scores ``psi_h`` (n, H) and ``s = sign<y,w>`` (n,). Head h outputs
    ``z_h = X phi_h = (u + psi_h w)/sqrt2`` and the target is ``f = (u + s w)/sqrt2``; as u, w are
    orthonormal, ``||f - sum_h a_h z_h||^2 = ((1 - sum a)^2 + (s - sum_h a_h psi_h)^2) / 2``."""
    w = (X[:, 0] - X[:, 1]) / math.sqrt(2)
    s = np.sign((y * w).sum(-1))
    psi = np.stack([bayes_score(B, w, y) for B in Bs], 1)
    return psi, s


def _sample(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    X, y = sample_instances(n, 2, d, points="orthonormal", generator=make_generator(seed))
    return X.numpy(), y.numpy()


def _outputs(params: dict[str, np.ndarray], X: np.ndarray,
             y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Bayes heads' output ``A = sum_h a_h X phi_h`` (n, d), formed explicitly from X (not
    through the identity above), and ``s = sign<y, w>`` (n,)."""
    psi, s = _scores(params["B"], X, y)
    u = (X[:, 0] + X[:, 1]) / math.sqrt(2)
    w = (X[:, 0] - X[:, 1]) / math.sqrt(2)
    a = params["a"]
    return (a.sum() * u + (psi @ a)[:, None] * w) / math.sqrt(2), s


def _losses(params: dict[str, np.ndarray], d: int, n: int, seed: int) -> np.ndarray:
    """Per-sample errors ``||f - A||^2`` of the model on the evaluation stream ``seed``."""
    X, y = _sample(n, d, seed)
    A, s = _outputs(params, X, y)
    f = np.where((s > 0)[:, None], X[:, 0], X[:, 1])
    return ((f - A) ** 2).sum(-1)


def _loss_bound(a: np.ndarray) -> float:
    """Per-sample loss <= (1 + sum|a_h|)^2 (||f|| = 1, ||z_h|| <= 1)."""
    return float((1 + np.abs(a).sum()) ** 2)


def bayes_heads(
    d: int, r: int, H: int, *, n_fit: int = 20_000, n_eval: int = 100_000, seed: int = 0
) -> Witness:
    """H Bayes-optimal heads on random row spaces with least-squares scalar values ``a_h``."""
    d, r, H = check_dim(d), check_key_rank(r, d), check_heads(H)
    if r >= d:
        raise ValueError(f"r must be < d for Bayes heads (got r={r}, d={d})")
    rng = np.random.default_rng(seed)
    Bs = _subspaces(d, r, H, rng)
    X, y = _sample(n_fit, d, seed + 1)
    psi, s = _scores(Bs, X, y)
    G = (1 + psi.T @ psi / n_fit) / 2  # E <z_h, z_k>
    c = (1 + psi.T @ s / n_fit) / 2  # E <z_h, f>
    a = np.linalg.lstsq(G + 1e-12 * np.eye(H), c, rcond=None)[0]
    params = {"B": Bs, "a": a}
    loss = _losses(params, d, n_eval, seed + 2)
    ci = bernstein_ci(loss, _loss_bound(a))
    return Witness("bayes_heads", d, r, H, float(loss.mean()), ci, params, n_eval, seed + 2)


def _rank1_error(Q: torch.Tensor, b: float) -> torch.Tensor:
    Qn = Q / Q.norm(dim=1, keepdim=True)
    cos = (Qn @ Qn.T).clamp(-1 + 1e-12, 1 - 1e-12)
    C = 0.5 + (2 / math.pi**2) * torch.arcsin(cos) ** 2
    C = C + torch.diag(1 - torch.diagonal(C))  # C_hh = 1 exactly
    ones = torch.ones(len(Q), dtype=Q.dtype)
    return 1 - b * b * ones @ torch.linalg.solve(C + 1e-12 * torch.eye(len(Q)), ones)


def hardmax_rank1(d: int, H: int, *, steps: int = 300, seed: int = 0) -> Witness:
    """H rank-1 hardmax heads (q_h = k_h, values a_h I), directions optimised on the exact
    kernel error; a valid witness for every key-rank r >= 1."""
    d, H = check_dim(d), check_heads(H)
    g = torch.Generator().manual_seed(seed)
    Q = torch.randn(H, d, generator=g, dtype=torch.float64, requires_grad=True)
    b = float(head_target_agreement(d, 1.0))
    m, v = torch.zeros_like(Q), torch.zeros_like(Q)
    for t in range(1, (steps if H > 1 else 0) + 1):
        Q.grad = None
        _rank1_error(Q, b).backward()
        _adam_step(Q, m, v, t, lr=0.05)
    params = _rank1_params(Q.detach().numpy(), d)
    err = _rank1_replay(params, d)
    return Witness("hardmax_rank1", d, 1, H, err, (err - 1e-9, err + 1e-9), params, 0, seed)


@torch.no_grad()
def _adam_step(p: torch.Tensor, m: torch.Tensor, v: torch.Tensor, t: int, lr: float,
               betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
    """Step ``t`` (from 1) of Adam on ``p``, the operations of ``torch.optim.Adam`` one by one
    (whose constructor imports ``torch._dynamo``, over a second per process)."""
    g = cast(torch.Tensor, p.grad)
    m.lerp_(g, 1 - betas[0])
    v.mul_(betas[1]).addcmul_(g, g, value=1 - betas[1])
    denom = (v.sqrt() / math.sqrt(1 - betas[1] ** t)).add_(eps)
    p.addcdiv_(m, denom, value=-lr / (1 - betas[0] ** t))


def _rank1_params(Q: np.ndarray, d: int) -> dict[str, np.ndarray]:
    Qn = Q / np.linalg.norm(Q, axis=1, keepdims=True)
    Qt = torch.from_numpy(Qn)
    b = head_target_agreement(d, torch.ones(len(Qn), dtype=torch.float64))
    from workbench.core.head_kernels import agreement_kernel

    C = agreement_kernel(Qt, Qt)
    # SVD (gelsd): the default gelsy's answer on a singular C depends on the allocator's state
    a = torch.linalg.lstsq(C, b.unsqueeze(1), rcond=1e-12, driver="gelsd").solution.squeeze(1)
    return {"Q": Qn, "a": a.numpy()}


def _rank1_replay(params: dict[str, np.ndarray], d: int) -> float:
    from workbench.core.head_kernels import agreement_kernel, kernel_error

    Q = torch.from_numpy(params["Q"])
    b = head_target_agreement(d, (Q * Q).sum(-1))
    return float(kernel_error(torch.from_numpy(params["a"]), b, agreement_kernel(Q, Q)))


def witness_model(w: Witness) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """The witness as a model ``(X (b, 2, d), y (b, d)) -> (b, d)`` on two orthonormal keys
    (float64): the rank-1 hardmax heads as an Eq. 2 layer
    (``workbench.constructions.rank_one.rank_one_model``), the Bayes heads through the same
    numpy evaluation as their recorded error."""
    if w.method == "hardmax_rank1":
        Q = torch.from_numpy(w.params["Q"])
        return rank_one_model(Q, Q, torch.from_numpy(w.params["a"]))
    if w.method in ("bayes_heads", "one_head_bayes"):
        params = {"B": w.params["B"], "a": w.params["a"]}

        def bayes(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            if X.ndim != 3 or X.shape[1] != 2:
                raise ValueError(f"X must have shape (b, 2, d) (got {tuple(X.shape)})")
            A, _ = _outputs(params, X.detach().cpu().double().numpy(),
                            y.detach().cpu().double().numpy())
            return torch.from_numpy(A).to(X.device)

        return bayes
    raise ValueError(f"unknown witness method {w.method!r}")


def witness_claim(w: Witness) -> ClaimedError:
    """The witness's recorded error as a claim: ``==``, exact (the kernel error, within 1e-9)
    or with its empirical-Bernstein interval (``1 - DELTA``) on its own evaluation sample."""
    exact = w.method == "hardmax_rank1"
    return ClaimedError(w.error, "==", "exact_kernel" if exact else "monte_carlo",
                        f"{w.method}: err(D_2) == the witness's recorded error", w.ci[0], w.ci[1],
                        {} if exact else {"samples": w.n_eval, "interval": "bernstein",
                                          "level": 1 - DELTA})


def replay(w: Witness) -> tuple[float, tuple[float, float]]:
    """Recompute a saved witness's error from its weights alone (same evaluation sample)."""
    if w.method == "hardmax_rank1":
        e = _rank1_replay(w.params, w.d)
        return e, (e - 1e-9, e + 1e-9)
    if w.method == "bayes_heads":
        loss = _losses(w.params, w.d, w.n_eval, w.seed)
        return float(loss.mean()), bernstein_ci(loss, _loss_bound(w.params["a"]))
    raise ValueError(f"unknown witness method {w.method!r}")
