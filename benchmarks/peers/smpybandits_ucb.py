"""SMPyBandits' UCB on K Bernoulli arms, one run of T steps per request (run by its own venv's Python).

Parameters (JSON): ``means`` (one Bernoulli mean per arm), ``horizon`` T, ``seed``. Modes:

* ``env``: ``policy.choice()``, ``arms[a].draw(t)``, ``policy.getReward(a, r)``: its agent on its
  own Bernoulli arms;
* ``table``: the same with the reward read from a pre-drawn (T, K) table (agent cost only); the
  table is the one ``bench_peers.py`` draws for our side (same generator, seed and means).
"""

from __future__ import annotations

import time
from importlib.metadata import version

import numpy as np
from _serve import parameters, serve
from SMPyBandits.Arms import Bernoulli
from SMPyBandits.Policies import UCB

params = parameters()
means = [float(m) for m in params["means"]]
horizon = int(params["horizon"])
seed = int(params["seed"])
np.random.seed(seed)  # noqa: NPY002  (SMPyBandits draws from numpy's global generator)
arms = [Bernoulli(m) for m in means]
table = (np.random.default_rng(seed).random((horizon, len(means))) < np.array(means)).astype(float).tolist()
policy = UCB(len(means))


def with_env() -> tuple[float, int]:
    policy.startGame()
    choice, get_reward = policy.choice, policy.getReward
    start = time.perf_counter()
    for t in range(horizon):
        a = choice()
        get_reward(a, arms[a].draw(t))
    return time.perf_counter() - start, horizon


def with_table() -> tuple[float, int]:
    policy.startGame()
    choice, get_reward = policy.choice, policy.getReward
    start = time.perf_counter()
    for t in range(horizon):
        a = choice()
        get_reward(a, table[t][a])
    return time.perf_counter() - start, horizon


serve(version("SMPyBandits"), {"env": with_env, "table": with_table})
