"""The seconds each claim took in this user's last ``workbench check`` at each scale.

It is only a hint for the runner's order (the longest chains start first,
``workbench.proofs.runner``) when no ``--db`` store holds an earlier run; no verdict or number
depends on it. It lives in the per-user cache (``workbench.native.build.cache_root``), as one
JSON file replaced atomically; a missing, damaged or unwritable file is simply no hint.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from workbench.core.safe_files import write_text
from workbench.native.build import cache_root

FILE = "claim_seconds.json"


def _path() -> Path:
    return cache_root() / FILE


def _load() -> dict[str, dict[str, float]]:
    """The whole hint, ``{scale: {claim id: seconds}}``; empty when missing or damaged."""
    try:
        data = json.loads(_path().read_text())
        return {str(sc): {str(k): float(v) for k, v in row.items()} for sc, row in data.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def recorded(scale: str) -> dict[str, float]:
    """Seconds per claim id at ``scale`` from the last checks run here (empty if none)."""
    return _load().get(scale, {})


def remember(scale: str, seconds: Mapping[str, float]) -> None:
    """Merge ``seconds`` into the hint for ``scale``; silent when the cache is not writable."""
    data = _load()
    data[scale] = {**data.get(scale, {}), **{k: round(float(v), 4) for k, v in seconds.items()}}
    path = _path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(data, sort_keys=True), "the claim-seconds hint")
    except (OSError, ValueError):  # an unwritable cache: no hint next time
        return
