"""``workbench construct``: build a construction, measure its error, compare with its claim.

``construct NAME`` takes any registered construction (``workbench.plugins.available
("construction")``: the built-in ones and those of installed packages) or a ``module:function``
(docs/extending.md), with ``--d``, ``--rank``, ``--heads``, ``--N`` and ``--param K=V``
(``generic.py``). The built-in ``full-rank`` (Fact 1), ``random-features`` (docs/paper.md),
``majority-vote`` (Theorem 5) and ``biased`` (Theorem 3) keep their own flags (their modules
here); their registered functions run through the same runner as ``module:function``
(``workbench.plugins.builtin:full_rank``, ...). Each run reports the Monte Carlo error with its
CI (``--eval-samples`` fresh samples per seed), the claimed error and the parameters;
``--seeds K`` repeats with seeds ``seed..seed+K-1``. Exit 1 when a claim is contradicted beyond
the CI (95 %, Bonferroni over seeds where each seed is judged).
"""

from __future__ import annotations

import importlib

import click

from workbench.commands._arguments import with_hints

# the built-in constructions with flags of their own: name -> module here, its command
SPECIALISED = {"full-rank": ("full_rank", "full_rank_cmd"),
               "random-features": ("random_features", "random_features_cmd"),
               "majority-vote": ("majority_vote", "majority_vote_cmd"),
               "biased": ("biased", "biased_cmd")}


class ConstructGroup(click.Group):
    """One subcommand per construction: the specialised command where there is one, else the
    generic one; ``--help`` lists the registry with each construction's source."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from workbench.plugins import available

        return sorted(set(SPECIALISED) | set(available("construction")))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in SPECIALISED:
            module, attr = SPECIALISED[cmd_name]
            cmd: click.Command = getattr(
                importlib.import_module(f"workbench.commands.construct.{module}"), attr)
            from workbench.plugins import builtin as builtin_plugins

            declared = getattr(builtin_plugins, module.upper()).params
            flags = ", ".join("--" + k.replace("_", "-") for k in declared)
            hints = {"--param": f"the parameters of {cmd_name} ({', '.join(declared)}) are "
                     f"flags of its own: {flags}"}
            return with_hints(cmd, hints)
        from workbench.commands.construct.generic import generic_command

        return generic_command(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from workbench.plugins import LOAD_ERRORS, available

        known = available("construction")
        rows = [(name, f"[{known[name].source}{'; own flags' if name in SPECIALISED else ''}] "
                 f"{known[name].description}") for name in sorted(known)]
        with formatter.section("Constructions (registered; or any module:function)"):
            formatter.write_dl(rows)
        group = "workbench.constructions:"
        broken = [(key[len(group):], why) for key, why in sorted(LOAD_ERRORS.items())
                  if key.startswith(group)]
        if broken:
            with formatter.section("Not loaded"):
                formatter.write_dl(broken)


@click.group(name="construct", cls=ConstructGroup, subcommand_metavar="NAME [ARGS]...")
def cli() -> None:
    """Explicit weights realising upper bounds, checked against their claims.

    NAME is a registered construction (below) or module:function returning (model, claimed)
    (docs/extending.md). Every NAME takes --d, --rank, --heads, --N, --param K=V (its parameters,
    typed by their defaults), --seed, --seeds, --eval-samples, --resolution and --json, except
    those with their own flags (see NAME --help).
    """
