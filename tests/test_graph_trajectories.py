"""Recorded trajectories of ``GraphBandit-v0``: the single and the vector env give the same bytes as when recorded.

Each scenario plays a fixed action sequence and hashes everything a step returns (rewards,
truncation flags and the info arrays). The digests were recorded with the implementation in
which every env and every copy of a vector env drew its reward rows 512 at a time; any change
in what is drawn, in which order, or how a uniform becomes a reward changes them. Scenarios
cover both reward laws, autoresets, resets without a seed (the generator runs on) and a reset
in the middle of an episode longer than one block.
"""

from __future__ import annotations

import hashlib
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)

ENV_ID = "GraphBandit-v0"
K = 10

#: (reward law, scenario) -> sha256 of the scenario's outputs, recorded.
DIGESTS: dict[tuple[str, str], str] = {
    ("truncnorm", "autoreset"): "20de032086096713073e7bdef8f112c41b91d61267722944721a0e4d03d57791",
    ("truncnorm", "long"): "84520ccad83f15ecd154a56710b893377b5db36b62911318b5f7a3a7e7c36019",
    ("truncnorm", "single"): "58989caee72a21933d8a3231b8241f2f044002c289b1e64cd0ce86e3a17cf115",
    ("bernoulli", "autoreset"): "87274e4f6a2b0b22f49ec14f27c8b382a5afc315d59c712259731555e8ccc339",
    ("bernoulli", "long"): "ef79373a718c705b071e6f58d12f00a2db557e597e54c661d42cd091a57cf7b7",
    ("bernoulli", "single"): "72eb99c2775ace117dfd4616f03bfd524b9a0ecbc9c75eea2b3d082b3031d121",
}


def _update(h: Any, *arrays: Any) -> None:
    for a in arrays:
        arr = np.ascontiguousarray(np.asarray(a))
        h.update(str(arr.dtype).encode())
        h.update(arr.tobytes())


def single_digest(reward: str) -> str:
    """One env, horizon 600: a seeded episode with a mid-episode reset, a full one, then the next."""
    env = gym.make(ENV_ID, horizon=600, reward=reward)
    rng = np.random.default_rng(7)
    h = hashlib.sha256()
    for seed, steps in ((3, 5), (None, 600), (None, 40), (11, 520), (None, 3)):
        env.reset(seed=seed)
        for a in rng.integers(0, K, size=steps).tolist():
            _, r, _, trunc, info = env.step(a)
            _update(h, r, trunc, info["observed_mask"], info["observed_rewards"], info["regret"])
    return h.hexdigest()


def vector_digest(reward: str, num_envs: int, horizon: int, plan: list[tuple[Any, int]]) -> str:
    """A vector env: for each (seed, steps) of ``plan``, reset with that seed and play that many steps."""
    venv = gym.make_vec(ENV_ID, num_envs=num_envs, horizon=horizon, reward=reward)
    rng = np.random.default_rng(5)
    h = hashlib.sha256()
    for seed, steps in plan:
        _, info = venv.reset(seed=seed)
        _update(h, info["expected_rewards"])
        for a in rng.integers(0, K, size=(steps, num_envs)):
            _, r, term, trunc, info = venv.step(a)
            _update(h, r, term, trunc, *(info[k] for k in sorted(info)))
    return h.hexdigest()


SCENARIOS = {
    # short episodes: autoresets every 8th step, copies restarting together and apart
    "autoreset": lambda reward: vector_digest(reward, 4, 7, [(40, 30), (None, 12), ([5, 9, 9, 1], 20)]),
    # episodes longer than one 512-row block, with a reset in the middle of one
    "long": lambda reward: vector_digest(reward, 3, 1100, [(2, 530), (None, 600), (None, 20)]),
    "single": single_digest,
}


@pytest.mark.parametrize("reward", ["truncnorm", "bernoulli"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_trajectory_has_the_recorded_digest(scenario: str, reward: str) -> None:
    assert SCENARIOS[scenario](reward) == DIGESTS[(reward, scenario)]
