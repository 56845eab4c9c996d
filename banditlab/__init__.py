"""The ``banditlab`` command's entry point, light enough to answer Ctrl-C while the command starts.

Importing the command (:mod:`agents.experiments.cli`: numba, pandas, matplotlib and every agent's
module) takes seconds. :func:`main` imports it only after making Ctrl-C (SIGINT) end the process
at once with one line and exit status 130, as a Ctrl-C later in the command does; once the command
is imported, SIGINT raises KeyboardInterrupt again and the command handles it. An ignored SIGINT
(a command started in the background by a shell) stays ignored. ``python -m banditlab`` runs the
same entry point.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from types import FrameType

#: Exit status after Ctrl-C (128 + SIGINT), as :data:`agents.experiments.cli.INTERRUPTED`.
INTERRUPTED = 130


def _interrupted_while_starting(signum: int, frame: FrameType | None) -> None:
    """SIGINT before the command is imported: nothing is written yet, so end at once (no traceback)."""
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
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted_while_starting)
    try:
        from agents.experiments import cli
    finally:
        if previous is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous)
    return cli.main(argv)
