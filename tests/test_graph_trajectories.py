"""Recorded trajectories of ``GraphBandit-v0``: the single and the vector env give what was recorded.

Each scenario plays a fixed action sequence and records everything a step returns (rewards,
truncation flags and the info arrays) in ``tests/fixtures/graph-trajectories.npz``. The
trajectories were first recorded (as digests) with the implementation in which every env and
every copy of a vector env drew its reward rows 512 at a time; any change in what is drawn, in
which order, or how a uniform becomes a reward changes them. Scenarios cover both reward laws,
autoresets, resets without a seed (the generator runs on) and a reset in the middle of an
episode longer than one block. Integers and flags are compared exactly, floats to the relative
tolerance of :mod:`recorded` (another CPU may round the last bit of a reward differently).
Regenerate with ``python tests/regenerate_fixtures.py``.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from recorded import assert_arrays_match

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)

ENV_ID = "GraphBandit-v0"
K = 10
FIXTURE = Path(__file__).parent / "fixtures" / "graph-trajectories.npz"


class Trajectory:
    """The arrays a scenario returned, by name, in the order they came (concatenated at the end)."""

    def __init__(self) -> None:
        self.parts: dict[str, list[np.ndarray]] = {}

    def add(self, **arrays: object) -> None:
        for name, value in arrays.items():
            self.parts.setdefault(name, []).append(np.ravel(np.asarray(value)))

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: np.concatenate(parts) for name, parts in self.parts.items()}


def single_trajectory(reward: str) -> dict[str, np.ndarray]:
    """One env, horizon 600: a seeded episode with a mid-episode reset, a full one, then the next."""
    env = gym.make(ENV_ID, horizon=600, reward=reward)
    rng = np.random.default_rng(7)
    out = Trajectory()
    for seed, steps in ((3, 5), (None, 600), (None, 40), (11, 520), (None, 3)):
        env.reset(seed=seed)
        for a in rng.integers(0, K, size=steps).tolist():
            _, r, _, trunc, info = env.step(a)
            out.add(
                reward=r,
                truncated=trunc,
                observed_mask=info["observed_mask"],
                observed_rewards=info["observed_rewards"],
                regret=info["regret"],
            )
    return out.arrays()


def vector_trajectory(
    reward: str, num_envs: int, horizon: int, plan: list[tuple[object, int]]
) -> dict[str, np.ndarray]:
    """A vector env: for each (seed, steps) of ``plan``, reset with that seed and play that many steps."""
    venv = gym.make_vec(ENV_ID, num_envs=num_envs, horizon=horizon, reward=reward)
    rng = np.random.default_rng(5)
    out = Trajectory()
    for seed, steps in plan:
        _, info = venv.reset(seed=seed)
        out.add(expected_rewards=info["expected_rewards"])
        for a in rng.integers(0, K, size=(steps, num_envs)):
            _, r, term, trunc, info = venv.step(a)
            out.add(reward=r, terminated=term, truncated=trunc, **{f"info.{k}": info[k] for k in sorted(info)})
    return out.arrays()


SCENARIOS = {
    # short episodes: autoresets every 8th step, copies restarting together and apart
    "autoreset": lambda reward: vector_trajectory(reward, 4, 7, [(40, 30), (None, 12), ([5, 9, 9, 1], 20)]),
    # episodes longer than one 512-row block, with a reset in the middle of one
    "long": lambda reward: vector_trajectory(reward, 3, 1100, [(2, 530), (None, 600), (None, 20)]),
    "single": single_trajectory,
}


def cases() -> dict[str, np.ndarray]:
    """Every scenario's arrays under ``reward/scenario/name`` (the fixture's keys)."""
    return {
        f"{reward}/{scenario}/{name}": array
        for reward in ("truncnorm", "bernoulli")
        for scenario in sorted(SCENARIOS)
        for name, array in SCENARIOS[scenario](reward).items()
    }


@pytest.fixture(scope="module")
def recorded() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as data:
        return {key: data[key] for key in data.files}


@pytest.mark.parametrize("reward", ["truncnorm", "bernoulli"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_trajectory_matches_the_recorded_one(scenario: str, reward: str, recorded: dict[str, np.ndarray]) -> None:
    arrays = SCENARIOS[scenario](reward)
    prefix = f"{reward}/{scenario}/"
    assert set(arrays) == {key[len(prefix) :] for key in recorded if key.startswith(prefix)}
    for name, array in arrays.items():
        assert_arrays_match(array, recorded[prefix + name], prefix + name)
