"""``PrivacyBudgetMovieLens-v0``: choosing the randomized-response budget of a watch bit (budget paper §6.1, §7)."""

from __future__ import annotations

from bandit_envs.budget._envs import BudgetEnv, BudgetVectorEnv
from bandit_envs.budget._movielens_world import MovieLensBudgetConfig, movielens_instance


class PrivacyBudgetMovieLensEnv(BudgetEnv):
    r"""One MovieLens user choosing the LDP budget of each watch bit sent to a recommender.

    ## Description
    The movie scenario of Bao, Xu, Zhu, Wang, "Optimized setting of privacy budget in a
    recommendation system with local differential privacy", Sci Sin Inform 52 (2022), §4.1, §6.1,
    §7.1. Our reading of the loop (§6.1 and §7.1.2): the server knows an item-item cosine
    similarity computed from the *other* users' ratings (§7.1.1; this user's row is left out). The
    first datum is the watch bit y of a uniformly random movie S. Each round the user sends y
    through randomized response with budget ε (kept with probability e^ε/(1+e^ε), as
    :func:`bandit_envs.privacy.randomized_response`); if the reported bit is 1 the server
    recommends the movie most similar to S (eq. 13; itself excluded, ties to the lowest index),
    else a uniformly random movie. R = 1 if the user watched (rated) the recommended movie
    (eq. 14). The next round's datum is the watch bit of that recommended movie (§7.1.2: "in the
    next interaction the user perturbs y^1"), so the rounds form a Markov chain
    (``next_item="recommended"``); ``next_item="random"`` draws a fresh random movie each round
    instead (i.i.d. rounds). "Watched" means rated in the filtered data.

    Privacy loss. Eq. (12), L = y·φ, does not depend on ε, so with it the largest budget always
    wins. The default ``loss="revealed"`` follows the general model of eqs. (3) and (11) instead:
    L = φ·f_loss(d_loss(y, p)) with d_loss the Hamming distance between the true and the reported
    bit and f_loss(d) = 1 − d (decreasing, f(0) = 1 as the location scenario's e^{−d}), i.e.
    L = φ if the reported bit equals the true bit, else 0. Alternatives: ``"expected"``
    (L = φ·e^ε/(1+e^ε), the expectation of "revealed" over the coin: same means, less noise),
    ``"revealed_watched"`` (L = φ·y·[p = y]: eq. 12 charged only when the watched bit is
    revealed) and ``"watched"`` (eq. 12 literally, L = φ·y).

    ## Action Space
    ``Discrete(K)``: the index of the budget ε = ``budgets[action]``; by default the paper's
    {1/K, 2/K, …, 1} with K = 10 (§4.2, §7.1.3 (5)).

    ## Observation Space
    ``Box(0, 1, (1,), float64)``: the sensitivity φ_t of the datum about to be sent. Per user
    φ_n ~ U[0.3, 0.8] (drawn from ``instance_seed`` and the user id), per datum
    φ_t ~ N(φ_n, (1/20)²) clipped to [0, 1] (§7.1.3 (2), eq. 22).

    ## Rewards
    The payoff μ = (γR − L)/(γ + 1) + 1 (eq. 15), in [1 − 1/(γ+1), 1 + γ/(γ+1)].

    ## Info
    ``reset``: ``user``, ``sensitivity_level`` (φ_n), ``budgets``, ``expected_rewards`` (per arm,
    averaged over φ_t), ``expected_recommendation_rewards`` (E[R] per arm),
    ``expected_loss_factors`` (E[L]/φ per arm).
    ``step``: ``epsilon``, ``privacy_loss`` (L), ``recommendation_reward`` (R), ``sensitivity``
    (φ_t of the datum just sent), ``regret``, ``expected_reward`` and ``optimal_action`` (given
    that φ_t), ``fixed_arm_regret`` (the action's gap to the best fixed arm, averaged over φ),
    ``true_bit``, ``reported_bit``, ``recommended_item`` (a movie id of the data).

    The expected payoff of a budget has no closed form: it is estimated by a Monte Carlo oracle
    run once per user at construction (``oracle_samples`` steps per arm from ``oracle_seed``,
    through this env's own transition, after a burn-in that makes the movie chain stationary
    within 1e-6; all arms share the random numbers). ``regret`` is therefore an *estimate*: the
    oracle's best expected payoff given φ_t minus that of the action (L is φ_t times a factor
    independent of φ_t, so the payoff given φ_t is exactly linear in φ_t). In the Markov-chain
    loop it compares stationary means (the long-run payoff of always playing each budget).

    ## Episode End
    ``truncated=True`` after ``horizon`` steps (default 20000, the paper's T); ``terminated``
    is always False.

    ## Rendering
    ``render_mode`` None (default: nothing is tracked), ``"ansi"`` (``render()`` returns a text
    frame: round, action, reward, regret so far, the step's ε, sensitivity φ, privacy loss L and
    recommendation payoff R, and per budget arm its pulls and empirical mean), ``"rgb_array"`` (a
    360 × 640 × 3 uint8 panel of the same per-arm quantities beside the regret curve) or
    ``"human"`` (the text frame printed at every reset and step). See :mod:`bandit_envs.rendering`.

    ## Arguments
    * ``data``: None (the seeded synthetic ``synthetic_movielens(seed=0)``, works offline), a
      :class:`~bandit_envs.datasets.Ratings` table, a dataset name (``"ml-latest-small"``,
      ``"ml-100k"``, ``"ml-1m"``, ``"ml-10m"``: downloaded and cached) or the path of a ratings
      file or its folder (a file with the official name must pass the official checksum and row
      count: load a deliberately modified copy with ``load_movielens(..., verify="schema")`` and
      pass its table). Scenarios are cached per table and thresholds, so further envs over the
      same data cost only their user's neighbour table and oracle.
    * ``user``: a user id of the data, or None to draw one of the eligible users from
      ``instance_seed``.
    * ``n_budgets`` (10) [V] or ``budgets`` (explicit distinct budgets in (0, 5]; overrides
      ``n_budgets``).
    * ``gamma`` (1.0, the paper's best for MovieLens, §7.1.3 (4)) [V]: γ >= 0.
    * ``loss`` ("revealed") [P], ``next_item`` ("recommended": our reading of §7.1.2) [V]: see
      Description.
    * ``similarity`` ("ratings": cosine of rating columns, §7.1.1 [V]; "binary": of watch
      indicators [P]).
    * ``min_movie_raters`` (10) [P], ``min_user_ratings`` (20) [V]: the data's core. The paper keeps
      movies with >= 50 raters of MovieLens 10M (2,033 of 10,681 movies); on ml-latest-small 10
      raters keep 2,264 of 9,724 movies, the nearest catalogue size.
    * ``min_watched_fraction`` (0.25), ``max_watched_fraction`` (0.6) [P]: eligible users watched
      this share of the M movies. The paper's 500–1200 of 2,033 movies, scale-free: on
      ml-latest-small 566–1358 ratings, 21 users; on the synthetic default, 11 users.
    * ``sensitivity_range`` ((0.3, 0.8)) [V], ``sensitivity_std`` (0.05) [V],
      ``sensitivity_level`` (None: drawn; a number in [0, 1] fixes φ_n).
    * ``horizon`` (20000) [V], ``instance_seed`` (0: the user if not given, and φ_n).
    * ``oracle_samples`` (20000 per arm, >= 1000) [P], ``oracle_seed`` (0).

    [V]: the paper's value (checked against its text); [P]: our choice.

    ``reset(seed=...)`` seeds the noise (data choice, coins, sensitivities).

    ## Version History
    * v0: initial version.
    """

    env_id = "PrivacyBudgetMovieLens-v0"

    config_type = MovieLensBudgetConfig
    build_instance = staticmethod(movielens_instance)


class PrivacyBudgetMovieLensVectorEnv(BudgetVectorEnv):
    """``num_envs`` copies of :class:`PrivacyBudgetMovieLensEnv` stepped by one numpy call.

    ``users`` lists one user id per copy (repeat ids for several copies of a user); without it
    every copy is ``user`` (or the user drawn from ``instance_seed``). Every other argument is that
    of the single env. ``reset(seed=s)`` seeds copy i with ``s + i`` (or ``seed[i]``), so copy i
    reproduces the single env of its user reset with that seed, step for step. Autoreset follows
    Gymnasium's NEXT_STEP mode (the step after truncation resets the copy: payoff 0). Step info
    holds the single env's keys with a batch axis; reset info too (``user`` per copy).
    """

    env_id = "PrivacyBudgetMovieLens-v0"

    config_type = MovieLensBudgetConfig
    build_instance = staticmethod(movielens_instance)
