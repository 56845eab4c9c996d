"""Reinforcement learning next to the bandit agents: PPO and DQN (stable-baselines3) on ``GraphBandit-v0``.

``task`` holds the protocol (train per run, then evaluate every agent on the same instance and
reward draws), the analysis and the experiment record.
"""

from agents.experiments.rl.task import EXPERIMENTS

__all__ = ["EXPERIMENTS"]
