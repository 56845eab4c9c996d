"""Stochastic bandit agents: index policies, optimism, greedy exploration and Thompson sampling.

- :mod:`agents.stochastic.index`: :class:`Random`, :class:`UCB`, :class:`UCBN`, :class:`ThompsonSampling`;
- :mod:`agents.stochastic.optimistic`: :class:`KLUCB`, :class:`MOSS`;
- :mod:`agents.stochastic.greedy`: :class:`EpsilonGreedy`;
- :mod:`agents.stochastic.mean_state`: the per-arm mean state the last three share;
- :mod:`agents.stochastic.index_kernels`, :mod:`agents.stochastic.thompson_kernels`: their compiled
  steps, each with its plain-Python reference beside it.
"""

from agents.stochastic.greedy import EpsilonGreedy
from agents.stochastic.index import UCB, UCBN, Random, ThompsonSampling
from agents.stochastic.optimistic import KLUCB, MOSS

__all__ = ["KLUCB", "MOSS", "UCB", "UCBN", "EpsilonGreedy", "Random", "ThompsonSampling"]
