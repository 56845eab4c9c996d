"""Property tests: whatever goes into a constructor, ``act``, ``update``, ``reset`` or ``step``, only
a one-sentence ``ValueError`` or ``TypeError`` (or one of Gymnasium's own errors) comes out.

Covered: every public agent constructor (each argument either a valid value or a wild one: NaN,
infinities, huge and negative integers, bools, strings, arrays, None, arbitrary objects), the
feedback of every agent (one env and N copies; a refused call must leave the agent as it was),
the constructor keywords of every registered ``bandit_envs`` id through ``gym.make`` (one
keyword at a time, the others cheap), and ``reset``/``step`` inputs of every id (single and
vector env). A message is "one sentence" when it is one line shorter than 300 characters.

Hypothesis runs derandomized with a small number of examples, so the file is deterministic and fast:
the numbers below are the thorough profile's (a run with the integration tier, as CI's); the fast
tier loads tests/conftest.py's ``fast`` profile, which runs half of each.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import numbers
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from agent_tables import (
    PATH3,
    SIDE,
    SUMMING,
    SUMMING_REWARDS,
    UNIT,
    D,
    K,
    StubModel,
    by_default,
    context_free,
    linear,
    private,
)
from conftest import classes_built_by, env_test_kwargs, examples, missing_agents, public_agent_classes
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import bandit_envs
from agents import (
    GAP,
    LDPOLS,
    SMUCB,
    UCB,
    UCBN,
    FixedArm,
    LDPLinUCB,
    LDPWrapper,
    LinUCB,
    SB3Agent,
    ShuffleLinUCB,
)
from agents.base import Agent

N = 3
EDGELESS = np.zeros((3, 3), dtype=bool)  # LDPWrapper reveals only the pulled arm
ERRORS = (ValueError, TypeError)
GYM_ERRORS = (ValueError, TypeError, gym.error.Error)


def fast(max_examples: int) -> settings:
    """Derandomized settings without shrinking; ``max_examples`` under the thorough profile, half under fast."""
    return settings(
        max_examples=examples(max_examples),
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure is reported as found, fast
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
    )


#: What ``gym.make`` appends to a TypeError of an env's constructor (the keywords, in full).
GYM_SUFFIX = " was raised from the environment creator for "


def assert_one_sentence(exc: BaseException) -> None:
    msg = str(exc).split(GYM_SUFFIX, 1)[0]
    assert msg, f"{type(exc).__name__} without a message"
    assert "\n" not in msg, f"{type(exc).__name__} message spans several lines: {msg[:500]!r}"
    assert len(msg) < 300, f"{type(exc).__name__} message of {len(msg)} characters: {msg[:500]!r}"


def attempt(call: Callable[[], Any], errors: tuple[type[BaseException], ...] = ERRORS) -> tuple[bool, Any]:
    """(True, result) or (False, the refusal); any other exception fails the test."""
    try:
        return True, call()
    except errors as exc:
        assert_one_sentence(exc)
        return False, exc


@pytest.fixture(autouse=True)
def address_space_cap() -> Any:
    """Cap the address space at 3 GiB above its current size while a test runs (Linux).

    Wild sizes must be refused before anything is allocated; should a constructor allocate
    anyway, it fails with MemoryError (a finding) instead of taking the machine's memory.
    """
    try:
        import resource

        with open("/proc/self/statm") as f:
            current = int(f.read().split()[0]) * resource.getpagesize()
    except (ImportError, OSError):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = current + 3 * 2**30
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


# Wild values ---------------------------------------------------------------------------------

HUGE_INTS = [2**31, 10**12, 2**70, -(2**70)]
ints = st.one_of(st.integers(-3, 40), st.sampled_from(HUGE_INTS))
floats = st.one_of(
    st.sampled_from([0.0, -0.0, 0.5, 1.0, -1.0, 2.0, 1e-300, 5e-324, 1e300, math.nan, math.inf, -math.inf]),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
)
numpy_scalars = st.one_of(
    st.integers(-3, 40).map(np.int64),
    st.integers(0, 255).map(np.uint8),
    floats.map(np.float64),
    floats.map(lambda x: np.float32(x) if math.isnan(x) or abs(x) < 3e38 else np.float32(np.inf)),
    st.booleans().map(np.bool_),
)
small_arrays = st.one_of(
    st.lists(floats, max_size=5).map(lambda v: np.array(v, dtype=np.float64)),
    st.lists(st.integers(-3, 5), min_size=1, max_size=5).map(np.array),
    st.lists(st.booleans(), min_size=1, max_size=5).map(np.array),
    st.tuples(st.integers(0, 4), st.integers(0, 4)).map(lambda s: np.full(s, 0.5)),
    st.just(np.array(["a", "b"])),
    st.just(np.empty(0)),
)
wild = st.one_of(
    ints,
    floats,
    numpy_scalars,
    st.booleans(),
    st.none(),
    st.text(max_size=4),
    st.just(1 + 2j),
    small_arrays,
    st.lists(st.one_of(ints, floats), max_size=4),
    st.tuples(floats, floats),
    st.just(object()),
    st.dictionaries(st.text(max_size=3), ints, max_size=2),
)


#: Numbers at the edges, where schedules and noise scales overflow or underflow.
extremes = st.sampled_from([5e-324, 1e-300, 1e300, 1.7e308, -1.0, 0.0, math.nan, math.inf, 2**70, 0, -1])


def valid_or_wild(valid: Any) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(valid), extremes, wild)


# Agent constructors ---------------------------------------------------------------------------


#: Valid values of the required arguments (and of a few optional ones, so runs get deep).
VALID: dict[str, Callable[[], Any]] = {
    "n_arms": lambda: K,
    "horizon": lambda: 60,
    "epsilon": lambda: 1.0,
    "feedback_graph": lambda: PATH3,
    "arm": lambda: 1,
    "n_features": lambda: D,
    "agent": lambda: UCB(K),
    "model": StubModel,
}

#: Every public agent class (``agents.__all__``), and the other public constructors.
CONSTRUCTORS: dict[str, Callable[..., Agent]] = {
    **{cls.__name__: cls for cls in public_agent_classes()},
    "FixedArm.fix_half": FixedArm.fix_half,
}


def arguments(factory: Callable[..., Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Keyword arguments for ``factory``: each a valid value (default or :data:`VALID`) or a wild one."""
    fields = {}
    for name, param in inspect.signature(factory).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        valid = VALID[name]() if name in VALID else param.default
        assert valid is not inspect.Parameter.empty, (
            f"{getattr(factory, '__qualname__', factory)}'s argument {name} has no default and no valid value in "
            "VALID of tests/test_properties.py; add one"
        )
        fields[name] = valid_or_wild(valid)
    return st.fixed_dictionaries(fields)


def obs_for(agent: Agent) -> Any:
    if isinstance(agent, LDPWrapper):
        return obs_for(agent.agent)
    lead = () if agent.n_envs is None else (agent.n_envs,)
    if isinstance(agent, LinUCB | LDPLinUCB | LDPOLS | ShuffleLinUCB):
        return np.full((*lead, K, agent.n_features), 0.25)
    if isinstance(agent, SMUCB):
        return 0.5 if agent.n_envs is None else np.full(agent.n_envs, 0.5)
    if isinstance(agent, SB3Agent):
        return np.full((*lead, D), 0.5)
    return None


def info_for(agent: Agent, k: int = K) -> dict[str, Any]:
    lead = () if agent.n_envs is None else (agent.n_envs,)
    return {"observed_mask": np.ones((*lead, k), dtype=bool), "observed_rewards": np.full((*lead, k), 0.5)}


def step_validly(agent: Agent, steps: int = 3) -> list[Any]:
    actions = []
    for _ in range(steps):
        a = agent.act(obs_for(agent))
        agent.update(a, 0.5 if agent.n_envs is None else np.full(agent.n_envs, 0.5), info_for(agent))
        actions.append(np.asarray(a).tolist())
    return actions


@pytest.mark.parametrize("name", CONSTRUCTORS)
@fast(30)
@given(data=st.data())
def test_agent_constructors_build_or_refuse_in_one_sentence(name, data):
    factory = CONSTRUCTORS[name]
    kwargs = data.draw(arguments(factory), label="kwargs")
    built, agent = attempt(lambda: factory(**kwargs))
    if built:  # an agent that was built must then work with valid feedback
        n_arms = agent.agent.n_arms if isinstance(agent, LDPWrapper) else agent.n_arms
        if n_arms in (0, K):
            step_validly(agent)


# Agent feedback -------------------------------------------------------------------------------

AGENTS: dict[str, Callable[[int | None], Agent]] = {
    **context_free(60),
    **linear(),
    "LDP-UCB": lambda n: LDPWrapper(UCB(K, n_envs=n), "laplace", 1.0, seed=0),
    "LDP-UCBN": lambda n: LDPWrapper(UCBN(K, n_envs=n), "gaussian", 0.5, 0.1, seed=0),
    "LDP-GAP": lambda n: LDPWrapper(GAP(K, 60, 1.0, EDGELESS, n_envs=n), "randomized_response", 1.0, seed=0),
    "SB3": lambda n: SB3Agent(StubModel(), n_envs=n),  # type: ignore[arg-type]
    **private(60),
}
AGENTS.update(by_default(AGENTS))  # a new agent that needs no arguments beyond K


def feedback(agent: Agent, action: Any) -> st.SearchStrategy[tuple[Any, Any, Any]]:
    """(action, reward, info): each the valid one, a perturbed one or a wild value."""
    n = agent.n_envs
    lead = () if n is None else (n,)
    valid_reward = 0.5 if n is None else np.full(n, 0.5)
    actions = st.one_of(
        st.just(action),
        wild,
        st.lists(st.integers(-2, K + 2), min_size=N, max_size=N).map(np.array),
        st.integers(-2, K + 2),
    )
    rewards = st.one_of(st.just(valid_reward), wild, st.lists(floats, min_size=N, max_size=N).map(np.array), floats)
    info = info_for(agent)
    infos = st.one_of(
        st.just(info),
        st.none(),
        wild,
        st.sampled_from(["observed_mask", "observed_rewards", "optimal_action"]).flatmap(
            lambda key: wild.map(lambda v: {**info, key: v})
        ),
        st.sampled_from([K - 1, K + 1]).map(lambda k: info_for(agent, k)),
        st.just({**info, "observed_rewards": np.full((*lead, K), math.nan)}),
    )
    return st.tuples(actions, rewards, infos)


def test_every_public_agent_has_a_feedback_entry() -> None:
    problem = missing_agents(classes_built_by(AGENTS), "AGENTS of tests/test_properties.py")
    assert problem is None, problem


def as_regular_array(value: Any) -> np.ndarray | None:
    """``value`` as a numeric or boolean numpy array, or None (strings, objects, ragged lists)."""
    if isinstance(value, str | bytes) or value is None:
        return None
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return None if arr.dtype.kind in "OSUVc" else arr


def fits(value: Any, n: int | None, kinds: str, inside: Callable[[np.ndarray], bool]) -> bool:
    """Is ``value`` one scalar (``n`` None) or an (n,) array of the dtype ``kinds``, every entry ``inside``?"""
    if n is None:
        if isinstance(value, bool | np.bool_):
            return False
        if not isinstance(value, np.ndarray):
            if "f" not in kinds and not isinstance(value, numbers.Integral):
                return False
            if not isinstance(value, numbers.Real):
                return False
            return bool(inside(np.array([value], dtype=np.float64 if "f" in kinds else object)))
        return value.shape == () and value.dtype.kind in kinds and bool(inside(value.reshape(1)))
    arr = as_regular_array(value)
    return arr is not None and arr.shape == (n,) and arr.dtype.kind in kinds and bool(inside(arr))


#: LinUCB's rewards: unclipped, they are bounded so that its sums of y x stay finite.
LINUCB_REWARDS = (-1e100, 1e100)


def feedback_fits(name: str, agent: Agent, a: Any, r: Any, info: Any) -> bool:
    """The specification of ``update``: does this (action, reward, info) fit the agent?"""
    n, k = agent.n_envs, agent.n_arms
    low, high = (
        (0.0, 1.0)
        if name in UNIT
        else LINUCB_REWARDS
        if name == "LinUCB"
        else SUMMING_REWARDS
        if name in SUMMING
        else (-math.inf, math.inf)
    )
    if not fits(a, n, "iu", lambda v: bool(np.all((v >= 0) & (v < k)))):
        return False
    if not fits(r, n, "iuf", lambda v: bool(np.all(np.isfinite(v.astype(float)) & (v >= low) & (v <= high)))):
        return False
    if info is None:
        return name not in SIDE
    if not isinstance(info, Mapping):
        return False
    shape = (k,) if n is None else (n, k)
    for key in ("observed_mask", "observed_rewards"):
        if info.get(key) is not None:
            arr = as_regular_array(info[key])
            if arr is None or arr.shape != shape:
                return False
    best = as_regular_array(info.get("optimal_action"))
    if best is not None and best.dtype.kind in "iu" and best.size and best.max() >= k:
        return False
    if name not in SIDE:
        return True
    if info.get("observed_mask") is None or info.get("observed_rewards") is None:
        return False
    mask, seen = np.asarray(info["observed_mask"]), np.asarray(info["observed_rewards"])
    if mask.dtype.kind in "iu" and mask.size and (mask.min() < 0 or mask.max() > 1):
        return False
    if mask.dtype.kind not in "biu" or seen.dtype.kind not in "iuf":
        return False
    values = seen[mask.astype(bool)].astype(float)
    return bool(np.all(np.isfinite(values) & (values >= low) & (values <= high)))


@pytest.mark.parametrize("n", [None, N], ids=["one-env", "copies"])
@pytest.mark.parametrize("name", AGENTS)
@fast(20)
@given(data=st.data())
def test_agent_feedback_is_taken_iff_it_fits_else_refused_in_one_sentence_without_changing_state(name, n, data):
    agent, twin = AGENTS[name](n), AGENTS[name](n)
    for _ in range(3):
        obs = data.draw(st.one_of(st.just(obs_for(agent)), wild), label="obs")
        acted, action = attempt(lambda: agent.act(obs))  # noqa: B023
        if not acted:
            action = agent.act(obs_for(agent))
            obs = obs_for(agent)
        twin.act(obs)
        a, r, info = data.draw(feedback(agent, action), label="feedback")
        expected = feedback_fits(name.removeprefix("LDP-") if name.startswith("LDP-") else name, agent, a, r, info)
        if name.startswith("LDP-"):  # the wrapper clips any finite reward and reads no side observation
            expected = feedback_fits("LDP", agent, a, r, info)
        taken, _ = attempt(lambda: agent.update(a, r, info))  # noqa: B023
        assert taken == expected, f"update({a!r}, {r!r}, {info!r}) was {'taken' if taken else 'refused'}"
        if taken:
            twin.update(a, r, info)
    assert step_validly(agent) == step_validly(twin)


# Environments ----------------------------------------------------------------------------------

ENV_IDS = [i for i in gym.registry if str(gym.registry[i].entry_point).startswith("bandit_envs.")]
assert set(ENV_IDS) == set(bandit_envs.ENV_IDS)


def env_class(env_id: str) -> type:
    module, name = str(gym.registry[env_id].entry_point).split(":")
    return getattr(importlib.import_module(module), name)


def env_keywords(env_id: str) -> list[str]:
    """The keywords of an env's constructor (a budget env's: the fields of its config type)."""
    cls = env_class(env_id)
    config = getattr(cls, "config_type", None)
    if config is not None:
        return [f.name for f in dataclasses.fields(config)]
    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


ARRAY_IN_MESSAGE = "env-side defect: the argument check quotes an array value in full, a message of several lines"
ALLOCATES_FIRST = "env-side defect: a huge value is allocated before any size check (MemoryError)"

#: Env-side defects these tests find in the envs as they are (the envs are hardened separately).
ENV_XFAIL: dict[tuple[str, str], str] = {}

ENV_CASES = [
    pytest.param(
        env_id,
        key,
        marks=[pytest.mark.xfail(strict=False, reason=ENV_XFAIL[env_id, key])] if (env_id, key) in ENV_XFAIL else [],
        id=f"{env_id}-{key}",
    )
    for env_id in ENV_IDS
    for key in env_keywords(env_id)
]


@pytest.mark.parametrize(("env_id", "key"), ENV_CASES)
@fast(10)
@given(data=st.data())
def test_env_constructor_keywords_build_or_refuse_in_one_sentence(env_id, key, data):
    # gym.make itself reads render_mode as a string (a non-string fails inside Gymnasium).
    values = st.one_of(st.none(), st.text(max_size=5)) if key == "render_mode" else st.one_of(extremes, wild)
    value = data.draw(values, label=key)
    kwargs = {**env_test_kwargs(env_id), key: value}
    built, env = attempt(lambda: gym.make(env_id, **kwargs), GYM_ERRORS)
    if built:  # an env that was built must then work
        env.reset(seed=0)
        env.step(env.action_space.sample())


#: Env-side defects of reset and step, keyed (id, "single" or "vector", "reset" or "step").
STEP_XFAIL: dict[tuple[str, str, str], str] = {}

STEP_CASES = [
    pytest.param(
        env_id,
        kind,
        call,
        marks=[pytest.mark.xfail(strict=False, reason=STEP_XFAIL[env_id, kind, call])]
        if (env_id, kind, call) in STEP_XFAIL
        else [],
        id=f"{env_id}-{kind}-{call}",
    )
    for env_id in ENV_IDS
    for kind in ("single", "vector")
    for call in ("reset", "step")
]

_ENVS: dict[tuple[str, str], Any] = {}


def cached_env(env_id: str, kind: str) -> Any:
    if (env_id, kind) not in _ENVS:
        kwargs = env_test_kwargs(env_id)
        _ENVS[env_id, kind] = gym.make(env_id, **kwargs) if kind == "single" else gym.make_vec(env_id, N, **kwargs)
    return _ENVS[env_id, kind]


@pytest.mark.parametrize(("env_id", "kind", "call"), STEP_CASES)
@fast(25)
@given(data=st.data())
def test_env_reset_and_step_take_or_refuse_their_inputs_in_one_sentence(env_id, kind, call, data):
    env = cached_env(env_id, kind)
    env.reset(seed=0)
    if call == "reset":
        seed = data.draw(valid_or_wild(1), label="seed")
        options = data.draw(st.one_of(st.none(), wild, st.dictionaries(st.text(max_size=3), wild, max_size=2)))
        attempt(lambda: env.reset(seed=seed, options=options), GYM_ERRORS)
    else:
        valid = env.action_space.sample()
        actions = st.one_of(
            st.just(valid),
            wild,
            st.lists(st.integers(-2, 30), min_size=N, max_size=N).map(np.array),
            st.integers(-2, 30),
        )
        action = data.draw(actions, label="action")
        attempt(lambda: env.step(action), GYM_ERRORS)
    env.reset(seed=0)
    env.step(env.action_space.sample())  # still works


# Privacy mechanisms ---------------------------------------------------------------------------

#: A valid call of every public function of ``bandit_envs.privacy`` (keyword arguments).
MECHANISM_CALLS: dict[str, dict[str, Any]] = {
    "bernoulli_mechanism": {"r": np.array([0.2, 0.9]), "epsilon": 1.0},
    "gaussian_delta": {"sigma": 2.0, "epsilon": 1.0, "l2_sensitivity": 1.0},
    "gaussian_mechanism": {"x": np.array([0.2, 0.9]), "epsilon": 1.0, "delta": 1e-5, "lower": 0.0, "upper": 1.0},
    "gaussian_sigma_analytic": {"epsilon": 1.0, "delta": 1e-5, "l2_sensitivity": 1.0},
    "gaussian_sigma_classic": {"epsilon": 0.5, "delta": 1e-5, "l2_sensitivity": 1.0},
    "group_privacy": {"epsilon": 1.0, "delta": 1e-6, "group": 3},
    "haversine_m": {"lat1": 40.7, "lon1": -74.0, "lat2": 40.8, "lon2": -73.9},
    "l2_ball_keep_probability": {"epsilon": 1.0},
    "l2_ball_mechanism": {"x": np.array([[0.2, 0.9], [0.0, 0.0]]), "epsilon": 1.0, "radius": 1.0},
    "l2_ball_scale": {"epsilon": 1.0, "dim": 3, "radius": 1.0},
    "laplace_mechanism": {"x": np.array([0.2, 0.9]), "epsilon": 1.0, "lower": 0.0, "upper": 1.0},
    "local_epsilon_for_shuffle": {"epsilon": 1.0, "n": 50, "delta": 1e-6},
    "planar_laplace": {"xy": np.array([[0.0, 0.0]]), "epsilon_per_m": 0.01},
    "planar_laplace_latlon": {"lat": np.array([40.7]), "lon": np.array([-74.0]), "epsilon_per_km": 1.0},
    "planar_laplace_radius_cdf": {"r": np.array([1.0, 10.0]), "epsilon_per_m": 0.1},
    "planar_laplace_radius_quantile": {"p": np.array([0.1, 0.9]), "epsilon_per_m": 0.1},
    "randomized_response": {"bits": np.array([0, 1, 1]), "epsilon": 1.0},
    "rr_debias": {"reports": np.array([0, 1, 1]), "epsilon": 1.0},
    "shuffle_delta": {"epsilon": 0.5, "local_epsilon": 2.0, "n": 50},
    "shuffle_epsilon": {"local_epsilon": 2.0, "n": 50, "delta": 1e-6},
    "spherical_laplace_radius_cdf": {"r": np.array([1.0, 10.0]), "epsilon_per_m": 0.1},
    "spherical_laplace_radius_quantile": {"p": np.array([0.1, 0.9]), "epsilon_per_m": 0.1},
}
RNG_TAKERS = {"bernoulli_mechanism", "gaussian_mechanism", "laplace_mechanism", "planar_laplace"}
RNG_TAKERS |= {"planar_laplace_latlon", "randomized_response"}
RNG_TAKERS |= {"l2_ball_mechanism"}


def test_every_public_privacy_function_is_covered() -> None:
    import bandit_envs.privacy as privacy

    public = {name for name in privacy.__all__ if callable(getattr(privacy, name))}
    assert public == set(MECHANISM_CALLS), "add the new public function to MECHANISM_CALLS"


@pytest.mark.parametrize(
    ("function", "argument"),
    [(f, a) for f, kwargs in MECHANISM_CALLS.items() for a in [*kwargs, *(["rng"] if f in RNG_TAKERS else [])]],
)
@fast(25)
@given(data=st.data())
def test_privacy_functions_release_or_refuse_in_one_sentence(function, argument, data):
    import bandit_envs.privacy as privacy

    kwargs = dict(MECHANISM_CALLS[function])
    if function in RNG_TAKERS:
        kwargs["rng"] = np.random.default_rng(0)
    kwargs[argument] = data.draw(st.one_of(extremes, wild), label=argument)
    done, out = attempt(lambda: getattr(privacy, function)(**kwargs))
    if done:  # a release must be finite numbers: never NaN noise from an argument that was let through
        for part in out if isinstance(out, tuple) else (out,):
            values = np.asarray(part, dtype=np.float64)
            assert np.isfinite(values).all() or function.endswith(("_cdf", "_quantile", "gaussian_delta")), (
                f"{function}({argument}={kwargs[argument]!r}) released non-finite values"
            )
