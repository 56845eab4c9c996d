"""A first run compiles only the elimination kernels it uses, and the cheaper draws keep NumPy's stream.

GAP's step API compiles neither GAPU's uniform rule nor the release before an epoch ends
(``agents.elimination.kernels.gap_plan`` leaves GAPU's Ω_τ to ``gapu_plan``, and the update
kernel leaves the release to ``GAP._end_epochs``); ``integer_below`` draws what
``Generator.integers(0, n)`` draws and ``agents.common.streams.laplace_draw`` what ``Generator.laplace(0.0, scale)``
draws.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from agents.common.streams import integer_below, laplace_draw
from bandit_envs._jit import njit
from bandit_envs.core import generator_addresses

ROOT = Path(__file__).resolve().parents[1]


@njit
def _draw_all(bitgen, bounds, out):  # pragma: no cover - compiled
    for i in range(bounds.shape[0]):
        out[i] = integer_below(bitgen, bounds[i])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_integer_below_draws_what_generator_integers_draws(seed):
    source = np.random.default_rng(100 + seed)
    bounds = np.concatenate(
        [
            source.integers(1, 50, 3000),  # small ranges, as GAPU's and AlphaSample's
            source.integers(1, 2**32 - 1, 3000),  # wide ranges, where Lemire's method rejects more often
            np.array([1, 2, 2**31, 2**31 + 1, 2**32 - 1] * 20),
        ]
    )
    source.shuffle(bounds)
    ours, numpy = np.random.default_rng(seed), np.random.default_rng(seed)
    numpy.random()  # a double drawn first: the 32-bit draws then start on a fresh 64-bit word
    ours.random()
    out = np.empty(bounds.size, dtype=np.int64)
    _draw_all(generator_addresses([ours])[0], bounds, out)
    assert out.tolist() == [int(numpy.integers(0, n)) for n in bounds]
    assert ours.bit_generator.state == numpy.bit_generator.state  # the same draws, the half-word buffer too


@njit
def _laplace_all(bitgen, scales, out):  # pragma: no cover - compiled
    for i in range(scales.shape[0]):
        out[i] = laplace_draw(bitgen, scales[i])


@pytest.mark.parametrize("seed", [0, 1])
def test_laplace_draw_draws_what_generator_laplace_draws(seed):
    scales = np.random.default_rng(300 + seed).choice([1e-9, 0.01, 1.0, 3.5, 1e6], 100_000)
    ours, numpy = np.random.default_rng(seed), np.random.default_rng(seed)
    out = np.empty(scales.size)
    _laplace_all(generator_addresses([ours])[0], scales, out)
    want = np.array([numpy.laplace(0.0, scale) for scale in scales])
    assert np.array_equal(out, want) and np.array_equal(np.signbit(out), np.signbit(want))  # zeros' signs too
    assert ours.bit_generator.state == numpy.bit_generator.state


SNIPPET = """
import numpy as np
from agents import GAP
from agents.elimination import kernels
from bandit_envs.graph import GraphBanditEnv

env = GraphBanditEnv(n_arms=10, edge_probability=0.2, gap=0.1, horizon=1000, instance_seed=1)
obs, info = env.reset(seed=1)
agent = GAP(10, 1000, 0.1, info["feedback_graph"], seed=0)
for _ in range(200):
    action = agent.act(obs)
    obs, reward, terminated, truncated, info = env.step(action)
    agent.update(action, reward, info)
assert agent.privacy_spent[0] == 0.0  # no epoch ended
used = [f.__name__ for f in (kernels.gap_release, kernels.gapu_plan, kernels.uniform_maximal_independent_set,
        kernels.integer_below) if f.signatures]
print(used)
"""


def fresh_process_output(source: str) -> list[str]:
    """The lines ``source`` prints, run in a fresh Python process with an empty numba cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
        out = subprocess.run(
            [sys.executable, "-c", source], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300
        )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


@pytest.mark.integration  # a fresh Python process with an empty numba cache (about 3 s compiling)
def test_gap_step_api_compiles_neither_the_release_nor_the_uniform_rule_before_an_epoch_ends():
    assert fresh_process_output(SNIPPET) == ["[]"]


TABLE_RUNS = """
import numpy as np
from agents import DPSE, GAP
from agents.common import kernels as common
from agents.elimination import drivers
from bandit_envs import rewards
from bandit_envs.graph import GraphBanditEnv

env = GraphBanditEnv(n_arms=10, edge_probability=0.2, gap=0.1, horizon=500, instance_seed=1)
table = np.random.default_rng(0).random((500, 10))
names = {drivers.gap_run_rewards: "gap_run_rewards", drivers.gap_run_uniforms: "gap_run_uniforms",
         common.law_reward: "law_reward", rewards.ndtri_many: "ndtri_many"}
def used():
    return [name for f, name in names.items() if f.signatures]
for agent in (GAP(10, 500, 1.0, env.adjacency, seed=0), DPSE(10, 500, 1.0, seed=0)):
    agent.simulate(table, env.adjacency, env.gaps)  # a table of rewards
print(used())
GAP(10, 500, 1.0, env.adjacency, seed=0).simulate(table, env.adjacency, env.gaps, law=env.reward_model)
print(used())
"""


@pytest.mark.integration  # a fresh Python process with an empty numba cache (about 5 s compiling)
def test_table_runs_compile_only_the_loop_and_reward_law_their_table_needs():
    lines = fresh_process_output(TABLE_RUNS)
    # On rewards: GAP's round-by-round run only, and no reward law (the entries are the rewards).
    # On uniforms: GAP's chunked run, which makes rewards in batches (ndtri_many), never the scalar law.
    assert lines == [
        "['gap_run_rewards']",
        "['gap_run_rewards', 'gap_run_uniforms', 'ndtri_many']",
    ]
