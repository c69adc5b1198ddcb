"""The seconds each claim took in this user's last ``workbench check`` at each scale.

It is only a hint for the runner's order (the longest chains start first,
``workbench.proofs.runner``) when no ``--db`` store holds an earlier run; no verdict or number
depends on it. It lives in the per-user cache (``workbench.native.build.cache_root``), as one
JSON file replaced atomically; a missing, damaged or unwritable file is simply no hint.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from workbench.native.build import cache_root

FILE = "claim_seconds.json"


def _path() -> Path:
    return cache_root() / FILE


def recorded(scale: str) -> dict[str, float]:
    """Seconds per claim id at ``scale`` from the last checks run here (empty if none)."""
    try:
        data = json.loads(_path().read_text())
        return {str(k): float(v) for k, v in data.get(scale, {}).items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def remember(scale: str, seconds: Mapping[str, float]) -> None:
    """Merge ``seconds`` into the hint for ``scale``; silent when the cache is not writable."""
    path = _path()
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    merged = dict(data.get(scale) or {}) if isinstance(data.get(scale), dict) else {}
    merged.update({k: round(float(v), 4) for k, v in seconds.items()})
    data[scale] = merged
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".json", dir=path.parent)
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        return
