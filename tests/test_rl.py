"""RL agents (docs/rl.md): every env trains with SB3's PPO, A2C and DQN; SB3Agent; the ArmStatistics and
ShuffleArms wrappers; the SB3VecEnv adapter for native vector envs; the ``rl/graph`` experiment."""

from __future__ import annotations

import csv
from dataclasses import replace
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import env_profile, lazy_module, registered_env_ids
from gymnasium.utils.env_checker import check_env as gym_check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from rollouts import play_env

from agents import UCBN, Random, SB3Agent
from agents.experiments import get_experiment
from agents.experiments.cli import run_experiment
from agents.experiments.core.partial import manifest_for
from agents.experiments.rl.task import rl_task
from bandit_envs import wrappers
from bandit_envs.wrappers import ArmStatistics, ShuffleArms, split_vector_info

pytestmark = pytest.mark.integration  # trains stable-baselines3 models

# Imported when a test first uses them (seconds of imports otherwise, at collection).
torch = lazy_module("torch")
sb3 = lazy_module("stable_baselines3")
sb3_checker = lazy_module("stable_baselines3.common.env_checker")
vec_env = lazy_module("stable_baselines3.common.vec_env")


@pytest.fixture(autouse=True)
def one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# Rounds of the easy instances (tests/conftest.py) are i.i.d. whatever the action, so the return that matters is
# the next reward: the RL discount γ is 0 (contextual-bandit learning). Budgets: 2,000 steps.
ALGORITHMS: dict[str, Any] = {
    "PPO": lambda env: sb3.PPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=4, learning_rate=3e-3, gamma=0.0,
                           seed=0, device="cpu"),
    "A2C": lambda env: sb3.A2C("MlpPolicy", env, n_steps=8, learning_rate=1e-3, gamma=0.0, seed=0, device="cpu"),
    "DQN": lambda env: sb3.DQN("MlpPolicy", env, learning_starts=200, buffer_size=5000, train_freq=4,
                           target_update_interval=100, exploration_fraction=0.3, learning_rate=1e-3, batch_size=32,
                           gamma=0.0, seed=0, device="cpu"),
}  # fmt: skip
TRAIN_STEPS = 2000


def expected_rewards(agent, env_id: str, kwargs: dict[str, Any], n_envs: int = 8, steps: int = 250):
    """(mean expected reward of the agent's actions, mean expected reward of the best action) on a vector env."""
    env = gym.make_vec(env_id, num_envs=n_envs, horizon=steps, **kwargs)
    obs, _ = env.reset(seed=123)
    got, best = [], []
    for _ in range(steps):
        action = agent.act(obs)
        obs, reward, _, _, info = env.step(action)
        agent.update(action, reward, info)
        got.append(info["expected_reward"])
        best.append(info["expected_reward"] + info["regret"])
    return float(np.mean(got)), float(np.mean(best))


def assert_beats_random(model, env_id: str, kwargs: dict[str, Any]) -> None:
    """The greedy policy closes at least half of the gap between Random and the per-round optimum."""
    policy, _ = expected_rewards(SB3Agent(model, n_envs=8), env_id, kwargs)
    n_arms = int(model.action_space.n)
    random, best = expected_rewards(Random(n_arms, n_envs=8, seed=0), env_id, kwargs)
    assert best > random + 0.05
    assert policy - random >= 0.5 * (best - random), (policy, random, best)


#: The (env, algorithm) pairs trained by default: every algorithm on GraphBandit-v0 (the cheapest env) and
#: every env with one algorithm (its cheapest), so each env and each algorithm's code path is trained; the
#: other pairs run with ``-m slow``.
DEFAULT_PAIRS = {
    ("GraphBandit-v0", "PPO"), ("GraphBandit-v0", "A2C"), ("GraphBandit-v0", "DQN"),
    ("PrivacyBudgetMovieLens-v0", "PPO"), ("PrivacyBudgetGowalla-v0", "DQN"),
    ("MovieLensRecommendation-v0", "A2C"), ("GowallaRecommendation-v0", "DQN"),
}  # fmt: skip


def _default_pair(env_id: str, algorithm: str) -> bool:
    """In :data:`DEFAULT_PAIRS`, or PPO on an env that has no pair there (a newly registered id)."""
    listed = {e for e, _ in DEFAULT_PAIRS}
    return (env_id, algorithm) in DEFAULT_PAIRS or (env_id not in listed and algorithm == "PPO")


@pytest.mark.parametrize(
    ("env_id", "algorithm"),
    [
        pytest.param(e, a, id=f"{e}-{a}", marks=[] if _default_pair(e, a) else [pytest.mark.slow])
        for e in registered_env_ids()
        for a in sorted(ALGORITHMS)
    ],
)
def test_every_env_trains_with_sb3_and_beats_random(env_id: str, algorithm: str) -> None:
    kwargs = env_profile(env_id).easy()
    model = ALGORITHMS[algorithm](gym.make(env_id, horizon=100, **kwargs))
    model.learn(TRAIN_STEPS)
    assert_beats_random(model, env_id, kwargs)


# ----------------------------------------------------------------------------- SB3VecEnv


def assert_same_step(a, b) -> None:
    for x, y in zip(a[:3], b[:3], strict=True):
        np.testing.assert_array_equal(x, y)
    assert len(a[3]) == len(b[3])
    for ia, ib in zip(a[3], b[3], strict=True):
        assert set(ia) == set(ib)
        for key in ia:
            np.testing.assert_array_equal(ia[key], ib[key], err_msg=key)


@pytest.mark.parametrize("env_id", registered_env_ids())
def test_sb3_vec_env_equals_sb3s_dummy_vec_env_across_autoresets(env_id: str) -> None:
    kwargs = {"horizon": 7, **env_profile(env_id).vector}
    ours = wrappers.SB3VecEnv(gym.make_vec(env_id, num_envs=3, **kwargs))
    reference = vec_env.DummyVecEnv([lambda: gym.make(env_id, **kwargs) for _ in range(3)])
    assert ours.seed(5) == reference.seed(5)
    np.testing.assert_array_equal(ours.reset(), reference.reset())
    assert len(ours.reset_infos) == 3
    for key, value in reference.reset_infos[1].items():
        np.testing.assert_array_equal(ours.reset_infos[1][key], value)
    rng = np.random.default_rng(0)
    dones = 0
    for _ in range(20):
        actions = rng.integers(ours.action_space.n, size=3)
        step = ours.step(actions)
        assert_same_step(step, reference.step(actions))
        dones += int(step[2].all())
    assert dones == 2


@pytest.mark.parametrize("env_id", ["GraphBandit-v0", "PrivacyBudgetGowalla-v0", "MovieLensRecommendation-v0"])
def test_sb3_vec_env_steps_equal_the_native_vector_env(env_id: str) -> None:
    horizon = 4
    kwargs = {"horizon": horizon, **env_profile(env_id).vector}
    native = gym.make_vec(env_id, num_envs=2, **kwargs)
    ours = wrappers.SB3VecEnv(gym.make_vec(env_id, num_envs=2, **kwargs))
    ours.seed(9)
    np.testing.assert_array_equal(ours.reset(), native.reset(seed=9)[0])
    rng = np.random.default_rng(1)
    for t in range(3 * horizon):
        actions = rng.integers(ours.action_space.n, size=2)
        obs, rewards, dones, infos = ours.step(actions)
        n_obs, n_rewards, _, n_truncated, n_info = native.step(actions)
        np.testing.assert_array_equal(rewards, n_rewards.astype(np.float32))
        np.testing.assert_array_equal(dones, n_truncated)
        assert [i["TimeLimit.truncated"] for i in infos] == n_truncated.tolist()
        np.testing.assert_array_equal(infos[1]["regret"], n_info["regret"][1])
        if (t + 1) % horizon == 0:
            assert dones.all()
            np.testing.assert_array_equal(np.stack([i["terminal_observation"] for i in infos]), n_obs)
            n_obs = native.step(actions)[0]  # the native env's reset step, made by the adapter in the same call
        else:
            assert not dones.any() and "terminal_observation" not in infos[0]
        np.testing.assert_array_equal(obs, n_obs)


def test_sb3_vec_env_follows_the_vec_env_api() -> None:
    vec = wrappers.SB3VecEnv(gym.make_vec("PrivacyBudgetMovieLens-v0", num_envs=3, horizon=2, oracle_samples=1000))
    assert isinstance(vec, vec_env.VecEnv) and vec.num_envs == 3
    assert vec.observation_space == vec.vector_env.single_observation_space
    assert vec.action_space == vec.vector_env.single_action_space
    vec.seed(0)
    obs = vec.reset()
    assert obs.shape == (3, 1) and all(vec.observation_space.contains(o) for o in obs)
    for _ in range(2):
        obs, rewards, dones, infos = vec.step(np.array([0, 1, 2]))
        assert rewards.dtype == np.float32 and rewards.shape == (3,)
        assert dones.dtype == bool and dones.shape == (3,)
        assert isinstance(infos, list) and len(infos) == 3 and all(isinstance(i, dict) for i in infos)
        assert {"epsilon", "regret", "TimeLimit.truncated"} <= set(infos[0])
    assert dones.all() and all(i["TimeLimit.truncated"] for i in infos)
    assert all(vec.observation_space.contains(i["terminal_observation"]) for i in infos)
    assert vec.get_attr("horizon") == [2, 2, 2] and vec.get_attr("horizon", indices=1) == [2]
    assert vec.has_attr("budgets") and not vec.has_attr("nonexistent")
    vec.set_attr("note", "set through the adapter")
    assert vec.get_attr("note", indices=[2]) == ["set through the adapter"]
    assert vec.env_is_wrapped(gym.Wrapper) == [False, False, False]
    assert len(vec.env_method("reset", seed=0, indices=[0, 2])) == 2
    for bad, error in [(3, ValueError), ([0, -1], ValueError), ([True], TypeError), ([1.0], TypeError)]:
        with pytest.raises(error, match="indices must be copy indices"):
            vec.get_attr("horizon", indices=bad)
    with pytest.raises(TypeError, match="indices"):
        vec.env_is_wrapped(gym.Wrapper, indices=[np.timedelta64(1, "s")])
    # SB3's own VecEnv wrappers run on top of it.
    wrapped = vec_env.VecNormalize(vec_env.VecMonitor(vec))
    wrapped.reset()
    wrapped.step(np.array([0, 0, 0]))
    _, _, dones, infos = wrapped.step(np.array([0, 0, 0]))
    assert dones.all() and infos[0]["episode"]["l"] == 2
    vec.close()


def test_sb3_vec_env_with_same_step_autoreset_and_copies_of_different_lengths() -> None:
    horizons = (2, 3)
    make = [lambda h=h: gym.make("GraphBandit-v0", horizon=h) for h in horizons]
    ours = wrappers.SB3VecEnv(SyncVectorEnv(make, autoreset_mode=AutoresetMode.SAME_STEP))
    reference = vec_env.DummyVecEnv(make)
    ours.seed(3)
    reference.seed(3)
    np.testing.assert_array_equal(ours.reset(), reference.reset())
    for t in range(7):
        a, b = ours.step(np.array([t % 10, 1])), reference.step(np.array([t % 10, 1]))
        np.testing.assert_array_equal(a[1], b[1])
        np.testing.assert_array_equal(a[2], b[2])
        assert_same_step(a, b)
        for i in range(2):
            np.testing.assert_array_equal(
                ours.reset_infos[i]["feedback_graph"], reference.reset_infos[i]["feedback_graph"]
            )


def test_sb3_vec_env_refuses_what_it_cannot_adapt() -> None:
    with pytest.raises(TypeError, match="vector_env must be a gymnasium.vector.VectorEnv"):
        wrappers.SB3VecEnv(gym.make("GraphBandit-v0"))
    make = [lambda h=h: gym.make("GraphBandit-v0", horizon=h) for h in (2, 3)]
    with pytest.raises(ValueError, match="NEXT_STEP or SAME_STEP"):
        wrappers.SB3VecEnv(SyncVectorEnv(make, autoreset_mode=AutoresetMode.DISABLED))
    uneven = wrappers.SB3VecEnv(SyncVectorEnv(make, autoreset_mode=AutoresetMode.NEXT_STEP))
    with pytest.raises(RuntimeError, match="call step_async"):
        uneven.step_wait()
    uneven.reset()
    uneven.step(np.array([0, 0]))
    with pytest.raises(RuntimeError, match=r"copies \[0\] of 2 finished while others did not"):
        uneven.step(np.array([0, 0]))
    vec = wrappers.SB3VecEnv(gym.make_vec("GraphBandit-v0", num_envs=2))
    vec.set_options([{}, {"reward_table": np.zeros((10, 10))}])
    with pytest.raises(ValueError, match="options must be the same for every copy"):
        vec.reset()
    with pytest.raises(ValueError, match="all 2 copies at once"):
        vec.set_attr("horizon", 5, indices=[0])


def test_ppo_trains_on_a_native_vector_env_through_the_adapter() -> None:
    kwargs = env_profile("GraphBandit-v0").easy()
    vec = wrappers.SB3VecEnv(gym.make_vec("GraphBandit-v0", num_envs=4, horizon=50, **kwargs))
    model = sb3.PPO("MlpPolicy", vec, n_steps=32, batch_size=64, n_epochs=4, learning_rate=3e-3, gamma=0.0, seed=0,
                device="cpu").learn(TRAIN_STEPS)  # fmt: skip
    assert model.num_timesteps >= TRAIN_STEPS
    assert_beats_random(model, "GraphBandit-v0", kwargs)


def test_reset_options_reach_the_vector_env() -> None:
    table = np.random.default_rng(0).random((5, 10))
    vec = wrappers.SB3VecEnv(gym.make_vec("GraphBandit-v0", num_envs=2, horizon=5))
    vec.set_options({"reward_table": table})
    vec.reset()
    _, rewards, _, infos = vec.step(np.array([3, 4]))
    np.testing.assert_array_equal(rewards, table[0, [3, 4]].astype(np.float32))
    np.testing.assert_array_equal(infos[0]["observed_rewards"][3], table[0, 3])


def test_split_vector_info_uses_gymnasium_masks() -> None:
    info = {"a": np.array([1, 2]), "_a": np.array([True, False]), "b": 7, "c": {"d": np.array([3, 4])}}
    assert split_vector_info(info, 2) == [{"a": 1, "b": 7, "c": {"d": 3}}, {"b": 7, "c": {"d": 4}}]


# ------------------------------------------------------------------------------ SB3Agent


@pytest.fixture(scope="module")
def graph_ppo():
    torch.set_num_threads(1)
    env = gym.make("GraphBandit-v0", horizon=100, gap=0.5)
    return sb3.PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=2, gamma=0.0, seed=0, device="cpu")


def test_sb3_agent_acts_as_model_predict_single_and_batched(graph_ppo) -> None:
    env = ArmStatistics(gym.make("GraphBandit-v0", horizon=20))
    model = sb3.PPO("MlpPolicy", env, seed=0, device="cpu")
    agent = SB3Agent(model)
    assert agent.n_arms == 10 and agent.name == "PPO" and agent.n_envs is None
    obs, _ = env.reset(seed=0)
    for _ in range(5):
        action = agent.act(obs)
        assert isinstance(action, int) and action == int(model.predict(obs, deterministic=True)[0])
        obs, reward, _, _, info = env.step(action)
        agent.update(action, reward, info)
    batch = np.random.default_rng(0).random((6, 20)).astype(np.float32)
    actions = SB3Agent(model, n_envs=6).act(batch)
    assert actions.dtype == np.int64 and actions.shape == (6,)
    np.testing.assert_array_equal(actions, model.predict(batch, deterministic=True)[0])
    # A Discrete(1) observation space: the raw GraphBandit-v0 vector env's observations.
    np.testing.assert_array_equal(SB3Agent(graph_ppo, n_envs=3).act(np.zeros(3, dtype=np.int64)),
                                  graph_ppo.predict(np.zeros(3, dtype=np.int64), deterministic=True)[0])  # fmt: skip


def test_stochastic_sb3_agent_samples_the_policy_from_its_own_generator(graph_ppo) -> None:
    obs = np.zeros(4000, dtype=np.int64)
    first = SB3Agent(graph_ppo, deterministic=False, n_envs=4000, seed=1).act(obs)
    np.testing.assert_array_equal(first, SB3Agent(graph_ppo, deterministic=False, n_envs=4000, seed=1).act(obs))
    assert not np.array_equal(first, SB3Agent(graph_ppo, deterministic=False, n_envs=4000, seed=2).act(obs))
    policy = graph_ppo.policy
    with torch.no_grad():
        probs = policy.get_distribution(policy.obs_to_tensor(obs[:1])[0]).distribution.probs.numpy()[0]
    freq = np.bincount(first, minlength=10) / first.size
    assert np.all(np.abs(freq - probs) <= 5 * np.sqrt(probs * (1 - probs) / first.size) + 1e-9)


def test_stochastic_sb3_agent_is_epsilon_greedy_for_dqn() -> None:
    model = sb3.DQN("MlpPolicy", gym.make("GraphBandit-v0"), seed=0, device="cpu")
    obs = np.zeros(2000, dtype=np.int64)
    greedy = model.predict(obs, deterministic=True)[0]
    model.exploration_rate = 0.0
    np.testing.assert_array_equal(SB3Agent(model, deterministic=False, n_envs=2000, seed=0).act(obs), greedy)
    model.exploration_rate = 1.0
    explored = SB3Agent(model, deterministic=False, n_envs=2000, seed=0).act(obs)
    assert np.bincount(explored, minlength=10).min() > 150


def test_update_is_a_no_op_and_reset_keeps_the_weights(graph_ppo) -> None:
    before = [p.detach().clone() for p in graph_ppo.policy.parameters()]
    agent = SB3Agent(graph_ppo, seed=0)
    action = agent.act(0)
    agent.update(action, 1.0, {"regret": 0.0})
    agent.reset(seed=3)
    assert agent.seed == 3
    assert all(torch.equal(a, b) for a, b in zip(before, graph_ppo.policy.parameters(), strict=True))


def test_learn_online_trains_dqn_through_the_agent_interface() -> None:
    env = gym.make("GraphBandit-v0", horizon=3000, gap=0.5)
    model = sb3.DQN("MlpPolicy", env, learning_starts=100, buffer_size=5000, train_freq=4, target_update_interval=100,
                exploration_fraction=0.5, learning_rate=1e-3, batch_size=32, gamma=0.0, seed=0,
                device="cpu")  # fmt: skip
    agent = SB3Agent(model, deterministic=False, learn_online=True, total_timesteps=1500, seed=0)
    obs, _ = env.reset(seed=3)
    for _ in range(1500):
        action = agent.act(obs)
        obs, reward, _, _, info = env.step(action)
        agent.update(action, reward, info)
    assert model.num_timesteps == 1499 and model.replay_buffer.size() == 1499
    assert model.exploration_rate == pytest.approx(model.exploration_final_eps)
    assert SB3Agent(model).act(obs) in (0, 1)  # the two arms at 0.9
    agent.reset()
    agent.act(obs)  # the pending transition of the finished episode is dropped, not stored
    assert model.num_timesteps == 1499


def test_sb3_agent_validates_its_arguments(graph_ppo) -> None:
    with pytest.raises(TypeError, match="model must be a stable-baselines3 model"):
        SB3Agent(object())
    with pytest.raises(TypeError, match="deterministic must be True or False"):
        SB3Agent(graph_ppo, deterministic="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="learn_online needs an off-policy model"):
        SB3Agent(graph_ppo, learn_online=True)
    dqn = sb3.DQN("MlpPolicy", gym.make("GraphBandit-v0"), device="cpu")
    with pytest.raises(ValueError, match="n_envs to match the model's number of envs"):
        SB3Agent(dqn, learn_online=True, n_envs=4)
    with pytest.raises(ValueError, match="total_timesteps must be an integer >= 1"):
        SB3Agent(dqn, learn_online=True, total_timesteps=0)
    agent = SB3Agent(graph_ppo, n_envs=2)
    with pytest.raises(ValueError, match=r"obs must have shape \(2,\)"):
        agent.act(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="obs must be the env's observation"):
        agent.act(None)
    with pytest.raises(RuntimeError, match="update\\(\\) must follow act\\(\\)"):
        SB3Agent(dqn, learn_online=True).update(0, 1.0)


def test_sb3_agent_normalises_observations_as_the_models_vec_normalize(tmp_path) -> None:
    """A model trained under VecNormalize(norm_obs=True) acts on normalised observations, through the agent too."""
    from stable_baselines3.common import vec_env

    torch.set_num_threads(1)
    venv = vec_env.VecNormalize(vec_env.DummyVecEnv([lambda: ArmStatistics(gym.make("GraphBandit-v0", horizon=20))]))
    model = sb3.PPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, gamma=0.0, seed=0, device="cpu")
    model.learn(128)
    assert model.get_vec_normalize_env() is venv and venv.obs_rms.count > 1
    counted = venv.obs_rms.count
    env = ArmStatistics(gym.make("GraphBandit-v0", horizon=20))
    agent = SB3Agent(model)  # the model's own VecNormalize, found by the agent
    assert agent.vec_normalize is venv
    obs, _ = env.reset(seed=0)
    differs = False
    for _ in range(20):
        action = agent.act(obs)
        expected = int(model.predict(venv.normalize_obs(obs[None]), deterministic=True)[0][0])
        assert action == expected
        differs |= expected != int(model.predict(obs[None], deterministic=True)[0][0])
        obs, reward, _, _, info = env.step(action)
        agent.update(action, reward, info)
    assert differs  # the raw observations would have chosen other arms
    assert venv.obs_rms.count == counted  # statistics read, never updated
    # A model loaded from a file has none: the VecNormalize saved beside it is passed.
    model.save(tmp_path / "ppo")
    venv.save(str(tmp_path / "vecnormalize.pkl"))
    loaded = sb3.PPO.load(tmp_path / "ppo", device="cpu")
    assert SB3Agent(loaded).vec_normalize is None
    stats = vec_env.VecNormalize.load(str(tmp_path / "vecnormalize.pkl"), venv.venv)
    batch = np.random.default_rng(1).random((8, 20)).astype(np.float32)
    np.testing.assert_array_equal(
        SB3Agent(loaded, vec_normalize=stats, n_envs=8).act(batch),
        loaded.predict(venv.normalize_obs(batch), deterministic=True)[0],
    )
    with pytest.raises(TypeError, match="vec_normalize must be a stable-baselines3 VecNormalize"):
        SB3Agent(loaded, vec_normalize=venv.venv)
    other = vec_env.VecNormalize(vec_env.DummyVecEnv([lambda: ArmStatistics(gym.make("GraphBandit-v0", n_arms=5))]))
    with pytest.raises(ValueError, match=r"vec_normalize must normalise the model's observations of shape \(20,\)"):
        SB3Agent(loaded, vec_normalize=other)


# ------------------------------------------------------------------ ArmStatistics, ShuffleArms

PATH4 = np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]], dtype=bool)


def test_arm_statistics_counts_side_observations_by_hand() -> None:
    table = np.array([[0.2, 0.4, 0.6, 0.8], [1.0, 0.0, 0.5, 0.3], [0.1, 0.9, 0.7, 0.6]])
    env = ArmStatistics(gym.make("GraphBandit-v0", graph=PATH4, horizon=3))
    obs, _ = env.reset(options={"reward_table": table})
    np.testing.assert_array_equal(obs, np.zeros(8, dtype=np.float32))
    obs, reward, *_ = env.step(1)  # observes arms 0, 1, 2
    assert reward == 0.4
    np.testing.assert_allclose(obs, [1, 1, 1, 0, 0.2, 0.4, 0.6, 0], rtol=1e-6)
    obs, *_ = env.step(3)  # observes arms 2, 3
    np.testing.assert_allclose(obs, [0.5, 0.5, 1, 0.5, 0.2, 0.4, 0.55, 0.3], rtol=1e-6)
    obs, *_ = env.step(0)  # observes arms 0, 1
    np.testing.assert_allclose(obs, [2 / 3, 2 / 3, 2 / 3, 1 / 3, 0.15, 0.65, 0.55, 0.3], rtol=1e-6)
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    obs, _ = env.reset(options={"reward_table": table})
    assert not obs.any() and env.t == 0


def test_arm_statistics_on_a_budget_env_scales_payoffs_and_keeps_the_sensitivity() -> None:
    kwargs = {"horizon": 20, "oracle_samples": 1000, "budgets": [0.5, 1.0, 2.0]}
    plain = gym.make("PrivacyBudgetMovieLens-v0", **kwargs)
    env = ArmStatistics(gym.make("PrivacyBudgetMovieLens-v0", **kwargs), reward_range=(0.5, 1.5),
                        keep_observation=True)  # fmt: skip
    assert env.observation_space.shape == (7,)
    obs, _ = env.reset(seed=4)
    phi, _ = plain.reset(seed=4)
    np.testing.assert_array_equal(obs[-1:], phi.astype(np.float32))
    pulls, sums = np.zeros(3), np.zeros(3)
    for t, action in enumerate([2, 2, 0, 2, 1], start=1):
        obs, reward, _, _, info = env.step(action)
        phi, plain_reward, _, _, plain_info = plain.step(action)
        assert reward == plain_reward and info["regret"] == plain_info["regret"]  # passed through unchanged
        pulls[action] += 1
        sums[action] += reward
        np.testing.assert_allclose(obs[:3], pulls / t, rtol=1e-6)
        np.testing.assert_allclose(obs[3:6], np.clip(np.where(pulls > 0, sums / np.maximum(pulls, 1) - 0.5, 0), 0, 1),
                                   rtol=1e-5)  # fmt: skip
        np.testing.assert_array_equal(obs[-1:], phi.astype(np.float32))
        assert env.observation_space.contains(obs)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ArmStatistics(gym.make("GraphBandit-v0", horizon=30)),
        lambda: ArmStatistics(ShuffleArms(gym.make("GraphBandit-v0", horizon=30))),
        lambda: ArmStatistics(gym.make("PrivacyBudgetGowalla-v0", horizon=30, oracle_samples=1000), (0.5, 1.5), True),
    ],
    ids=["graph", "shuffled-graph", "budget"],
)
@pytest.mark.filterwarnings("ignore:.*different from the unwrapped version")
def test_wrapped_envs_pass_the_checkers(make) -> None:
    gym_check_env(make(), skip_render_check=True)
    sb3_checker.check_env(make(), warn=True)


def test_arm_statistics_validates_its_arguments() -> None:
    env = gym.make("GraphBandit-v0")
    with pytest.raises(ValueError, match="reward_range must satisfy low < high"):
        ArmStatistics(env, reward_range=(1.0, 0.0))
    with pytest.raises(TypeError, match="reward_range must be a pair"):
        ArmStatistics(env, reward_range=1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"reward_range\[1\] must be a finite number"):
        ArmStatistics(env, reward_range=(0.0, np.inf))
    with pytest.raises(ValueError, match="reward_range must have a finite width high - low"):
        ArmStatistics(env, reward_range=(-1e308, 1e308))  # each finite, the width not: the top mean scaled to NaN
    with pytest.raises(TypeError, match="keep_observation must be True or False"):
        ArmStatistics(env, keep_observation=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs an env whose action space is Discrete"):
        ArmStatistics(_BoxActions())
    with pytest.raises(TypeError, match="needs an env whose action space is Discrete"):
        ShuffleArms(_BoxActions())


class _BoxActions(gym.Env):
    observation_space = gym.spaces.Discrete(1)
    action_space = gym.spaces.Box(0.0, 1.0, (1,))


def test_shuffle_arms_relabels_actions_and_info_consistently() -> None:
    plain = gym.make("GraphBandit-v0", horizon=50)
    env = ShuffleArms(gym.make("GraphBandit-v0", horizon=50))
    _, info = env.reset(seed=7)
    _, plain_info = plain.reset(seed=7)
    perm = env.permutation
    assert sorted(perm.tolist()) == list(range(10)) and not np.array_equal(perm, np.arange(10))
    graph, means = info["feedback_graph"], info["expected_rewards"]
    np.testing.assert_array_equal(graph, plain_info["feedback_graph"][np.ix_(perm, perm)])
    np.testing.assert_array_equal(means, plain_info["expected_rewards"][perm])
    for action in [0, 3, 9, 3, 5]:
        _, reward, _, _, step = env.step(action)
        _, plain_reward, _, _, plain_step = plain.step(int(perm[action]))
        assert reward == plain_reward and step["regret"] == plain_step["regret"]  # the same reward draws
        closed = graph[action] | (np.arange(10) == action)
        np.testing.assert_array_equal(step["observed_mask"], closed)
        assert step["observed_rewards"][action] == reward
        assert means[step["optimal_action"]] == means.max()
        assert step["regret"] == pytest.approx(means.max() - means[action])
    env.reset(seed=7)
    np.testing.assert_array_equal(env.permutation, perm)  # seeded
    env.reset()
    assert not np.array_equal(env.permutation, perm)  # a new labelling every episode
    with pytest.raises(ValueError, match=r"action must be an integer in \[0, 9\]"):
        env.step(10)


# -------------------------------------------------------------------------------- rl/graph


def test_rl_graph_runs_at_tiny_scale(tmp_path) -> None:
    folder, text = run_experiment("rl/graph", quick=True, runs=1, horizon=200, jobs=1, out=tmp_path, progress=False)
    for name in ("results.csv", "figure.png", "summary.md"):
        assert (folder / name).stat().st_size > 0
    with open(folder / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["agent"] for r in rows} == {"UCB-N", "GAP", "PPO", "DQN"}
    assert {int(r["train_timesteps"]) for r in rows if r["agent"] in ("PPO", "DQN")} == {5000}
    assert max(int(r["t"]) for r in rows) == 200
    assert "| PPO |" in text and "DQN − UCB-N" in text and "5,000 interactions" in text


def test_rl_graph_quick_scale_lowers_the_training_budget_and_the_fingerprint_sees_it() -> None:
    exp = get_experiment("rl/graph")
    quick = exp.scaled(quick=True)
    assert exp.options["train_timesteps"] == 100_000 and quick.options["train_timesteps"] == 5_000
    assert (quick.horizon, quick.runs) == (exp.quick_horizon, exp.quick_runs)
    same_scale = exp.scaled(runs=quick.runs, horizon=quick.horizon)
    assert manifest_for(quick, 0, 2)["fingerprint"] != manifest_for(same_scale, 0, 2)["fingerprint"]


def test_rl_task_is_reproducible_from_its_seeds() -> None:
    exp = get_experiment("rl/graph").scaled(quick=True, horizon=100)
    exp = replace(exp, options={**exp.options, "train_timesteps": 1200})
    first, second = rl_task(exp, 0, 1, 3), rl_task(exp, 0, 1, 3)
    assert first == second
    assert {r["agent"] for r in first} == {"UCB-N", "GAP", "PPO", "DQN"}


def test_rl_training_leaves_no_log_folder(tmp_path, monkeypatch) -> None:
    # stable-baselines3 makes its log folder ($SB3_LOGDIR, else SB3-<time> in the temporary
    # directory) on every `learn` without a logger of its own; the experiment's training writes nowhere.
    from agents.experiments.rl.task import train

    logs = tmp_path / "sb3-logs"
    monkeypatch.setenv("SB3_LOGDIR", str(logs))
    exp = get_experiment("rl/graph").scaled(quick=True, horizon=100)
    exp = replace(exp, options={**exp.options, "train_timesteps": 100})
    model = train("PPO", exp.settings[0], exp, 0, 1)
    assert model.logger.dir is None and not logs.exists()


@pytest.mark.slow
def test_rl_graph_full_scale_dqn_beats_ucbn(tmp_path) -> None:
    folder, text = run_experiment("rl/graph", jobs=2, out=tmp_path, progress=False)
    assert "DQN − UCB-N" in text
    with open(folder / "results.csv", newline="") as fh:
        final = [r for r in csv.DictReader(fh) if int(r["t"]) == 2000]
    regret = {a: np.mean([float(r["regret"]) for r in final if r["agent"] == a]) for a in ("DQN", "UCB-N", "GAP")}
    assert regret["DQN"] < regret["UCB-N"] < regret["GAP"]


def test_bandit_and_rl_agents_share_the_wrapped_env() -> None:
    def actions(agent, env) -> list[int]:
        obs, _ = env.reset(seed=0)
        return [int(action) for action in play_env(agent, env, 40, obs).actions]

    wrapped = ArmStatistics(gym.make("GraphBandit-v0", horizon=40))
    # The wrapper passes rewards and info through: UCB-N plays the same arms with or without it.
    assert actions(UCBN(10, seed=0), wrapped) == actions(UCBN(10, seed=0), gym.make("GraphBandit-v0", horizon=40))
    model = sb3.PPO("MlpPolicy", wrapped, seed=0, device="cpu")
    played = actions(SB3Agent(model, deterministic=False, seed=0), wrapped)
    assert played == actions(SB3Agent(model, deterministic=False, seed=0), wrapped) and len(set(played)) > 1
