"""Bandit agents that act on ``bandit_envs`` environments through the Gymnasium interface.

Every agent has ``act(obs)``, ``update(action, reward, info)`` and ``reset(seed)``, and runs one
env or, with ``n_envs=N``, N copies of a vector env in lock-step (docs/design.md, "Agents").

The agents live in one package per family, each holding the agent classes, their compiled
kernels and their plain-Python references side by side: :mod:`agents.stochastic`,
:mod:`agents.adversarial`, :mod:`agents.elimination`, :mod:`agents.central_dp`,
:mod:`agents.local_dp`, :mod:`agents.linear`, :mod:`agents.budget` and :mod:`agents.rl`;
:mod:`agents.common` holds the random streams and kernels they share.
"""

# Every family package lists its public agents in its ``__all__``; they are exported here as they
# are (a new agent of a family needs no line in this file). The linear family's package also
# exports its protocol and helpers, so only its agents are named.
from agents import adversarial, budget, central_dp, elimination, local_dp, rl, stochastic
from agents.adversarial import *  # noqa: F403
from agents.base import Agent, PrivateAgent
from agents.budget import *  # noqa: F403
from agents.central_dp import *  # noqa: F403
from agents.elimination import *  # noqa: F403
from agents.linear import LDPOLS, LDPLinUCB, LinUCB, ShuffleLinUCB
from agents.local_dp import *  # noqa: F403
from agents.rl import *  # noqa: F403
from agents.stochastic import *  # noqa: F403

__all__ = ["Agent", "PrivateAgent", "LDPOLS", "LDPLinUCB", "LinUCB", "ShuffleLinUCB"]
__all__ += stochastic.__all__
__all__ += adversarial.__all__
__all__ += elimination.__all__
__all__ += central_dp.__all__
__all__ += local_dp.__all__
__all__ += budget.__all__
__all__ += rl.__all__
