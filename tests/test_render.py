"""Render modes of every registered env: frames, the checkers, and nothing kept when rendering is off.

Checked for each id of ``bandit_envs.ENV_IDS`` through ``gym.make``: the types, shapes and dtypes of
``"ansi"`` and ``"rgb_array"`` frames and what ``"human"`` prints; that the text frame states the
round, the action and the regret so far (the sum of ``info["regret"]``); that Gymnasium's and
stable-baselines3's ``check_env`` pass with each mode; that ``render_mode=None`` returns None and
keeps no rendering state; that a bad ``render_mode`` is refused in one sentence. Known answers: the
per-arm statistics of a replayed reward table on a small graph; vector copy i's frames equal the
single env's with seed s + i (across an autoreset); the regret curve after it is thinned.
"""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import env_test_kwargs, lazy_module
from gymnasium.utils.env_checker import check_env as gym_check_env

import bandit_envs
from bandit_envs import GraphBanditEnv, GraphBanditVectorEnv
from bandit_envs.rendering import MAX_RENDERED_COPIES, RENDER_FPS, RENDER_MODES, EpisodeStats, Renderer

sb3_checker = lazy_module("stable_baselines3.common.env_checker")  # imported when first used

IDS = list(bandit_envs.ENV_IDS)
MODES = ("ansi", "rgb_array", "human")
FRAME_SHAPE = (360, 640, 3)
STEPS = 5


def make(env_id: str, **extra: Any) -> gym.Env:
    return gym.make(env_id, **{**env_test_kwargs(env_id), **extra})


def make_vec(env_id: str, num_envs: int, **extra: Any) -> gym.vector.VectorEnv:
    kwargs = {**env_test_kwargs(env_id), **extra}
    return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)


def play(env: gym.Env, steps: int, seed: int = 0) -> list[dict[str, Any]]:
    """Reset with ``seed`` and play actions 0, 1, 2, ... (mod K); return the step infos."""
    env.reset(seed=seed)
    n = int(env.action_space.n)
    return [env.step(t % n)[4] for t in range(steps)]


def one_sentence(message: str) -> bool:
    return "\n" not in message and message.endswith(".") and message.count(". ") == 0


@pytest.mark.parametrize("env_id", IDS)
def test_metadata_declares_the_render_modes(env_id: str) -> None:
    env = make(env_id)
    venv = make_vec(env_id, 2)
    for meta in (env.metadata, venv.metadata):
        assert list(meta["render_modes"]) == list(RENDER_MODES) == ["ansi", "human", "rgb_array"]
        assert meta["render_fps"] == RENDER_FPS > 0


@pytest.mark.parametrize("env_id", IDS)
def test_ansi_frame_states_round_action_and_regret(env_id: str) -> None:
    env = make(env_id, render_mode="ansi")
    env.reset(seed=0)
    first = env.render()
    assert isinstance(first, str)
    assert f"{env_id}  round 0/" in first and "action -" in first and "regret so far 0.000" in first
    infos = play(env, STEPS)
    frame = env.render()
    assert isinstance(frame, str)
    lines = frame.splitlines()
    action = (STEPS - 1) % int(env.action_space.n)
    assert f"round {STEPS}/{env.unwrapped.horizon}" in lines[0]
    assert f"action {action} " in lines[0]
    regret = 0.0
    for info in infos:  # added in order, as the env adds them (builtin sum() compensates from Python 3.12 on)
        regret += float(info["regret"])
    assert f"regret so far {regret:.3f}" in lines[0]
    marked = [line for line in lines if line.startswith(" * ")]
    assert len(marked) == 1  # the pulled arm's row
    assert "pulls" in frame and "obs" in frame and "mean" in frame
    last = infos[-1]
    if env_id.startswith("PrivacyBudget"):
        assert lines[1].startswith(f"ε {last['epsilon']:.3g}  sensitivity φ {last['sensitivity']:.3f}")
        assert f"loss L {last['privacy_loss']:.3f}" in lines[1]
    elif env_id.endswith("Recommendation-v0"):
        assert lines[1].startswith(f"user {last['user_id']}")
        assert "item: " in lines[1]
        if env_id.startswith("MovieLens"):
            item = env.unwrapped.problem.item_ids[action]
            assert f"item: movie {item}" in lines[1]
        else:
            assert f"item: POI {last['candidate_ids'][action]} (candidate {action})" in lines[1]


@pytest.mark.parametrize("env_id", IDS)
def test_rgb_array_frames_are_uint8_images_of_one_size(env_id: str) -> None:
    env = make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    play(env, STEPS)
    later = env.render()
    for frame in (first, later):
        assert isinstance(frame, np.ndarray)
        assert frame.dtype == np.uint8 and frame.shape == FRAME_SHAPE
    assert not np.array_equal(first, later)  # the steps changed the picture
    picture = env.unwrapped._renderer._picture
    env.step(0)
    env.render()
    assert env.unwrapped._renderer._picture is picture  # one figure per env, reused
    env.close()
    assert env.unwrapped._renderer._picture is None
    assert env.render().shape == FRAME_SHAPE  # a closed env draws again on a new figure
    env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_human_mode_prints_the_text_frame_at_every_step(env_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    env = make(env_id, render_mode="human")
    play(env, 2)
    out = capsys.readouterr().out
    assert out.count(f"{env_id}  round ") == 3  # reset and two steps
    assert "round 2/" in out
    assert env.render() is None
    assert "round 2/" in capsys.readouterr().out


@pytest.mark.integration  # stable-baselines3's env checker
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("env_id", IDS)
def test_checkers_pass_with_each_render_mode(env_id: str, mode: str, capsys: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gym_check_env(make(env_id, render_mode=mode).unwrapped, skip_render_check=False)
        sb3_checker.check_env(make(env_id, render_mode=mode), warn=True, skip_render_check=False)
    about_rendering = [str(w.message) for w in caught if "render" in str(w.message).lower()]
    assert about_rendering == []


@pytest.mark.parametrize("env_id", IDS)
def test_no_render_mode_keeps_nothing_and_renders_none(env_id: str) -> None:
    env = make(env_id)
    venv = make_vec(env_id, 2)
    play(env, STEPS)
    venv.reset(seed=0)
    venv.step(np.zeros(2, dtype=np.int64))
    for unwrapped in (env.unwrapped, venv.unwrapped):
        assert unwrapped.render_mode is None
        assert unwrapped._renderer is None
        kept = [name for name, value in vars(unwrapped).items() if isinstance(value, Renderer | EpisodeStats)]
        assert kept == []
    with pytest.warns(UserWarning, match="without a render mode"):
        assert env.unwrapped.render() is None
    with pytest.warns(UserWarning, match="without a render mode"):
        assert venv.render() is None


@pytest.mark.parametrize("env_id", IDS)
def test_invalid_render_mode_is_refused_in_one_sentence(env_id: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gym.make warns before the env refuses
        with pytest.raises(ValueError, match="render_mode") as single:
            make(env_id, render_mode="video")
        with pytest.raises(ValueError, match="render_mode") as vector:
            make_vec(env_id, 2, render_mode="video")
    expected = f"render_mode of {env_id} must be None or one of 'ansi', 'human', 'rgb_array', got 'video'."
    assert str(single.value) == str(vector.value) == expected
    with pytest.raises(ValueError, match="render_mode") as many:
        make_vec(env_id, MAX_RENDERED_COPIES + 1, render_mode="ansi")
    message = str(many.value)
    assert f"num_envs <= {MAX_RENDERED_COPIES}" in message and f"num_envs={MAX_RENDERED_COPIES + 1}" in message
    assert one_sentence(str(single.value)) and one_sentence(message)


@pytest.mark.parametrize("bad", [3, 1.5, ["ansi"], np.array(["ansi", "human"]), b"ansi"])
def test_non_string_render_mode_is_refused_in_one_sentence(bad: Any) -> None:
    for build in (lambda: GraphBanditEnv(render_mode=bad), lambda: GraphBanditVectorEnv(2, render_mode=bad)):
        with pytest.raises(ValueError, match="render_mode of GraphBandit-v0 must be None or one of") as error:
            build()
        assert one_sentence(str(error.value))


def test_graph_statistics_of_a_replayed_table() -> None:
    """Path graph 0 - 1 - 2 - 3, known rewards: pulls, observations and means by hand."""
    path = np.zeros((4, 4), dtype=bool)
    for a, b in ((0, 1), (1, 2), (2, 3)):
        path[a, b] = path[b, a] = True
    table = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], [0.9, 1.0, 0.0, 0.5]])
    env = gym.make(
        "GraphBandit-v0", graph=path, means=[0.9, 0.5, 0.5, 0.5], reward="bernoulli", horizon=3, render_mode="ansi"
    )
    env.reset(seed=0, options={"reward_table": table})
    for a in (0, 1, 3):
        env.step(a)
    stats = env.unwrapped._renderer.stats
    # N(0) = {0, 1} in round 1, N(1) = {0, 1, 2} in round 2, N(3) = {2, 3} in round 3.
    np.testing.assert_array_equal(stats.pulls[0], [1, 1, 0, 1])
    np.testing.assert_array_equal(stats.observations[0], [2, 2, 2, 1])
    np.testing.assert_allclose(stats.means(), [(0.1 + 0.5) / 2, (0.2 + 0.6) / 2, (0.7 + 0.0) / 2, 0.5])
    np.testing.assert_array_equal(stats.last_observed[0], [False, False, True, True])
    rows = env.render().splitlines()[2:]
    assert rows[0].split() == ["0", "1", "2", "0.300", "0.900"]
    assert rows[2].split() == ["+", "2", "0", "2", "0.350", "0.500"]
    assert rows[3].split() == ["*", "3", "1", "1", "0.500", "0.500"]
    gaps = 0.9 - np.array([0.9, 0.5, 0.5, 0.5])
    assert f"regret so far {gaps[0] + gaps[1] + gaps[3]:.3f}" in env.render()
    env.reset(seed=0)
    assert int(stats.t[0]) == 0 and stats.pulls.sum() == 0 and stats.regret[0] == 0.0


@pytest.mark.parametrize("env_id", IDS)
def test_vector_copies_render_as_their_single_envs(env_id: str) -> None:
    """Copy i of the vector env reset with seed s shows the frames of the single env reset with s + i."""
    n, seed = 3, 11
    horizon = env_test_kwargs(env_id)["horizon"]
    venv = make_vec(env_id, n, render_mode="ansi")
    k = int(venv.single_action_space.n)
    actions = np.arange(horizon + 3)[:, None] + np.arange(n)  # goes through an autoreset
    venv.reset(seed=seed)
    singles = [make(env_id, render_mode="ansi") for _ in range(n)]
    for i, env in enumerate(singles):
        env.reset(seed=seed + i)
    for row in actions % k:
        venv.step(row)
        for i, env in enumerate(singles):
            if env.unwrapped._t >= horizon:
                env.reset()  # NEXT_STEP autoreset: this step restarts the copy
            else:
                env.step(int(row[i]))
        frames = venv.render()
        assert isinstance(frames, tuple) and len(frames) == n
        assert list(frames) == [env.render() for env in singles]
    assert "round 2/" in frames[0]  # after the autoreset
    pictures = make_vec(env_id, 2, render_mode="rgb_array")
    pictures.reset(seed=0)
    pictures.step(np.array([0, 1]))
    frames = pictures.render()
    assert len(frames) == 2 and all(f.shape == FRAME_SHAPE and f.dtype == np.uint8 for f in frames)
    pictures.close()


def test_vector_human_mode_prints_every_copy(capsys: pytest.CaptureFixture[str]) -> None:
    venv = make_vec("GraphBandit-v0", 2, render_mode="human")
    venv.reset(seed=0)
    venv.step(np.array([0, 1]))
    out = capsys.readouterr().out
    assert out.count("[copy 0] GraphBandit-v0  round ") == 2 and out.count("[copy 1] ") == 2
    assert venv.render() is None


def test_many_arms_list_the_most_pulled() -> None:
    env = gym.make("GraphBandit-v0", n_arms=40, edge_probability=0.0, means=np.full(40, 0.5), render_mode="ansi")
    env.reset(seed=0)
    for a in [39] * 3 + list(range(35)):
        env.step(a)
    rows = [line for line in env.render().splitlines()[2:] if not line.lstrip().startswith("(")]
    arms = [int(re.sub(r"^[ *+]+", "", row).split()[0]) for row in rows]
    assert arms == [*range(29), 34, 39]  # 39 (3 pulls), then 0..28 (1 pull, lowest index), and the last action
    assert "(31 of 40 arms shown: the most pulled)" in env.render()


def test_regret_curve_is_thinned_but_exact() -> None:
    stats = EpisodeStats(1, 2, curve_points=8)
    for t in range(100):
        stats.record(t % 2, 1.0, {"regret": 0.5})
    steps, values = stats.regret_curve()
    assert len(steps) <= 8 + 2 and steps[0] == 0 and steps[-1] == 100
    assert np.all(np.diff(steps) > 0)
    np.testing.assert_allclose(values, 0.5 * steps)
    np.testing.assert_array_equal(stats.pulls[0], [50, 50])


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_rendering_vector_env_copies_without_its_figure(how: str) -> None:
    venv = GraphBanditVectorEnv(2, horizon=10, render_mode="rgb_array")
    venv.reset(seed=0)
    venv.step(np.array([0, 1]))
    frames = venv.render()
    twin = copy.deepcopy(venv) if how == "deepcopy" else pickle.loads(pickle.dumps(venv))
    assert twin._renderer._picture is None
    for mine, theirs in zip(frames, twin.render(), strict=True):
        np.testing.assert_array_equal(mine, theirs)
    assert venv._renderer._picture is not None


def test_an_env_class_without_a_scene_refuses_a_render_mode_in_one_sentence() -> None:
    class Plain(GraphBanditEnv):
        def _scene(self) -> None:  # a user's env that does not describe its frames
            return None

    class PlainVector(GraphBanditVectorEnv):
        def _scene(self) -> None:
            return None

    assert Plain().render_mode is None
    with pytest.raises(ValueError, match=r"render_mode='ansi' needs Plain to describe its frames"):
        Plain(render_mode="ansi")
    with pytest.raises(ValueError, match=r"needs PlainVector to describe its frames"):
        PlainVector(2, render_mode="rgb_array")
