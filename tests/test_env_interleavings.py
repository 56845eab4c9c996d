"""Seeded random interleavings of env calls: a single env is unaffected by what should not change it, and
copy i of a native vector env seeded s plays as the single env seeded s + i, whatever happens between steps.

``tests/test_env_contract.py`` checks each rule on its own (one rollout, one refused input, one copy point)
and ``tests/test_copies.py`` copies at three fixed points; here every registered id
(``bandit_envs.ENV_IDS``, with the cheap keywords of ``ENV_PROFILES`` in ``conftest.py``, a shorter
horizon and, where the env takes it, reward noise) is driven through seeded random sequences of
operations (``numpy.random.default_rng(seed)`` picks them), mixing:

* steps with the action as ``int``, ``np.int64``, ``np.int32``, ``np.uint8`` or a 0-d array (single
  env), as an int64, int32, uint8, big-endian or strided array, a list or a tuple (vector env); the
  action array is then overwritten in place now and then;
* resets in mid-episode with a seed, without one, with a seed list holding None (vector env), with
  ``options={}`` and with the reset options the env documents (``GraphBandit-v0``'s ``reward_table``,
  one table shared by the copies or a stack; the caller's table is then edited in place, which the docs
  say changes nothing);
* reads of the public attributes, of ``np_random_seed``, of the fast-path streams
  (``round_contexts``/``round_noise``) and ``action_space.sample()``;
* writing over the returned observation and info arrays in place and editing the info dicts;
* ``copy.deepcopy`` and ``pickle`` round trips in mid-episode (the copy then plays on in place of the
  original);
* ``render()`` in ``"ansi"`` mode (``"rgb_array"`` takes 0.3-1.3 s a frame: left to
  ``tests/test_render.py``), frames compared with the reference's or with copy i's single env's;
* refused inputs (bad actions, seeds, options; a step after the episode's end), each of which must
  raise and change nothing: the next valid call returns what it would have returned;
* running past the horizon: a single env must refuse to step, a vector copy restarts (NEXT_STEP
  autoreset; the single env is then reset without a seed, with its table if it replays one).

Every sixth sequence has episodes of 520 steps (past the single envs' blocks of 512 noise rows), played
in bursts of steps; every odd sequence builds its vector env with ``NOISE_BUFFER_BYTES`` lowered so that
each copy buffers 5-12 rows (as with many copies; the docs say results do not depend on it).

Single env: a *subject* gets every operation, a *reference* of the same construction only the resets
and valid steps; their outputs must be equal exactly (same process, same code path). Vector env:
outputs of copy i must equal the single env's exactly (docs/design.md, "Seeding rule": "step for step";
no tolerance is documented, none is used): observation, reward, truncation, and every key of the
single env's info.
"""

from __future__ import annotations

import copy
import inspect
import pickle
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import assert_same, env_test_kwargs, registered_env_ids

import bandit_envs  # noqa: F401 - registers the ids
from bandit_envs import core

IDS = registered_env_ids()
N = 3  # copies of a vector env
HORIZON = 4  # short episodes: many autoresets and refused steps past the end
#: Every sixth sequence: episodes longer than the single envs' blocks of 512 noise rows, played in bursts.
LONG_HORIZON = 520
#: ``bandit_envs.core.NOISE_BUFFER_BYTES`` of the odd sequences' vector envs: a few rows per copy.
SMALL_BUFFER_BYTES = 600
SEQUENCES = 20  # random sequences per id and test
OPS = 36  # operations per sequence
SEED_BOUND = 2**31

#: The reset options each id documents (its class docstring), as a builder of the vector env's options and
#: those of the single env of each copy: ``options(rng, n_actions, horizon) -> (vector, [copy i's])``.
Options = Callable[[np.random.Generator, int, int], tuple[dict[str, Any], list[dict[str, Any]]]]


def _reward_tables(rng: np.random.Generator, n_arms: int, horizon: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if rng.random() < 0.5:  # one (horizon, K) table for every copy
        table = rng.random((horizon, n_arms))
        return {"reward_table": table}, [{"reward_table": table.copy()} for _ in range(N)]
    stack = rng.random((N, horizon, n_arms))
    return {"reward_table": stack}, [{"reward_table": stack[i].copy()} for i in range(N)]


RESET_OPTIONS: dict[str, Options] = {"GraphBandit-v0": _reward_tables}


def env_kwargs(env_id: str, horizon: int) -> dict[str, Any]:
    """The cheap keywords with ``horizon`` and, where the env takes it, reward noise."""
    kwargs = {**env_test_kwargs(env_id), "horizon": horizon}
    entry = gym.registry[env_id].entry_point
    module, name = str(entry).split(":")
    cls = getattr(__import__(module, fromlist=[name]), name)
    if "reward_noise" in inspect.signature(cls).parameters:
        kwargs["reward_noise"] = 0.1  # the noise stream is drawn (the default 0 draws nothing)
    return kwargs


@contextmanager
def quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the passive env checker's warnings about the spaces
        yield


def make_single(env_id: str, horizon: int, render_mode: str | None = None) -> Any:
    with quiet():
        return gym.make(env_id, render_mode=render_mode, **env_kwargs(env_id, horizon))


def make_vec(env_id: str, horizon: int, render_mode: str | None = None) -> Any:
    kwargs = env_kwargs(env_id, horizon)
    with quiet():
        return gym.make_vec(
            env_id, num_envs=N, vectorization_mode="vector_entry_point", render_mode=render_mode, **kwargs
        )


# ------------------------------------------------------------------------------- comparisons


def assert_entry(batched: Any, i: int, single: Any, where: str) -> None:
    """Entry i of a vector env's output equals the single env's value: same shape, kind and every bit."""
    x, y = np.asarray(batched)[i], np.asarray(single)
    assert x.shape == y.shape, f"{where}: shape {x.shape} != {y.shape}"
    assert x.dtype.kind == y.dtype.kind or {x.dtype.kind, y.dtype.kind} <= set("iu"), f"{where}: {x.dtype} != {y.dtype}"
    assert np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"), f"{where}: {x} != {y}"


def scribble(value: Any, rng: np.random.Generator) -> None:
    """Overwrite, in place, every writable array in ``value`` (an output of reset or step) and edit its dicts."""
    if isinstance(value, dict):
        for v in value.values():
            scribble(v, rng)
        if value and rng.random() < 0.5:
            value.pop(next(iter(value)))
        value["scribbled"] = np.ones(2)
    elif isinstance(value, tuple | list):
        for v in value:
            scribble(v, rng)
    elif isinstance(value, np.ndarray) and value.flags.writeable and value.size:
        kind = value.dtype.kind
        if kind == "b":
            np.logical_not(value, out=value)
        elif kind in "iu":
            value[...] = 3
        elif kind == "f":
            value[...] = np.nan if rng.random() < 0.5 else -7.5


def single_action(a: int, rng: np.random.Generator) -> Any:
    """``a`` as one of the integer types a single env takes."""
    kind = int(rng.integers(6))
    return (int(a), np.int64(a), np.int32(a), np.uint8(a), np.array(a), np.array(a, dtype=np.int32))[kind]


def vector_actions(a: np.ndarray, rng: np.random.Generator) -> Any:
    """``a`` (num_envs,) as one of the integer arrays, lists or tuples a vector env takes."""
    kind = int(rng.integers(8))
    if kind == 5:
        return np.repeat(a.astype(np.int64), 2)[::2]  # a strided view
    if kind == 6:
        return a.astype(">i8")  # the other byte order
    if kind == 7:
        return tuple(int(x) for x in a)
    if kind == 0:
        return a.astype(np.int64)
    if kind == 1:
        return a.astype(np.int32)
    if kind == 2:
        return a.astype(np.uint8)
    if kind == 3:
        return [int(x) for x in a]
    return [np.int64(x) for x in a]


def short(value: Any) -> str:
    """A one-line repr of at most 60 characters, for the operation log."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def round_trip(env: Any, rng: np.random.Generator) -> Any:
    return copy.deepcopy(env) if rng.random() < 0.5 else pickle.loads(pickle.dumps(env))


BAD_ACTIONS: list[Callable[[int], Any]] = [
    lambda n: n,
    lambda n: -1,
    lambda n: 1.0,
    lambda n: np.float64(0.0),
    lambda n: True,
    lambda n: "1",
    lambda n: None,
    lambda n: np.array([0, 1]),
    lambda n: np.array([0]),
    lambda n: np.timedelta64(1),
    lambda n: np.ma.masked_array(0, mask=True),
]

BAD_VECTOR_ACTIONS: list[Callable[[int], Any]] = [
    lambda n: np.zeros(N + 1, dtype=np.int64),
    lambda n: np.zeros((N, 1), dtype=np.int64),
    lambda n: np.zeros(N),
    lambda n: np.full(N, n),
    lambda n: np.array([0] * (N - 1) + [-1]),
    lambda n: [True] + [0] * (N - 1),
    lambda n: ["0"] * N,
    lambda n: 0,
    lambda n: np.zeros(N, dtype="m8[s]"),
    lambda n: np.ma.masked_array(np.zeros(N, dtype=np.int64), mask=[True] + [False] * (N - 1)),
]

BAD_RESETS: list[tuple[dict[str, Any], Any]] = [
    ({"seed": -1}, ValueError),
    ({"seed": 1.5}, TypeError),
    ({"seed": True}, TypeError),
    ({"seed": 3, "options": {"no_such_option": 1}}, ValueError),
    ({"seed": 3, "options": ["reward_table"]}, TypeError),
]

#: Refused values of the documented reset options, per id: ``bad(n_actions, horizon) -> options``.
BAD_OPTIONS: dict[str, list[Callable[[int, int], dict[str, Any]]]] = {
    "GraphBandit-v0": [
        lambda k, h: {"reward_table": np.full((h, k), 1.5)},
        lambda k, h: {"reward_table": np.full((h, k), np.nan)},
        lambda k, h: {"reward_table": np.zeros((h + 1, k))},
        lambda k, h: {"reward_table": np.zeros((h, k), dtype=bool)},
        lambda k, h: {"reward_table": [[0.5] * k] * (h - 1) + [[0.5]]},
    ],
}


def bad_resets(env_id: str, n_actions: int, horizon: int) -> list[tuple[dict[str, Any], Any]]:
    """The refused resets of :data:`BAD_RESETS` and of ``env_id``'s documented options (with a seed)."""
    bad = [
        ({"seed": 5, "options": make(n_actions, horizon)}, (TypeError, ValueError))
        for make in BAD_OPTIONS.get(env_id, [])
    ]
    return BAD_RESETS + bad


def read_public(env: Any) -> None:
    """Read every public attribute and property of ``env`` (its unwrapped env) and its cheap read-only calls."""
    base = env.unwrapped
    for name in dir(base):
        if name.startswith("_") or name in ("spec",):
            continue
        getattr(base, name)
    env.action_space.sample()
    if hasattr(base, "round_contexts"):
        base.round_contexts(3, 11)
        base.round_noise(3, 11)


# ------------------------------------------------------------------------------- single env


class SingleRun:
    """One sequence on a single env: the subject gets everything, the reference the resets and valid steps."""

    def __init__(self, env_id: str, seed: int) -> None:
        self.env_id = env_id
        self.rng = np.random.default_rng(seed)
        self.horizon = LONG_HORIZON if seed % 6 == 5 else HORIZON
        self.render_mode = "ansi" if self.rng.random() < 0.5 else None
        self.subject = make_single(env_id, self.horizon, self.render_mode)
        self.reference = make_single(env_id, self.horizon, self.render_mode)
        self.n = int(self.reference.action_space.n)
        self.running = False
        self.log: list[str] = [f"{env_id} sequence {seed} horizon={self.horizon} render_mode={self.render_mode}"]

    def where(self) -> str:
        return " > ".join(self.log[:1] + self.log[-8:])

    def reset(self, seed: Any) -> None:
        options = None
        make_options = RESET_OPTIONS.get(self.env_id)
        if make_options is not None and self.rng.random() < 0.4:
            options = make_options(self.rng, self.n, self.horizon)[1][0]
        elif self.rng.random() < 0.2:
            options = {}  # no options, as a dict
        mine = None if options is None else {k: v.copy() for k, v in options.items()}
        self.log.append(f"reset(seed={seed}, options={None if options is None else list(options)})")
        with quiet():
            got = self.subject.reset(seed=seed, options=mine)
            want = self.reference.reset(seed=seed, options=options)
        assert_same(got, want, self.where())
        self.running = True
        if mine is not None:  # the docs: later edits of the caller's table change nothing
            for v in mine.values():
                v[...] = 0.5
        if self.rng.random() < 0.3:
            scribble(got, self.rng)

    def burst(self) -> None:
        for _ in range(int(self.rng.integers(1, self.horizon + 1))):
            self.step()

    def step(self) -> None:
        a = int(self.rng.integers(self.n))
        given = single_action(a, self.rng)
        self.log.append(f"step({short(given)})")
        if not self.running:
            with pytest.raises(RuntimeError, match=r"reset\(\)"):
                self.subject.step(given)
            return
        with quiet():
            got = self.subject.step(given)
            want = self.reference.step(a)
        assert_same(got, want, self.where())
        self.running = not (got[2] or got[3])
        if self.rng.random() < 0.4:
            scribble([got, given], self.rng)  # the outputs, and an action given as an array

    def refused_action(self) -> None:
        bad = BAD_ACTIONS[int(self.rng.integers(len(BAD_ACTIONS)))](self.n)
        self.log.append(f"step({short(bad)}) refused")
        error = ValueError if self.running else RuntimeError
        with pytest.raises(error, match=r"^action must be an integer" if self.running else r"reset\(\)"):
            self.subject.step(bad)

    def refused_reset(self) -> None:
        refused = bad_resets(self.env_id, self.n, self.horizon)
        kwargs, error = refused[int(self.rng.integers(len(refused)))]
        self.log.append(f"reset(**{short(kwargs)}) refused")
        with pytest.raises(error):
            self.subject.reset(**kwargs)

    def render(self) -> None:
        self.log.append("render()")
        with quiet():
            got, want = self.subject.render(), self.reference.render()
        if self.render_mode is None:
            assert got is None and want is None
        else:
            assert isinstance(got, str)
            assert got == want, self.where()

    def read(self) -> None:
        self.log.append("read")
        read_public(self.subject)
        if self.running:
            assert self.subject.unwrapped.np_random_seed == self.reference.unwrapped.np_random_seed

    def copy(self) -> None:
        self.log.append("copy")
        self.subject = round_trip(self.subject, self.rng)

    def play(self, ops: int) -> None:
        self.reset(int(self.rng.integers(SEED_BOUND)))
        choices = [
            (0.45, self.step),
            (0.06, lambda: self.reset(int(self.rng.integers(SEED_BOUND)))),
            (0.06, lambda: self.reset(None)),
            (0.10, self.refused_action),
            (0.05, self.refused_reset),
            (0.08, self.render),
            (0.08, self.read),
            (0.12, self.copy),
            (0.05 if self.horizon > HORIZON else 0.0, self.burst),
        ]
        p = np.array([c[0] for c in choices])
        for _ in range(ops):
            choices[int(self.rng.choice(len(choices), p=p / p.sum()))][1]()
            if not self.running and self.rng.random() < 0.5:  # past the end: the next step is refused, or reset
                self.reset(None if self.rng.random() < 0.7 else int(self.rng.integers(SEED_BOUND)))


@pytest.mark.parametrize("env_id", IDS)
def test_single_env_plays_as_its_reference_whatever_happens_between_steps(env_id: str) -> None:
    for seed in range(SEQUENCES):
        SingleRun(env_id, seed).play(OPS)


# ------------------------------------------------------------------------------- vector env


class VectorRun:
    """One sequence on a vector env of N copies and the N single envs that copy i must replay."""

    def __init__(self, env_id: str, seed: int) -> None:
        self.env_id = env_id
        self.rng = np.random.default_rng(seed)
        self.horizon = LONG_HORIZON if seed % 6 == 5 else HORIZON
        self.render_mode = "ansi" if self.rng.random() < 0.4 else None
        # Odd sequences: buffers of a few rows per copy (refilled within an episode), as with many copies;
        # the docs say results do not depend on the buffer length.
        self.small_buffers = seed % 2 == 1
        with pytest.MonkeyPatch.context() as patch:
            if self.small_buffers:
                patch.setattr(core, "NOISE_BUFFER_BYTES", SMALL_BUFFER_BYTES)
            self.venv = make_vec(env_id, self.horizon, self.render_mode)
        self.singles = [make_single(env_id, self.horizon, self.render_mode) for _ in range(N)]
        self.n = int(self.venv.single_action_space.n)
        self.restarting = np.zeros(N, dtype=bool)  # truncated at the previous step: restarts at the next
        self.tables: list[dict[str, Any] | None] = [None] * N  # the options copy i replays across autoresets
        #: The last outputs of the vector env and of the singles, which a later operation may scribble over.
        self.last: tuple[list[Any], list[Any]] = ([], [])
        self.log: list[str] = [
            f"{env_id} sequence {seed} horizon={self.horizon} render_mode={self.render_mode} "
            f"small_buffers={self.small_buffers}"
        ]

    def where(self, i: int | None = None) -> str:
        return " > ".join(self.log[:1] + self.log[-8:]) + ("" if i is None else f" (copy {i})")

    def reset(self, first: bool = False) -> None:
        # The first reset seeds every copy: an unseeded copy and its single env draw from different OS entropy.
        kind = int(self.rng.choice([0, 2])) if first else int(self.rng.integers(4))
        seed: Any
        if kind == 0:
            seed = int(self.rng.integers(SEED_BOUND))
            seeds: list[Any] = [seed + i for i in range(N)]
        elif kind == 1:
            seeds = [None if self.rng.random() < 0.5 else int(self.rng.integers(SEED_BOUND)) for _ in range(N)]
            seed = seeds if self.rng.random() < 0.5 else tuple(seeds)
        elif kind == 2:
            seed = np.int64(self.rng.integers(SEED_BOUND))
            seeds = [int(seed) + i for i in range(N)]
        else:
            seed, seeds = None, [None] * N
        options, per_copy = None, [None] * N
        make_options = RESET_OPTIONS.get(self.env_id)
        if make_options is not None and self.rng.random() < 0.4:
            options, per_copy = make_options(self.rng, self.n, self.horizon)  # type: ignore[assignment]
        elif self.rng.random() < 0.2:
            options = {}  # no options, as a dict
        self.log.append(f"reset(seed={short(seed)}, options={None if options is None else list(options)})")
        with quiet():
            obs, info = self.venv.reset(seed=seed, options=options)
        if options is not None:  # the docs: later edits of the caller's table change nothing
            for v in options.values():
                v[...] = 0.5
        for i, env in enumerate(self.singles):
            with quiet():
                o, inf = env.reset(seed=seeds[i], options=per_copy[i])
            assert_entry(obs, i, o, self.where(i) + " obs")
            assert set(info) == set(inf), self.where(i)
            for key in inf:
                assert_entry(info[key], i, inf[key], self.where(i) + f" info {key}")
        self.tables = list(per_copy)
        self.restarting[:] = False
        self.last[0].append([obs, info])

    def step(self) -> None:
        a = self.rng.integers(self.n, size=N)
        given = vector_actions(a, self.rng)
        self.log.append(f"step({short(given)})")
        obs, reward, terminated, truncated, info = self.venv.step(given)
        assert not terminated.any()
        for i, env in enumerate(self.singles):
            if self.restarting[i]:  # NEXT_STEP autoreset: the copy restarts, its action ignored
                with quiet():
                    o, _ = env.reset(options=self.tables[i])
                assert_entry(obs, i, o, self.where(i) + " autoreset obs")
                assert reward[i] == 0.0 and not truncated[i], self.where(i)
                continue
            with quiet():
                o, r, term, trunc, inf = env.step(single_action(int(a[i]), self.rng))
            assert_entry(obs, i, o, self.where(i) + " obs")
            assert reward[i] == r, self.where(i) + f" reward {reward[i]!r} != {r!r}"
            assert bool(truncated[i]) == trunc and not term, self.where(i)
            assert set(inf) <= set(info), self.where(i)
            for key in inf:
                assert_entry(info[key], i, inf[key], self.where(i) + f" info {key}")
            self.last[1].append([o, inf])
        self.restarting = truncated.copy()
        self.last[0].append([obs, reward, truncated, info, given])

    def burst(self) -> None:
        for _ in range(int(self.rng.integers(1, self.horizon + 1))):
            self.step()
            self.last[1].clear()

    def refused_step(self) -> None:
        bad = BAD_VECTOR_ACTIONS[int(self.rng.integers(len(BAD_VECTOR_ACTIONS)))](self.n)
        self.log.append(f"step({short(bad)}) refused")
        with pytest.raises(ValueError, match=r"^actions must be an integer array of shape"):
            self.venv.step(bad)

    def refused_reset(self) -> None:
        refused = [
            *bad_resets(self.env_id, self.n, self.horizon),
            ({"seed": [1] * (N + 1)}, ValueError),
            ({"seed": [None, -1, 2]}, ValueError),
            ({"seed": [None, 1.5, 2]}, TypeError),
        ]
        kwargs, error = refused[int(self.rng.integers(len(refused)))]
        self.log.append(f"reset(**{short(kwargs)}) refused")
        with pytest.raises(error):
            self.venv.reset(**kwargs)

    def render(self) -> None:
        self.log.append("render()")
        with quiet():
            frames = self.venv.render()
            singles = [env.render() for env in self.singles]
        if self.render_mode is None:
            assert frames is None and singles == [None] * N
            return
        assert isinstance(frames, tuple) and len(frames) == N
        for i, (frame, want) in enumerate(zip(frames, singles, strict=True)):
            assert frame == want, self.where(i) + f"\n{frame}\n!=\n{want}"

    def read(self) -> None:
        self.log.append("read")
        read_public(self.venv)
        for env in self.singles:
            read_public(env)
        seeds = self.venv.np_random_seed
        assert seeds == tuple(env.unwrapped.np_random_seed for env in self.singles), self.where()

    def scribble(self) -> None:
        side = int(self.rng.integers(2))  # one side only: a leak on both sides alike would go unseen
        self.log.append(f"scribble over the {('vector', 'single')[side]} outputs")
        scribble(self.last[side], self.rng)
        self.last[side].clear()

    def copy(self) -> None:
        if self.rng.random() < 0.75:
            self.log.append("copy venv")
            self.venv = round_trip(self.venv, self.rng)
        else:
            i = int(self.rng.integers(N))
            self.log.append(f"copy single {i}")
            self.singles[i] = round_trip(self.singles[i], self.rng)

    def play(self, ops: int) -> None:
        self.reset(first=True)
        choices = [
            (0.50, self.step),
            (0.08, self.reset),
            (0.08, self.refused_step),
            (0.04, self.refused_reset),
            (0.06, self.render),
            (0.06, self.read),
            (0.08, self.scribble),
            (0.10, self.copy),
            (0.05 if self.horizon > HORIZON else 0.0, self.burst),
        ]
        p = np.array([c[0] for c in choices])
        for _ in range(ops):
            for side in self.last:
                del side[:-8]
            choices[int(self.rng.choice(len(choices), p=p / p.sum()))][1]()


@pytest.mark.parametrize("env_id", IDS)
def test_vector_copy_i_plays_as_the_single_env_seeded_s_plus_i_whatever_happens_between_steps(env_id: str) -> None:
    for seed in range(SEQUENCES):
        VectorRun(env_id, seed).play(OPS)
