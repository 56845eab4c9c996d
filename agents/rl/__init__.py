"""Reinforcement-learning agents: a stable-baselines3 policy as a bandit agent.

- :mod:`agents.rl.sb3`: :class:`SB3Agent`.
"""

from agents.rl.sb3 import SB3Agent

__all__ = ["SB3Agent"]
