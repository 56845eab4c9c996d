"""Bandit agents that act on ``bandit_envs`` environments through the Gymnasium interface.

Every agent has ``act(obs)``, ``update(action, reward, info)`` and ``reset(seed)``, and runs one
env or, with ``n_envs=N``, N copies of a vector env in lock-step (docs/design.md, "Agents").

The agents live in one package per family, each holding the agent classes, their compiled
kernels and their plain-Python references side by side: :mod:`agents.stochastic`,
:mod:`agents.adversarial`, :mod:`agents.elimination`, :mod:`agents.central_dp`,
:mod:`agents.local_dp`, :mod:`agents.linear`, :mod:`agents.budget` and :mod:`agents.rl`;
:mod:`agents.common` holds the random streams and kernels they share.
"""

from agents.adversarial import Exp3, Exp3IX, Exp3SET
from agents.base import Agent, PrivateAgent
from agents.budget import SMUCB, FixedArm
from agents.central_dp import DPTSUCB, AdaPUCB, DPThompsonSampling, HybridDPUCB, PrePullGaussianTS, TreeDPUCB
from agents.elimination import AAE, DPSE, GAP, GAPU, AlphaSample, EliminationAgent
from agents.linear import LDPOLS, LDPLinUCB, LinUCB, ShuffleLinUCB
from agents.local_dp import LDPThompsonSampling, LDPWrapper
from agents.rl import SB3Agent
from agents.stochastic import KLUCB, MOSS, UCB, UCBN, EpsilonGreedy, Random, ThompsonSampling

__all__ = [
    "AAE",
    "DPSE",
    "GAP",
    "GAPU",
    "LDPLinUCB",
    "LDPOLS",
    "LDPWrapper",
    "Agent",
    "AlphaSample",
    "EliminationAgent",
    "EpsilonGreedy",
    "Exp3",
    "Exp3IX",
    "Exp3SET",
    "FixedArm",
    "KLUCB",
    "LinUCB",
    "MOSS",
    "PrivateAgent",
    "Random",
    "SB3Agent",
    "SMUCB",
    "ShuffleLinUCB",
    "ThompsonSampling",
    "UCB",
    "UCBN",
    "AdaPUCB",
    "DPTSUCB",
    "DPThompsonSampling",
    "HybridDPUCB",
    "LDPThompsonSampling",
    "PrePullGaussianTS",
    "TreeDPUCB",
]
