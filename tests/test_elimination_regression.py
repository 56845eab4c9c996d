"""The elimination agents' compiled ``simulate`` against stored action sequences.

``tests/fixtures/elimination-sequences.npz`` holds, for every case of :func:`cases`, the arm
sequence, the checkpoint regret, the total regret, the agent's state arrays after the run and
the next draws of its generator, all recorded with the per-round driver that ran the agents'
``act``/``update`` state machines round by round (the code before the epoch-level kernels). The
epoch-level kernels must reproduce every one of them: the same arms and counts exactly, the
released noise, regret and state floats to the relative tolerance of :mod:`recorded` (another
CPU may round their last bit differently). Cases cover every agent and option, uniforms mapped
by Bernoulli and truncated-normal laws and reward tables, neighbouring tables (``override``), a
batched agent's copy, and a run resumed mid-epoch after steps of the step API.

The batched case plays copy 2 of a batch seeded ``s − 2``, which must draw exactly as the single
agent seeded ``s`` (docs/design.md, "Agents", Seeds): it is compared with the recorded single
run (``uniforms``). The fixture's own ``batched`` entries recorded the former convention (the
copies drawing from one generator in copy order) and are not read; a regeneration would record
copy 2's run there, the same values as the ``uniforms`` entries.

Regenerate (only when a change of behaviour is intended, and say so in the commit):
``python tests/regenerate_fixtures.py elimination``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from recorded import assert_arrays_match

from agents.common.tables import UniformTable
from agents.elimination import kernels
from agents.elimination.policies import AAE, DPSE, GAP, GAPU, AlphaSample, EliminationAgent
from bandit_envs.graph import GraphBanditEnv

FIXTURE = Path(__file__).parent / "fixtures" / "elimination-sequences.npz"
HORIZON = 30_000


NAMES = (
    "GAP",
    "GAP-greedy",
    "GAP-paper",
    "GAPU",
    "DPSE",
    "DPSE-scaled",
    "AAE",
    "AAE-side-hoeffding",
    "AlphaSample",
    "AlphaSample-coarse",
)


def make(name: str, adjacency: np.ndarray, seed: int, n_envs: int | None = None) -> EliminationAgent:
    """Case ``name``'s agent (K = 10, T = HORIZON); parameters give several epochs within T."""
    k, t, kw = 10, HORIZON, {"seed": seed, "n_envs": n_envs}
    agents: dict[str, Any] = {
        "GAP": lambda: GAP(k, t, 2.0, adjacency, delta=0.1, **kw),
        "GAP-greedy": lambda: GAP(k, t, 2.0, adjacency, delta=0.1, round_robin="greedy", **kw),
        "GAP-paper": lambda: GAP(k, t, 0.1, adjacency, **kw),
        "GAPU": lambda: GAPU(k, t, 2.0, adjacency, delta=0.1, **kw),
        "DPSE": lambda: DPSE(k, t, 2.0, beta=0.1, **kw),
        "DPSE-scaled": lambda: DPSE(k, t, 0.5, beta=0.1, schedule_scale=0.05, width_scale=0.5, **kw),
        "AAE": lambda: AAE(k, t, delta=0.1, **kw),
        "AAE-side-hoeffding": lambda: AAE(k, t, delta=0.1, radius="hoeffding", side_observations=True, **kw),
        "AlphaSample": lambda: AlphaSample(k, t, delta=0.01, **kw),
        "AlphaSample-coarse": lambda: AlphaSample(k, t, delta=0.1, epsilon1=0.25, coeff=0.05, **kw),
    }
    return agents[name]()


def recorded_state(agent: EliminationAgent) -> tuple[np.ndarray, ...]:
    """The agent's state arrays as the fixture recorded them.

    AAE now keeps each arm's sum of observations where the per-round code kept its running
    mean (``mean += (r - mean)/n``); the recorded means are compared with sum / n, which agrees
    with the running mean to the fixture's relative tolerance, not to the last bit.
    """
    state = tuple(agent._state)
    if isinstance(agent, AAE):
        counts, sums = state[kernels.AAE_COUNTS], state[kernels.AAE_SUMS]
        means = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
        state = state[: kernels.AAE_SUMS] + (means,) + state[kernels.AAE_SUMS + 1 :]
    return state


def cases() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every recorded case: (key, outputs of one ``simulate`` run)."""
    checkpoints = np.unique(np.linspace(1, HORIZON, 37).astype(np.int64))
    for instance, (reward, p, gap) in enumerate((("truncnorm", 0.2, 0.2), ("bernoulli", 0.5, 0.1))):
        env = GraphBanditEnv(n_arms=10, edge_probability=p, gap=gap, reward=reward, horizon=HORIZON, instance_seed=7)
        uniforms = np.random.default_rng(100 + instance).random((HORIZON, 10))
        rewards = env.reward_model.from_uniforms(uniforms)
        seed = 11 + instance
        for name in NAMES:
            for variant in ("uniforms", "rewards", "override", "batched", "resumed"):
                batched = variant == "batched"  # copy 2 of a batch seeded seed - 2: the single agent seeded seed
                agent = make(name, env.adjacency, seed - 2 if batched else seed, n_envs=3 if batched else None)
                kwargs: dict[str, Any] = {"checkpoints": checkpoints, "record_actions": True}
                table = rewards if variant == "rewards" else uniforms
                if variant != "rewards":
                    kwargs["law"] = env.reward_model
                if variant == "override":
                    kwargs["override"] = (HORIZON // 3, int(np.argmax(env.expected_rewards)), 0.0)
                if batched:
                    kwargs["copy"] = 2
                if variant == "resumed":  # 1,234 rounds through the step API, then simulate the rest
                    for t in range(1_234):
                        a = int(agent.act())
                        seen = env.neighbourhoods[a]
                        info = {"observed_mask": seen, "observed_rewards": rewards[t] * seen}
                        agent.update(a, float(rewards[t, a]), info)
                    kwargs["checkpoints"] = checkpoints[checkpoints > 1_234]
                result = agent.simulate(table, env.adjacency, env.gaps, **kwargs)
                out: dict[str, Any] = {
                    "actions": result.actions,
                    "checkpoint_regret": result.checkpoint_regret,
                    "total_regret": np.array(result.total_regret),
                    "next_draws": (agent._copy_rngs[2] if batched else agent.rng).random(3),
                }
                for i, array in enumerate(recorded_state(agent)):
                    out[f"state{i}"] = array[2:] if batched else array
                yield f"{instance}/{name}/{variant}", out


@pytest.fixture(scope="module")
def recorded() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as data:
        return {key: data[key] for key in data.files}


def test_fixture_covers_every_case(recorded: dict[str, np.ndarray]) -> None:
    keys = {key.rsplit("|", 1)[0] for key in recorded}
    assert keys == {key for key, _ in cases()}


def test_simulate_reproduces_recorded_runs(recorded: dict[str, np.ndarray]) -> None:
    for key, out in cases():
        for field, value in out.items():
            # The batched case's copy 2 is the recorded single run (see the module docstring).
            stored = recorded[f"{key.replace('/batched', '/uniforms')}|{field}"]
            assert stored.dtype == np.asarray(value).dtype, f"{key} {field}"
            assert_arrays_match(np.asarray(value), stored, f"{key} {field}")


def test_streamed_table_reproduces_recorded_runs(recorded: dict[str, np.ndarray]) -> None:
    """The same runs fed in blocks of 997 rows (epochs and passes end mid-block) from a UniformTable."""
    for instance, (reward, p, gap) in enumerate((("truncnorm", 0.2, 0.2), ("bernoulli", 0.5, 0.1))):
        env = GraphBanditEnv(n_arms=10, edge_probability=p, gap=gap, reward=reward, horizon=HORIZON, instance_seed=7)
        table = UniformTable(100 + instance, HORIZON, 10, block_rows=997)
        checkpoints = np.unique(np.linspace(1, HORIZON, 37).astype(np.int64))
        for name in NAMES:
            agent = make(name, env.adjacency, 11 + instance)
            result = agent.simulate(
                table, env.adjacency, env.gaps, law=env.reward_model, checkpoints=checkpoints, record_actions=True
            )
            key = f"{instance}/{name}/uniforms"
            assert_arrays_match(result.actions, recorded[f"{key}|actions"], key)
            assert_arrays_match(result.checkpoint_regret, recorded[f"{key}|checkpoint_regret"], key)
            for i, array in enumerate(recorded_state(agent)):
                assert_arrays_match(array, recorded[f"{key}|state{i}"], key)
