"""Paper experiments as data, one package per paper family, a Python API and the ``banditlab`` CLI.

``run(experiment_id, agents=[...])`` returns the tidy results as a pandas DataFrame; user
agents (any callable building an agent from the experiment's env, setting and seed) run next to
the built-in ones on the same instances and reward draws. Families: ``gap`` (graph feedback and
DP, the GAP paper), ``budget`` (privacy-budget selection), ``ldp`` (LDP contextual bandits),
``dpmab`` (central-DP agents and side observations), ``rl`` (stable-baselines3 agents); ``core``
is the engine they share. ``score(agent)`` (:mod:`agents.experiments.scorecard`, ``banditlab score``)
scores one agent on a fixed, versioned suite beside the built-in leaders and returns the scores.
"""

from agents.experiments.api import UsageError, run, run_experiment
from agents.experiments.core.spec import Experiment
from agents.experiments.registry import EXPERIMENTS, get_experiment
from agents.experiments.scorecard import score
from agents.user_agents import UserAgent, UserAgentError

__all__ = [
    "EXPERIMENTS",
    "Experiment",
    "UsageError",
    "UserAgent",
    "UserAgentError",
    "get_experiment",
    "run",
    "run_experiment",
    "score",
]
