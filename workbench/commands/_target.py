"""``--target NAME|module:function`` and ``--target-param K=V`` (repeatable): the target a
command works on (``workbench.plugins``, kind ``target``; docs/extending.md, "Adding a target").
Parsing is torch-free; errors name the flag, in one line (exit 2)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from workbench.commands._error_meaning import TARGET_ERROR as TARGET_ERROR
from workbench.core.profiles import sign_of

F = TypeVar("F", bound=Callable[..., Any])


def target_options(func: F) -> F:
    """Add ``--target`` (default ``nearest``) and ``--target-param K=V`` (repeatable)."""
    func = click.option("--target-param", "target_params", multiple=True, metavar="K=V",
                        help="A parameter of the target (repeatable), e.g. beta=4 for "
                        "soft-nearest; `workbench bounds list` lists them.")(func)
    return click.option("--target", "target", default="nearest", show_default=True,
                        help="The target: a registered one (workbench bounds list) or "
                        "module:function, a profile psi(t) odd with |psi| <= 1.")(func)


@dataclass(frozen=True)
class ChosenTarget:
    """The target a command works on: the ``Target``, its parameters, its N = 2 profile."""

    spec: str
    target: Any  # workbench.core.profiles.Target
    params: dict[str, Any]
    profile: Any  # workbench.core.profiles.Profile | None
    given: tuple[tuple[str, str], ...] = ()  # --target-param K=V as typed

    @property
    def is_hardmax(self) -> bool:
        """Whether the profile has sign's energies (nearest, farthest, soft-nearest at inf): the
        certified bound of docs/paper.md then applies as it is."""
        return self.profile is not None and sign_of(self.profile) is not None

    def describe(self) -> dict[str, Any]:
        """The target as JSON: ``params`` its parameters' values, a non-finite number as the
        string ``"inf"`` or ``"-inf"`` (JSON has no infinity), and ``params_given`` each
        ``--target-param`` exactly as typed (``beta=1e999`` is ``"1e999"`` there, ``"inf"`` in
        ``params``)."""
        return {"name": self.spec, "params": {k: json_number(v) for k, v in self.params.items()},
                "params_given": dict(self.given),
                "profile": None if self.profile is None else self.profile.label,
                "rigorous_profile": bool(self.profile is not None
                                         and self.profile.has_exact_form)}

    def map(self) -> Callable[[Any, Any], Any]:
        """``(X, y) -> f(X, y)`` at the chosen parameters."""
        fn, kw = self.target.fn, dict(self.params)
        return lambda X, y: fn(X, y, **kw)


def parse_params(items: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        k, eq, v = item.partition("=")
        if not eq or not k.strip():
            raise ValueError(f"--target-param must be K=V, e.g. beta=4 (got {item!r})")
        out[k.strip()] = v.strip()
    return out


def choose_target(spec: str, items: tuple[str, ...]) -> ChosenTarget:
    """Resolve ``--target`` and ``--target-param``; every failure is one line naming them."""
    from workbench.plugins import get

    given = parse_params(items)
    try:
        target = get("target", spec)
    except ValueError as e:
        raise ValueError(f"--target: {e}") from None
    try:
        params = target.resolve(given)
        profile = target.profile_at(params)
    except ValueError as e:
        msg = str(e)
        raise ValueError(msg if msg.startswith("--") else f"--target-param: {msg}") from None
    return ChosenTarget(spec, target, params, profile, tuple(given.items()))


def json_number(v: Any) -> Any:
    """``v``, or for a non-finite float the string ``"inf"``/``"-inf"`` (never ``"nan"``:
    a NaN parameter is refused where it is parsed)."""
    if isinstance(v, float) and v != v:
        return None
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return v


def require_profile(chosen: ChosenTarget, what: str) -> Any:
    """The chosen target's N = 2 profile, or bad input saying why ``what`` needs one."""
    if chosen.profile is None:
        raise ValueError(f"--target {chosen.spec} has no N = 2 profile (it is not of the form "
                         f"(u + psi(<y,w>) w)/sqrt2), so {what} does not cover it")
    return chosen.profile


def refuse_unless_hardmax(chosen: ChosenTarget, what: str) -> None:
    """Bad input unless the target has hardmax's energies (``what`` covers those only)."""
    if not chosen.is_hardmax:
        raise ValueError(f"--target {chosen.spec}: {what} covers the hardmax targets only "
                         "(nearest, farthest, soft-nearest with beta=inf); `workbench bounds "
                         "lower --target ...` gives the bound for any profile")
