"""``workbench construct``: build a construction, measure its error, compare with its claim.

Subcommands: ``full-rank`` (Fact 1), ``random-features`` (docs/paper.md), ``majority-vote``
(Theorem 5) and ``biased`` (Theorem 3). Each run reports the Monte Carlo error with its CI
(``--eval-samples`` fresh samples per seed), the claimed error and the parameters; ``--seeds K``
repeats with seeds ``seed..seed+K-1``. Exit 1 when a claim is contradicted beyond the CI
(95 %, Bonferroni over seeds where each seed is judged).
"""

from __future__ import annotations

import click

from workbench.commands.construct.biased import biased_cmd
from workbench.commands.construct.full_rank import full_rank_cmd
from workbench.commands.construct.majority_vote import majority_vote_cmd
from workbench.commands.construct.random_features import random_features_cmd


@click.group(name="construct")
def cli() -> None:
    """Explicit weights realising the paper's upper bounds, checked against their claims."""


for _cmd in (full_rank_cmd, random_features_cmd, majority_vote_cmd, biased_cmd):
    cli.add_command(_cmd)
