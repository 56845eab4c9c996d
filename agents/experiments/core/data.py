"""``--data`` values: the built-in synthetic defaults, named downloads, or a path to real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bandit_envs.validation import summarize

MOVIELENS_NAMES = ("movielens-latest-small", "ml-latest-small", "ml-100k", "ml-1m", "ml-10m")


def scenario_of(data: str) -> tuple[str, Any]:
    """Map a ``--data`` value to (scenario, the env's ``data`` argument).

    ``synthetic-movielens`` / ``synthetic-gowalla`` are the built-in synthetic defaults; MovieLens
    names download through :mod:`bandit_envs.datasets`; a path ending in ``.gz`` or ``.txt`` (SNAP
    check-ins) is Gowalla, any other path (a ratings file or its folder) MovieLens.
    """
    if data == "synthetic-movielens":
        return "movielens", None
    if data == "synthetic-gowalla":
        return "gowalla", None
    if data in MOVIELENS_NAMES:
        return "movielens", "ml-latest-small" if data == "movielens-latest-small" else data
    if data == "gowalla":
        return "gowalla", "gowalla"
    path = Path(data)
    if not path.exists():
        raise ValueError(
            "--data must be synthetic-movielens, synthetic-gowalla, gowalla, one of "
            f"{list(MOVIELENS_NAMES)} or an existing path, got {summarize(data)}."
        )
    if path.name.endswith((".gz", ".txt")):
        return "gowalla", str(path)
    return "movielens", str(path)
