"""The rounds at which an experiment records cumulative regret."""

from __future__ import annotations

import numpy as np

from bandit_envs._types import IntArray


def evenly_spaced(horizon: int, n: int) -> IntArray:
    """Up to ``n`` rounds in [1, horizon], evenly spaced and ending at ``horizon``.

    ``floor(horizon * j / n)`` for j = 1..n, duplicates and round 0 removed, so a horizon shorter
    than ``n`` gives every round once rather than a round 0 that has no regret yet.
    """
    rounds = np.unique(np.linspace(horizon / n, horizon, n).astype(np.int64))
    return rounds[rounds >= 1]
