"""MABWiser's UCB1 on K Bernoulli arms, one run of T steps per request (run by its own venv's Python).

Parameters (JSON): ``means``, ``horizon`` T, ``seed``. Mode ``table``: rewards from the (T, K)
table that ``bench_peers.py`` draws for our side (same generator, seed and means); MABWiser has
no environment. ``UCB1(alpha=1)`` is mean + sqrt(2 ln N / n), our ``UCB`` with alpha = sqrt 2.
MABWiser needs a ``fit`` before it predicts and gives an untried arm expectation 0, so each run
starts with an untimed ``fit`` on one pull of every arm (rows 0..K-1 of the table), then times
``predict()`` and ``partial_fit([a], [r])`` for the T - K remaining steps.
"""

from __future__ import annotations

import time
from importlib.metadata import version

import numpy as np
from _serve import parameters, serve
from mabwiser.mab import MAB, LearningPolicy

params = parameters()
means = [float(m) for m in params["means"]]
horizon = int(params["horizon"])
seed = int(params["seed"])
k = len(means)
table = (np.random.default_rng(seed).random((horizon, k)) < np.array(means)).astype(float).tolist()


def with_table() -> tuple[float, int]:
    mab = MAB(arms=list(range(k)), learning_policy=LearningPolicy.UCB1(alpha=1.0), seed=seed)
    mab.fit(decisions=list(range(k)), rewards=[table[t][t] for t in range(k)])
    predict, partial_fit = mab.predict, mab.partial_fit
    start = time.perf_counter()
    for t in range(k, horizon):
        a = predict()
        partial_fit([a], [table[t][a]])
    return time.perf_counter() - start, horizon - k


serve(version("mabwiser"), {"table": with_table})
