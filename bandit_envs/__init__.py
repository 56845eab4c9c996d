"""Gymnasium bandit environments for privacy-aware sequential decision making.

Importing this package registers every environment id (DESIGN.md, "Environments").
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from bandit_envs.graph import GraphBanditEnv, GraphBanditVectorEnv

__all__ = ["GraphBanditEnv", "GraphBanditVectorEnv", "ENV_IDS"]
__version__ = "0.1.0"

ENV_IDS: tuple[str, ...] = (
    "GraphBandit-v0",
    "PrivacyBudgetMovieLens-v0",
    "PrivacyBudgetGowalla-v0",
    "MovieLensRecommendation-v0",
    "GowallaRecommendation-v0",
)

if "GraphBandit-v0" not in registry:
    register(
        id="GraphBandit-v0",
        entry_point="bandit_envs.graph:GraphBanditEnv",
        vector_entry_point="bandit_envs.graph:GraphBanditVectorEnv",
        disable_env_checker=False,
    )

if "PrivacyBudgetMovieLens-v0" not in registry:
    register(
        id="PrivacyBudgetMovieLens-v0",
        entry_point="bandit_envs.budget.movielens:PrivacyBudgetMovieLensEnv",
        vector_entry_point="bandit_envs.budget.movielens:PrivacyBudgetMovieLensVectorEnv",
        disable_env_checker=False,
    )

if "PrivacyBudgetGowalla-v0" not in registry:
    register(
        id="PrivacyBudgetGowalla-v0",
        entry_point="bandit_envs.budget.gowalla:PrivacyBudgetGowallaEnv",
        vector_entry_point="bandit_envs.budget.gowalla:PrivacyBudgetGowallaVectorEnv",
        disable_env_checker=False,
    )

if "MovieLensRecommendation-v0" not in registry:
    register(
        id="MovieLensRecommendation-v0",
        entry_point="bandit_envs.recommendation.movielens:MovieLensRecommendationEnv",
        vector_entry_point="bandit_envs.recommendation.movielens:MovieLensRecommendationVectorEnv",
        disable_env_checker=False,
    )

if "GowallaRecommendation-v0" not in registry:
    register(
        id="GowallaRecommendation-v0",
        entry_point="bandit_envs.recommendation.gowalla:GowallaRecommendationEnv",
        vector_entry_point="bandit_envs.recommendation.gowalla:GowallaRecommendationVectorEnv",
        disable_env_checker=False,
    )
