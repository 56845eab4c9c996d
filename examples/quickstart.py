"""Quickstart: GAP against UCB-N on the gap paper's graph bandit, through the Gymnasium API.

Runs in a few seconds: ``python examples/quickstart.py``.
"""

from __future__ import annotations

import gymnasium as gym

import bandit_envs  # noqa: F401  (registers the environment ids)
from agents import GAP, UCBN

HORIZON = 20_000


def play(agent, env: gym.Env, seed: int) -> float:
    """Run one episode with the act/update loop and return the cumulative regret."""
    obs, info = env.reset(seed=seed)
    regret = 0.0
    for _ in range(HORIZON):
        action = agent.act(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        agent.update(action, reward, info)
        regret += info["regret"]
    return regret


def main() -> None:
    env = gym.make("GraphBandit-v0", horizon=HORIZON, gap=0.2, edge_probability=0.3)
    _, info = env.reset(seed=0)
    graph = info["feedback_graph"]
    print(
        f"{env.unwrapped.n_arms} arms, {int(graph.sum()) // 2} edges, "
        f"true means {env.unwrapped.expected_rewards.round(3)}"
    )
    for agent in (GAP(10, HORIZON, epsilon=0.5, feedback_graph=graph, seed=1), UCBN(10, seed=1)):
        print(f"{agent.name:5s} cumulative regret over {HORIZON:,} rounds: {play(agent, env, seed=7):8.1f}")
    print("GAP is 0.5-DP for the arm sequence w.r.t. one reward entry r_{t,k}; UCB-N is not private.")


if __name__ == "__main__":
    main()
