"""Every script in examples/ runs."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(path)])
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()


def test_bring_your_own_agent_is_an_agent_target(capsys):
    """`--agent examples/bring_your_own_agent.py:make_agent` imports the file without running the experiment."""
    import gymnasium as gym

    import bandit_envs  # noqa: F401
    from agents.experiments.core.user_agents import UserAgent

    path = Path(__file__).resolve().parents[1] / "examples" / "bring_your_own_agent.py"
    user = UserAgent(name="mine", ref=f"{path}:make_agent")
    env = gym.make("GraphBandit-v0", horizon=200)
    agent = user.build(env, {"epsilon": 0.1}, seed=0)
    assert capsys.readouterr().out == ""
    obs, _ = env.reset(seed=0)
    for _ in range(200):
        action = agent.act(obs)
        obs, reward, _, _, info = env.step(action)
        agent.update(action, reward, info)
    assert agent.counts.sum() >= 200  # side observations counted beside the pulled arm
