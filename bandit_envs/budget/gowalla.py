"""``PrivacyBudgetGowalla-v0``: choosing the planar-Laplace budget of a location (budget paper §6.2, §7)."""

from __future__ import annotations

from bandit_envs.budget._envs import BudgetEnv, BudgetVectorEnv
from bandit_envs.budget._gowalla_world import GowallaBudgetConfig, gowalla_instance


class PrivacyBudgetGowallaEnv(BudgetEnv):
    r"""One Gowalla user choosing the geo-indistinguishability budget of each location sent to a POI recommender.

    ## Description
    The location scenario of Bao, Xu, Zhu, Wang, Sci Sin Inform 52 (2022), §4.1, §6.2, §7.1.
    Each round the datum is a uniformly random check-in of the user (§7.1.2; rounds are i.i.d.).
    The user reports the location perturbed by planar Laplace noise (eqs. 17–18; Andrés et al.,
    CCS 2013) with budget ε: the displacement d has density ∝ e^{−ε' d} with
    ε' = ε / ``epsilon_unit_km`` per km, i.e. radius ~ Gamma(2, 1/ε') (mean 2/ε' km) and a uniform
    angle. The server returns S, the POIs within ``recommend_radius_km`` (3 km) of the reported
    point; the useful ones, C, are those within ``valid_radius_km`` (1 km) of the true location.
    R = |S ∩ C| / |S| (eq. 20), and R = 0 when S is empty (nothing useful was recommended).
    L = φ / e^{d / loss_scale_km} (eq. 19 with d in km by default). The POIs are every distinct
    location of the data table (the server's database); pass a subset table to change it.

    Unit of ε (``epsilon_unit_km``, default 1: ε is per km). With the paper's grid
    ε ∈ {0.1, …, 1} the mean displacement 2/ε is 20 km down to 2 km, from "useless" against the
    1 km and 3 km radii to "mostly inside them": R and L then both vary over the grid, and on the
    NYC data the best budget for γ = 1 lies in 0.5–1 (inside the grid for 8 of the 11 users; for
    γ = 0.5 in 0.1–0.7). Per metre (``0.001``) every budget would report within metres of the
    truth (R at its maximum, ε irrelevant to R); per 10 km (``10``) 20–200 km away (R ≈ 0).

    Geometry: distances are planar in a local equirectangular frame (km) centred on the user's
    most visited location (relative error below 0.5% within 50 km at mid latitudes); city-sized
    data (every POI within 150 km of the POIs' median, e.g. the NYC subset) shares one frame
    centred on that median. Check-ins farther than ``home_radius_km`` from the user's most visited
    location are left out: the env models one city. POI counts are exact in the frame (a grid
    index, not an approximation).

    ## Action Space
    ``Discrete(K)``: the index of the budget ε = ``budgets[action]``; by default {1/K, …, 1},
    K = 10 (§7.1.3 (5)).

    ## Observation Space
    ``Box(0, 1, (1,), float64)``: the sensitivity φ_t of the location about to be sent: per user
    φ_n ~ U[0.3, 0.8] (from ``instance_seed`` and the user id), per datum N(φ_n, (1/20)²)
    clipped to [0, 1] (§7.1.3 (2)).

    ## Rewards
    The payoff μ = (γR − L)/(γ + 1) + 1 (eq. 21).

    ## Info
    ``reset``: ``user``, ``sensitivity_level``, ``budgets``, ``expected_rewards`` (per arm,
    averaged over φ_t), ``expected_recommendation_rewards``, ``expected_loss_factors`` (E[L]/φ).
    ``step``: ``epsilon``, ``privacy_loss`` (L), ``recommendation_reward`` (R), ``sensitivity``
    (φ_t of the location just sent), ``regret``, ``expected_reward``, ``optimal_action`` (given
    that φ_t), ``fixed_arm_regret`` (gap to the best fixed arm, averaged over φ),
    ``displacement_km`` (d).

    The expected payoff of a budget has no closed form; a Monte Carlo oracle estimates E[R] and
    E[L]/φ per arm once per user at construction (``oracle_samples`` i.i.d. rounds per arm from
    ``oracle_seed``, with this env's own transition and common random numbers across arms).
    ``regret`` is therefore an *estimate*: the best expected payoff given φ_t minus that of the
    action (exactly linear in φ_t, since L is φ_t times a factor independent of it).

    ## Episode End
    ``truncated=True`` after ``horizon`` steps (default 20000, the paper's T); ``terminated`` is
    always False.

    ## Rendering
    ``render_mode`` None (default: nothing is tracked), ``"ansi"`` (``render()`` returns a text
    frame: round, action, reward, regret so far, the step's ε, sensitivity φ, privacy loss L and
    recommendation payoff R, and per budget arm its pulls and empirical mean), ``"rgb_array"`` (a
    360 × 640 × 3 uint8 panel of the same per-arm quantities beside the regret curve) or
    ``"human"`` (the text frame printed at every reset and step). See :mod:`bandit_envs.rendering`.

    ## Arguments
    * ``data``: None (the seeded synthetic ``synthetic_gowalla(seed=0)``, one city, works
      offline), a :class:`~bandit_envs.datasets.CheckIns` table, ``"gowalla"`` (the SNAP file,
      downloaded and cached), ``"gowalla-nyc"`` (its New York City rows) or the path of a check-in
      file in SNAP's format (gzipped or not) or its folder (a file with the official name must
      have the official row count: load a deliberately modified copy with ``load_gowalla(...,
      verify="schema")`` and pass its table).
    * ``user``: a user id of the data, or None to draw an eligible user from ``instance_seed``.
    * ``n_budgets`` (10) [V] or ``budgets`` (explicit distinct budgets in (0, 5]).
    * ``gamma`` (1.0: the paper's best for UCB on Gowalla; 0.5 was best for SM-UCB) [V], γ >= 0.
    * ``epsilon_unit_km`` (1.0) [P], ``recommend_radius_km`` (3.0) [V], ``valid_radius_km``
      (1.0) [V], ``loss_scale_km`` (1.0) [P]: see Description. The radii are at most 20,037.5 km
      (half the Earth's circumference).
    * ``home_radius_km`` (50.0) [P], at most 20,037.5 km: see Description.
    * ``min_user_checkins`` (800) [P]: eligible users. The paper takes the 10 users with more than
      1800 check-ins of the whole SNAP file; 800 keeps the 11 most active users of the NYC subset
      (812–1794 check-ins) and the 5 heavy users of the synthetic default.
    * ``sensitivity_range`` ((0.3, 0.8)) [V], ``sensitivity_std`` (0.05) [V],
      ``sensitivity_level`` (None: drawn; a number in [0, 1] fixes φ_n).
    * ``horizon`` (20000) [V], ``instance_seed`` (0).
    * ``oracle_samples`` (20000 per arm, >= 1000) [P], ``oracle_seed`` (0).

    [V]: the paper's value (checked against its text); [P]: our choice.

    ``reset(seed=...)`` seeds the noise (check-in choice, displacement, sensitivities).

    ## Version History
    * v0: initial version.
    """

    env_id = "PrivacyBudgetGowalla-v0"

    config_type = GowallaBudgetConfig
    build_instance = staticmethod(gowalla_instance)


class PrivacyBudgetGowallaVectorEnv(BudgetVectorEnv):
    """``num_envs`` copies of :class:`PrivacyBudgetGowallaEnv` stepped by one numpy call.

    ``users`` (one user id per copy), the other arguments, seeding, autoreset and info as
    :class:`~bandit_envs.budget.movielens.PrivacyBudgetMovieLensVectorEnv`'s.
    """

    env_id = "PrivacyBudgetGowalla-v0"

    config_type = GowallaBudgetConfig
    build_instance = staticmethod(gowalla_instance)
