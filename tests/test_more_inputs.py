"""Parameters whose derived quantities over- or underflow, refused at construction with one sentence.

Rewards that would make the sums of UCB, UCB-N, SM-UCB, MOSS or ε-greedy infinite, refused at the
update (section 9). Linear agents (the shift, width and log terms of their schedules, the noise scale of LDP-LinUCB),
their ``run`` on an empty block, the LDP wrapper's noise-aware width and reward range, the
recommendation envs' reward noise, the budget envs' horizon, the synthetic dataset generators and
the data-home paths. Each refusal names the argument as the caller wrote it; the largest accepted
values keep working.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import bandit_envs  # noqa: F401  (registers the envs)
from agents import LDPOLS, MOSS, SMUCB, UCB, UCBN, EpsilonGreedy, LDPLinUCB, LinUCB, ShuffleLinUCB
from agents.base import SUMMED_REWARD_BOUNDS
from agents.linear.protocol import LAST_ROUND, as_features
from agents.local_dp.wrapper import LDPWrapper
from bandit_envs.budget._core import MAX_HORIZON
from bandit_envs.datasets import get_data_home, load_gowalla, load_movielens
from bandit_envs.datasets.synthetic import synthetic_gowalla, synthetic_movielens
from bandit_envs.recommendation._envs import MAX_REWARD_NOISE

PRIVATE_LINEAR = [LDPLinUCB, LDPOLS, ShuffleLinUCB]
REC_IDS = ["MovieLensRecommendation-v0", "GowallaRecommendation-v0"]
BUDGET_IDS = ["PrivacyBudgetMovieLens-v0", "PrivacyBudgetGowalla-v0"]
#: The longest message a refusal may be (one sentence, never a dump; as tests/test_env_inputs.py).
MAX_MESSAGE = 400


def refusal(kind: type[Exception], call: Any, *names: str) -> str:
    """The message ``call()`` raises, checked: of type ``kind``, one short sentence naming each of ``names``."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow on the way to the refusal
        with pytest.raises(kind) as info:
            call()
    message = str(info.value)
    assert len(message) <= MAX_MESSAGE, message
    assert "\n" not in message, message
    for name in names:
        assert re.search(rf"\b{re.escape(name)}\b", message), (name, message)
    return message


def limit_of(message: str) -> float:
    """The bound a refusal states as "at most X"."""
    match = re.search(r"at most ([0-9.e+-]+)", message)
    assert match is not None, message
    return float(match.group(1))


def play(agent: Any, rounds: int = 30, seed: int = 0) -> Any:
    """Step ``agent`` on random 3-arm, 2-feature rounds; its θ must stay finite."""
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        obs = rng.uniform(-0.5, 0.5, (3, 2))
        agent.update(agent.act(obs), float(rng.uniform()), {})
    assert np.isfinite(agent.theta).all()
    return agent


# 1. Linear agents: shift, width and log terms must be finite at every round ---------------------


def test_ldp_linucb_refuses_an_alpha_whose_log_term_overflows() -> None:
    refusal(ValueError, lambda: LDPLinUCB(2, 1.0, alpha=1e-310), "alpha")
    play(LDPLinUCB(2, 1.0, alpha=1e-300))  # ln(2T/α) finite: as before


@pytest.mark.parametrize("horizon", [10**400, 10**308])
def test_ldp_linucb_refuses_a_horizon_whose_log_term_overflows(horizon: int) -> None:
    message = refusal(ValueError, lambda: LDPLinUCB(2, 1.0, horizon=horizon), "horizon")
    assert "0" * 40 not in message  # the int is summarized


@pytest.mark.parametrize("cls", PRIVATE_LINEAR)
def test_private_linear_agents_refuse_a_shift_scale_whose_shift_overflows(cls: type) -> None:
    extra = {} if cls is LDPLinUCB else {"batch_size": 1}  # refit every round
    message = refusal(ValueError, lambda: cls(2, 1.0, shift_scale=1e308, **extra), "shift_scale")
    largest = limit_of(message) * 0.999
    agent = play(cls(2, 1.0, shift_scale=largest, **extra))
    assert math.isfinite(agent.schedule(LAST_ROUND)[1])


def test_ldp_linucb_refuses_a_width_scale_whose_width_overflows() -> None:
    message = refusal(ValueError, lambda: LDPLinUCB(2, 1.0, width_scale=1e308), "width_scale")
    agent = play(LDPLinUCB(2, 1.0, width_scale=limit_of(message) * 0.999))
    assert math.isfinite(agent.schedule(LAST_ROUND)[2])


def test_stats_agents_shift_check_names_shift_scale_not_the_noise_scale() -> None:
    message = refusal(ValueError, lambda: LDPOLS(2, 1.0, shift_scale=1e300), "shift_scale", "reg")
    assert not message.startswith("epsilon and delta"), message


def test_linear_agents_defaults_still_construct_and_play() -> None:
    for agent in (LDPLinUCB(2, 1.0), LDPLinUCB(2, 8e5), LDPOLS(2, 1.0), ShuffleLinUCB(2, 1.0), LinUCB(2)):
        play(agent)


# 2. LDP-LinUCB names epsilon and delta, not its internal sigma -----------------------------------


@pytest.mark.parametrize("epsilon", [1e308, 1e101])
def test_ldp_linucb_huge_epsilon_is_named_epsilon(epsilon: float) -> None:
    message = refusal(ValueError, lambda: LDPLinUCB(2, epsilon), "epsilon")
    assert not message.startswith("sigma"), message


def test_ldp_linucb_noise_scale_out_of_range_names_epsilon_and_delta() -> None:
    # The lattice widens the sensitivity at a tiny epsilon until σ leaves [1e-100, 1e100].
    message = refusal(ValueError, lambda: LDPLinUCB(2, 1e-99), "epsilon", "delta")
    assert not message.startswith("sigma"), message
    LDPLinUCB(2, 1e-50)  # still in range: as before


@pytest.mark.parametrize("l_x", [1e60, 1e-120])
def test_ldp_linucb_sensitivity_out_of_range_names_l_x(l_x: float) -> None:
    message = refusal(ValueError, lambda: LDPLinUCB(2, 1e30, l_x=l_x), "l_x", "l_y")
    assert "l2_sensitivity" not in message


# 3. Linear run() with zero rounds -------------------------------------------------------------------


@pytest.mark.parametrize("cls", [LinUCB, *PRIVATE_LINEAR])
def test_linear_run_refuses_an_empty_block(cls: type) -> None:
    agent = cls(2) if cls is LinUCB else cls(2, 1.0)
    refusal(ValueError, lambda: agent.run(np.zeros((0, 3, 2)), np.zeros((0, 3))), "features")
    assert agent.t == 0
    result = agent.run(np.full((4, 3, 2), 0.3), np.full((4, 3), 0.5))  # a block of rounds: as before
    assert agent.t == 4
    assert np.isfinite(result.total_regret)


def test_linear_run_refuses_an_empty_block_of_copies() -> None:
    agent = LinUCB(2, n_envs=2)
    refusal(ValueError, lambda: agent.run(np.zeros((0, 2, 3, 2)), np.zeros((0, 2, 3))), "features")


def test_as_features_with_an_empty_lead_axis_is_an_empty_array() -> None:
    out = as_features("features", np.zeros((0, 3, 2)), (0,), 2, bound=1.0, reason="test", axes=("round",))
    assert out.shape == (0, 3, 2)


# 4. LDPWrapper: the noise-aware width and the reward range ---------------------------------------


def test_ldp_wrapper_refuses_an_epsilon_whose_noise_aware_width_overflows() -> None:
    refusal(ValueError, lambda: LDPWrapper(UCB(3), "laplace", 1e-100), "epsilon", "noise_aware")
    wrapper = LDPWrapper(UCB(3), "laplace", 1e-100, noise_aware=False)  # the plain UCB index: as before
    wrapper.update(wrapper.act(), 0.5)
    wrapper = LDPWrapper(UCB(3), "laplace", 1e-60)
    for _ in range(20):
        wrapper.update(wrapper.act(), 0.5)
    assert np.isfinite(np.square(wrapper.width()) * math.log(2.0**63)).all()


def test_ldp_wrapper_refuses_a_noise_aware_width_from_a_huge_reward_range() -> None:
    def call() -> Any:
        return LDPWrapper(UCB(3), "randomized_response", 1e-10, rr_output="debias", reward_range=(0, 1e150))

    refusal(ValueError, call, "epsilon", "reward_range")


@pytest.mark.parametrize("reward_range", [(-1e308, 1e308), (0.0, 1e150), (0.0, 1e-150)])
def test_ldp_wrapper_gaussian_names_reward_range(reward_range: tuple[float, float]) -> None:
    message = refusal(
        ValueError, lambda: LDPWrapper(UCB(3), "gaussian", 0.5, 1e-5, reward_range=reward_range), "reward_range"
    )
    assert "l2_sensitivity" not in message


def test_ldp_wrapper_laplace_infinite_range_names_reward_range() -> None:
    refusal(ValueError, lambda: LDPWrapper(UCB(3), "laplace", 1.0, reward_range=(-1e308, 1e308)), "reward_range")


def test_ldp_wrapper_refuses_laplace_reports_that_overflow() -> None:
    def call() -> Any:
        return LDPWrapper(UCB(3), "laplace", 1.0, reward_range=(0.0, 1.79e308), noise_aware=False)

    refusal(ValueError, call, "epsilon", "reward_range")
    # Reports up to 3.7e301 are finite but overflow UCB's sums within about five million rounds:
    # refused too (UCB takes rewards in [-1e289, 1e289]), naming both arguments.
    message = refusal(
        ValueError, lambda: LDPWrapper(UCB(3), "laplace", 1.0, reward_range=(0.0, 1e300)), "epsilon", "reward_range"
    )
    assert "1e+289" in message, message
    wrapper = LDPWrapper(UCB(3), "laplace", 1.0, reward_range=(0.0, 1e280), noise_aware=False)  # reports that fit
    for _ in range(20):
        wrapper.update(wrapper.act(), 1e279)
    assert np.isfinite(wrapper.agent.sums).all()


def test_ldp_wrapper_advice_follows_whether_narrower_noise_can_fit_the_agents_bounds() -> None:
    class TenUCB(UCB):  # a user's agent that takes rewards in [0, 10]
        reward_bounds = (0.0, 10.0)
        reward_bounds_reason = "a user's bound"

    # reward_range (1, 2) lies inside [0, 10] with room: a larger epsilon or a narrower range fits
    message = refusal(ValueError, lambda: LDPWrapper(TenUCB(3), "laplace", 1.0, reward_range=(1.0, 2.0)), "epsilon")
    assert "raise epsilon or narrow reward_range" in message, message
    LDPWrapper(TenUCB(3), "laplace", 15.0, reward_range=(1.4, 1.6))  # both: the reports fit
    # reward_range (0, 1) touches the bound 0: symmetric noise leaves it at every epsilon
    message = refusal(ValueError, lambda: LDPWrapper(TenUCB(3), "laplace", 1.0), "mechanism")
    assert "rr_output='bits'" in message, message


def test_ldp_wrapper_gaussian_sigma_out_of_range_names_epsilon_and_delta() -> None:
    message = refusal(ValueError, lambda: LDPWrapper(UCB(3), "gaussian", 1e-60, 1e-5), "epsilon", "delta")
    assert not message.startswith("sigma"), message


def test_ldp_wrapper_valid_settings_still_play() -> None:
    for wrapper in (
        LDPWrapper(UCB(3)),
        LDPWrapper(UCB(3), "gaussian", 0.5, 1e-5),
        LDPWrapper(UCB(3), "gaussian", 2.0, 1e-5, sigma_method="analytic", reward_range=(-1.0, 1.0)),
        LDPWrapper(UCB(3), "randomized_response", 1.0, rr_output="debias"),
    ):
        for _ in range(20):
            wrapper.update(wrapper.act(), 0.5)
        assert np.isfinite(wrapper.agent.means).all()


# 5. Recommendation envs: reward noise --------------------------------------------------------------


@pytest.mark.parametrize("env_id", REC_IDS)
def test_recommendation_envs_refuse_a_reward_noise_whose_rewards_overflow(env_id: str) -> None:
    refusal(ValueError, lambda: gym.make(env_id, reward_noise=1e308), "reward_noise")
    refusal(
        ValueError,
        lambda: gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", reward_noise=1e308),
        "reward_noise",
    )
    env = gym.make(env_id, reward_noise=MAX_REWARD_NOISE)
    env.reset(seed=0)
    rewards = [env.step(0)[1] for _ in range(50)]
    assert np.isfinite(rewards).all()
    assert np.isfinite(np.sum(np.square(rewards)))


# 6. Budget envs: horizon -----------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", BUDGET_IDS)
def test_budget_envs_refuse_a_horizon_beyond_int64(env_id: str) -> None:
    def vec(horizon: int) -> Any:
        return gym.make_vec(
            env_id, num_envs=2, vectorization_mode="vector_entry_point", horizon=horizon, oracle_samples=1000
        )

    message = refusal(ValueError, lambda: vec(2**63 - 1), "horizon")
    assert "2**63 - 2" in message
    refusal(ValueError, lambda: gym.make(env_id, horizon=10**30, oracle_samples=1000), "horizon")
    env = vec(MAX_HORIZON)  # the largest horizon: resets and steps as before
    env.reset(seed=0)
    _, rewards, _, truncated, _ = env.step(np.zeros(2, dtype=np.int64))
    assert np.isfinite(rewards).all() and not truncated.any()


# 7. Synthetic dataset generators ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_clusters": 10**30}, "n_clusters"),
        ({"n_clusters": 10**400}, "n_clusters"),
        ({"cluster_km": 1e308}, "cluster_km"),
        ({"city_km": 1e308}, "city_km"),
        ({"median_checkins": 10**30}, "median_checkins"),
        ({"median_checkins": 1801}, "median_checkins"),
        ({"n_users": 10**400}, "n_users"),
        ({"n_pois": 10**400}, "n_pois"),
    ],
)
def test_synthetic_gowalla_bounds(kwargs: dict[str, Any], name: str) -> None:
    refusal(ValueError, lambda: synthetic_gowalla(**kwargs), name)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"popularity_exponent": 1e308}, "popularity_exponent"),
        ({"popularity_exponent": 10.5}, "popularity_exponent"),
        ({"activity_sigma": 1e308}, "activity_sigma"),
        ({"noise": 1e308}, "noise"),
        ({"n_users": 10**400}, "n_users"),
        ({"n_items": 10**400}, "n_items"),
        ({"rank": 10**400}, "rank"),
    ],
)
def test_synthetic_movielens_bounds(kwargs: dict[str, Any], name: str) -> None:
    refusal(ValueError, lambda: synthetic_movielens(**kwargs), name)


def test_synthetic_generators_accept_their_bounds() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for ratings in (
            synthetic_movielens(popularity_exponent=10.0),
            synthetic_movielens(activity_sigma=10.0, noise=100.0),
        ):
            assert len(ratings.rating) > 0 and np.isfinite(ratings.rating).all()
        for checkins in (
            synthetic_gowalla(cluster_km=20_000.0, city_km=20_000.0),
            synthetic_gowalla(median_checkins=1800, n_clusters=1000),
        ):
            assert np.isfinite(checkins.lat).all() and np.isfinite(checkins.lon).all()


# 8. Paths -------------------------------------------------------------------------------------------------


def test_get_data_home_refuses_a_non_path() -> None:
    refusal(TypeError, lambda: get_data_home(3), "data_home")
    refusal(TypeError, lambda: get_data_home(b"/tmp"), "data_home")
    assert get_data_home("~/x") == Path("~/x").expanduser()
    assert get_data_home(Path("/tmp/y")) == Path("/tmp/y")


def test_loaders_refuse_a_non_path_data_home() -> None:
    refusal(TypeError, lambda: load_movielens(data_home=3, download=False), "data_home")
    refusal(TypeError, lambda: load_gowalla(data_home=3, download=False), "data_home")


def test_loaders_refuse_a_non_path_path() -> None:
    refusal(TypeError, lambda: load_movielens(path=3, download=False), "path")
    refusal(TypeError, lambda: load_gowalla(path=3, download=False), "path")


# 9. Rewards whose sums overflow -------------------------------------------------------------------------

#: The agents that sum each arm's rewards, with no reward range of their own, built for K = 3 arms.
SUMMING_AGENTS = {
    "UCB": lambda n: UCB(3, n_envs=n),
    "UCBN": lambda n: UCBN(3, n_envs=n),
    "SMUCB": lambda n: SMUCB(3, n_envs=n),
    "MOSS": lambda n: MOSS(3, 100, n_envs=n),
    "EpsilonGreedy": lambda n: EpsilonGreedy(3, n_envs=n, seed=0),
}


def summing_round(agent: Any, reward: Any) -> tuple[Any, Any]:
    """One round's (action, info) for a summing agent: SM-UCB reads a sensitivity, UCB-N the side observations."""
    obs = None if not isinstance(agent, SMUCB) else (0.5 if agent.n_envs is None else np.full(agent.n_envs, 0.5))
    action = agent.act(obs)
    if not isinstance(agent, UCBN):
        return action, None
    arms = np.atleast_1d(action)  # the pulled arm alone observed, with the round's reward
    mask = np.zeros((arms.size, 3), dtype=bool)
    mask[np.arange(arms.size), arms] = True
    observed = np.where(mask, np.reshape(reward, (-1, 1)), 0.0)
    if agent.n_envs is None:
        mask, observed = mask[0], observed[0]
    return action, {"observed_mask": mask, "observed_rewards": observed}


@pytest.mark.parametrize("name", sorted(SUMMING_AGENTS))
@pytest.mark.parametrize("copies", [None, 2])
@pytest.mark.parametrize("big", [1e308, -1e308, 1.0000001e289, -2e300])
def test_summing_agents_refuse_a_reward_whose_sums_would_overflow(name: str, copies: int | None, big: float) -> None:
    # Two rewards of 1e308 made UCB's sum of the arm, and so its mean and index, infinite (the arm
    # then won every later round). The bound is 1e289 (2**63 rewards sum below the largest float);
    # the refusal names the reward and changes nothing.
    agent = SUMMING_AGENTS[name](copies)
    assert agent.reward_bounds == SUMMED_REWARD_BOUNDS
    reward: Any = big if copies is None else np.array([0.5, big])
    action, info = summing_round(agent, reward)
    before = agent.sums.copy()
    message = refusal(ValueError, lambda: agent.update(action, reward, info), "reward")
    assert "[-1e+289, 1e+289]" in message and "sums" in message, message
    np.testing.assert_array_equal(agent.sums, before)
    assert agent.t == 0


@pytest.mark.parametrize("name", sorted(SUMMING_AGENTS))
@pytest.mark.parametrize("copies", [None, 2])
def test_summing_agents_take_rewards_at_the_bound_and_keep_finite_means(name: str, copies: int | None) -> None:
    agent = SUMMING_AGENTS[name](copies)
    for t in range(60):
        reward: Any = 1e289 if t % 2 else -1e289
        if copies is not None:
            reward = np.array([reward, -reward])
        action, info = summing_round(agent, reward)
        agent.update(action, reward, info)
    assert agent.t == 60
    assert np.isfinite(agent.sums).all() and np.isfinite(agent.means).all()


def test_ucbn_refuses_an_observed_reward_whose_sums_would_overflow() -> None:
    agent = UCBN(3)
    arm = agent.act()
    info = {"observed_mask": np.ones(3, dtype=bool), "observed_rewards": np.array([0.5, 1e300, 0.2])}
    message = refusal(ValueError, lambda: agent.update(arm, 0.5, info), "observed_rewards")
    assert "1e+300" in message, message
    assert agent.t == 0 and (agent.counts == 0).all()
