"""Gymnasium bandit environments for privacy-aware sequential decision making.

Importing this package registers every environment id of ``_ENTRY_POINTS`` (listed in ``ENV_IDS``);
:mod:`bandit_envs.core` holds the plumbing the env families share.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from bandit_envs.graph import GraphBanditEnv, GraphBanditVectorEnv

__all__ = ["GraphBanditEnv", "GraphBanditVectorEnv", "ENV_IDS"]
__version__ = "0.1.0"

#: Each id with the module and class names of its single and native vector env.
_ENTRY_POINTS: dict[str, tuple[str, str]] = {
    "GraphBandit-v0": ("bandit_envs.graph", "GraphBandit"),
    "PrivacyBudgetMovieLens-v0": ("bandit_envs.budget.movielens", "PrivacyBudgetMovieLens"),
    "PrivacyBudgetGowalla-v0": ("bandit_envs.budget.gowalla", "PrivacyBudgetGowalla"),
    "MovieLensRecommendation-v0": ("bandit_envs.recommendation.movielens", "MovieLensRecommendation"),
    "GowallaRecommendation-v0": ("bandit_envs.recommendation.gowalla", "GowallaRecommendation"),
}

ENV_IDS: tuple[str, ...] = tuple(_ENTRY_POINTS)

for _id, (_module, _name) in _ENTRY_POINTS.items():
    if _id not in registry:
        register(
            id=_id,
            entry_point=f"{_module}:{_name}Env",
            vector_entry_point=f"{_module}:{_name}VectorEnv",
            disable_env_checker=False,
        )
