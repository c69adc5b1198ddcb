"""The trainer's checkpoint file (docs/sweeps.md, "Files the workbench reads"): read as tensors
and plain data only, its layout and its run fingerprint checked before anything in it is used,
and written atomically (``workbench.core.safe_files``)."""

from __future__ import annotations

import json
import math
import os
import warnings
from typing import Any

import torch

from workbench.core.safe_files import write_file


def fingerprint_diff(saved: str, current: str, limit: int = 6) -> str:
    """The fields in which two run fingerprints differ: ``specs[0].seed: 0 (saved) != 3``."""
    names = ("task", "specs", "config")
    out: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                walk(a.get(k), b.get(k), f"{path}.{k}" if path else str(k))
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{names[i]}" if not path else f"{path}[{i}]")
        elif isinstance(a, list) and isinstance(b, list):
            out.append(f"{path}: {len(a)} entries (saved) != {len(b)}")
        elif a != b:
            out.append(f"{path}: {repr(a)[:40]} (saved) != {repr(b)[:40]}")

    walk(json.loads(saved), json.loads(current), "")
    more = f", and {len(out) - limit} more" if len(out) > limit else ""
    return "; ".join(out[:limit]) + more if out else "fingerprints differ"


def fingerprint_mismatch(saved: str, current: str) -> str:
    """``fingerprint_diff``, or a plain statement when the saved one is not a fingerprint."""
    try:
        return fingerprint_diff(saved, current)
    except (ValueError, TypeError):
        return "its fingerprint is not one of a run"



def planned_steps(saved: str, current: str) -> int | None:
    """The steps the checkpoint's run was planned for, when its fingerprint is this run's in
    everything but the steps; ``None`` otherwise (another run, or not a fingerprint)."""
    try:
        a, b = json.loads(saved), json.loads(current)
        steps = a[2].pop("steps")
        b[2].pop("steps")
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None
    return steps if a == b and isinstance(steps, int) and steps >= 1 else None


def resized_losses(losses: object, planned: int, steps: int) -> object:
    """A saved loss history of ``planned`` rows cut or zero-padded to ``steps`` rows (the rows
    past the checkpoint's step are zeros, overwritten as training proceeds); anything else is
    returned as it is, for ``check_state`` to refuse."""
    if not isinstance(losses, torch.Tensor) or losses.ndim != 2 or losses.shape[0] != planned:
        return losses
    out = losses.new_zeros(steps, losses.shape[1])
    n = min(steps, losses.shape[0])
    out[:n] = losses[:n]
    return out



CHECKPOINT_KEYS: dict[str, type | tuple[type, ...]] = {
    "fingerprint": str, "step": int, "seconds": (int, float), "groups": list}


def read_checkpoint(path: str | os.PathLike[str], device: str = "cpu") -> dict[str, Any]:
    """The checkpoint at ``path``, loaded as tensors and plain data only (never unpickling
    objects: a checkpoint that holds any is refused unloaded), with its top-level keys and
    types checked (``CHECKPOINT_KEYS``); the groups' layout is checked against the run later.

    Every unreadable, truncated, foreign or malformed file raises a one-line ``ValueError``
    naming ``checkpoint`` and what is wrong (docs/sweeps.md, "Files the workbench reads").
    """
    where = repr(os.fspath(path))

    def bad(why: str) -> ValueError:
        return ValueError(f"checkpoint must be a checkpoint file written by workbench train "
                          f"({where} {why})")

    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as e:
        raise ValueError(f"checkpoint must be a readable file ({where}: "
                         f"{e.strerror or e})") from None
    if not head:
        raise bad("is empty")
    try:
        with warnings.catch_warnings():  # torch warns about pickle protocols on stderr
            warnings.simplefilter("ignore")
            saved = torch.load(path, map_location=device, weights_only=True)
    except Exception as e:  # any failure to read is a refused, damaged or foreign file
        text = str(e)
        if "Weights only load failed" in text:  # torch's restricted unpickler refused it
            lines = [ln.strip() for ln in text.split("Check the documentation")[0].splitlines()
                     if ln.strip()]
            reason = f" ({lines[-1][:80].rstrip('.')})" if len(lines) > 1 else ""
            raise bad(f"holds objects other than tensors and plain data, which are never "
                      f"loaded{reason}") from None
        damaged = head == b"PK\x03\x04"  # a zip archive, as torch.save writes
        raise bad("is truncated or damaged" if damaged else "is not a PyTorch checkpoint") \
            from None
    if not isinstance(saved, dict):
        raise bad(f"holds a {type(saved).__name__}, not a dict of {', '.join(CHECKPOINT_KEYS)}")
    for key, kind in CHECKPOINT_KEYS.items():
        value = saved.get(key)
        if key not in saved or isinstance(value, bool) or not isinstance(value, kind):
            raise bad(f"has no {key!r} entry of the expected type")
    if set(saved) != set(CHECKPOINT_KEYS):
        raise bad(f"has entries other than {', '.join(CHECKPOINT_KEYS)}: "
                  f"{', '.join(sorted(map(str, set(saved) - set(CHECKPOINT_KEYS))))}")
    if not math.isfinite(saved["seconds"]) or saved["seconds"] < 0:
        raise bad(f"records {saved['seconds']!r} seconds")
    return saved



def save_checkpoint(path: str | os.PathLike[str], fingerprint: str, step: int, seconds: float,
                    groups: list[dict[str, Any]]) -> None:
    """The state of every group at ``step``, written atomically to ``path``."""
    state = {"fingerprint": fingerprint, "step": step, "seconds": seconds, "groups": groups}
    write_file(path, lambda fh: torch.save(state, fh), "--checkpoint")
