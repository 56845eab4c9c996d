"""A Python process that imports packages written into a test's temporary folder, with its own numba cache."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_cached(
    tmp: Path, code: str, check: bool = False, preexec_fn: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -c code`` with ``tmp`` and this tree importable and numba's cache in ``tmp/cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp / "cache"), PYTHONPATH=os.pathsep.join([str(tmp), str(ROOT)]))
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, check=check,
        preexec_fn=preexec_fn,
    )  # fmt: skip
