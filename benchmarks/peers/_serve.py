"""The line protocol between ``bench_peers.py`` and a peer script run by a peer library's Python.

A peer script is run as ``python PEER_SCRIPT.py '<json parameters>'`` by the interpreter of the
peer's own virtual environment. It sets up its problem, then prints one ready line, and for each
line read from standard input (a mode name) runs one timed measurement and prints one result
line. Protocol lines start with ``@@bench `` followed by JSON, so whatever a library prints on
import is ignored. Only the standard library is used here: this file runs in the peer's venv.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Callable
from typing import Any

MARK = "@@bench "


def parameters() -> dict[str, Any]:
    """The JSON parameters given as the script's only argument."""
    return dict(json.loads(sys.argv[1]))


def serve(version: str, modes: dict[str, Callable[[], tuple[float, int]]]) -> None:
    """Announce readiness, then run ``modes[line]()`` per input line and print what it returns.

    A mode times its own run (setup such as a reset is not timed) and returns (seconds, steps).
    The garbage collector is off during a mode, as in ``benchmarks/_common.py``.
    """
    print(MARK + json.dumps({"version": version, "modes": sorted(modes)}), flush=True)
    for line in sys.stdin:
        mode = line.strip()
        if not mode:
            continue
        gc.disable()
        try:
            seconds, steps = modes[mode]()
        finally:
            gc.enable()
        print(MARK + json.dumps({"mode": mode, "seconds": seconds, "steps": steps}), flush=True)
