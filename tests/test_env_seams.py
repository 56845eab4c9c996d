"""Inputs at the seams of the envs: byte orders numba does not take, masked graphs, data tables
whose values no file could hold or that the caller edits afterwards, and loader arguments of the
wrong type.

Each refusal is one sentence naming the argument; nothing here touches the network.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pooch
import pytest

from bandit_envs import GraphBanditEnv, GraphBanditVectorEnv
from bandit_envs.datasets import (
    CheckIns,
    DatasetError,
    Ratings,
    filter_min_counts,
    load_gowalla,
    load_movielens,
    synthetic_gowalla,
    synthetic_movielens,
    top_users,
)
from bandit_envs.datasets.env_data import ratings_from

#: The longest message a refused input may produce (a sentence, never an array dump).
MAX_MESSAGE = 400


def one_sentence(error: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(error.value)
    assert len(message) <= MAX_MESSAGE, f"{len(message)} characters: {message[:200]}..."
    assert message.count(". ") == 0 and "\n" not in message, message
    return message


# ------------------------------------------------------------------------------ actions


@pytest.mark.parametrize("dtype", [">i8", ">i4", ">u2"])
def test_vector_env_plays_actions_of_either_byte_order(dtype: str) -> None:
    env = GraphBanditVectorEnv(num_envs=3, horizon=5)
    actions = np.array([0, 4, 9], dtype=dtype)
    env.reset(seed=1)
    swapped = [env.step(actions)[1] for _ in range(4)]
    env.reset(seed=1)
    native = [env.step(actions.astype(np.int64))[1] for _ in range(4)]
    np.testing.assert_array_equal(swapped, native)


def test_vector_env_through_make_vec_plays_big_endian_actions() -> None:
    env = gym.make_vec("GraphBandit-v0", num_envs=2, vectorization_mode="vector_entry_point", horizon=3)
    env.reset(seed=0)
    _, reward, *_ = env.step(np.array([1, 2], dtype=">i8"))
    assert reward.shape == (2,) and np.all((reward >= 0) & (reward <= 1))


# ------------------------------------------------------------------------------ graphs


def test_graph_refuses_a_masked_adjacency() -> None:
    data = np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])
    graph = np.ma.masked_array(data, mask=data.astype(bool))  # every edge masked out
    with pytest.raises(TypeError) as info:
        GraphBanditEnv(graph=graph)
    assert "graph" in one_sentence(info) and "masked" in str(info.value)


def test_vector_graph_refuses_a_masked_adjacency() -> None:
    with pytest.raises(TypeError, match="graph"):
        GraphBanditVectorEnv(num_envs=2, graph=np.ma.masked_array(np.zeros((3, 3))))


# ------------------------------------------------------------------------------ tables

RATINGS = {
    "user_id": np.array([1, 1, 2, 2]),
    "item_id": np.array([10, 20, 10, 30]),
    "rating": np.array([4.0, 3.5, 5.0, 1.0]),
    "timestamp": np.arange(4),
}
CHECKINS = {
    "user_id": np.array([0, 0, 1]),
    "timestamp": np.arange(3),
    "lat": np.array([40.7, 40.8, 40.6]),
    "lon": np.array([-74.0, -73.9, -73.8]),
    "location_id": np.array([5, 6, 5]),
}


def _with(columns: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    return {**{k: v.copy() for k, v in columns.items()}, name: value}


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_ratings_refuse_a_non_finite_rating(bad: float) -> None:
    with pytest.raises(ValueError) as info:
        Ratings(**_with(RATINGS, "rating", np.array([4.0, bad, 5.0, 1.0])))
    assert "rating[1]" in one_sentence(info)


@pytest.mark.parametrize("bad", [0.0, -2.0])
def test_ratings_refuse_a_rating_that_is_not_positive(bad: float) -> None:
    # matrix() reads a zero as "not rated": a rating must be a positive number of stars.
    with pytest.raises(ValueError) as info:
        Ratings(**_with(RATINGS, "rating", np.array([4.0, 3.5, bad, 1.0])))
    assert "rating[2]" in one_sentence(info)


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("lat", np.array([40.7, np.nan, 40.6])),
        ("lat", np.array([40.7, 140.0, 40.6])),
        ("lon", np.array([-74.0, -73.9, 200.0])),
        ("lon", np.array([-np.inf, -73.9, -73.8])),
    ],
)
def test_checkins_refuse_coordinates_off_the_globe(name: str, values: np.ndarray) -> None:
    with pytest.raises(ValueError) as info:
        CheckIns(**_with(CHECKINS, name, values))
    assert name in one_sentence(info)


def test_tables_refuse_an_id_beyond_int64() -> None:
    ids = np.array([2**64 - 1, 1, 2, 2], dtype=np.uint64)  # would wrap to -1
    with pytest.raises(ValueError) as info:
        Ratings(**_with(RATINGS, "user_id", ids))
    assert "user_id" in one_sentence(info)


@pytest.mark.parametrize("name", ["user_id", "rating"])
def test_tables_refuse_masked_columns(name: str) -> None:
    column = np.ma.masked_array(RATINGS[name], mask=[False, True, False, False])
    with pytest.raises(TypeError) as info:
        Ratings(**_with(RATINGS, name, column))
    assert name in one_sentence(info) and "masked" in str(info.value)


def test_tables_are_not_changed_by_later_edits_of_the_callers_arrays() -> None:
    columns = {k: v.copy() for k, v in RATINGS.items()}
    ratings = Ratings(**columns)
    columns["rating"][0] = 0.5
    columns["user_id"][0] = 99
    assert ratings.rating[0] == 4.0 and ratings.user_id[0] == 1
    checkins_columns = {k: v.copy() for k, v in CHECKINS.items()}
    checkins = CheckIns(**checkins_columns)
    checkins_columns["lat"][0] = 10.0
    assert checkins.lat[0] == 40.7
    with pytest.raises(ValueError):
        ratings.rating[0] = 1.0  # and still read-only


def test_an_env_over_a_table_is_not_changed_by_later_edits() -> None:
    table = synthetic_movielens(seed=0)
    columns = {name: np.array(getattr(table, name)) for name in Ratings._kinds}  # writeable copies
    ratings = Ratings(**columns)
    before = ratings_from(ratings).rating.copy()
    columns["rating"][:] = 5.0
    assert np.array_equal(ratings_from(ratings).rating, before)


def test_loaded_and_generated_tables_are_not_copied_again() -> None:
    table = synthetic_gowalla(seed=0)
    again = CheckIns(**{name: getattr(table, name) for name in CheckIns._kinds})
    assert all(np.shares_memory(getattr(again, n), getattr(table, n)) for n in CheckIns._kinds)
    subset = table.subset(np.arange(10))
    assert len(subset) == 10 and not subset.lat.flags.writeable


# ------------------------------------------------------------------------------ helpers and loaders


@pytest.mark.parametrize("call", [top_users, filter_min_counts])
@pytest.mark.parametrize("table", [[1, 2, 3], "ratings", None, {"user_id": [1]}])
def test_table_helpers_refuse_what_is_not_a_table(call: Any, table: Any) -> None:
    with pytest.raises(TypeError) as info:
        call(table)
    assert "table" in one_sentence(info) or "ratings" in str(info.value)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    tried: list[str] = []

    def offline(url: str, *args: object, **kwargs: object) -> str:
        tried.append(url)
        raise ConnectionError(
            f"HTTPSConnectionPool(host='example.org', port=443): Max retries exceeded with url: {url} "
            '(Caused by NameResolutionError("<urllib3.connection.HTTPSConnection object at 0x7f>: Failed to '
            "resolve 'example.org' ([Errno -2] Name or service not known)\"))"
        )

    monkeypatch.setattr(pooch, "retrieve", offline)
    return tried


@pytest.mark.parametrize("download", ["yes", 1, 0, None, np.nan, [True], 0.5])
def test_loaders_refuse_a_download_that_is_not_a_bool(download: Any, tmp_path: Path, no_network: list[str]) -> None:
    with pytest.raises(TypeError) as info:
        load_movielens(data_home=tmp_path, download=download)
    assert "download" in one_sentence(info)
    with pytest.raises(TypeError, match="download"):
        load_gowalla(data_home=tmp_path, download=download)
    assert no_network == []


def test_loaders_take_a_numpy_bool_for_download(tmp_path: Path, no_network: list[str]) -> None:
    with pytest.raises(DatasetError, match="download=False"):
        load_movielens(data_home=tmp_path, download=np.False_)
    assert no_network == []


def test_offline_download_fails_with_one_short_sentence(tmp_path: Path, no_network: list[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DatasetError) as info:
            load_movielens(data_home=tmp_path)
    message = str(info.value)
    assert "\n" not in message and len(message) <= 600, message
    assert str(tmp_path / "movielens" / "ml-latest-small.zip") in message and "ConnectionError" in message
    assert no_network and not list((tmp_path / "movielens").iterdir())


# ------------------------------------------------------------------------------ per-copy users


@pytest.mark.parametrize(
    "users",
    [{444, 445}, np.ma.masked_array([444, 444], mask=[False, True]), np.array([[444, 444]]), {444: 0, 445: 1}],
)
def test_budget_vector_env_refuses_users_without_one_id_per_copy_in_order(users: Any) -> None:
    from bandit_envs.budget.movielens import PrivacyBudgetMovieLensVectorEnv

    with pytest.raises(TypeError) as info:
        PrivacyBudgetMovieLensVectorEnv(num_envs=2, users=users, oracle_samples=1000)
    assert "users" in one_sentence(info)
