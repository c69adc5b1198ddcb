"""Signals to the program (docs/sweeps.md, "Signals"). SIGINT, SIGTERM and SIGHUP kill every
worker process first (a pool never waits for a group or a claim to finish), then the command
unwinds, closing its stores and locks (a transaction under way is rolled back), says on one
stderr line what was stored, and exits ``128 + signal``: 130, 143, 129. A killed parent's
workers end too (``workbench.verifiers.processes.die_with_parent``)."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """The program got ``signum``; ``stored`` says what of the work was kept (or "")."""

    def __init__(self, signum: int = signal.SIGINT, stored: str = "") -> None:
        super().__init__(signum, stored)
        self.signum, self.stored = signum, stored

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def line(self) -> str:
        """The one stderr line: the signal, then what was stored."""
        name = signal.Signals(self.signum).name
        return f"interrupted by {name}" + (f": {self.stored}" if self.stored else "")


def install() -> None:
    """Answer SIGINT, SIGTERM and SIGHUP by :func:`_stop` (the program only: a caller of
    ``main(argv)`` keeps its own handlers). A signal the program was started ignoring stays
    ignored (``nohup`` ignores SIGHUP, a shell's background job SIGINT)."""
    for s in SIGNALS:
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, _stop)


def _stop(signum: int, frame: FrameType | None) -> None:
    from workbench.verifiers.processes import end_workers

    signal.signal(signum, signal.SIG_DFL)  # a second one ends the program at once
    end_workers()
    raise Interrupted(signum)


def as_interrupted(e: KeyboardInterrupt) -> Interrupted:
    """``e`` as an :class:`Interrupted` (a plain KeyboardInterrupt is SIGINT)."""
    return e if isinstance(e, Interrupted) else Interrupted(signal.SIGINT)


@contextmanager
def saying_what_was_stored(describe: Callable[[], str]) -> Iterator[None]:
    """Within: an interruption carries ``describe()``, called after the work inside has
    unwound (stores closed). Workers are ended first, if no handler did."""
    try:
        yield
    except KeyboardInterrupt as e:
        from workbench.verifiers.processes import end_workers

        end_workers()
        raise Interrupted(as_interrupted(e).signum, describe()) from None
