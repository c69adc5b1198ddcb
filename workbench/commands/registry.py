"""Which command implements each part of the CLI contract.

Groups not built yet are placeholders that say so and exit 2. A module that builds a group
exports a ``click`` command or group named ``cli``.
"""

from __future__ import annotations

import importlib

import click

# (command name, module under workbench.commands)
CONTRACT: list[tuple[str, str]] = [
    ("check", "check"),
    ("graph", "graph"),
    ("bounds", "bounds"),
    ("falsify", "falsify"),
    ("harmonics", "harmonics"),
    ("kernel", "kernel"),
    ("construct", "construct"),
    ("train", "train"),
    ("sweep", "sweep"),
    ("report", "report"),
    ("witness", "witness"),
]


# one line per command for ``workbench --help``, so the help imports no command module
SUMMARY: dict[str, str] = {
    "check": "Run the paper's claims in dependency order; a verdict and key evidence for each.",
    "graph": "The proof graph: claims and what they depend on.",
    "bounds": "Lower bounds: the registered ones, the certified one (N = 2, D_2), the heads "
    "they imply.",
    "falsify": "Search for counterexamples to a lower bound; prints the replay command.",
    "harmonics": "Gegenbauer coefficients of sign(t) and harmonic dimensions N(d, l).",
    "kernel": "Kernels of rank-1 hardmax heads on D_2.",
    "construct": "Explicit weights for the paper's upper bounds, checked against their claims.",
    "train": "Train attention models (K seeds batched) and compare with the certified bound.",
    "sweep": "Resumable reproduction sweeps.",
    "report": "Markdown report and figures from recorded runs.",
    "witness": "The record of best-known sandwich witnesses: list, replay (verify), add.",
}


def load(name: str) -> click.Command | None:
    """The command ``name`` of the contract (its module is imported only now)."""
    for cname, module in CONTRACT:
        if cname == name:
            cmd: click.Command = importlib.import_module(f"workbench.commands.{module}").cli
            cmd.name = name
            return cmd
    return None


class LazyGroup(click.Group):
    """Imports a command's module only when that command is used, so ``workbench --version``
    or one subcommand does not pay for torch, scipy and every other command's imports."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name, _ in CONTRACT]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, SUMMARY.get(name, "")) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)
