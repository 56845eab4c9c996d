"""Ways of playing an agent that several test files share: from a reward table, in lockstep with its
plain-Python reference, on a Gymnasium env, and the random linear problem of the contextual agents.

Imported by the test modules as ``from rollouts import ...`` (pytest puts ``tests/`` on the path, as
for ``conftest``); numpy only, so collecting the suite stays fast.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def play_table(agent: Any, table: np.ndarray) -> np.ndarray:
    """Arms of every round; ``table`` is (T, K) for one env or (T, N, K) for N copies (copy i reads ``table[:, i]``)."""
    actions = []
    for t in range(table.shape[0]):
        a = agent.act()
        if table.ndim == 2:
            agent.update(a, float(table[t, a]))
        else:
            agent.update(a, table[t, np.arange(table.shape[1]), a])
        actions.append(a)
    return np.array(actions)


def assert_plays_like_reference(agent: Any, reference: Any, table: np.ndarray) -> None:
    """Play ``agent`` and ``reference`` side by side on the (T, K) ``table``: the same arm in every round.

    Each is fed the table's reward of the arm it chose; the first round where the arms differ fails.
    """
    for t in range(table.shape[0]):
        a, b = agent.act(), reference.act()
        assert a == b, f"round {t}"
        agent.update(a, float(table[t, a]))
        reference.update(b, float(table[t, b]))


def lockstep_from_seed(
    makers: tuple[Callable[[int | None, int], Any], Callable[[int], Any]], seed: int, n_arms: int, rounds: int = 800
) -> tuple[Any, Any]:
    """(agent, reference) after :func:`assert_plays_like_reference` on ``rounds`` uniform rewards.

    ``makers`` is (make(n_envs, seed), make_reference(seed)); both are built with ``seed`` (one env),
    the (rounds, n_arms) table of U(0, 1) rewards is drawn with seed ``seed % 1000``.
    """
    make, make_reference = makers
    table = np.random.default_rng(seed % 1000).random((rounds, n_arms))
    agent, reference = make(None, seed), make_reference(seed)
    assert_plays_like_reference(agent, reference, table)
    return agent, reference


@dataclass
class Rollout:
    """What :func:`play_env` saw: the arms, the summed ``info["regret"]`` and every step's info."""

    actions: list[Any] = field(default_factory=list)
    regret: Any = 0.0
    infos: list[dict[str, Any]] = field(default_factory=list)


def play_env(agent: Any, env: Any, steps: int, obs: Any = None, check: Callable[[Any], None] | None = None) -> Rollout:
    """Play ``steps`` rounds of ``agent`` on ``env``, which the caller has reset.

    With ``obs`` (the observation ``reset`` returned), the agent acts on each observation
    (``agent.act(obs)``); without it, it acts blind (``agent.act()``). ``check`` is called on every
    action before it is stepped. Regret is summed per copy on a vector env.
    """
    out = Rollout()
    for _ in range(steps):
        a = agent.act() if obs is None else agent.act(obs)
        if check is not None:
            check(a)
        next_obs, reward, _, _, info = env.step(a)
        agent.update(a, reward, info)
        if obs is not None:
            obs = next_obs
        out.actions.append(a)
        out.regret = out.regret + info["regret"]
        out.infos.append(info)
    return out


def assert_int(action: Any) -> None:
    """A single env's action is a Python int."""
    assert isinstance(action, int), f"action {action!r} of type {type(action).__name__}, not int"


def assert_int64_per_copy(n: int) -> Callable[[Any], None]:
    """A check for :func:`play_env`: the action of ``n`` copies is an (n,) int64 array."""

    def check(action: Any) -> None:
        assert action.shape == (n,) and action.dtype == np.int64, (action.shape, action.dtype)

    return check


def linear_problem(
    n_rounds: int, n_arms: int, d: int, seed: int, noise: float = 0.05
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random unit features each round, ‖θ*‖ = 0.9, rewards x·θ* + N(0, noise²) clipped to [-1, 1].

    Returns (features (T, K, d), rewards (T, K), expected rewards (T, K)).
    """
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=d)
    theta *= 0.9 / np.linalg.norm(theta)
    x = rng.normal(size=(n_rounds, n_arms, d))
    x /= np.linalg.norm(x, axis=2, keepdims=True)
    mean = x @ theta
    rewards = np.clip(mean + noise * rng.normal(size=mean.shape), -1.0, 1.0)
    return x, rewards, mean
