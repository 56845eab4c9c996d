"""Privacy-budget environments of the budget paper: ``PrivacyBudgetMovieLens-v0``, ``PrivacyBudgetGowalla-v0``.

An env instance is one user choosing, each round, the local-DP budget ε with which the datum
sent to a recommender is perturbed; the payoff trades recommendation accuracy against privacy
loss (Bao, Xu, Zhu, Wang, Sci Sin Inform 52 (2022), §4–7). Modules:

- :mod:`~bandit_envs.budget.movielens`, :mod:`~bandit_envs.budget.gowalla`: the envs and their
  native vector envs;
- ``_movielens_world``, ``_gowalla_world``: each scenario's shared data (cached per dataset) and
  its pure transition;
- ``_core``: payoff, budgets, sensitivities, the Monte Carlo oracle, :class:`BudgetConfig` (the
  keywords both scenarios share; :class:`MovieLensBudgetConfig` and :class:`GowallaBudgetConfig`
  add theirs, one validated object per env); ``_envs``: the Gymnasium layer shared by both
  scenarios, on top of :mod:`bandit_envs.core`; ``_geo``: exact POI counts in disks; ``_data``: the ``data``
  argument; ``_users``: :func:`eligible_user_ids`.
"""

from bandit_envs.budget._core import BudgetConfig, Oracle, payoff
from bandit_envs.budget._gowalla_world import GowallaBudgetConfig, GowallaScenario, gowalla_scenario
from bandit_envs.budget._movielens_world import MovieLensBudgetConfig, MovieLensScenario, movielens_scenario
from bandit_envs.budget._users import eligible_user_ids
from bandit_envs.budget.gowalla import PrivacyBudgetGowallaEnv, PrivacyBudgetGowallaVectorEnv
from bandit_envs.budget.movielens import PrivacyBudgetMovieLensEnv, PrivacyBudgetMovieLensVectorEnv

__all__ = [
    "BudgetConfig",
    "GowallaBudgetConfig",
    "MovieLensBudgetConfig",
    "GowallaScenario",
    "MovieLensScenario",
    "Oracle",
    "eligible_user_ids",
    "PrivacyBudgetGowallaEnv",
    "PrivacyBudgetGowallaVectorEnv",
    "PrivacyBudgetMovieLensEnv",
    "PrivacyBudgetMovieLensVectorEnv",
    "gowalla_scenario",
    "movielens_scenario",
    "payoff",
]
