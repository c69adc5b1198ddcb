"""Shared pieces of the CLI contract: ``--json``/``--seed`` options, output, exit codes.

Exit codes: 0 ok; 1 a claim was violated or a check failed; 2 bad input.
Commands raise ``ValueError`` (or ``click.BadParameter``) for bad input; ``workbench.cli.main``
turns it into one line on stderr and exit code 2.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


class CheckFailed(click.ClickException):
    """A claim was violated or a check failed: exit code 1."""

    exit_code = EXIT_FAILED


def common_options(func: F) -> F:
    """Add the contract's ``--json`` and ``--seed`` options to a command."""

    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output on stdout.")
    @click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def resolve_device(device: str) -> str:
    """``--device``: ``auto`` picks CUDA when present; asking for CUDA without one is bad input."""
    import torch  # here, so that commands that never touch a device do not import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device must be 'cpu' or 'auto' on this machine (no CUDA device found)")
    return device


def to_jsonable(obj: Any) -> Any:
    """Convert tensors, numpy values, mpmath numbers and tuples into JSON-ready values."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, bool | int | str) or obj is None:
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)
    if hasattr(obj, "tolist"):  # torch / numpy
        return to_jsonable(obj.tolist())
    try:
        return to_jsonable(float(obj))
    except (TypeError, ValueError):
        return str(obj)


def emit(payload: dict[str, Any], as_json: bool, human: Callable[[dict[str, Any]], str]) -> None:
    """Print ``payload`` as JSON or through the human renderer."""
    if as_json:
        click.echo(json.dumps(to_jsonable(payload), indent=2))
    else:
        click.echo(human(payload))


def not_built(name: str, issue: str) -> click.Command:
    """A placeholder command for a part of the contract that is not built yet (exit 2)."""

    @click.command(
        name=name,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        help=f"Not built yet ({issue}).",
    )
    @common_options
    def _cmd(as_json: bool, seed: int) -> None:
        msg = f"error: `workbench {name}` is not built yet ({issue})"
        click.echo(msg, err=True)
        sys.exit(EXIT_BAD_INPUT)

    return _cmd
