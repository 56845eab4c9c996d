"""Run an agent many times on one reward table, with fresh privacy noise each run, and keep its arm sequences.

Every run gets its own agent seed (:func:`run_seeds`: distinct 63-bit integers hashed from the
audit's seed), so the runs are independent draws of the agent's output on that table, which is
what the counts of :mod:`agents.audit.events` need. Three ways to play the table, all giving the
arms the step API would:

* :func:`simulate_runs`: the elimination agents' compiled table simulator
  (:meth:`agents.elimination.policies.EliminationAgent.simulate`, documented to equal ``act``/``update``
  round after round), reseeded with ``reset(seed=...)`` before each run;
* :func:`step_runs`: any agent through the Gymnasium step API on ``GraphBandit-v0`` replaying the
  table (``reset(options={"reward_table": R})``): one batched agent (``n_envs`` copies, whose
  copies draw their noise one after another from its generator, so each copy's is fresh) on the
  native vector env when the agent can be batched, else one agent and one env per run; with
  ``releases``, it also keeps the release of the arm played at each round (an agent's
  ``released_sums``, for an audit of its releases);
* :func:`linear_runs`: the linear agents' compiled ``run`` on a feature and reward table, batched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)
from agents.elimination.policies import EliminationAgent
from agents.linear import LinearAgent
from bandit_envs._types import BoolArray, FloatArray
from bandit_envs.validation import summarize

__all__ = ["CHUNK", "graph_env", "linear_runs", "run_seeds", "simulate_runs", "step_runs"]


#: Most copies of one batched agent (memory: agent state and vector env per copy).
CHUNK = 4096


def run_seeds(seed: int, n: int, *stream: int) -> list[int]:
    """``n`` distinct agent seeds (63-bit) for the runs of one stream of an audit with seed ``seed``."""
    state = np.random.SeedSequence([seed, *stream]).generate_state(max(n, 1), np.uint64) >> np.uint64(1)
    return [int(s) for s in state[:n]]


def graph_env(table: FloatArray, graph: BoolArray, env_id: str = "GraphBandit-v0", n_envs: int | None = None) -> Any:
    """The env replaying ``table`` on ``graph``: ``gym.make`` (or ``gym.make_vec`` for ``n_envs`` copies)."""
    kwargs = {"graph": graph, "horizon": int(table.shape[0]), "means": table.mean(axis=0).clip(0.0, 1.0)}
    if n_envs is None:
        return gym.make(env_id, **kwargs)
    return gym.make_vec(env_id, num_envs=n_envs, vectorization_mode="vector_entry_point", **kwargs)


def simulate_runs(
    agent: EliminationAgent, table: FloatArray, graph: BoolArray, seeds: Sequence[int]
) -> npt.NDArray[np.int16]:
    """Arm sequences (n, T) of ``agent`` on ``table``, run i after ``agent.reset(seed=seeds[i])``."""
    env = graph_env(table, graph).unwrapped
    adjacency, gaps = env.adjacency, env.gaps
    env.close()
    out = np.empty((len(seeds), table.shape[0]), dtype=np.int16)
    for i, seed in enumerate(seeds):
        agent.reset(seed=seed)
        actions = agent.simulate(table, adjacency, gaps, record_actions=True).actions
        assert actions is not None
        out[i] = actions
    return out


def _replay(env: Any, agent: Any, table: npt.NDArray[Any]) -> Iterator[tuple[int, Any]]:
    """Play ``agent`` on ``env`` replaying ``table``: (round, action) after each round's update.

    The action yielded is a copy of the one played, taken before the update (an update that edits
    the array it returned changes no record). On a vector env, an action that is not one arm per
    copy is refused in a sentence saying why the agent was batched.
    """
    batch = env.num_envs if isinstance(env, gym.vector.VectorEnv) else None
    obs, _ = env.reset(options={"reward_table": table})
    for t in range(int(table.shape[0])):
        action = agent.act(obs)
        if batch is not None and np.shape(action) != (batch,):
            raise ValueError(
                f"act returned {summarize(action)}, but it was built with n_envs={batch} (its class or factory "
                f"takes n_envs, so the audit plays {batch} copies at once) and must return one arm per copy, "
                f"an integer array of shape ({batch},)"
            )
        played = np.array(action, copy=True)
        obs, reward, _, _, info = env.step(action)
        agent.update(action, reward, info)
        yield t, played


def spent_after(
    build: Callable[[Any, int | None, int], Any], table: FloatArray, graph: BoolArray, env_id: str = "GraphBandit-v0"
) -> tuple[Any, Any]:
    """The ``privacy_spent`` of the agent ``build(env, None, 0)`` after replaying ``table`` through the step API.

    As the agent states it (not converted): the caller checks that it is a claim (two numbers).
    """
    env = graph_env(table, graph, env_id)
    try:
        agent = build(env, None, 0)
        for _ in _replay(env, agent, table):
            pass
        eps, dlt = agent.privacy_spent
    finally:
        env.close()
    return eps, dlt


def step_runs(
    build: Callable[[Any, int | None, int], Any],
    table: FloatArray,
    graph: BoolArray,
    n: int,
    seed: int,
    *,
    batched: bool,
    env_id: str = "GraphBandit-v0",
    releases: FloatArray | None = None,
) -> npt.NDArray[np.int16]:
    """Arm sequences (n, T) of agents built by ``build(env, n_envs, seed)`` replaying ``table`` through the step API.

    ``batched``: one agent with ``n_envs`` copies per chunk of at most :data:`CHUNK` runs on the
    native vector env; else one agent (``n_envs=None``) and one env per run. Each chunk or run
    gets its own seed from :func:`run_seeds`. ``releases``, an (n, T) array, receives the
    release of the arm played at each round after that round's update (the agents'
    ``released_sums``, :mod:`agents.central_dp.base`).
    """
    rounds = int(table.shape[0])
    out = np.empty((n, rounds), dtype=np.int16)
    if batched:
        sizes = [min(CHUNK, n - start) for start in range(0, n, CHUNK)]
        for (start, size), agent_seed in zip(
            zip(range(0, n, CHUNK), sizes, strict=True), run_seeds(seed, len(sizes)), strict=True
        ):
            env = graph_env(table, graph, env_id, n_envs=size)
            try:
                agent = build(env, size, agent_seed)
                for t, action in _replay(env, agent, table):
                    out[start : start + size, t] = action
                    if releases is not None:
                        releases[start : start + size, t] = agent.released_sums[np.arange(size), action]
            finally:
                env.close()
        return out
    env = graph_env(table, graph, env_id)
    try:
        for i, agent_seed in enumerate(run_seeds(seed, n)):
            agent = build(env, None, agent_seed)
            for t, action in _replay(env, agent, table):
                out[i, t] = int(action)
                if releases is not None:
                    releases[i, t] = agent.released_sums[0, int(action)]
    finally:
        env.close()
    return out


def linear_runs(
    build: Callable[[int, int], LinearAgent], features: FloatArray, rewards: FloatArray, n: int, seed: int
) -> npt.NDArray[np.int16]:
    """Arms (n, T) chosen by linear agents built by ``build(n_envs, seed)`` on (T, K, d) features and (T, K) rewards.

    The agents' compiled :meth:`agents.linear.base.LinearAgent.run` (the same draws and arms as
    ``act``/``update``), one batched agent per chunk of at most :data:`CHUNK` runs.
    """
    rounds = int(features.shape[0])
    out = np.empty((n, rounds), dtype=np.int16)
    sizes = [min(CHUNK, n - start) for start in range(0, n, CHUNK)]
    for (start, size), agent_seed in zip(
        zip(range(0, n, CHUNK), sizes, strict=True), run_seeds(seed, len(sizes)), strict=True
    ):
        agent = build(size, agent_seed)
        actions = agent.run(features, rewards, record_actions=True).actions
        assert actions is not None
        out[start : start + size] = np.asarray(actions).reshape(rounds, size).T
    return out
