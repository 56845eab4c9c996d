"""Hostile inputs to every registered env: replayed tables edited afterwards, actions of the wrong
type, huge arguments in messages, sizes that do not fit in memory, and the memory a copy takes.

Sizes are refused from an estimate before anything is allocated; tests that need a refusal of an
otherwise sensible setting lower the limit with ``$BANDIT_ENVS_MEMORY_LIMIT``.
"""

from __future__ import annotations

import re
import shutil
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import networkx as nx
import numpy as np
import pytest
import scipy.sparse
from conftest import ENV_PROFILES, GOWALLA_NYC, ML_RATINGS, env_profile, registered_env_ids

from bandit_envs import GraphBanditEnv, GraphBanditVectorEnv, core
from bandit_envs.wrappers import ShuffleArms

IDS = registered_env_ids()
#: The ids whose envs draw per-round context and noise tables from an instance of some rank.
ROUND_TABLE_IDS = [i for i in IDS if i in ENV_PROFILES and ENV_PROFILES[i].round_tables]
NUM_ENVS = 3
Kwargs = Callable[[str], dict[str, Any]]
#: The longest message an invalid input may produce (a sentence, never an array dump).
MAX_MESSAGE = 400


def make(env_id: str, env_kwargs: Kwargs, **extra: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.make(env_id, **{**env_kwargs(env_id), **extra})


def make_vec(env_id: str, env_kwargs: Kwargs, num_envs: int = NUM_ENVS, **extra: Any) -> Any:
    return gym.make_vec(
        env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **{**env_kwargs(env_id), **extra}
    )


def one_sentence(error: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(error.value)
    assert len(message) <= MAX_MESSAGE, f"{len(message)} characters: {message[:200]}..."
    assert message.count(". ") == 0 and "\n" not in message, message
    return message


# --------------------------------------------------------------------------- replayed tables


def test_replayed_reward_table_is_a_copy_of_what_was_checked() -> None:
    horizon, k = 6, 10
    table = np.random.default_rng(0).random((horizon, k))
    expected = table.copy()
    env = gym.make("GraphBandit-v0", horizon=horizon).unwrapped
    env.reset(seed=0, options={"reward_table": table})
    table[:] = np.nan  # edits after the reset must not reach the episode
    table[0] = 7.0
    rewards = [env.step(t % k)[1] for t in range(horizon)]
    np.testing.assert_array_equal(rewards, expected[np.arange(horizon), np.arange(horizon) % k])

    for given in (expected.copy(), np.stack([expected] * NUM_ENVS)):  # one table for all, or a stack
        venv = gym.make_vec("GraphBandit-v0", num_envs=NUM_ENVS, horizon=horizon)
        venv.reset(seed=0, options={"reward_table": given})
        given[...] = 7.0
        for t in range(horizon):
            _, reward, _, _, info = venv.step(np.full(NUM_ENVS, t % k))
            np.testing.assert_array_equal(reward, np.full(NUM_ENVS, expected[t, t % k]))
            np.testing.assert_array_equal(info["observed_rewards"].max(axis=1) <= 1.0, True)


@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
def test_complex_reward_table_is_refused_not_cast(vector: bool) -> None:
    table = np.full((6, 3), 0.5) + 0.25j
    if vector:
        env = gym.make_vec("GraphBandit-v0", num_envs=NUM_ENVS, horizon=6, n_arms=3)
    else:
        env = gym.make("GraphBandit-v0", horizon=6, n_arms=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's ComplexWarning would be a silent cast here
        with pytest.raises(TypeError, match=r"^reward_table must be an array of numbers in \[0, 1\], got complex") as e:
            env.reset(seed=0, options={"reward_table": table})
        one_sentence(e)
        with pytest.raises(TypeError, match="^reward_table .* got complex"):  # even with zero imaginary parts
            env.reset(seed=0, options={"reward_table": table.real + 0j})


NOT_REAL_TABLES = [
    pytest.param(np.array([["0.5"] * 3] * 6, dtype=object), "an entry '0.5' \\(str\\)", id="object-strings"),
    pytest.param([["0.5"] * 3] * 6, "strings \\(a <U3 array of shape \\(6, 3\\)\\)", id="list-of-strings"),
    pytest.param(np.full((6, 3), "0.5"), "strings", id="string-array"),
    pytest.param(np.ones((6, 3), dtype=bool), "booleans \\(a bool array of shape \\(6, 3\\)\\)", id="bool-array"),
    pytest.param([[True, 0.5, 0.5]] + [[0.5] * 3] * 5, "an entry True \\(bool\\)", id="bool-among-floats"),
    pytest.param(np.array([[0.5, None, 0.5]] * 6, dtype=object), "an entry None", id="object-None"),
]


@pytest.mark.parametrize(("table", "named"), NOT_REAL_TABLES)
@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
def test_reward_table_of_strings_or_booleans_is_refused_not_parsed(vector: bool, table: Any, named: str) -> None:
    if vector:
        env = gym.make_vec("GraphBandit-v0", num_envs=NUM_ENVS, horizon=6, n_arms=3)
    else:
        env = gym.make("GraphBandit-v0", horizon=6, n_arms=3)
    with pytest.raises(TypeError, match=rf"^reward_table must be an array of numbers in \[0, 1\], got {named}") as e:
        env.reset(seed=0, options={"reward_table": table})
    one_sentence(e)


@pytest.mark.parametrize("means", [["0.5", "0.5", "0.5"], [True, False, True], [True, 0.5, 0.5]])
def test_means_of_strings_or_booleans_are_refused(means: list[Any]) -> None:
    for env_class in (GraphBanditEnv, GraphBanditVectorEnv):
        with pytest.raises(TypeError, match=r"^means must be an array of numbers in \[0, 1\], got ") as e:
            env_class(n_arms=3, means=means)
        one_sentence(e)


@pytest.mark.parametrize("env_id", ["PrivacyBudgetMovieLens-v0", "PrivacyBudgetGowalla-v0"])
@pytest.mark.parametrize("budgets", [["0.5", "1"], [True, 0.5], np.array([1, 0], dtype=bool)])
def test_budgets_of_strings_or_booleans_are_refused(env_id: str, budgets: Any) -> None:
    with pytest.raises(TypeError, match=r"^budgets must be a 1-D array of numbers, got "):
        gym.make(env_id, horizon=7, oracle_samples=1000, budgets=budgets)


def test_complex_budgets_are_refused_not_cast() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match=r"^budgets must be a 1-D array of numbers, got complex numbers \("):
            gym.make("PrivacyBudgetMovieLens-v0", horizon=7, oracle_samples=1000, budgets=[0.5, 1 + 1j])


# ----------------------------------------------------------------------------------- actions

BAD_ACTIONS = [
    pytest.param(True, id="True"),
    pytest.param(False, id="False"),
    pytest.param(np.bool_(True), id="numpy-bool"),
    pytest.param(2.0, id="integral-float"),
    pytest.param(np.float64(1.0), id="numpy-float"),
    pytest.param(np.array(1.0), id="0d-float-array"),
    pytest.param("1", id="str"),
    pytest.param(1 + 0j, id="complex"),
    pytest.param(np.array([1]), id="1-element-array"),
    pytest.param(np.arange(999), id="long-array"),
    pytest.param("1" * 5000, id="long-str"),
]


@pytest.mark.parametrize("action", BAD_ACTIONS)
@pytest.mark.parametrize("env_id", IDS)
def test_single_env_refuses_actions_that_are_not_integers(env_id: str, action: Any, env_kwargs: Kwargs) -> None:
    for env in (make(env_id, env_kwargs), ShuffleArms(make(env_id, env_kwargs))):
        env.reset(seed=0)
        with pytest.raises(ValueError, match=r"^action must be an integer") as error:
            env.step(action)
        one_sentence(error)


BAD_VECTOR_ACTIONS = [
    pytest.param([True, False, True], id="bools"),
    pytest.param(np.ones(NUM_ENVS, dtype=bool), id="bool-array"),
    pytest.param([0, 1.0, 1], id="list-with-float"),
    pytest.param(np.array([1.0, 0.0, 1.0]), id="integral-floats"),
    pytest.param(["1", "0", "1"], id="strs"),
    pytest.param(np.array([[1, 0, 1]]), id="row"),
    pytest.param([0, 1], id="too-few"),
    pytest.param([[0], [1, 2], [0]], id="ragged"),
    pytest.param(np.array([0, 1, 1], dtype=object), id="object-array"),
    pytest.param(np.arange(999), id="long-array"),
    pytest.param(list(range(999)), id="long-list"),
    pytest.param(None, id="None"),
]


@pytest.mark.parametrize("actions", BAD_VECTOR_ACTIONS)
@pytest.mark.parametrize("env_id", IDS)
def test_vector_env_refuses_actions_that_are_not_integer_arrays(env_id: str, actions: Any, env_kwargs: Kwargs) -> None:
    venv = make_vec(env_id, env_kwargs)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=rf"^actions must be an integer array of shape \({NUM_ENVS},\)") as error:
        venv.step(actions)
    one_sentence(error)


@pytest.mark.parametrize("env_id", IDS)
def test_vector_action_out_of_range_is_named_with_its_index(env_id: str, env_kwargs: Kwargs) -> None:
    venv = make_vec(env_id, env_kwargs, num_envs=5)
    venv.reset(seed=0)
    n = int(venv.single_action_space.n)
    with pytest.raises(ValueError) as error:
        venv.step(np.array([0, 1, n + 6, -1, n]))
    assert one_sentence(error).endswith(f"got actions[2] = {n + 6}.")
    for actions in (np.array([0, 0, 0, 0, -1]), np.array([0, 0, 0, 0, -1], dtype=np.int32)):  # int64: one compiled pass
        with pytest.raises(ValueError) as error:
            venv.step(actions)
        assert one_sentence(error).endswith("got actions[4] = -1.")


# ------------------------------------------------------------------------ modified data files

#: The ids that read a data file, with the loader a remedy names and the official file name.
DATA_FILES = {
    "PrivacyBudgetMovieLens-v0": ("load_movielens", "ratings.csv"),
    "MovieLensRecommendation-v0": ("load_movielens", "ratings.csv"),
    "PrivacyBudgetGowalla-v0": ("load_gowalla", "loc-gowalla_totalCheckins.txt.gz"),
    "GowallaRecommendation-v0": ("load_gowalla", "loc-gowalla_totalCheckins.txt.gz"),
}


@pytest.mark.parametrize("env_id", sorted(DATA_FILES))
def test_a_modified_official_file_is_refused_with_a_remedy_the_env_call_can_follow(
    env_id: str, env_kwargs: Kwargs, tmp_path: Path, shared_data: Callable[[str], Path]
) -> None:
    """The envs take no ``verify``: the remedy loads the copy with the loader, whose table is ``data=``."""
    from bandit_envs import datasets

    loader, official = DATA_FILES[env_id]
    copy = tmp_path / official
    if loader == "load_movielens":  # one rating changed: the pinned sha256 no longer matches
        original = shared_data(ML_RATINGS).read_bytes()
        copy.write_bytes(original.replace(b"1,1,4.0,964982703", b"1,1,5.0,964982703", 1))
    else:  # the New York City rows under the whole file's name: not its row count
        shutil.copyfile(shared_data(GOWALLA_NYC), copy)
    with pytest.raises(datasets.DatasetError) as error:
        make(env_id, env_kwargs, data=copy)
    message = str(error.value)
    assert f"bandit_envs.datasets.{loader}(" in message and 'verify="schema")' in message, message
    assert message.endswith("(and give an env that table as data=).")
    table = getattr(datasets, loader)(path=copy, verify="schema")  # the remedy, followed
    make(env_id, env_kwargs, data=table).reset(seed=0)


# ------------------------------------------------------------------------------------ seeds


@pytest.mark.parametrize("seed", [True, 1.5, "1", -1], ids=["bool", "float", "str", "negative"])
@pytest.mark.parametrize("env_id", IDS)
def test_wrapped_envs_refuse_seeds_that_are_not_integers(env_id: str, seed: Any, env_kwargs: Kwargs) -> None:
    """Through gym.make's wrappers and ShuffleArms, whose own generator takes the seed first."""
    for env in (make(env_id, env_kwargs), ShuffleArms(make(env_id, env_kwargs))):
        with pytest.raises((TypeError, ValueError), match=r"^seed must be None or an integer >= 0") as error:
            env.reset(seed=seed)
        one_sentence(error)


# ------------------------------------------------------------------------------ messages


@pytest.mark.parametrize("env_id", IDS)
def test_messages_quote_huge_arguments_briefly(env_id: str, env_kwargs: Kwargs) -> None:
    big = np.zeros(999)
    # The env class itself: gym.make appends every keyword's repr to a TypeError of the constructor.
    env_class = gym.envs.registration.load_env_creator(gym.spec(env_id).entry_point)
    with pytest.raises(TypeError, match="horizon") as error:
        env_class(**{**env_kwargs(env_id), "horizon": big})
    assert "float64 array of shape (999,)" in one_sentence(error)
    env = make(env_id, env_kwargs)
    with pytest.raises(ValueError, match="options") as error:
        env.reset(seed=0, options={"no_such_option": big})
    assert "no_such_option" in one_sentence(error)
    venv = make_vec(env_id, env_kwargs)
    with pytest.raises(ValueError, match="options") as error:
        venv.reset(seed=0, options={"no_such_option": big})
    one_sentence(error)


def test_graph_arguments_are_quoted_briefly() -> None:
    with pytest.raises(ValueError, match="graph nodes must be the integers") as error:
        gym.make("GraphBandit-v0", graph=nx.relabel_nodes(nx.path_graph(2000), {0: "x" * 5000}))
    one_sentence(error)
    with pytest.raises(ValueError, match=r"budgets\[1\] = 9\.0") as error:
        gym.make("PrivacyBudgetMovieLens-v0", budgets=[0.5, 9.0, *np.linspace(0.01, 1.0, 2000)], horizon=5)
    one_sentence(error)
    with pytest.raises(ValueError, match=r"budgets\[1\] = 0\.5 more than once") as error:
        gym.make("PrivacyBudgetGowalla-v0", budgets=[0.1, 0.5, 0.5, *np.linspace(1.0, 2.0, 2000)], horizon=5)
    one_sentence(error)


@pytest.mark.parametrize(
    ("graph", "given"),
    [
        pytest.param(lambda: scipy.sparse.csr_matrix(np.eye(2)), "csr_matrix (call .toarray() on a sparse matrix)",
                     id="sparse"),
        pytest.param(lambda: {0: [1], 1: [0]}, "dict", id="dict"),
        pytest.param(lambda: "5", "str", id="str"),
        pytest.param(lambda: True, "bool", id="bool"),
        pytest.param(lambda: np.zeros((2, 3)), "shape (2, 3)", id="not-square"),
    ],
)  # fmt: skip
def test_a_graph_that_is_no_matrix_is_named_by_its_type(graph: Callable[[], Any], given: str) -> None:
    expected = f"graph must be a networkx Graph or a square K×K adjacency matrix, got {given}."
    with pytest.raises(ValueError, match=re.escape(expected)):  # a sparse matrix read as "shape ()" before
        gym.make("GraphBandit-v0", graph=graph())


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"graph": nx.path_graph(3), "n_arms": "junk"}, TypeError, "n_arms must be an integer, got 'junk'"),
        ({"graph": nx.path_graph(3), "edge_probability": 7}, ValueError, "edge_probability must be a finite number"),
        ({"means": [0.5] * 10, "gap": "junk"}, TypeError, "gap must be a real number, got 'junk'"),
    ],
    ids=["n_arms", "edge_probability", "gap"],
)
def test_an_argument_that_graph_or_means_overrides_is_still_checked(
    kwargs: dict[str, Any], error: type, needle: str
) -> None:
    with pytest.raises(error, match=re.escape(needle)):  # it was dropped unseen
        gym.make("GraphBandit-v0", **kwargs)


def test_a_vector_reward_table_of_neither_shape_names_both() -> None:
    venv = gym.make_vec("GraphBandit-v0", num_envs=3, horizon=10)
    with pytest.raises(ValueError, match=re.escape("reward_table must have shape (10, 10) or (3, 10, 10), got shape")):
        venv.reset(options={"reward_table": np.ones((3, 3))})


@pytest.mark.parametrize("env_id", ["MovieLensRecommendation-v0", "PrivacyBudgetGowalla-v0"])
def test_an_empty_data_path_is_refused_as_such(env_id: str) -> None:
    with pytest.raises(ValueError, match="got an empty path ''"):  # it read the current folder before
        gym.make(env_id, data="")


@pytest.mark.parametrize("env_id", ["PrivacyBudgetMovieLens-v0", "PrivacyBudgetGowalla-v0"])
def test_a_numpy_sensitivity_range_is_a_pair(env_id: str) -> None:
    as_array = gym.make(env_id, sensitivity_range=np.array([0.3, 0.6]), horizon=5, oracle_samples=1000)
    as_tuple = gym.make(env_id, sensitivity_range=(0.3, 0.6), horizon=5, oracle_samples=1000)
    assert as_array.unwrapped.instance.sensitivity == as_tuple.unwrapped.instance.sensitivity
    with pytest.raises(ValueError, match="a tuple, list or 1-D array of two numbers"):
        gym.make(env_id, sensitivity_range=np.array([[0.3, 0.6]]), horizon=5, oracle_samples=1000)


# --------------------------------------------------------------------------------- sizes

ABSURD = 10**9


@pytest.mark.parametrize("env_id", IDS)
def test_absurd_num_envs_is_refused_before_allocating(env_id: str, env_kwargs: Kwargs) -> None:
    with pytest.raises(ValueError, match=rf"^num_envs={ABSURD} copies of {env_id} \(about .* each\) would need") as e:
        make_vec(env_id, env_kwargs, num_envs=ABSURD)
    assert "more than the limit of" in one_sentence(e) and "BANDIT_ENVS_MEMORY_LIMIT" in str(e.value)


ABSURD_SIZES = [
    pytest.param("GraphBandit-v0", lambda: {"n_arms": 10**6}, "n_arms=1000000", id="graph-n_arms"),
    pytest.param("GraphBandit-v0", lambda: {"graph": nx.empty_graph(10**5)}, "a graph of 100000 nodes", id="graph"),
    pytest.param("PrivacyBudgetMovieLens-v0", lambda: {"n_budgets": ABSURD}, f"n_budgets={ABSURD}", id="n_budgets"),
    pytest.param("PrivacyBudgetGowalla-v0", lambda: {"n_budgets": 10**6}, "oracle_samples=1000 with 1000000", id="k"),
    pytest.param("PrivacyBudgetMovieLens-v0", lambda: {"oracle_samples": 10**12}, "oracle_samples=", id="oracle-ml"),
    pytest.param("PrivacyBudgetGowalla-v0", lambda: {"oracle_samples": 10**12}, "oracle_samples=", id="oracle-gw"),
]


@pytest.mark.parametrize(("env_id", "kwargs", "named"), ABSURD_SIZES)
def test_absurd_sizes_are_refused_before_allocating(
    env_id: str, kwargs: Callable[[], dict[str, Any]], named: str, env_kwargs: Kwargs
) -> None:
    with pytest.raises(ValueError, match="would need about") as error:
        make(env_id, env_kwargs, **kwargs())
    assert named in one_sentence(error)
    with pytest.raises(ValueError, match="would need about"):
        make_vec(env_id, env_kwargs, **kwargs())


@pytest.mark.parametrize("env_id", ROUND_TABLE_IDS)
def test_absurd_round_counts_are_refused(env_id: str, env_kwargs: Kwargs) -> None:
    env = make(env_id, env_kwargs).unwrapped
    venv = make_vec(env_id, env_kwargs)
    for method in (env.round_contexts, env.round_noise, venv.round_contexts, venv.round_noise):
        with pytest.raises(ValueError, match="^n_rounds=1000000000000 .*would need about") as error:
            method(10**12, 0)
        one_sentence(error)


@pytest.mark.parametrize("env_id", IDS)
def test_memory_limit_can_be_set_and_is_stated(
    env_id: str, env_kwargs: Kwargs, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_vec(env_id, env_kwargs, num_envs=200)  # fits the default limit
    monkeypatch.setenv("BANDIT_ENVS_MEMORY_LIMIT", "1e5")
    with pytest.raises(ValueError, match=r"more than the limit of 97\.7 KiB \(\$BANDIT_ENVS_MEMORY_LIMIT;") as error:
        make_vec(env_id, env_kwargs, num_envs=200)
    one_sentence(error)
    monkeypatch.setenv("BANDIT_ENVS_MEMORY_LIMIT", "lots")
    with pytest.raises(ValueError, match=r"^\$BANDIT_ENVS_MEMORY_LIMIT must be a positive number of bytes, got 'lots'"):
        make_vec(env_id, env_kwargs, num_envs=200)


@pytest.mark.parametrize("env_id", ROUND_TABLE_IDS)
def test_instance_tables_too_large_are_refused(
    env_id: str, env_kwargs: Kwargs, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(env_id, env_kwargs)  # the data is loaded (and kept) under the default limit
    monkeypatch.setenv("BANDIT_ENVS_MEMORY_LIMIT", "1e6")
    with pytest.raises(ValueError, match=r"with rank=19 .* would need about .* more than the limit") as error:
        make(env_id, env_kwargs, rank=19)  # an instance not built yet
    one_sentence(error)


# ------------------------------------------------------------------------- memory per copy


def _vector_estimate(env_id: str, env: Any) -> tuple[float, float]:
    """(bytes per copy besides the noise rows, bytes of all noise rows) of a native vector env of ``env_id``."""
    per_copy = env_profile(env_id).copy_bytes(env)
    blocks = [b.block for b in vars(env).values() if isinstance(b, core.NoiseBlocks)]
    return per_copy, sum(block.nbytes for block in blocks)


@pytest.mark.parametrize("env_id", IDS)
def test_memory_per_copy_is_bounded_as_documented(
    env_id: str, env_kwargs: Kwargs, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = 2**20
    monkeypatch.setattr(core, "NOISE_BUFFER_BYTES", budget)
    warm = make_vec(env_id, env_kwargs, num_envs=2)  # data, scenario and kernels loaded before measuring
    warm.reset(seed=0)
    warm.step(np.zeros(2, dtype=np.int64))  # the step's kernels too (run alone, this test loaded them measuring)
    n = 2000
    tracemalloc.start()
    try:
        venv = make_vec(env_id, env_kwargs, num_envs=n)
        venv.reset(seed=0)
        for _ in range(3):
            venv.step(np.zeros(n, dtype=np.int64))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    per_copy, noise = _vector_estimate(env_id, venv.unwrapped)
    rows = len([b for b in vars(venv.unwrapped).values() if isinstance(b, core.NoiseBlocks)])
    assert noise <= rows * budget  # all copies' buffered rows together stay within the budget
    assert peak <= n * per_copy + noise, f"{peak / n:.0f} bytes per copy measured, {per_copy + noise / n:.0f} stated"


@pytest.mark.parametrize("env_id", IDS)
def test_results_do_not_depend_on_the_buffer_size(
    env_id: str, env_kwargs: Kwargs, monkeypatch: pytest.MonkeyPatch
) -> None:
    kwargs = env_kwargs(env_id)
    steps = 2 * kwargs["horizon"] + 3  # across two autoresets

    def trace() -> list[Any]:
        venv = make_vec(env_id, env_kwargs)
        out: list[Any] = [venv.reset(seed=11)]
        n = int(venv.single_action_space.n)
        for t in range(steps):
            out.append(venv.step((np.arange(NUM_ENVS) + t) % n))
        return out

    reference = trace()
    monkeypatch.setattr(core, "NOISE_BUFFER_BYTES", 1)  # one buffered row per copy: a refill every step
    small = trace()
    for a, b in zip(reference, small, strict=True):
        for x, y in zip(_leaves(a), _leaves(b), strict=True):
            np.testing.assert_array_equal(x, y)


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in _leaves(value[key])]
    if isinstance(value, tuple | list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]
