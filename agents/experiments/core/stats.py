"""Interval estimates used by every analysis: Wilson intervals, t intervals, paired differences.

Runs of different agents (or configurations) in one experiment are paired by common random
numbers, so comparisons use the t interval of the per-run (or per-user) differences.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

Z95 = 1.959963984540054


def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson 95% score interval of a binomial proportion, without continuity correction.

    E. B. Wilson, "Probable inference, the law of succession, and statistical inference", JASA
    22(158):209-212, 1927; computed by :meth:`scipy.stats.binomtest`'s ``proportion_ci`` (method
    ``"wilson"``), whose bounds are exactly 0 at ``successes = 0`` and 1 at ``successes = n``.
    ``(0, 1)`` when ``n = 0`` (nothing is known).
    """
    if n == 0:
        return (0.0, 1.0)
    from scipy.stats import binomtest  # imported when used: scipy.stats takes a large part of a second to import

    ci = binomtest(successes, n).proportion_ci(confidence_level=0.95, method="wilson")
    return (float(ci.low), float(ci.high))


def mean_ci(x: Sequence[float]) -> tuple[float, float, float]:
    """Mean, standard error and half-width of the t-based 95% interval (NaN below two values)."""
    a = np.asarray(x, dtype=float)
    if a.size < 2:
        return (float(a.mean()) if a.size else math.nan, math.nan, math.nan)
    se = float(a.std(ddof=1) / math.sqrt(a.size))
    from scipy import stats  # imported when used: scipy.stats takes a large part of a second to import

    return float(a.mean()), se, float(stats.t.ppf(0.975, a.size - 1) * se)


def paired(a: Mapping[int, float], b: Mapping[int, float]) -> tuple[float, float]:
    """Mean and 95% half-width of ``a[i] - b[i]`` over the keys (runs, users) both have."""
    keys = sorted(set(a) & set(b))
    m, _, h = mean_ci([a[k] - b[k] for k in keys])
    return m, h


def final_regret(results: pd.DataFrame, horizon: int) -> dict[tuple[int, str], dict[int, float]]:
    """(setting index, agent) → {run: regret at T}: the per-run values :func:`paired` compares.

    ``results`` is a regret table with ``setting``, ``agent``, ``run``, ``t`` and ``regret`` columns.
    """
    out: dict[tuple[int, str], dict[int, float]] = defaultdict(dict)
    last = results[results["t"] == horizon]
    for s, a, run, reg in zip(last["setting"], last["agent"], last["run"], last["regret"], strict=True):
        out[(int(s), str(a))][int(run)] = float(reg)
    return out
