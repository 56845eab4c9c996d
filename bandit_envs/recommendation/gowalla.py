"""``GowallaRecommendation-v0``: POI recommendation near a user's check-in as a linear contextual bandit."""

from __future__ import annotations

from typing import Any

from bandit_envs.recommendation._envs import RecommendationEnv, RecommendationVectorEnv
from bandit_envs.recommendation._gowalla import GowallaProblem, gowalla_problem


class GowallaRecommendationEnv(RecommendationEnv):
    r"""A random user at one of their check-ins each round; the arms are the POIs nearest to it.

    ## Description
    Our extension of the MovieLens experiment of Zheng et al. (NeurIPS 2020) to POI recommendation
    from SNAP Gowalla check-ins (Cho, Myers, Leskovec, KDD 2011), with the same interface as
    ``MovieLensRecommendation-v0``. Construction [P]:

    1. Users: those with at least ``min_user_checkins`` (20) check-ins; POIs: the locations they
       checked in at, each placed at the mean of its check-ins' coordinates.
    2. Visit matrix M (users × POIs): with c_up the check-ins of user u at POI p, ``reward="log_visits"``
       gives M_up = log(1 + c_up) / log(1 + max_q c_uq) (the user's favourite POI is 1, a single
       visit log 2 / log(1 + max)), ``"visited"`` gives M_up = 1 if c_up > 0; unvisited pairs are 0.
    3. Factors: the rank-``rank`` truncated SVD M ≈ U diag(s) Vᵀ (ARPACK, fixed start vector).
       Features of POI p for user u: x_up = U_u ⊙ V_p, as the MovieLens env's "theta" split
       (x_upᵀ s is M's best rank-``rank`` approximation); ‖x‖ ≤ 1 since ‖U_u‖ ≤ 1 and |V_pk| ≤ 1.
       With ``distance_km`` set, the closeness exp(−distance / ``distance_km``) of the POI to the
       current check-in is appended and the vector divided by √2 (still ‖x‖ ≤ 1; d = rank + 1).
    4. A round: a uniformly random user, then one of their check-ins uniformly (its POI is the
       user's current location; a context is a distinct (user, POI) pair, drawn with probability
       proportional to its check-in count over the user's). The arms are the ``n_arms`` POIs
       nearest to it by great-circle distance, the current POI itself excluded (a recommender
       suggests somewhere else).
    5. Reward: M_up of the recommended POI, from the user's real check-ins (so in [0, 1]), plus
       N(0, ``reward_noise``²) noise. The linear model is not exact here: x_upᵀ s is M's rank-d
       approximation, not M. Many rounds have no visited POI among the candidates: every arm then
       pays 0 and has regret 0.

    ## Action Space
    ``Discrete(n_arms)``: which of the candidate POIs (nearest first) to recommend.

    ## Observation Space
    ``Box(-1, 1, (n_arms, d), float64)``: row a is the feature vector of candidate a.

    ## Rewards
    The noiseless reward M_up of the recommended POI, in [0, 1], plus the Gaussian noise (not
    clipped).

    ## Info
    ``reset``: ``n_clipped`` (always 0: rewards are in [0, 1] by construction). ``step`` (about the
    round just played): ``regret`` (exact: best noiseless reward among the round's candidates minus
    that of the action), ``expected_reward``, ``optimal_action``, ``context``, ``user_id``,
    ``location_id`` (the current check-in's POI), ``candidate_ids`` (the arms' location ids).

    ## Fast path
    ``rewards`` (n_contexts, n_arms); ``round_contexts(T, seed)`` and ``round_noise(T, seed)`` are
    the contexts and noise of rounds 0..T−1 after ``reset(seed=seed)``; round t pays
    ``rewards[c[t], a] + noise[t]`` and is observed as ``features_of(c[t])``. The per-context feature
    tensor is too large to keep for real data (76,538 contexts × 20 × 20 on Gowalla NYC), so
    ``features_of`` builds it from ``problem.user_factors``, ``problem.poi_factors`` and
    ``problem.candidates`` (one multiply per round; pass a block of contexts at once).

    ## Episode End
    ``truncated=True`` after ``horizon`` steps (default 1,000,000, as the MovieLens env);
    ``terminated`` is always False.

    ## Rendering
    As ``MovieLensRecommendation-v0``'s (:class:`~bandit_envs.recommendation.MovieLensRecommendationEnv`):
    ``render_mode`` None (default), ``"ansi"``, ``"rgb_array"`` or ``"human"``.

    ## Arguments
    * ``data``: None (the seeded synthetic ``synthetic_gowalla(seed=0)``, works offline), a
      :class:`~bandit_envs.datasets.CheckIns` table, ``"gowalla"`` or ``"gowalla-nyc"`` (the SNAP file,
      downloaded and cached; all of it or its New York City rows) or the path of a check-in file in
      SNAP's format (gzipped or not; a file with the official name must have the official row
      count: load a deliberately modified copy with ``load_gowalla(..., verify="schema")`` and pass
      its table). Instances are cached per table and settings.
    * ``n_arms`` (20, as the MovieLens env), ``rank`` (20), ``min_user_checkins`` (20),
      ``reward`` ("log_visits" or "visited"), ``distance_km`` (None: no distance feature; else the
      closeness scale in km, > 0).
    * ``reward_noise`` (0.0): standard deviation of the Gaussian reward noise, ≥ 0.
    * ``horizon`` (1,000,000), ``instance_seed`` (0; accepted for the suite's common interface: the
      instance is a deterministic function of the data and the settings, so it changes nothing).
      ``reset(seed=...)`` seeds the rounds (users, check-ins) and the noise.

    All choices are ours [P].

    ## Version History
    * v0: initial version.
    """

    env_id = "GowallaRecommendation-v0"
    problem: GowallaProblem

    def __init__(
        self,
        data: Any = None,
        n_arms: int = 20,
        rank: int = 20,
        min_user_checkins: int = 20,
        reward: str = "log_visits",
        distance_km: float | None = None,
        reward_noise: float = 0.0,
        horizon: int = 1_000_000,
        instance_seed: int = 0,
        render_mode: str | None = None,
    ) -> None:
        self._init_env(
            lambda: gowalla_problem(data, n_arms, rank, min_user_checkins, reward, distance_km, instance_seed),
            reward_noise,
            horizon,
            render_mode,
        )


class GowallaRecommendationVectorEnv(RecommendationVectorEnv):
    """``num_envs`` independent copies of :class:`GowallaRecommendationEnv` stepped by one numpy call.

    Arguments, seeding, autoreset and info as
    :class:`~bandit_envs.recommendation.MovieLensRecommendationVectorEnv`'s (after an autoreset the
    id entries are −1). ``round_contexts(T, seed)`` is (num_envs, T): row i is the single env's with
    ``seed + i``.
    """

    env_id = "GowallaRecommendation-v0"
    problem: GowallaProblem

    def __init__(
        self,
        num_envs: int = 1,
        data: Any = None,
        n_arms: int = 20,
        rank: int = 20,
        min_user_checkins: int = 20,
        reward: str = "log_visits",
        distance_km: float | None = None,
        reward_noise: float = 0.0,
        horizon: int = 1_000_000,
        instance_seed: int = 0,
        render_mode: str | None = None,
    ) -> None:
        self._init_env(
            num_envs,
            lambda: gowalla_problem(data, n_arms, rank, min_user_checkins, reward, distance_km, instance_seed),
            reward_noise,
            horizon,
            render_mode,
        )
