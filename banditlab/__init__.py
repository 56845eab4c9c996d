"""The ``banditlab`` command's entry point, light enough to answer Ctrl-C while the command starts.

Importing the command (:mod:`agents.experiments.cli`: numba, pandas, matplotlib and every agent's
module) takes seconds. :func:`main` imports it only after making Ctrl-C (SIGINT) and SIGTERM end
the process at once with one line and exit status 130, as they do later in the command; once the
command is imported, SIGINT raises KeyboardInterrupt again, SIGTERM has its previous handler back,
and the command handles them. An ignored SIGINT or SIGTERM (e.g. a command started in the
background by a shell) stays ignored. ``python -m banditlab`` runs the same entry point.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from types import FrameType
from typing import Any

#: Exit status after Ctrl-C or SIGTERM (128 + SIGINT), as :data:`agents.experiments.cli.INTERRUPTED`.
INTERRUPTED = 130


def _interrupted_while_starting(signum: int, frame: FrameType | None) -> None:
    """SIGINT or SIGTERM before the command is imported: nothing is written yet, so end at once (no traceback)."""
    os.write(2, b"banditlab: interrupted.\n")
    os._exit(INTERRUPTED)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``banditlab`` console script: import the command, then run it.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The command's exit status (see :func:`agents.experiments.cli.main`).
    """
    # Each signal whose handler is Python's own (Ctrl-C) or the system's default (SIGTERM): not an ignored one.
    replaced: dict[signal.Signals, Any] = {}
    for signum, usual in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL)):
        previous = signal.getsignal(signum)
        if previous is usual:
            replaced[signum] = previous
            signal.signal(signum, _interrupted_while_starting)
    try:
        from agents.experiments import cli
    finally:
        for signum, previous in replaced.items():
            signal.signal(signum, previous)
    return cli.main(argv)
