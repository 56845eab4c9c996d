"""Linear contextual bandits for recommendation: ``MovieLensRecommendation-v0``, ``GowallaRecommendation-v0``.

Each round shows a random context (a user; a user at a check-in), each arm a feature vector
x ∈ R^d with ‖x‖ ≤ 1, and pays the arm's noiseless reward (from the data) plus optional Gaussian
noise: the setting of LDP-LinUCB (Zheng, Cai, Huang, Li, Wang, NeurIPS 2020).
Modules:

- :mod:`~bandit_envs.recommendation.movielens`, :mod:`~bandit_envs.recommendation.gowalla`: the envs
  and their native vector envs (docstrings give each construction);
- ``_movielens``, ``_gowalla``: each instance (built once per data and settings, cached);
- ``_completion``: the authors' SVD completion, the ALS low-rank completion, the product features;
- ``_problem``: the instance type and the pure functions (context and noise streams, one round);
- ``_envs``: the Gymnasium layer shared by both (on :mod:`bandit_envs.core`), and the fast path (``round_contexts``,
  ``round_noise``, ``rewards``, ``features_of``) that lets a compiled agent loop skip ``step``.
"""

from bandit_envs.recommendation._gowalla import GowallaProblem, gowalla_problem
from bandit_envs.recommendation._movielens import MovieLensProblem, movielens_problem
from bandit_envs.recommendation.gowalla import GowallaRecommendationEnv, GowallaRecommendationVectorEnv
from bandit_envs.recommendation.movielens import MovieLensRecommendationEnv, MovieLensRecommendationVectorEnv

__all__ = [
    "GowallaProblem",
    "GowallaRecommendationEnv",
    "GowallaRecommendationVectorEnv",
    "MovieLensProblem",
    "MovieLensRecommendationEnv",
    "MovieLensRecommendationVectorEnv",
    "gowalla_problem",
    "movielens_problem",
]
