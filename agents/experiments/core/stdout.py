"""Standard output of banditlab's commands: :func:`say`, which a closed pipe or an ASCII terminal does not break."""

from __future__ import annotations

import os
import sys

__all__ = ["StdoutError", "say"]


class StdoutError(Exception):
    """Standard output could not be written (other than its reader having gone), as one sentence."""


def say(text: str) -> None:
    """Print ``text`` and a newline on standard output, at once (flushed).

    A reader of standard output that has gone (a closed pipe: ``banditlab list | head -1``) is not
    an error: standard output is pointed at the null device, so that nothing more is printed (and
    the exit flush fails no more), and the command goes on. A character its encoding cannot show
    (e.g. ε or ✓ on an ASCII terminal) is printed as a backslash escape, as on standard error.

    Raises
    ------
    StdoutError
        Standard output cannot be written for another reason (e.g. a full disk): one sentence.
    """
    try:
        try:
            print(text, flush=True)
        except UnicodeEncodeError:  # nothing of ``text`` was written: the whole of it failed to encode
            encoding = getattr(sys.stdout, "encoding", None) or "ascii"
            print(text.encode(encoding, "backslashreplace").decode(encoding), flush=True)
    except BrokenPipeError:
        _drop_stdout()
    except OSError as exc:
        reason = exc.strerror or (os.strerror(exc.errno) if exc.errno else type(exc).__name__)
        raise StdoutError(f"cannot write to standard output: {reason}.") from None


def _drop_stdout() -> None:
    """Point standard output at the null device: its reader has gone, and what is still buffered is dropped."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (e.g. a test's capture): replace the object
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)
