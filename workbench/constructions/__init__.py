"""Explicit weights that realise the paper's upper bounds, each returned with its claimed error.

One module per construction, each exporting a function of the same name that returns
``(model, claimed)`` (PEPit's ``(numeric, theoretical)`` pattern):

- ``workbench.constructions.full_rank.full_rank`` (Fact 1) and ``beta_for``;
- ``workbench.constructions.random_features.random_features`` (rank-1 heads, ``C a = b``);
- ``workbench.constructions.majority_vote.majority_vote`` (Theorem 5; tournament for ``N >= 3``);
- ``workbench.constructions.biased.biased`` (Theorem 3, upper-bound side; also returns the target
family).

The functions are not re-exported here, so that ``constructions.<name>`` stays the module.
Layering: imports workbench.core, workbench.models.
"""

from typing import Any

__all__ = ["ClaimedError"]


def __getattr__(name: str) -> Any:
    """``ClaimedError`` on first use: importing a light module of the package (the witness
    record's ``witness_setting``, read by ``witness list``) must not load torch."""
    if name == "ClaimedError":
        from workbench.constructions._montecarlo import ClaimedError

        return ClaimedError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
