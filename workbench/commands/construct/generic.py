"""``workbench construct NAME``: any registered construction (``workbench.plugins``, entry
points included) or ``module:function`` (docs/extending.md, Construction), measured by the public
runner ``workbench.verifiers.construct.run_construction``.

``--d``, ``--rank``, ``--heads`` and ``--N`` default to the construction's ``defaults``;
``--param K=V`` sets one of its ``params``, typed by the default (bool, int, float or str). A
parameter named ``points`` (``orthonormal`` or ``iid``) also sets the law the model is measured
on. Bad input is answered before the construction is built, and before torch is imported unless
resolving the name imports it (a ``module:function``, or a package that imports torch).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Mapping, Sequence
from typing import Any

import click

from workbench.commands._arguments import IntIn
from workbench.commands._common import plugin_errors
from workbench.commands.construct._run import POINTS, Evaluation, construct_options
from workbench.core.validation import check_choice, check_heads, check_rank

ENSEMBLE_SEEDS = 8  # the default draws pooled for a claim that averages over its random draw
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def resolve(name: str) -> Any:
    """The ``Construction`` called ``name`` (registered, or ``module:function``); an unknown
    name is bad input naming ``NAME``."""
    from workbench.plugins import get_construction

    try:
        return get_construction(name)
    except ValueError as e:
        raise ValueError(f"NAME: {e}") from None


def parse_params(items: Sequence[str], c: Any) -> dict[str, Any]:
    """``--param K=V`` items as keyword arguments of the construction ``c``, each typed by the
    default of ``K`` and checked against its declared range (``Construction.ranges``)."""
    defaults = c.params
    keys = ", ".join(sorted(defaults)) if defaults else "none (this construction takes none)"
    out: dict[str, Any] = {}
    for item in items:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or key not in defaults:
            raise ValueError(f"--param must be KEY=VALUE with KEY one of: {keys} (got {item!r})")
        out[key] = c.param_range(key).check(f"--param {key}", _typed(key, text.strip(), c),
                                            defaults[key])
    return out


def _typed(key: str, text: str, c: Any) -> Any:
    """``text`` as the type of ``key``'s default: a bool, a decimal integer, a finite decimal
    number, or the text; what does not parse is an error giving the range."""
    default = c.params[key]
    if isinstance(default, bool):
        if text.lower() in TRUE + FALSE:
            return text.lower() in TRUE
        raise ValueError(f"--param {key} must be true or false (got {text!r})")
    if isinstance(default, int | float):
        what = c.param_range(key).text(default)
        try:
            value: Any = int(text, 10) if isinstance(default, int) else float(text)
        except ValueError:
            value = None
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            raise ValueError(f"--param {key} must be {what} (got {text!r})")
        return value
    if default is None and text.lower() in ("none", "null"):
        return None
    return text


def describe_params(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items()) or "none"


def generic_command(name: str) -> click.Command:
    """The ``construct NAME`` command of one construction: its defaults in ``--help``."""
    c = resolve(name)
    dflt = dict(c.defaults)
    about = c.description or (inspect.getdoc(c.fn) or "A construction.").split("\n\n")[0]
    lines = [f"{' '.join(about.split())} [{c.source}]",
             f"Parameters (--param K=V): {describe_params(c.params)}. Measured on {c.law} keys, "
             f"{c.queries} queries, against the {c.target} target"
             + (", pooling independent draws (its claim averages over its draw)." if c.ensemble
                else ".")]

    @click.command(name, help="\n\n".join(lines))
    @click.option("--d", "d", type=IntIn(2), default=dflt.get("d", 8), show_default=True,
                  help="Dimension d >= 2.")
    @click.option("--rank", type=IntIn(1), default=None,
                  show_default=f"{dflt.get('rank', 1)}, at most d", help="Key rank r in 1..d.")
    @click.option("--heads", type=IntIn(1), default=dflt.get("heads", 16), show_default=True,
                  help="Heads H >= 1.")
    @click.option("--N", "N", type=IntIn(1), default=dflt.get("N", 2), show_default=True,
                  help="Keys per instance.")
    @click.option("--param", "param", multiple=True, metavar="K=V",
                  help="A parameter of the construction, typed by its default (repeatable).")
    @construct_options(seeds=None)
    def cmd(ev: Evaluation, d: int, rank: int | None, heads: int, N: int,
            param: tuple[str, ...]) -> None:
        if rank is None:  # the construction's default rank, within the chosen d
            rank = min(dflt.get("rank", 1), d) if isinstance(d, int) and d >= 1 else 1
        run(name, c, ev, d, rank, heads, N, param)

    return cmd


def run(name: str, c: Any, ev: Evaluation, d: int, rank: int, heads: int, N: int,
        param: Sequence[str]) -> None:
    """Check the arguments, build the first seed (so a construction's own refusal is answered
    before any measurement), then measure and print."""
    from workbench.plugins import PluginFailed, failure

    params = {**c.params, **parse_params(param, c)}
    points = check_choice("--param points", params["points"], POINTS) if "points" in params \
        else c.law
    ev = dataclasses.replace(ev, seeds=ev.seeds if ev.seeds is not None
                             else ENSEMBLE_SEEDS if c.ensemble else 1)
    ev.check(d, N, points, min_seeds=2 if c.ensemble else 1)
    check_rank(rank, d, "--rank")
    check_heads(heads, "--heads")
    memory = estimate_memory(name, c, d, rank, heads, N, params)

    def make(s: int) -> Any:
        result = c.build(d, rank, heads, N, s, **params)
        if c.target != "nearest" and not (isinstance(result, tuple) and len(result) == 3):
            raise ValueError(f"NAME: construction {name!r} is measured against the target "
                             f"{c.target!r}, so it must return (model, claimed, target)")
        return result

    with plugin_errors({"construction": "NAME"}):
        try:
            first = make(ev.seed)
        except PluginFailed:
            raise
        except ValueError as e:
            msg = str(e)
            raise ValueError(f"--param {msg}" if msg.split(" ")[0] in c.params else msg) \
                from None
        try:
            ev.measure(name, {"d": d, "rank": rank, "heads": heads, "N": N, "points": points,
                              "queries": c.queries, **params},
                       lambda s: first if s == ev.seed else make(s), d, N, points, c.queries,
                       ensemble=c.ensemble, memory=memory)
        except (click.ClickException, PluginFailed):
            raise
        except (Exception, SystemExit) as e:  # the user's model or claim, run by the runner
            if c.source == "workbench":
                raise
            raise ValueError(f"NAME {name} failed when its model was measured: "
                             f"{failure(e)}") from None


def estimate_memory(name: str, c: Any, d: int, rank: int, heads: int, N: int,
                    params: Mapping[str, Any]) -> Any:
    """The construction's memory estimate (``Construction.memory``; ``None`` without one),
    checked against the memory available now: a size that cannot fit is bad input naming its
    flag, answered before the construction is built (and before torch is imported)."""
    if c.memory is None:
        return None
    from workbench.verifiers.resources import as_terms, check_fits, size_values

    try:
        estimate = c.memory(d, rank, heads, N, **params)
        terms = as_terms(estimate)
    except (TypeError, ValueError) as e:
        raise ValueError(f"NAME: the memory estimate of construction {name!r} failed: "
                         f"{e}") from None
    check_fits(terms, size_values(d, rank, heads, N, params))
    return estimate
