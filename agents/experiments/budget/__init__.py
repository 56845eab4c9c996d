"""The privacy-budget paper family: a user picks the LDP budget ε with a bandit (UCB, SM-UCB), §7.

``settings`` declares the experiments and claims as data and resolves ``--data`` into batches,
``task`` runs one batch on the scenario's native vector env, ``analysis`` writes summaries and
figures.
"""

from agents.experiments.budget.settings import EXPERIMENTS

__all__ = ["EXPERIMENTS"]
