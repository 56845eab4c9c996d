"""``MovieLensRecommendation-v0``: the MovieLens linear contextual bandit of Zheng et al. (NeurIPS 2020)."""

from __future__ import annotations

from typing import Any

from bandit_envs.recommendation._envs import RecommendationEnv, RecommendationVectorEnv
from bandit_envs.recommendation._movielens import MovieLensProblem, movielens_problem


class MovieLensRecommendationEnv(RecommendationEnv):
    r"""A uniformly random user each round; the arms are movies, each with a (user, movie) feature vector.

    ## Description
    The MovieLens experiment of K. Zheng, T. Cai, W. Huang, Z. Li, L. Wang, "Locally Differentially
    Private (Contextual) Bandits Learning", NeurIPS 2020 (and its MindSpore blog
    write-up; the authors' ``src/dataset.py``, MIFA-Lab/LDPbandit2020 @2f0f231). Defaults
    reproduce the authors' construction on the data at hand:

    1. Movies: the ``n_movies`` = 20 first movies (smallest ids of the data; ML-100K ids 1..20) or,
       with ``movie_selection="popular"``, the most rated ones. Arms are these movies in id order.
    2. Users: those who rated at least one of them (the authors' ``nonzero_users``).
    3. Ratings r are normalized to 0.4 (r − 2.5) (1..5 stars → [−0.6, 1]; half stars from 0.5 →
       [−0.8, 1]); with ``completion="authors"`` an unrated entry is −1 (0 stars before mapping).
    4. Completion. ``"authors"``: the rank-``rank`` truncated SVD D ≈ U diag(s) Vᵀ of that matrix;
       the completed ratings are U diag(s) Vᵀ (the code's ``u_hat = U√S``, ``v_hat = √S Vᵀ``, whose
       product is the same matrix). At ``rank = n_movies`` (the default 20 = 20) this *is* the data:
       an unrated movie pays −1. ``"lowrank"`` (rank < n_movies): a rank-``rank`` fit of the
       observed entries only, mu + a_iᵀ b_j with rank − 1 factors by ALS-WR with ridge
       ``regularization`` λ weighted by rating counts, started from the SVD of the residuals
       (:func:`~bandit_envs.recommendation._completion.als_completion`); missing ratings are shrunk
       towards the observed mean mu, not set to the worst rating. Its SVD (rank ≤ ``rank``, exact)
       then gives U, s, V as above.
    5. Features (our reading of the code): x_ij = U_i ⊙ V_j, the elementwise product of user i's and
       movie j's *unit* singular-vector rows, and θ* = s (the code's ``ground_truth``), so
       x_ijᵀ θ* is the completed rating (``singular_values="theta"``). ``"features"`` splits s
       into both factors instead, x_ij = (U_i √s) ⊙ (V_j √s), θ* = 1: the features of an arm sum to
       its completed rating. Features are then divided by c = max(1, max ‖x_ij‖) and θ* multiplied
       by c, so ‖x‖₂ ≤ 1 as LDP-LinUCB assumes (Zheng et al., NeurIPS 2020) and xᵀθ* is unchanged; with
       "theta" ‖U_i ⊙ V_j‖ ≤ ‖U_i‖ max_k |V_jk| ≤ 1 already (c = 1). Nothing is clipped. A direction
       with s_k below 10⁻⁶ s_1 (the low-rank fit has some near 10⁻¹⁵) gets zero features: its singular
       vectors are not determined by the matrix and differed between CPUs
       (:func:`~bandit_envs.recommendation._completion.product_features`).
    6. Reward of arm j for user i: the completed rating, clipped to [−1, 1] (the number of clipped
       entries is ``n_clipped``: 0 for the default construction, where the reward is the data),
       plus N(0, ``reward_noise``²) noise (default 0, as the authors). The noiseless reward is
       exactly linear, xᵀθ*, except at the clipped entries (attribute ``theta``).

    The authors' script reads ML-100K's ``ua.base`` (the 90,570-rating training split):
    ``data="ml-100k"`` reads ``u.data`` (all 100,000 ratings); for ``ua.base`` pass
    ``load_movielens("ml-100k", path=".../ua.base")``.

    ## Action Space
    ``Discrete(n_movies)``: the movie to recommend.

    ## Observation Space
    ``Box(-1, 1, (n_movies, rank), float64)``: row j is x_ij for the round's user i.

    ## Rewards
    The round's user's noiseless reward of the movie, in [−1, 1], plus the Gaussian noise (noisy
    rewards are not clipped, which would bias them: private agents clip before privatising).

    ## Info
    ``reset``: ``item_ids`` (the arms' movie ids), ``n_clipped``. ``step`` (about the round just
    played): ``regret`` (best noiseless reward of the round's user minus that of the action: exact),
    ``expected_reward``, ``optimal_action``, ``context`` (the user's row in ``features``/``rewards``),
    ``user_id``.

    ## Fast path
    ``features`` (n_users, n_movies, rank), ``rewards`` (n_users, n_movies), ``theta``;
    ``round_users(T, seed)`` (= ``round_contexts``) are the users of rounds 0..T−1 after
    ``reset(seed=seed)`` and ``round_noise(T, seed)`` their noise: round t pays
    ``rewards[users[t], a] + noise[t]`` and is observed as ``features[users[t]]``, exactly as the env.
    ``features`` takes 8 · n_users · n_movies · rank bytes (3.2 kB per user at the defaults, 20 movies and rank 20).

    ## Episode End
    ``truncated=True`` after ``horizon`` steps (default 1,000,000, the authors' T = ``iter_num``);
    ``terminated`` is always False.

    ## Rendering
    ``render_mode`` None (default: nothing is tracked), ``"ansi"`` (``render()`` returns a text
    frame: round, the round's user, the chosen item, reward, regret so far, and per arm its pulls
    and empirical mean), ``"rgb_array"`` (a 360 × 640 × 3 uint8 panel of the same per-arm
    quantities beside the regret curve) or ``"human"`` (the text frame printed at every reset and
    step). See :mod:`bandit_envs.rendering`.

    ## Arguments
    * ``data``: None (the seeded synthetic ``synthetic_movielens(seed=0)``, works offline), a
      :class:`~bandit_envs.datasets.Ratings` table, a dataset name (``"ml-100k"`` (the authors'),
      ``"ml-latest-small"``, ``"ml-1m"``, ``"ml-10m"``: downloaded and cached) or the path of a
      ratings file or its folder (a file with the official name must pass the official checksum
      and row count: load a deliberately modified copy with ``load_movielens(...,
      verify="schema")`` and pass its table). Instances are cached per table and settings.
    * ``n_movies`` (20) [V-code], ``movie_selection`` ("first" [V-code] or "popular" [P]).
    * ``rank`` (20) [V-code]: ≤ n_movies with "authors", < n_movies with "lowrank".
    * ``completion`` ("authors" [V-code] or "lowrank" [P]), ``regularization`` (λ = 0.1 [P], lowrank
      only: of {0.01, 0.03, 0.1, 0.3, 1}, the lowest RMSE on a 10% hold-out of ml-latest-small's first
      20 and first 100 movies at ranks 5 and 10; 0.03 on its 200 most rated; from 0.3 on the
      factors vanish and every entry is mu), ``singular_values``
      ("theta" [V-code] or "features" [P]).
    * ``reward_noise`` (0.0): standard deviation of the Gaussian reward noise, ≥ 0.
    * ``horizon`` (1,000,000), ``instance_seed`` (0; accepted for the suite's common interface: the
      instance is a deterministic function of the data and the settings, so it changes nothing).
      ``reset(seed=...)`` seeds the users and the noise.

    [V-code]: the authors' code; [P]: our choice.

    ## Version History
    * v0: initial version.
    """

    env_id = "MovieLensRecommendation-v0"
    problem: MovieLensProblem

    def __init__(
        self,
        data: Any = None,
        n_movies: int = 20,
        movie_selection: str = "first",
        rank: int = 20,
        completion: str = "authors",
        singular_values: str = "theta",
        regularization: float = 0.1,
        reward_noise: float = 0.0,
        horizon: int = 1_000_000,
        instance_seed: int = 0,
        render_mode: str | None = None,
    ) -> None:
        self._init_env(
            lambda: movielens_problem(
                data, n_movies, movie_selection, rank, completion, singular_values, regularization, instance_seed
            ),
            reward_noise,
            horizon,
            render_mode,
        )
        self.features = self.problem.features
        self.theta = self.problem.theta
        self.n_clipped = self.problem.n_clipped

    round_users = RecommendationEnv.round_contexts


class MovieLensRecommendationVectorEnv(RecommendationVectorEnv):
    """``num_envs`` independent copies of :class:`MovieLensRecommendationEnv` stepped by one numpy call.

    Every argument but ``num_envs`` is the single env's. All copies share the instance; each has its
    own generator: ``reset(seed=s)`` seeds copy i with ``s + i`` (or ``seed[i]`` for a list), so copy
    i reproduces the single env reset with that seed, round for round. Autoreset follows Gymnasium's
    NEXT_STEP mode (the step after truncation resets the copy: reward and regret 0, ``context``,
    ``optimal_action`` and ``user_id`` −1). Info holds the single env's keys with a batch axis.
    ``round_users(T, seed)`` is (num_envs, T): row i is the single env's ``round_users(T, seed + i)``.
    """

    env_id = "MovieLensRecommendation-v0"
    problem: MovieLensProblem

    def __init__(
        self,
        num_envs: int = 1,
        data: Any = None,
        n_movies: int = 20,
        movie_selection: str = "first",
        rank: int = 20,
        completion: str = "authors",
        singular_values: str = "theta",
        regularization: float = 0.1,
        reward_noise: float = 0.0,
        horizon: int = 1_000_000,
        instance_seed: int = 0,
        render_mode: str | None = None,
    ) -> None:
        self._init_env(
            num_envs,
            lambda: movielens_problem(
                data, n_movies, movie_selection, rank, completion, singular_values, regularization, instance_seed
            ),
            reward_noise,
            horizon,
            render_mode,
        )
        self.features = self.problem.features
        self.theta = self.problem.theta
        self.n_clipped = self.problem.n_clipped

    round_users = RecommendationVectorEnv.round_contexts
