"""Where a witness of the sandwich is measured (docs/derivations/sandwich.md, "The record of
witnesses"): ``N`` orthonormal keys and a uniform query (``D_N``), labelled by the hardmax
nearest neighbour or the soft-nearest target at inverse temperature ``beta``. Part of a
witness's key in the record beside ``(d, r, H)``, and saved in its ``.npz`` as ``task`` (a JSON
string; absent for the default N = 2, hardmax)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from workbench.core.validation import check_float, check_int

__all__ = ["NEAREST_2", "Setting", "TARGETS"]

TARGETS = ("nearest", "soft-nearest")


@dataclass(frozen=True)
class Setting:
    """``N`` keys on ``D_N`` and the ``target`` with its ``params`` (``(("beta", b),)`` for
    soft-nearest, none for the hardmax nearest neighbour)."""

    N: int = 2
    target: str = "nearest"
    params: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        check_int("N", self.N, lo=2, hi=4096)
        if self.target not in TARGETS:
            raise ValueError(f"target must be one of {', '.join(TARGETS)} (got "
                             f"{self.target!r})")
        names = tuple(k for k, _ in self.params)
        want = ("beta",) if self.target == "soft-nearest" else ()
        if names != want:
            raise ValueError(f"target {self.target} takes the parameters {list(want)} (got "
                             f"{list(names)})")
        if want:
            b = check_float("beta", self.params[0][1], lo=0.0, lo_open=True)
            if math.isinf(b):
                raise ValueError("beta must be finite for soft-nearest (beta = inf is the "
                                 "hardmax target nearest)")
            object.__setattr__(self, "params", (("beta", b),))

    @property
    def beta(self) -> float:
        """The inverse temperature (``inf`` for the hardmax target)."""
        return dict(self.params).get("beta", math.inf)

    @property
    def is_default(self) -> bool:
        return self == NEAREST_2

    def label(self) -> str:
        t = self.target + "".join(f" {k}={v:g}" for k, v in self.params)
        return f"N={self.N}, {t}"

    def to_dict(self) -> dict[str, Any]:
        return {"N": self.N, "target": self.target, "target_params": dict(self.params)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @staticmethod
    def from_dict(raw: Any, where: str = "setting") -> Setting:
        """A setting from :meth:`to_dict`'s layout; anything else is a one-line error."""
        if not isinstance(raw, dict) or not set(raw) <= {"N", "target", "target_params"}:
            raise ValueError(f"{where} must hold N, target and target_params (got {raw!r})")
        params = raw.get("target_params") or {}
        if not isinstance(params, dict):
            raise ValueError(f"{where}: target_params must be a mapping (got {params!r})")
        try:
            return Setting(int(raw.get("N", 2)), str(raw.get("target", "nearest")),
                           tuple((str(k), float(v)) for k, v in sorted(params.items())))
        except (TypeError, ValueError) as e:
            raise ValueError(f"{where}: {e}") from None


NEAREST_2 = Setting()
