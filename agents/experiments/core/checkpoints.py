"""The rounds at which an experiment records cumulative regret."""

from __future__ import annotations

import numpy as np

from agents.experiments.core.limits import MAX_HORIZON, check_count
from bandit_envs._types import IntArray


def evenly_spaced(horizon: int, n: int) -> IntArray:
    """Up to ``n`` rounds in [1, horizon], evenly spaced and ending at ``horizon``.

    ``floor(horizon * j / n)`` for j = 1..n, duplicates and round 0 removed, so a horizon shorter
    than ``n`` gives every round once rather than a round 0 that has no regret yet. The rounds are
    computed in float64, so ``horizon`` must be at most 2**53 (ValueError, one sentence, otherwise).
    """
    horizon = check_count("horizon", horizon, 1, MAX_HORIZON)
    rounds = np.unique(np.linspace(horizon / n, horizon, n).astype(np.int64))
    return rounds[rounds >= 1]
