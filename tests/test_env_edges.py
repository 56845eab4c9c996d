"""Edge cases of the environments' contract: extreme arguments, resets in mid-episode, copies of the vector envs.

Each test here holds one behaviour that a sweep of the registered envs found broken: the single env
accepted an argument its native vector env then failed on, or a vector copy left the stream of its
single env.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import bandit_envs  # noqa: F401 - registers the ids
from bandit_envs import core
from bandit_envs.budget._core import SensitivityModel
from bandit_envs.datasets import DatasetError, load_gowalla, load_movielens

BUDGET_IDS = ["PrivacyBudgetMovieLens-v0", "PrivacyBudgetGowalla-v0"]


def make_vec(env_id: str, num_envs: int, **kwargs: Any) -> Any:
    return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)


@pytest.mark.parametrize("horizon", [2**63, 10**30])
def test_graph_vector_env_takes_a_horizon_beyond_int64_as_the_single_env_does(horizon: int) -> None:
    single = gym.make("GraphBandit-v0", horizon=horizon).unwrapped
    venv = make_vec("GraphBandit-v0", 2, horizon=horizon)
    single.reset(seed=4)
    venv.reset(seed=4)
    for _ in range(3):
        single.step(1)
        venv.step(np.array([1, 1]))
    # A reset without a seed in mid-episode discards the single env's unread block rows.
    single.reset()
    venv.reset()
    for _ in range(3):
        _, reward, _, truncated, _ = single.step(0)
        _, rewards, _, truncateds, _ = venv.step(np.array([0, 0]))
        assert rewards[0] == reward and not truncated and not truncateds.any()


@pytest.mark.parametrize("env_id", BUDGET_IDS)
@pytest.mark.parametrize("steps", [5, 300, 600, 701])
def test_budget_copy_follows_its_single_env_across_a_reset_in_mid_episode_whatever_its_buffer(
    env_id: str, steps: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A small noise budget gives each copy a buffer of fewer rows than the single env's blocks of
    # 512, as many copies (about 10,000 at the default budget) do.
    monkeypatch.setattr(core, "NOISE_BUFFER_BYTES", 3 * 100 * 8 * 6)
    kwargs = {"oracle_samples": 1000, "horizon": 700}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        venv = make_vec(env_id, 3, **kwargs)
        single = gym.make(env_id, **kwargs).unwrapped
    assert venv.unwrapped._noise.block_rows < 512
    venv.reset(seed=7)
    single.reset(seed=7)
    actions = np.random.default_rng(0).integers(0, single.n_actions, size=steps)
    for t, a in enumerate(actions):
        if t == kwargs["horizon"]:  # the single env's episode has ended: the copies' autoreset step
            single.reset()
            venv.step(np.zeros(3, dtype=np.int64))
            continue
        _, reward, _, _, _ = single.step(int(a))
        _, rewards, _, _, _ = venv.step(np.full(3, a))
        assert rewards[0] == reward, t
    obs, _ = single.reset()
    obs_v, _ = venv.reset()
    np.testing.assert_array_equal(obs_v[0], obs)
    for t, a in enumerate(actions[:20]):
        _, reward, _, _, _ = single.step(int(a))
        _, rewards, _, _, _ = venv.step(np.full(3, a))
        assert rewards[0] == reward, t


@pytest.mark.parametrize("env_id", ["MovieLensRecommendation-v0", "GowallaRecommendation-v0"])
@pytest.mark.parametrize("integer", [np.uint8, np.int16])
def test_recommendation_vector_env_takes_num_envs_as_any_numpy_integer(env_id: str, integer: type) -> None:
    plain = make_vec(env_id, 3, horizon=4, reward_noise=0.1)
    numpy_count = make_vec(env_id, integer(3), horizon=4, reward_noise=0.1)
    assert numpy_count.num_envs == 3 and type(numpy_count.num_envs) is int
    for venv in (plain, numpy_count):
        venv.reset(seed=2)
    for t in range(6):
        actions = np.array([t % 2, 1, 0])
        a, b = plain.step(actions), numpy_count.step(actions)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])


def test_movielens_docstring_states_the_feature_memory_per_user() -> None:
    env = gym.make("MovieLensRecommendation-v0", horizon=3).unwrapped
    doc = " ".join(type(env).__doc__.split())
    match = re.search(r"``features`` takes 8 · n_users · n_movies · rank bytes \(([\d.]+) kB per user", doc)
    assert match, "the docstring no longer states the memory of features per user"
    per_user = env.features.nbytes / env.features.shape[0]
    assert per_user == 8 * env.n_arms * env.dim
    assert float(match.group(1)) == pytest.approx(per_user / 1000, rel=0.05)


@pytest.mark.parametrize(
    ("field", "said"),
    [
        ("99999999999999999999", "has a user_id beyond the range of a 64-bit integer on line 2"),
        ("-99999999999999999999", "has a user_id beyond the range of a 64-bit integer on line 2"),
        ("1_0", "has a user_id that is not an integer on line 2"),
    ],
)
def test_ratings_file_with_an_id_numpy_cannot_read_names_its_line(field: str, said: str, tmp_path: Path) -> None:
    (tmp_path / "ratings.csv").write_bytes(
        f"userId,movieId,rating,timestamp\r\n{field},2,3.5,100\r\n1,3,4.0,101\r\n".encode()
    )
    with pytest.raises(DatasetError, match=re.escape(said)):
        load_movielens(path=tmp_path, verify="schema")


def test_checkins_file_with_an_id_beyond_int64_names_its_line(tmp_path: Path) -> None:
    rows = "1\t2010-10-12T00:21:28Z\t40.7\t-73.9\t99999999999999999999\n2\t2010-10-12T00:21:28Z\t40.7\t-73.9\t5\n"
    (tmp_path / "subset.txt").write_text(rows, encoding="ascii")
    with pytest.raises(DatasetError, match="has a location_id beyond the range of a 64-bit integer on line 1"):
        load_gowalla(path=tmp_path / "subset.txt")


def test_an_item_id_is_named_with_its_article(tmp_path: Path) -> None:
    (tmp_path / "ratings.csv").write_bytes(b"userId,movieId,rating,timestamp\r\n1,x,3.5,100\r\n")
    with pytest.raises(DatasetError, match="has an item_id that is not an integer on line 2"):
        load_movielens(path=tmp_path, verify="schema")


def test_sensitivity_without_spread_is_the_level_even_for_a_uniform_of_zero() -> None:
    # numpy's random() returns 0.0 with probability 2**-53 per draw: its normal quantile is -inf.
    model = SensitivityModel.checked((0.3, 0.8), 0.0, None)
    phi = model.draw(np.array([0.4, 0.7, 0.0]), np.array([0.0, 0.5, 0.999]))
    np.testing.assert_array_equal(phi, [0.4, 0.7, 0.0])
    spread = SensitivityModel.checked((0.3, 0.8), 0.05, None).draw(np.array([0.4]), np.array([0.0]))
    np.testing.assert_array_equal(spread, [0.0])


@pytest.mark.parametrize("env_id", ["GraphBandit-v0", "PrivacyBudgetMovieLens-v0", "MovieLensRecommendation-v0"])
def test_a_num_envs_past_the_floats_is_refused_in_one_sentence(env_id: str) -> None:
    with pytest.raises(
        ValueError, match=r"num_envs=100000000000000000\.\.\.0+ copies .*more bytes than a float counts"
    ):
        gym.make_vec(env_id, num_envs=10**400, vectorization_mode="vector_entry_point")
