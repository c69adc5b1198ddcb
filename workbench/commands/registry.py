"""Which command implements each part of the CLI contract.

Groups not built yet are placeholders that say so and exit 2. A module that builds a group
exports a ``click`` command or group named ``cli``.
"""

from __future__ import annotations

import importlib

import click

from workbench.commands._common import not_built

# (command name, module under workbench.commands, issue that builds it)
CONTRACT: list[tuple[str, str, str]] = [
    ("check", "check", "issue 2"),
    ("graph", "graph", "the proof-graph issue"),
    ("bounds", "bounds", "issue 3"),
    ("harmonics", "harmonics", "issue 3"),
    ("kernel", "kernel", "issue 3"),
    ("construct", "construct", "issue 4"),
    ("train", "train", "issue 5"),
    ("sweep", "sweep", "the reproduction-sweeps issue"),
    ("report", "report", "the reproduction-sweeps issue"),
]


def commands() -> list[click.Command]:
    """The commands of the contract, real where built, placeholders otherwise."""
    out: list[click.Command] = []
    for name, module, issue in CONTRACT:
        try:
            mod = importlib.import_module(f"workbench.commands.{module}")
        except ModuleNotFoundError as e:
            if e.name != f"workbench.commands.{module}":
                raise
            out.append(not_built(name, issue))
            continue
        cmd = mod.cli
        cmd.name = name
        out.append(cmd)
    return out
