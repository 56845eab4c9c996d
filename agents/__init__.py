"""Bandit agents that act on ``bandit_envs`` environments through the Gymnasium interface.

Every agent has ``act(obs)``, ``update(action, reward, info)`` and ``reset(seed)``, and runs one
env or, with ``n_envs=N``, N copies of a vector env in lock-step (docs/design.md, "Agents").
"""

from agents.adversarial import Exp3, Exp3IX, Exp3SET
from agents.base import Agent, PrivateAgent
from agents.budget_agents import SMUCB, FixedArm
from agents.dp_gaussian_ts import DPTSUCB, PrePullGaussianTS
from agents.dp_thompson import DPThompsonSampling, LDPThompsonSampling
from agents.dp_ucb import AdaPUCB, HybridDPUCB, TreeDPUCB
from agents.elimination import AAE, DPSE, GAP, GAPU, AlphaSample, EliminationAgent
from agents.greedy import EpsilonGreedy
from agents.index import UCB, UCBN, Random, ThompsonSampling
from agents.ldp import LDPWrapper
from agents.linear import LDPOLS, LDPLinUCB, LinUCB, ShuffleLinUCB
from agents.optimistic import KLUCB, MOSS
from agents.sb3 import SB3Agent

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
