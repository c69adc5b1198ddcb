"""What a long computation says before and while it runs, when no progress bar is shown (off a
terminal, or with ``--json``): one line on stderr with the size of the work before it starts,
then a line every ``EVERY`` seconds with the step reached and the time left at the pace so far.
Short work says nothing (a run's stdout and stderr stay as they were)."""

from __future__ import annotations

import time
from collections.abc import Callable

import click

LARGE = 2 * 10**9  # numbers handled (samples x keys x d, summed): beyond, minutes on a CPU
EVERY = 30.0  # seconds between progress lines
FIRST = 10.0  # a first line once a run has taken this long


def announce(what: str, numbers: int, how: str) -> None:
    """Say on stderr, before the work, that ``what`` handles about ``numbers`` numbers
    (``how``: the product that gives them) when that is ``LARGE``."""
    if numbers >= LARGE:
        click.echo(f"note: {what} handles about {numbers:.2g} numbers ({how}); expect minutes "
                   "or more; progress follows on stderr", err=True)


def progress_lines(what: str, shown: bool, after: str = "") -> Callable[[int, int], None]:
    """A ``progress(i, n)`` callback printing ``what: step i of n, ... s, about ... s left``
    on stderr after ``FIRST`` seconds, then every ``EVERY`` seconds, and ``after`` once the
    last step is done (when the run has been long); nothing when a bar is ``shown``."""
    t0 = time.perf_counter()
    last = [t0 - EVERY + FIRST]

    def note(i: int, n: int) -> None:
        now = time.perf_counter()
        if shown or now - last[0] < EVERY and not (i == n and now - t0 >= FIRST):
            return
        last[0] = now
        left = (now - t0) / max(i, 1) * (n - i)
        click.echo(f"{what}: step {i} of {n}, {now - t0:.0f} s so far, about {left:.0f} s left"
                   + (f"; {after}" if i == n and after else ""), err=True)

    return note
