"""Shared test settings: the lazy imports, the real-data lookup, the per-id env profiles and the agent tables.

* :class:`lazy_module`: a module imported when a test first uses it, so that collecting the suite
  does not import ``scipy.stats``, ``torch`` or stable-baselines3 (seconds).
* :func:`shared_data`: the one place that knows where the real datasets live (``../shared/data``
  from the project root, never copied into the repository); a test asks for a file or folder by
  its name there and is skipped, with the reason, when it is absent (:data:`ML_RATINGS` and
  :data:`GOWALLA_NYC` name the two files most tests read).
* :data:`PATH3`: the three-arm path graph 0 - 1 - 2 that the agent tests play on.
* :data:`ENV_PROFILES`: one row per registered env id, the only place tests look up what is
  particular to an id (cheap, easy and vector keywords, its documented memory per copy, whether it
  has per-round tables). Every test that iterates the registered ids reads it
  (:func:`env_profile`, :func:`env_test_kwargs`, fixture :func:`env_kwargs`); a registered id
  without a row fails those tests with a sentence saying where to add it.
* :func:`assert_same`: two outputs (dicts, sequences, arrays, scalars) equal exactly, types included.
* :func:`assert_copies_replay_single_envs`: copy i of a vector env is the single env seeded s + i,
  across autoresets.
* :func:`make_offline`: an env made with its defaults while any download fails the test.
* :func:`saved_tasks`: the task indices a partial store has saved, read from its batch files.
* :func:`public_agent_classes` and :func:`missing_agents`: the agent tables of the shared refusal and
  fuzz tests are checked against ``agents.__all__``, so a new agent without an entry fails a test
  that names it.
* Figures: in the fast tier a test draws and saves a figure only if it checks one (fixture
  :func:`rendered_figures`, or :func:`drawing_figures` in a module fixture); the others save a
  placeholder PNG (:func:`_fast_tier_figures`). ``python -m pytest`` draws every figure.
* Hypothesis profiles ``fast`` (the fast tier's) and ``thorough`` (a run with the integration tier,
  or ``HYPOTHESIS_PROFILE=thorough``): :func:`examples` scales the number of examples a property
  test names by the loaded profile.
"""

from __future__ import annotations

import gc
import importlib
import inspect
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import settings

#: ``thorough`` runs every example a property test names, ``fast`` half of them; the examples are
#: derandomized, so either profile is deterministic. :func:`pytest_configure` picks one.
settings.register_profile("thorough", max_examples=100)
settings.register_profile("fast", max_examples=50)


def pytest_configure(config: pytest.Config) -> None:
    """Load ``$HYPOTHESIS_PROFILE`` if set, else ``fast`` for a run without the integration tier, else ``thorough``.

    So the fast tier (``-m "not slow and not integration"``) runs half the examples and ``python -m
    pytest`` (both tiers, as CI runs it) all of them (docs/contributing.md, "Checks"). Test modules
    are imported after this hook, when their ``@settings`` read the loaded profile.
    """
    chosen = os.environ.get("HYPOTHESIS_PROFILE")
    if not chosen:
        chosen = "fast" if "not integration" in (config.getoption("markexpr", "") or "") else "thorough"
    settings.load_profile(chosen)


#: Where tools the tests run would write in the system's temporary directory by default: stable-baselines3's
#: ``learn`` without a logger of its own (an empty ``SB3-<time>`` folder each time) and Dask's workers
#: (``dask-scratch-space``).
_TOOL_FOLDERS = {"SB3_LOGDIR": "sb3-logs", "DASK_TEMPORARY_DIRECTORY": "dask-scratch"}


@pytest.fixture(autouse=True, scope="session")
def _tools_write_in_pytest_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The tests' tools (and their subprocesses') write in pytest's temporary folder, not the system's."""
    before = {name: os.environ.get(name) for name in _TOOL_FOLDERS}
    for name, folder in _TOOL_FOLDERS.items():
        os.environ[name] = str(tmp_path_factory.mktemp(folder))
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def thorough() -> bool:
    """True under the ``thorough`` profile: statistical tests then draw their full sample sizes.

    The fast tier draws smaller samples (each test states the power it keeps); ``python -m pytest``
    (CI) draws the full ones, so an overspending mechanism is caught at the finer margin there.
    """
    return bool(settings.default.max_examples >= 100)


def examples(named: int) -> int:
    """The number of examples to run of a property test that names ``named``: all under ``thorough``."""
    return max(1, round(named * settings.default.max_examples / 100))


class lazy_module:  # noqa: N801 - used like the module it stands for
    """A module imported when a test first reads one of its attributes, not when pytest collects the file.

    ``stats = lazy_module("scipy.stats")`` at the top of a test module: ``scipy.stats``, ``torch`` and
    stable-baselines3 each take from a large part of a second to seconds to import, and collecting the
    suite imports every test module.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):  # pytest looks for its markers on every module-level name
            raise AttributeError(attribute)
        return getattr(importlib.import_module(self._name), attribute)


#: Where the real datasets live (see shared/data/README.md).
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
#: Real data files, by their names under ../shared/data (the ``shared_data`` fixture finds them).
ML_RATINGS = "ml-latest-small/ratings.csv"
GOWALLA_NYC = "gowalla-snap-nyc/loc-gowalla_totalCheckins.nyc.txt.gz"

#: The feedback graph 0 - 1 - 2 (three arms on a path), as the agent tests declare it.
PATH3 = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=bool)


# ------------------------------------------------------------------------------- env profiles


def _graph_copy_bytes(venv: Any) -> float:
    from bandit_envs.graph import copy_bytes

    return copy_bytes(venv.n_arms)


def _budget_copy_bytes(venv: Any) -> float:
    from bandit_envs.budget._envs import copy_bytes

    return copy_bytes(venv.n_budgets)


def _recommendation_copy_bytes(venv: Any) -> float:
    from bandit_envs.recommendation._envs import copy_bytes

    return copy_bytes(venv.n_arms, venv.dim)


def _easy_gowalla() -> dict[str, Any]:
    from bandit_envs.datasets import synthetic_gowalla

    # A small city where users stay near home: nearer candidates are visited more often.
    return {"data": synthetic_gowalla(n_users=50, n_pois=200, distance_km=0.2), "n_arms": 5, "rank": 2}


@dataclass(frozen=True)
class EnvProfile:
    """What the tests need to know about one registered env id.

    ``cheap``: constructor keywords that make the env fast to build and step (a short horizon, a
    small oracle): the contract, input, copy, render and property tests use them. ``easy``: an
    instance on which one arm (or, with contexts, the context) clearly decides, for the RL training
    tests (called, as it may build data). ``vector``: keywords besides ``horizon`` for the
    stable-baselines3 adapter tests. ``copy_bytes(venv)``: the documented memory of one copy of the
    native vector env ``venv`` besides its buffered noise rows. ``round_tables``: the env draws its
    per-round contexts and noise as tables (``round_contexts``, ``round_noise``) from an instance of
    rank ``rank``.
    """

    cheap: dict[str, Any]
    easy: Callable[[], dict[str, Any]]
    copy_bytes: Callable[[Any], float]
    vector: dict[str, Any] = field(default_factory=dict)
    round_tables: bool = False


#: One row per registered id (``bandit_envs.ENV_IDS``); keep every ``cheap`` env fast.
ENV_PROFILES: dict[str, EnvProfile] = {
    "GraphBandit-v0": EnvProfile(
        cheap={"horizon": 7},
        easy=lambda: {"gap": 0.5},
        copy_bytes=_graph_copy_bytes,
    ),
    "PrivacyBudgetMovieLens-v0": EnvProfile(
        cheap={"horizon": 7, "oracle_samples": 1000},
        # i.i.d. rounds (next_item="random"); the smallest budget is best by 0.08 (payoffs 0.94, 0.86, 0.77).
        easy=lambda: {
            "oracle_samples": 1000,
            "sensitivity_level": 0.8,
            "budgets": [0.1, 1.0, 5.0],
            "next_item": "random",
        },
        copy_bytes=_budget_copy_bytes,
        vector={"oracle_samples": 1000},
    ),
    "PrivacyBudgetGowalla-v0": EnvProfile(
        cheap={"horizon": 7, "oracle_samples": 1000},
        # Payoffs 1.00, 0.82, 0.68 at gamma = 0.5.
        easy=lambda: {"oracle_samples": 1000, "sensitivity_level": 0.8, "budgets": [0.1, 2.0, 5.0], "gamma": 0.5},
        copy_bytes=_budget_copy_bytes,
        vector={"oracle_samples": 1000},
    ),
    "MovieLensRecommendation-v0": EnvProfile(
        cheap={"horizon": 7},
        easy=lambda: {"n_movies": 5, "rank": 5},
        copy_bytes=_recommendation_copy_bytes,
        round_tables=True,
    ),
    "GowallaRecommendation-v0": EnvProfile(
        cheap={"horizon": 7},
        easy=_easy_gowalla,
        copy_bytes=_recommendation_copy_bytes,
        round_tables=True,
    ),
}


def registered_env_ids() -> list[str]:
    """Every registered id of ``bandit_envs`` (``bandit_envs.ENV_IDS``)."""
    import bandit_envs

    return list(bandit_envs.ENV_IDS)


def env_profile(env_id: str) -> EnvProfile:
    """``env_id``'s row of :data:`ENV_PROFILES`; the calling test fails with a sentence if it has none."""
    if env_id not in ENV_PROFILES:
        pytest.fail(
            f"{env_id} is registered but has no row in ENV_PROFILES of tests/conftest.py; add one "
            "(cheap, easy and vector keywords, its memory per copy) as docs/contributing.md says",
            pytrace=False,
        )
    return ENV_PROFILES[env_id]


def env_test_kwargs(env_id: str) -> dict[str, Any]:
    """A fresh copy of ``env_id``'s cheap keywords (its profile's ``cheap``)."""
    return dict(env_profile(env_id).cheap)


@pytest.fixture(scope="session")
def env_kwargs() -> Callable[[str], dict[str, Any]]:
    """:func:`env_test_kwargs`, for tests: ``env_kwargs(env_id)`` is a fresh dict of keywords."""
    return env_test_kwargs


# ------------------------------------------------------------------------------- agent tables


def public_agent_classes() -> list[type]:
    """The concrete agent classes that ``agents`` exports (``agents.__all__``)."""
    import agents
    from agents.base import Agent

    public = [getattr(agents, name) for name in agents.__all__]
    return [c for c in public if inspect.isclass(c) and issubclass(c, Agent) and not inspect.isabstract(c)]


def classes_built_by(builders: Mapping[str, Callable[[int | None], Any]]) -> list[type]:
    """The agent classes a table of builders (``make(n_envs)``) makes; a wrapper also counts as its inner agent's."""
    built: list[type] = []
    for make in builders.values():
        agent = make(None)
        built.append(type(agent))
        inner = getattr(agent, "agent", None)  # LDPWrapper(agent, ...)
        if inner is not None:
            built.append(type(inner))
    return built


def missing_agents(covered: Iterable[type], table: str) -> str | None:
    """A sentence naming the public agent classes not in ``covered`` (``table`` says where to add them), or None."""
    have = set(covered)
    missing = [c.__name__ for c in public_agent_classes() if c not in have]
    if not missing:
        return None
    return f"agents {missing} of agents.__all__ have no entry in {table}; add one, so that their inputs are tested"


def assert_same(a: Any, b: Any, where: str) -> None:
    """``a`` and ``b`` equal exactly, types included: arrays in shape, dtype and every bit (NaN equal to NaN)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{where}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, tuple | list):
        assert type(a) is type(b) and len(a) == len(b), f"{where}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray | np.generic):
        x, y = np.asarray(a), np.asarray(b)
        assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
        assert x.shape == y.shape and x.dtype == y.dtype, f"{where}: {x.dtype}{x.shape} != {y.dtype}{y.shape}"
        assert np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"), f"{where}: {x} != {y}"
    else:
        assert type(a) is type(b) and (a == b or (a != a and b != b)), f"{where}: {a!r} != {b!r}"


def assert_copies_replay_single_envs(
    venv: Any, make_single: Callable[[], Any], actions: Any, seed: int, restart_info: Mapping[str, Any] | None = None
) -> None:
    """Copy i of ``venv`` reset with ``seed`` is ``make_single()`` reset with ``seed + i``, step for step.

    ``actions`` is (steps, num_envs). Across Gymnasium's NEXT_STEP autoreset: the step after a copy's
    truncation restarts it (reward 0 and the ``restart_info`` values in its info) while the single
    env is reset without a seed, its generator running on. Observations, rewards, truncations and
    every key of the single env's info must match the copy's.
    """
    import numpy as np

    obs_v, _ = venv.reset(seed=seed)
    trace = [venv.step(a) for a in actions]
    for i in range(venv.num_envs):
        env = make_single()
        obs, _ = env.reset(seed=seed + i)
        np.testing.assert_array_equal(obs, obs_v[i])
        for t, a in enumerate(actions[:, i]):
            obs_t, reward_t, _, trunc_t, info_t = trace[t]
            if t > 0 and trace[t - 1][3][i]:  # NEXT_STEP autoreset: this step restarts the copy
                obs, _ = env.reset()
                assert reward_t[i] == 0.0
                for key, value in (restart_info or {}).items():
                    assert info_t[key][i] == value, (key, t, i)
            else:
                obs, reward, _, trunc, info = env.step(int(a))
                assert reward == reward_t[i] and trunc == trunc_t[i]
                for key, value in info.items():
                    np.testing.assert_array_equal(value, info_t[key][i], err_msg=key)
            np.testing.assert_array_equal(obs, obs_t[i])


def make_offline(env_id: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, dict[str, Any]]:
    """(``gym.make(env_id)``, and its observation and info after ``reset(seed=0)``), with downloads failing the test."""
    import gymnasium as gym

    def no_download(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the default env must not touch the network")

    monkeypatch.setattr("pooch.retrieve", no_download)
    env = gym.make(env_id)
    obs, info = env.reset(seed=0)
    return env, obs, info


def saved_tasks(parts: Path) -> list[int]:
    """The task indices in the partial store's batch files ``parts/NNNNNN.json`` (as ``finished()`` reads them)."""
    tasks: list[int] = []
    for path in parts.glob("0*.json"):
        try:
            tasks += [record["task"] for record in json.loads(path.read_text())["tasks"]]
        except (OSError, ValueError):  # absent (no store yet), or cut short: redone, as the store does
            pass
    return sorted(tasks)


def wait_until(condition: Callable[[], bool], what: str, seconds: float) -> None:
    """Poll ``condition`` every 50 ms; fail the test, naming ``what``, if it is not true within ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


#: A 1 x 1 grey PNG: what a figure saved without drawing holds (:func:`_fast_tier_figures`).
PLACEHOLDER_PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x00\x00\x00\x00:~\x9bU\x00"
    b"\x00\x00\nIDATx\x9cc`\x00\x00\x00\x02\x00\x01H\xaf\xa4q\x00\x00\x00\x00IEND\xaeB`\x82"
)


class _FigureDrawing:
    """Whether ``Figure.savefig`` draws now (see :func:`_fast_tier_figures`)."""

    on = True


_DRAWING = _FigureDrawing()


@contextmanager
def drawing_figures() -> Iterator[None]:
    """Figures saved inside the block are drawn, in every tier (for a module fixture whose tests check one)."""
    before, _DRAWING.on = _DRAWING.on, True
    try:
        yield
    finally:
        _DRAWING.on = before


@pytest.fixture(scope="session", autouse=True)
def _sb3_log_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """stable-baselines3's log folder for the session, in pytest's temporary folders.

    Without ``SB3_LOGDIR``, every model stable-baselines3 builds makes an empty folder
    ``SB3-<date and time>`` in the system's temporary folder, which nothing removes: 40 to 80 per
    run of the suite. The tests' subprocesses inherit the variable.
    """
    before = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3-logs"))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("SB3_LOGDIR", None)
        else:
            os.environ["SB3_LOGDIR"] = before


@pytest.fixture(scope="session", autouse=True)
def _fast_tier_figures() -> Iterator[None]:
    """In the fast tier, figures are drawn and saved only by the tests that check a figure.

    Drawing and saving a figure (``tight_layout`` and ``savefig``: text layout, rasterising, PNG
    encoding) takes 0.2-0.3 s, and most tests that run a small experiment check its results and
    summary, not its figure. There the figure is still built (every plotting call made), but
    ``Figure.tight_layout`` does nothing and ``Figure.savefig`` writes :data:`PLACEHOLDER_PNG`. A
    test that checks a figure asks for the fixture :func:`rendered_figures` (a module fixture uses
    :func:`drawing_figures`). Under the ``thorough`` profile (``python -m pytest``, as CI runs it)
    every test draws and saves its figures.
    """
    if thorough():
        yield
        return
    from matplotlib.figure import Figure

    savefig, tight_layout = Figure.savefig, Figure.tight_layout

    def save(fig: Any, fname: Any, *args: Any, **kwargs: Any) -> Any:
        if _DRAWING.on:
            return savefig(fig, fname, *args, **kwargs)
        if hasattr(fname, "write"):
            fname.write(PLACEHOLDER_PNG)
        else:
            Path(os.fspath(fname)).write_bytes(PLACEHOLDER_PNG)
        return None

    def layout(fig: Any, *args: Any, **kwargs: Any) -> Any:
        return tight_layout(fig, *args, **kwargs) if _DRAWING.on else None

    Figure.savefig, Figure.tight_layout = save, layout
    _DRAWING.on = False
    try:
        yield
    finally:
        Figure.savefig, Figure.tight_layout = savefig, tight_layout
        _DRAWING.on = True


@pytest.fixture(autouse=True)
def _figures_drawn_where_checked(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test starts with figures not drawn (fast tier) unless it asks for :func:`rendered_figures`."""
    if thorough():
        yield
        return
    _DRAWING.on = "rendered_figures" in request.fixturenames
    yield
    _DRAWING.on = False


@pytest.fixture
def rendered_figures() -> None:
    """Ask for it in a test that checks a figure file: its figures are then drawn and saved in every tier."""


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move what collection built out of the garbage collector's way, and collect young objects less often.

    After collection the process holds some 300,000 long-lived objects (numba, pandas, scipy,
    hypothesis, the test modules): ``gc.freeze()`` leaves them out of every later collection, and a
    first-generation threshold of 10,000 allocations (Python's default is 700) runs a quarter as
    many collections. No test depends on when a collection runs (those that measure memory call
    ``gc.collect()``). Together they took the garbage collector's time over five of the larger test
    modules from about 4 s to 2 s, and their CPU time by 7%.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pytest-xdist): one worker per CPU this process may run on.

    xdist's own count is psutil's physical cores of the whole host, which in a container limited
    to a few CPUs can be many more than it may use; the CPU affinity mask is what it gets.
    """
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the ``integration`` tier after the fast tier (a stable sort: each tier keeps its order)."""
    items.sort(key=lambda item: item.get_closest_marker("integration") is not None)


@pytest.fixture(scope="session")
def shared_data() -> Callable[[str], Path]:
    """A function ``path(name)``: the absolute path of ``name`` under ``../shared/data``.

    ``name`` may be nested (``"gowalla-snap-nyc/loc-gowalla_totalCheckins.nyc.txt.gz"``). When it
    does not exist the calling test is skipped with the reason.
    """

    def path(name: str) -> Path:
        found = (SHARED_DATA / name).resolve()
        if not found.exists():
            pytest.skip(f"real test data not found at {found} (see shared/data/README.md)")
        return found

    return path


@pytest.fixture
def uncapped_epsilon(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lift the cap on epsilon (``bandit_envs.privacy.MAX_EPSILON``) for one test.

    For the tests of an algorithm's noiseless limit (epsilon = 1e6 or 1e9, noise scales of 1e-6
    and below): past the cap the bounded noise samplers no longer give the stated guarantee, so
    these tests check the algorithm's arithmetic, never a privacy claim.
    """
    import bandit_envs.privacy._checks as checks

    monkeypatch.setattr(checks, "MAX_EPSILON", math.inf)
