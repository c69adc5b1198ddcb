"""Targets as objects, and their N = 2 profiles (docs/derivations/soft_targets.md).

A *target* is the map ``(X, y) -> f(X, y)`` a model must imitate, for any number N of keys. At
N = 2 on D_2 many targets take the form ``f = (u + psi(<y, w>) w)/sqrt2`` (``u, w`` the sum and
difference of the keys over sqrt2): ``psi`` is the target's *profile*, odd with ``|psi| <= 1``.
Hardmax nearest neighbour is ``psi = sign``; the softmax head at inverse temperature beta is
``psi_beta(t) = tanh(beta t / sqrt2)``; farthest point is ``-sign``. The harmonic count of
docs/derivations/lower_bound.md holds for every profile with ``eta_l(psi)`` in place of
``eta_l(sign)`` (docs/derivations/soft_targets.md, steps S1-S5).

A profile is rigorous when it carries an exact form: ``arb`` (a function of a complex ball and
flint's ``analytic`` flag, equal to psi on ``(0, 1]``) or ``sympy`` (a function of a sympy
symbol returning psi's expression). A numpy-only profile gets quadrature
values, flagged non-rigorous.

Torch-, flint- and numpy-free at import: importing the package registers the built-in targets,
so every command pays for what this module imports (numpy is imported where a profile is
checked or evaluated).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Profile", "Target", "ZERO_PROFILE", "check_profile", "sign_of", "sign_profile",
           "tanh_beta", "tanh_profile", "PROFILE_TOL"]

PROFILE_TOL = 1e-9  # slack of the oddness and range checks at the sample points
_SAMPLES = 257


@dataclass(frozen=True)
class Profile:
    """The N = 2 profile ``psi`` of a target: ``psi(t)`` on numpy arrays, odd, ``|psi| <= 1``.

    ``arb(z, analytic)`` (psi on a complex ball, flint's convention: where ``analytic`` is true
    it must return a non-finite ball unless psi is analytic on all of z, as ``acb.sqrt(z,
    analytic=...)`` does at its branch cut; poles are non-finite by themselves) or
    ``sympy(t)`` (a sympy expression in the symbol t) make its harmonic energies rigorous;
    ``label`` names it with its parameters (``tanh(4 t/sqrt2)``), ``key`` identifies it for
    caches."""

    label: str
    psi: Callable[[np.ndarray], np.ndarray]
    arb: Callable[[Any, bool], Any] | None = None
    sympy: Callable[[Any], Any] | None = None
    key: tuple[Any, ...] = ()

    @property
    def has_exact_form(self) -> bool:
        return self.arb is not None or self.sympy is not None


@dataclass(frozen=True)
class Target:
    """A target: ``fn(X, y, **params)`` (torch, ``(batch, N, d)`` and ``(batch, d)`` to
    ``(batch, d)``, any N that ``N`` allows) and, where it has one, ``profile(**params)`` (its
    N = 2 profile). ``params`` holds the parameter defaults (their types come from the
    defaults); ``N`` the key counts it is defined for (None: every N); ``queries`` the query
    law it is stated for; ``spec`` how a command names it again. ``iid_scales``: on every pair
    of keys ``fn`` is the profile target ``(x1 + x2)/2 + psi(<y, x1 - x2>/sqrt2) (x1 - x2)/2``
    (``psi`` its profile on all of ``[-sqrt2, sqrt2]``), so on keys at ``<x1, x2> = t`` its D_2
    profile is ``psi(sqrt(1 - t) .)`` and ``--points iid`` has a bound
    (docs/derivations/soft_targets.md, step T)."""

    name: str
    fn: Callable[..., Any]
    profile: Callable[..., Profile] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    N: tuple[int, ...] | None = None
    queries: str = "uniform"
    description: str = ""
    ref: str = ""
    source: str = "workbench"
    spec: str = ""
    iid_scales: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or ":" in self.name:
            raise ValueError(f"a target name must be a non-empty string without ':' "
                             f"(got {self.name!r})")

    def resolve(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters with ``given`` (strings or values) applied over the defaults, each
        converted to its default's type; an unknown name or a bad value raises ``ValueError``."""
        out = dict(self.params)
        for k, v in given.items():
            if k not in self.params:
                known = ", ".join(sorted(self.params)) or "none"
                raise ValueError(f"--target-param {k!r} is not a parameter of target "
                                 f"{self.name!r} (its parameters: {known})")
            out[k] = _convert(k, v, self.params[k])
        return out

    def profile_at(self, given: Mapping[str, Any] | None = None) -> Profile | None:
        """The N = 2 profile at the parameters ``given`` (None when the target has none)."""
        if self.profile is None:
            return None
        return self.profile(**self.resolve(given or {}))

    def describe(self) -> dict[str, Any]:
        prof = self.profile_at() if self.profile is not None else None
        return {"name": self.name, "params": dict(self.params),
                "N": "every N" if self.N is None else ", ".join(map(str, self.N)),
                "queries": self.queries, "profile": None if prof is None else prof.label,
                "rigorous_profile": bool(prof is not None and prof.has_exact_form),
                "source": self.source, "description": self.description,
                "spec": self.spec or self.name}


def _convert(name: str, value: Any, default: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        if isinstance(default, bool):
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError
            return value.lower() in ("true", "1")
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
    except ValueError:
        raise ValueError(f"--target-param {name}={value!r} must be a {type(default).__name__}"
                         ) from None
    return value


def check_profile(psi: Callable[[np.ndarray], np.ndarray], name: str) -> None:
    """Refuse a function that is not a profile: at sample points of [-1, 1] it must return a
    finite float array of the input's shape, be odd and have ``|psi| <= 1`` (up to
    ``PROFILE_TOL``). Raises ``ValueError`` with one line naming the first failure."""
    import numpy as np

    t = np.concatenate([np.linspace(0.0, 1.0, _SAMPLES),
                        np.random.default_rng(0).uniform(0.0, 1.0, _SAMPLES)])
    try:
        pos = np.asarray(psi(t), dtype=np.float64)
        neg = np.asarray(psi(-t), dtype=np.float64)
    except Exception as e:  # a plug-in's own failure, reported as bad input
        raise ValueError(f"target {name!r}: psi(t) failed on a numpy array: "
                         f"{type(e).__name__}: {e}") from None
    if pos.shape != t.shape or neg.shape != t.shape:
        raise ValueError(f"target {name!r}: psi(t) must return an array of t's shape "
                         f"{t.shape} (got {pos.shape})")
    bad = ~(np.isfinite(pos) & np.isfinite(neg))
    if bad.any():
        raise ValueError(f"target {name!r}: psi is not finite at t = {t[bad][0]:.6g}")
    over = np.abs(np.concatenate([pos, neg])) > 1 + PROFILE_TOL
    if over.any():
        where = np.concatenate([t, -t])[over][0]
        raise ValueError(f"target {name!r}: |psi(t)| must be <= 1 (psi({where:.6g}) = "
                         f"{float(np.concatenate([pos, neg])[over][0]):.6g})")
    odd = np.abs(pos + neg) > PROFILE_TOL * np.maximum(1.0, np.abs(pos))
    odd[0] = False  # t = 0: oddness says psi(0) = 0, checked below
    if abs(pos[0]) > PROFILE_TOL:
        raise ValueError(f"target {name!r}: psi must be odd, so psi(0) = 0 (got {pos[0]:.3g})")
    if odd.any():
        where = t[odd][0]
        gap = float((pos + neg)[odd][0])
        raise ValueError(f"target {name!r}: psi must be odd (psi({where:.6g}) + "
                         f"psi({-where:.6g}) = {gap:.3g})")


def sign_profile(flip: bool = False) -> Profile:
    """``psi = sign`` (hardmax nearest neighbour), or ``-sign`` (farthest point)."""
    import numpy as np

    s = -1.0 if flip else 1.0
    return Profile("-sign(t)" if flip else "sign(t)", lambda t: s * np.sign(t),
                   arb=lambda z, analytic: z * 0 + s, key=("sign", s))


def sign_of(profile: Profile) -> float | None:
    """1 for :func:`sign_profile`, -1 for ``sign_profile(flip=True)`` (farthest point), else
    None: the one test for the profiles with hardmax's energies."""
    key = profile.key
    if len(key) == 2 and key[0] == "sign" and key[1] in (1.0, -1.0):
        return float(key[1])
    return None


ZERO_PROFILE = Profile("0", lambda t: 0 * t, arb=lambda z, analytic: z * 0, key=("zero",))
"""``psi = 0``: ``||psi||`` is the distance to it (the i.i.d. cells' ``||psi_b + psi_ref||``)."""


def tanh_profile(beta: float) -> Profile:
    """``psi_beta(t) = tanh(beta t / sqrt2)``: the softmax head at inverse temperature beta on
    two keys (``p1 - p2 = tanh(beta <y, x1 - x2>/2)``); ``beta = inf`` is ``sign``."""
    import numpy as np

    if math.isinf(beta):
        return sign_profile()
    c = beta / math.sqrt(2)

    def arb_form(z: Any, analytic: bool) -> Any:  # tanh is meromorphic: poles are non-finite
        from workbench.core.rigorous import arb

        return (z * arb(beta) / arb(2).sqrt()).tanh()  # beta exactly (a float is exact)

    return Profile(f"tanh({beta:g} t/sqrt2)", lambda t: np.tanh(c * np.asarray(t)),
                   arb=arb_form, key=("tanh", beta))


def tanh_beta(profile: Profile) -> float | None:
    """beta for a profile made by :func:`tanh_profile` (its key ``("tanh", beta)``), else None:
    the one test for the soft profile's own routes (step S6, the panel energies, i.i.d. cells)."""
    key = profile.key
    if len(key) == 2 and key[0] == "tanh" and isinstance(key[1], float) and key[1] > 0:
        return key[1]
    return None


def _psi_params(psi: Callable[..., Any]) -> dict[str, Any]:
    """The keyword parameters of a profile after t: those with a number, bool or string
    default (a numpy ufunc has none of its own)."""
    import inspect

    import numpy as np

    if isinstance(psi, np.ufunc):
        return {}
    try:
        items = list(inspect.signature(psi).parameters.values())[1:]
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in items
            if isinstance(p.default, (int, float, str, bool)) and p.kind in
            (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}


def psi_target(name: str, psi: Callable[..., np.ndarray], *, spec: str = "",
               source: str = "unknown") -> Target:
    """The minimal contract: a profile ``psi(t, **params)`` (keyword parameters with defaults
    become the target's parameters), checked at its defaults, as the N = 2 target
    ``f = (x1 + x2)/2 + psi(<y, x1 - x2>/sqrt2) (x1 - x2)/2`` (so ``iid_scales``: on i.i.d.
    keys psi is evaluated on ``[-sqrt2, sqrt2]``). Attributes ``psi.arb`` or ``psi.sympy`` (see
    :class:`Profile`) make its energies rigorous."""
    import functools
    import inspect

    params = _psi_params(psi)
    label = spec or name

    def profile(**kw: Any) -> Profile:
        bound = functools.partial(psi, **kw) if kw else psi
        check_profile(bound, label)
        arb_form, sym = getattr(psi, "arb", None), getattr(psi, "sympy", None)
        if kw and (arb_form is not None or sym is not None):
            arb_form = functools.partial(arb_form, **kw) if arb_form is not None else None
            sym = functools.partial(sym, **kw) if sym is not None else None
        tag = ", ".join(f"{k}={v}" for k, v in sorted(kw.items()))
        return Profile(f"{label}({tag})" if tag else label, bound, arb=arb_form, sympy=sym,
                       key=("spec", label, tuple(sorted(kw.items()))))

    def fn(X: Any, y: Any, **kw: Any) -> Any:
        from workbench.core.targets import profile_target

        return profile_target(X, y, profile(**kw).psi)

    profile(**params)  # refuse a bad profile now, with one line
    doc = (inspect.getdoc(psi) or "").split("\n")[0]
    return Target(name, fn, profile, params=params, N=(2,), description=doc, source=source,
                  spec=spec, iid_scales=True)
