"""Replaying witnesses of the record on fresh samples, and checking a user's model before it is
recorded (docs/derivations/sandwich.md, "The record of witnesses").

A witness is replayed from its weights alone on ``n_eval`` samples of a stream it was not
measured on (``FRESH + seed``; exact witnesses are recomputed). Its claim is **reproduced** when
the claimed error lies in the replay's interval widened by the claim's own half-width:
``|claimed - replayed| <= sqrt(h_claim^2 + h_replay^2)``, the two-sample test at the record's
level for two independent estimates (a claim without an interval, ``h_claim = 0``, must lie in
the replay's interval itself). It is **above the certified bound** unless the replay's whole
interval lies below ``certified_lower_bound(d, r, H)``.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench.constructions.optimized import STATE_METHODS, STATE_PREFIX, Witness
from workbench.constructions.witness_setting import Setting
from workbench.core.safe_files import reading
from workbench.verifiers.witness_record import Entry, npz_bytes, weights_bytes

FRESH = 7_000_000  # the replay streams: FRESH + seed, never a stream a witness was measured on
LEVEL = 0.999
N_EVAL = 100_000
ARCHS = ("generalized",)  # the registered architectures a state dict may be for
MAX_STATE_BYTES = 256 * 2**20


@dataclass
class Replay:
    """A witness replayed: its claim against the fresh estimate, and the certified bound."""

    point: tuple[int, int, int]
    method: str
    claimed: float
    claimed_ci: tuple[float, float] | None
    error: float
    ci: tuple[float, float]
    stream: int
    n_eval: int
    tolerance: float
    reproduced: bool
    certified: float
    above_certified: bool
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"d": self.point[0], "r": self.point[1], "heads": self.point[2],
                "method": self.method, "claimed": self.claimed,
                "claimed_ci": None if self.claimed_ci is None else list(self.claimed_ci),
                "replayed": self.error, "replayed_ci": list(self.ci), "stream": self.stream,
                "samples": self.n_eval, "level": LEVEL, "tolerance": self.tolerance,
                "reproduced": self.reproduced, "certified": self.certified,
                "above_certified": self.above_certified, **self.extra}


def _bad(where: str, why: str) -> ValueError:
    return ValueError(f"FILE must be a witness or a state dict of a registered architecture "
                      f"({where} {why})")


def _state(w: Witness) -> dict[str, Any]:
    import torch

    return {k[len(STATE_PREFIX):]: torch.from_numpy(np.array(v)) for k, v in w.params.items()}


def check_architecture(state: dict[str, Any], d: int, r: int, H: int, where: str) -> Any:
    """The generalized-attention model (Eq. 2) of ``state`` at ``(d, r, H)``, built from the
    weights' names and shapes alone and loaded strictly; a mismatch is a one-line
    ``ValueError``."""
    from workbench.verifiers.train import ModelSpec, build_model
    from workbench.verifiers.trained_witness import _task, score_of

    spec = ModelSpec(arch="generalized", rank=r, heads=H, options=score_of(state))
    model = build_model(spec, _task(d), models=1)
    want = model.state_dict()
    if set(state) != set(want):
        raise _bad(where, f"holds {sorted(state)[:6]}, not the weights {sorted(want)} of "
                   f"generalized attention at d={d}, r={r}, heads={H}")
    for k, v in want.items():
        got = state[k]
        if tuple(got.shape) != tuple(v.shape) or not got.dtype.is_floating_point:
            raise _bad(where, f"holds {k} of shape {tuple(got.shape)}, not {tuple(v.shape)} of "
                       f"generalized attention at d={d}, r={r}, heads={H}")
        if not bool(got.isfinite().all()):
            raise _bad(where, f"holds {k} with non-finite values")
    model.load_state_dict({k: v.to(want[k].dtype) for k, v in state.items()})
    return model


def replay_error(w: Witness, stream: int, n_eval: int) -> tuple[float, tuple[float, float]]:
    """The error of ``w`` from its weights alone on ``n_eval`` samples of ``stream`` (exact
    witnesses: recomputed)."""
    from workbench.constructions.optimized import replay as replay_construction
    from workbench.verifiers.sandwich import _replay_random_features, one_head_replay
    from workbench.verifiers.trained_witness import replay_trained

    fresh = Witness(w.method, w.d, w.r, w.heads, w.error, w.ci, w.params, n_eval, stream)
    if w.method in STATE_METHODS:
        state = _state(w)
        check_architecture(state, w.d, w.r, w.heads, "the witness")
        return replay_trained(w.d, w.r, w.heads, state, n_eval, stream, LEVEL, w.setting)
    if not w.setting.is_default:
        raise ValueError(f"witness {w.method} is replayed on N = 2, hardmax only (it is for "
                         f"{w.setting.label()})")
    if w.method == "one_head_bayes":
        return one_head_replay(fresh)
    if w.method == "random_features":
        return _replay_random_features(fresh)
    return replay_construction(fresh)


def interval_of(method: str) -> str:
    return {"hardmax_rank1": "exact", "random_features": "normal",
            **dict.fromkeys(STATE_METHODS, "normal")}.get(method, "bernstein")


def setting_lower(setting: Setting, d: int, r: int, H: int) -> tuple[float, str] | None:
    """The lower bound a witness of ``setting`` is held to at ``(d, r, H)``, and its name: the
    certified bound (N = 2, hardmax), the profile's certified bound (soft-nearest); ``None``
    where the caller must supply one (N >= 3: ``workbench.plugins`` resolves it above this
    layer)."""
    if setting.is_default:
        from workbench.core.bounds.certified import certified_lower_bound

        return certified_lower_bound(d, r, H).value, "certified"
    if setting.target == "soft-nearest" and setting.N == 2:
        from workbench.core.bounds.profiles.profile_fiber import profile_lower_bound
        from workbench.core.profiles import tanh_profile

        bv = profile_lower_bound(tanh_profile(setting.beta), d, r, H)
        return bv.certified, "certified bound of the profile"
    return None


def replay(w: Witness, *, seed: int = 0, n_eval: int | None = None,
           claimed_ci: tuple[float, float] | None = None,
           point: tuple[int, int, int] | None = None,
           lower: Callable[[int, int, int], float] | None = None,
           lower_name: str = "") -> Replay:
    """Replay ``w`` on the fresh stream ``FRESH + seed`` and judge its claim (``w.error``, with
    ``claimed_ci`` or none) and the lower bound at ``point`` (default: the witness's): ``lower``
    (named ``lower_name``) where given, else :func:`setting_lower` (0 where none applies)."""
    stream = FRESH + seed if FRESH + seed != w.seed else FRESH + seed + 1  # never its own
    n = n_eval or max(w.n_eval, N_EVAL)
    err, ci = replay_error(w, stream, n)
    h_new = (ci[1] - ci[0]) / 2
    h_old = 0.0 if claimed_ci is None else (claimed_ci[1] - claimed_ci[0]) / 2
    tol = math.hypot(h_new, h_old)
    d, r, H = point or (w.d, w.r, w.heads)
    known = setting_lower(w.setting, d, r, H) if lower is None else (float(lower(d, r, H)),
                                                                         lower_name)
    cert, name = known if known is not None else (0.0, "none known")
    extra: dict[str, Any] = {"certified_at": [d, r, H], "bound": name}
    if not w.setting.is_default:
        extra["setting"] = w.setting.to_dict()
    return Replay((w.d, w.r, w.heads), w.method, w.error, claimed_ci, err, ci, stream, n, tol,
                  abs(w.error - err) <= tol, cert, ci[1] >= cert, extra)


def entry_witness(entry: Entry, db: str | os.PathLike[str] | None = None) -> Witness:
    """The witness of a record (or store) entry, read from its weights (numbers only)."""
    import io

    raw = weights_bytes(entry, db)
    w = _load_npz(io.BytesIO(raw), f"the record's {entry.file}")
    if (w.d, w.r, w.heads, w.method, w.setting) != entry.point + (entry.method, entry.setting):
        raise ValueError(f"the record's {entry.file} holds a witness of {w.method} at "
                         f"{(w.d, w.r, w.heads)} ({w.setting.label()}), not {entry.method} at "
                         f"{entry.point} ({entry.setting.label()})")
    return w


def _load_npz(src: Any, where: str) -> Witness:
    import tempfile

    if isinstance(src, (str, Path)):
        return Witness.load(src)
    with tempfile.TemporaryDirectory() as tmp:  # Witness.load checks a file
        f = Path(tmp) / "w.npz"
        f.write_bytes(src.getvalue())
        try:
            return Witness.load(f)
        except ValueError as e:
            raise ValueError(str(e).replace(repr(str(f)), where)) from None


def read_user_file(path: str | os.PathLike[str], *, d: int | None, r: int | None,
                   H: int | None, claim: float | None, arch: str = "generalized") -> Witness:
    """A user's witness from ``path``: a witness ``.npz`` (``Witness.save``'s layout, its claim
    inside), or a state dict of ``arch`` at ``(d, r, H)`` claiming ``claim`` (an ``.npz`` of
    arrays, or a ``torch.save`` file read with ``torch.load(weights_only=True)``). Anything
    that would run code, does not match the architecture, is truncated or malformed: a one-line
    ``ValueError`` naming FILE (``safe_files.reading``)."""
    with reading("FILE", path, "a witness or a state dict of a registered architecture"):
        return _read_user_file(path, d=d, r=r, H=H, claim=claim, arch=arch)


def _read_user_file(path: str | os.PathLike[str], *, d: int | None, r: int | None,
                   H: int | None, claim: float | None, arch: str = "generalized") -> Witness:
    """The body of :func:`read_user_file`."""
    where = repr(str(path))
    p = Path(path)
    with open(p, "rb") as f:
        head = f.read(4)
    if p.stat().st_size > MAX_STATE_BYTES:
        raise _bad(where, f"is larger than {MAX_STATE_BYTES >> 20} MiB")
    if head != b"PK\x03\x04":
        raise _bad(where, "is not an .npz or torch.save archive")
    import zipfile

    with zipfile.ZipFile(p) as z:
        names = z.namelist()
    if any(n.endswith(".npy") for n in names) and not any(n.endswith(".pkl") for n in names):
        with np.load(p, allow_pickle=False) as z:
            files = set(z.files)
        if {"method", "meta", "error"} <= files:
            try:
                return Witness.load(p)
            except ValueError as e:
                raise ValueError(f"FILE {e}") from None
        try:
            with np.load(p, allow_pickle=False) as z:
                arrays = {k: np.array(z[k]) for k in z.files}
        except ValueError:
            raise _bad(where, "holds objects other than numbers, which are never unpickled") \
                from None
        state = {k: v for k, v in arrays.items()}
    else:
        state = torch_state(p, where)
    return _state_witness(state, where, d, r, H, claim, arch)


def torch_state(p: Path, where: str) -> dict[str, Any]:
    """The state dict of tensors in the ``torch.save`` file ``p`` as arrays, read with
    ``torch.load(weights_only=True)``; anything else is a one-line ``ValueError``."""
    import torch

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch's restricted unpickler refused it, or damage
        if "Weights only load failed" in str(e):
            raise _bad(where, "would run code when loaded (it names callables other than "
                       "tensors and plain data), so it is never loaded") from None
        raise _bad(where, "is truncated or damaged") from None
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                            for k, v in raw.items()):
        raise _bad(where, f"holds a {type(raw).__name__}, not a state dict of tensors")
    return {k: v.detach().cpu().numpy() for k, v in raw.items()}


def _state_witness(state: dict[str, np.ndarray], where: str, d: int | None, r: int | None,
                   H: int | None, claim: float | None, arch: str) -> Witness:
    if arch not in ARCHS:
        raise ValueError(f"--arch must be one of {', '.join(ARCHS)} (got {arch!r})")
    for flag, given in (("--d", d), ("--rank", r), ("--heads", H), ("--claim", claim)):
        if given is None:
            raise ValueError(f"{flag} is required with a state dict ({where} holds no witness "
                             "record)")
    assert d is not None and r is not None and H is not None and claim is not None
    for k, arr in state.items():
        if arr.dtype.kind != "f":
            raise _bad(where, f"holds {k} of dtype {arr.dtype}, not floats")
    import torch

    check_architecture({k: torch.from_numpy(v) for k, v in state.items()}, d, r, H, where)
    params = {STATE_PREFIX + k: v for k, v in state.items()}
    return Witness("trained_generalized", d, r, H, float(claim), (float(claim), float(claim)),
                   params, 0, 0)


def witness_bytes(w: Witness) -> bytes:
    """``w`` as compressed ``.npz`` bytes, in ``Witness.save``'s layout."""
    from workbench.constructions.optimized import task_array

    meta = np.array([w.d, w.r, w.heads, w.n_eval, w.seed])
    return npz_bytes({"method": np.array(w.method), "meta": meta,
                      "error": np.array([w.error, *w.ci]), **w.params,
                      **task_array(w.setting)})
