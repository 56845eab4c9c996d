"""Gymnasium bandit environments for privacy-aware sequential decision making.

Importing this package registers every environment id (DESIGN.md, "Environments").
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from bandit_envs.graph import GraphBanditEnv, GraphBanditVectorEnv

__all__ = ["GraphBanditEnv", "GraphBanditVectorEnv", "ENV_IDS"]
__version__ = "0.1.0"

ENV_IDS: tuple[str, ...] = ("GraphBandit-v0",)

if "GraphBandit-v0" not in registry:
    register(
        id="GraphBandit-v0",
        entry_point="bandit_envs.graph:GraphBanditEnv",
        vector_entry_point="bandit_envs.graph:GraphBanditVectorEnv",
        disable_env_checker=False,
    )
