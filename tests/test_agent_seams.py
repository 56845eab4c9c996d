"""Seams of the less-used agents: SB3Agent's observations and call order, Exp3-IX with γ = 0, huge horizons,
and the one-sentence refusals of odd arguments (each refused before anything changes)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import lazy_module
from gymnasium import spaces

from agents import MOSS, SMUCB, EpsilonGreedy, Exp3, Exp3IX, Exp3SET, FixedArm, SB3Agent
from bandit_envs.wrappers import ArmStatistics

torch = lazy_module("torch")
sb3 = lazy_module("stable_baselines3")

EMPTY3 = np.zeros((3, 3), dtype=bool)
PATH3 = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=bool)


class StubModel:
    """What SB3Agent reads of a model: ``predict``, the spaces and (stochastic acting) ``policy``."""

    def __init__(self, observation_space: Any, n_arms: int = 3) -> None:
        self.action_space = spaces.Discrete(n_arms)
        self.observation_space = observation_space
        self.policy = object()  # no get_distribution, and the model no exploration_rate

    def predict(self, obs: Any, deterministic: bool = True) -> tuple[np.ndarray, None]:
        return np.zeros(len(obs), dtype=np.int64), None


@pytest.fixture(scope="module")
def models():
    """A PPO on the Box observations of ArmStatistics, and one on GraphBandit-v0's Discrete(1) observation."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    box = sb3.PPO("MlpPolicy", ArmStatistics(gym.make("GraphBandit-v0", horizon=20)), seed=0, device="cpu")
    discrete = sb3.PPO("MlpPolicy", gym.make("GraphBandit-v0", horizon=20), seed=0, device="cpu")
    yield box, discrete
    torch.set_num_threads(before)


# ------------------------------------------------------------------------------------------- SB3Agent


BOX_BAD = [
    (np.full(20, np.nan, dtype=np.float32), ValueError, r"\(a finite number in \[0, 1\] at entry \(0,\)\), got nan\.$"),
    (np.full(20, np.inf), ValueError, r"got inf\.$"),
    (np.r_[np.zeros(19), 1e300], ValueError, r"at entry \(19,\)\), got 1e\+300\.$"),
    (np.ones(20, dtype=bool), TypeError, r"\(real numbers\), got an array of shape \(20,\) and dtype bool\.$"),
    (np.zeros(20, dtype=complex), TypeError, r"dtype complex128\.$"),
    (np.ma.masked_array(np.zeros(20), mask=True), TypeError, "masked array"),
    ([0.5] * 19 + [True], TypeError, r"got a list holding True \(bool\)\.$"),
    ("abc", TypeError, r"got 'abc' \(str\)\.$"),
]
DISCRETE_BAD = [
    (5, ValueError, r"Discrete\(1\) \(in \[0, 0\]\), got 5\.$"),
    (-1, ValueError, r"got -1\.$"),
    (0.5, TypeError, r"\(integers\), got 0\.5 \(float\)\.$"),
    (True, TypeError, r"got True \(bool\)\.$"),
    (2**70, ValueError, r"\(in \[0, 0\]\), got 1180591620717411303424\.$"),
    ("0", TypeError, r"got '0' \(str\)\.$"),
]


@pytest.mark.integration
@pytest.mark.parametrize("deterministic", [True, False])
def test_sb3_agent_refuses_observations_outside_the_models_space(models, deterministic: bool) -> None:
    # Before: NaN, inf and 1e300 failed inside torch's Categorical, a Discrete index out of range inside
    # torch's one_hot, strings and huge ints in torch's tensor conversion; a float index (0.5) was truncated
    # to 0 and acted on, booleans, complex numbers and a masked array's hidden entries were read as numbers.
    box, discrete = models
    for model, cases in ((box, BOX_BAD), (discrete, DISCRETE_BAD)):
        agent = SB3Agent(model, deterministic=deterministic, seed=0)
        for obs, error, message in cases:
            with pytest.raises(error, match=r"^obs must (be an observation of|lie in) the model's observation space"):
                agent.act(obs)
            with pytest.raises(error, match=message):
                agent.act(obs)
    batch = np.zeros((3, 20), dtype=np.float32)
    batch[1, 4] = np.nan
    with pytest.raises(ValueError, match=r"at entry \(4,\)\), got nan for copy 1\.$"):
        SB3Agent(box, n_envs=3).act(batch)
    # What fits is acted on as before: a list of numbers, an int64 index, numpy integers.
    obs = np.random.default_rng(0).random(20).astype(np.float32)
    assert SB3Agent(box).act(obs.tolist()) == SB3Agent(box).act(obs) == int(box.predict(obs, deterministic=True)[0])
    assert SB3Agent(discrete).act(np.int64(0)) == SB3Agent(discrete).act(0)


def test_sb3_agent_refuses_models_it_cannot_feed_or_play() -> None:
    # Before: a Dict observation space was accepted and failed at the first act inside the model; a
    # Discrete(1) action space was refused as "n_arms must be an integer >= 2", an argument not given.
    with pytest.raises(TypeError, match=r"^model's observation space must be a Box, Discrete, .* got Dict\("):
        SB3Agent(StubModel(spaces.Dict({"x": spaces.Discrete(2)})))
    with pytest.raises(
        ValueError, match=r"^model's action space must be Discrete\(K\) with K >= 2 arms .*Discrete\(1\)"
    ):
        SB3Agent(StubModel(spaces.Discrete(1), n_arms=1))
    # Before: deterministic=False with a model that has neither an action distribution nor an ε was
    # accepted and refused only at act, after a learn_online agent had stored its transition.
    with pytest.raises(ValueError, match=r"^deterministic=False needs an actor-critic policy \(PPO, A2C\) or DQN"):
        SB3Agent(StubModel(spaces.Discrete(1)), deterministic=False)
    # Before: numpy's np.True_ was refused as "must be True or False, got np.True_ (bool)".
    agent = SB3Agent(StubModel(spaces.Discrete(1)), deterministic=np.True_)
    assert agent.deterministic is True and agent.act(0) == 0


def test_sb3_agent_check_env_compares_discrete_observation_spaces() -> None:
    # Before: only shapes were compared, and every Discrete space has shape (): a model trained on
    # Discrete(1) observations passed for an env observing Discrete(5), then failed inside torch.
    class Env:
        action_space = spaces.Discrete(3)
        observation_space = spaces.Discrete(5)

    agent = SB3Agent(StubModel(spaces.Discrete(1)))
    with pytest.raises(
        ValueError, match=r"^env must have the model's observation space Discrete\(1\), got Discrete\(5\)"
    ):
        agent.check_env(Env())
    Env.observation_space = spaces.Discrete(1)
    agent.check_env(Env())


@pytest.mark.integration
def test_sb3_agent_learn_online_refuses_out_of_order_calls_and_keeps_its_transition() -> None:
    torch.set_num_threads(1)
    model = sb3.DQN(
        "MlpPolicy", gym.make("GraphBandit-v0"), learning_starts=1000, buffer_size=100, seed=0, device="cpu"
    )
    agent = SB3Agent(model, learn_online=True)
    action = agent.act(0)
    agent.update(action, 0.5)
    # Before: a second update before the next act replaced the pending transition silently.
    with pytest.raises(RuntimeError, match=r"^update\(\) must follow act\(\), once per act\(\)"):
        agent.update((action + 1) % 10, 0.25)
    # Before: a bad observation was stored as the transition's next observation (the model counting a step),
    # then torch refused it; now it is refused before anything changes.
    with pytest.raises(ValueError, match="^obs must lie in the model's observation space"):
        agent.act(3)
    assert model.replay_buffer.size() == 0 and model.num_timesteps == 0
    agent.act(0)
    assert model.replay_buffer.size() == 1 and model.num_timesteps == 1
    assert int(model.replay_buffer.actions[0, 0, 0]) == action and model.replay_buffer.rewards[0, 0] == 0.5


# ------------------------------------------------------------------------------------------ Exp3 family


def test_exp3ix_with_gamma_zero_stays_finite_on_an_arm_it_gave_no_chance() -> None:
    # Before: with a fixed gamma of 0, an observed arm of probability 0 added 0/0 = NaN to its loss
    # estimate: p became NaN and act returned arm 0 for ever.
    agent = Exp3IX(3, EMPTY3, eta=1000.0, gamma=0.0, seed=0)
    lost = {"observed_mask": np.array([True, False, False]), "observed_rewards": np.zeros(3)}
    agent.update(0, 0.0, lost)
    assert agent.probabilities[0, 0] == 0.0
    agent.update(0, 1.0, {"observed_mask": np.array([True, False, False]), "observed_rewards": np.ones(3)})
    assert np.isfinite(agent.loss_estimates).all() and np.isfinite(agent.probabilities).all()
    assert set(agent.act() for _ in range(50)) == {1, 2}
    batched = Exp3IX(3, EMPTY3, eta=1000.0, gamma=0.0, n_envs=2, seed=0)
    batched.update(np.array([0, 0]), np.array([0.0, 0.0]), {k: np.stack([v, v]) for k, v in lost.items()})
    batched.update(np.array([0, 1]), np.array([1.0, 1.0]), {
        "observed_mask": np.array([[True, False, False], [False, True, False]]), "observed_rewards": np.ones((2, 3))
    })  # fmt: skip
    assert np.isfinite(batched.probabilities).all()


def test_exp3_default_eta_for_a_horizon_beyond_the_floats() -> None:
    # Before: Exp3(3, 10**400) and Exp3SET(3, graph, 10**400) raised OverflowError from Python's division.
    horizon = 10**400
    expected = math.exp(0.5 * (math.log(2 * math.log(3)) - math.log(3) - 400 * math.log(10)))
    assert Exp3(3, horizon).fixed_eta == pytest.approx(expected, rel=1e-12)
    assert Exp3SET(3, EMPTY3, horizon).fixed_eta == pytest.approx(expected, rel=1e-12)  # alpha = K = 3
    assert Exp3(3, 10**6).fixed_eta == math.sqrt(2.0 * math.log(3) / (3 * 10**6))  # the plain division as before


def test_moss_refuses_a_horizon_its_counts_cannot_reach() -> None:
    # Before: MOSS(3, 10**400) raised "OverflowError: integer division result too large for a float".
    message = r"^horizon must be an integer in \[1, 9,223,372,036,854,775,807\] \(MOSS counts pulls in int64\)"
    with pytest.raises(ValueError, match=message + r", got 100000000000000000\.\.\.0+\.$"):
        MOSS(3, 10**400)
    with pytest.raises(ValueError, match=r"^horizon must be an integer in \[1, "):
        MOSS(3, 0)
    assert MOSS(3, 2**63 - 1).act() == 0


def test_refusals_quote_a_huge_integer_by_its_ends() -> None:
    # Before: the whole 401-digit number was written into the sentence.
    for make in (lambda: Exp3SET(3, PATH3, 10, alpha=10**400), lambda: FixedArm(3, 10**400)):
        with pytest.raises(ValueError, match=r"got 100000000000000000\.\.\.0+\.$") as info:
            make()
        assert len(str(info.value)) < 150


def test_smucb_refuses_a_time_span_as_the_sensitivity() -> None:
    # Before: np.timedelta64(1), a numpy integer to Python's number ABCs, was taken as φ = 1.
    agent = SMUCB(3)
    with pytest.raises(
        TypeError, match=r"^obs must be the sensitivity φ_t .* got np\.timedelta64\(1\) \(timedelta64\)\.$"
    ):
        agent.act(np.timedelta64(1))
    assert agent.act(np.int64(1)) == 0


def test_decaying_epsilon_greedy_with_a_schedule_beyond_the_floats_warns_nothing() -> None:
    # Before: c K / d² overflowing (c = 1e300, d = 1e-300) printed numpy's "divide by zero" RuntimeWarning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent = EpsilonGreedy(3, schedule="decaying", c=1e300, d=1e-300, seed=0)
    assert agent.current_epsilon() == 1.0
