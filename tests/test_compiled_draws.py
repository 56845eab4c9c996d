"""Compiled draws and rewards: the same numbers, to the bit, as the generators and the scalar reward map.

* :func:`bandit_envs.core.next_double` draws a generator's own stream (any bit generator),
  interleaved with draws through the ``Generator`` itself; :func:`~bandit_envs._draw_kernels.skip_doubles`
  equals its reference; a vector env copied by ``copy.deepcopy`` or ``pickle`` draws from its own
  generators.
* :func:`bandit_envs.rewards.ndtri_many` equals :func:`~bandit_envs.rewards.ndtri` bit for bit,
  on random arguments and on the edges of AS241's regions; its regions' polynomials, written
  out, equal :func:`~bandit_envs.rewards.horner` of AS241's coefficients bit for bit.
* :func:`bandit_envs.graph.play_drawn_rows` equals its reference, on real generators and on
  chosen uniforms (a stand-in bit generator that returns them), for both reward laws.
* The vector env, the single env and the agents' compiled ``simulate`` give the same rewards;
  a reset without a seed in mid-episode leaves copy i on its single env's stream at any size.
"""

from __future__ import annotations

import copy
import ctypes
import pickle
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import bandit_envs  # noqa: F401  (registers GraphBandit-v0)
from agents.elimination.policies import GAP
from bandit_envs import rewards
from bandit_envs._draw_kernels import fill_doubles, fill_doubles_reference, skip_doubles, skip_doubles_reference
from bandit_envs._jit import njit
from bandit_envs.core import copy_generators, generator_addresses, next_double
from bandit_envs.graph import (
    BLOCK_ROWS,
    GraphBanditEnv,
    GraphBanditVectorEnv,
    paper_means,
    play_drawn_rows,
    play_drawn_rows_reference,
)
from bandit_envs.rewards import (
    CENTRAL_DEN,
    CENTRAL_NUM,
    FAR_DEN,
    FAR_NUM,
    NEAR_DEN,
    NEAR_NUM,
    RewardModel,
    horner,
    ndtri,
    ndtri_many,
    reward_from_uniform,
)

K = 10


@njit
def draw_compiled(bitgens: Any, count: int) -> Any:  # pragma: no cover - compiled
    out = np.empty((bitgens.shape[0], count))
    for i in range(bitgens.shape[0]):
        for j in range(count):
            out[i, j] = next_double(bitgens[i])
    return out


@njit
def ndtri_one_by_one(p: Any) -> Any:  # pragma: no cover - compiled
    out = np.empty(p.shape[0])
    for j in range(p.shape[0]):
        out[j] = ndtri(p[j])
    return out


@njit
def rewards_one_by_one(
    u: Any, arms: Any, kind: int, loc: Any, scale: float, lo: Any, width: Any
) -> Any:  # pragma: no cover - compiled
    out = np.empty(u.shape[0])
    for j in range(u.shape[0]):
        a = arms[j]
        out[j] = reward_from_uniform(u[j], kind, loc[a], scale, lo[a], width[a])
    return out


def same_bits(a: Any, b: Any) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


# ---------------------------------------------------------------------------------------------
# next_double and skip_doubles
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937, np.random.Philox])
def test_next_double_draws_the_generators_own_stream(bit_generator: Any) -> None:
    rngs = [np.random.Generator(bit_generator(s)) for s in (3, 4, 5)]
    twins = [np.random.Generator(bit_generator(s)) for s in (3, 4, 5)]
    addresses = generator_addresses(rngs)
    assert addresses.dtype == np.uint64 and addresses.shape == (3,)
    for count in (1, 7, 0, 100):
        compiled = draw_compiled(addresses, count)
        python = [rng.random(2) for rng in rngs]  # Python draws in between continue the same stream
        for i, twin in enumerate(twins):
            assert same_bits(compiled[i], twin.random(count))
            assert same_bits(python[i], twin.random(2))


def test_generator_addresses_of_no_generator() -> None:
    assert generator_addresses([]).shape == (0,)


def test_skip_doubles_equals_its_reference() -> None:
    counts = np.array([0, 1, 5120, 3], dtype=np.int64)
    rngs, twins = copy_generators(9, 4), copy_generators(9, 4)
    assert rngs is not None and twins is not None
    skip_doubles(generator_addresses(rngs), counts)
    skip_doubles_reference(twins, counts)
    for rng, twin in zip(rngs, twins, strict=True):
        assert same_bits(rng.random(4), twin.random(4))


def test_fill_doubles_equals_its_reference() -> None:
    block, expected = np.full((4, 5, 3), -1.0), np.full((4, 5, 3), -1.0)
    copies, counts = np.array([0, 2, 3]), np.array([5, 0, 2])
    rngs, twins = copy_generators(9, 4), copy_generators(9, 4)
    assert rngs is not None and twins is not None
    fill_doubles(generator_addresses(rngs), copies, counts, block)
    fill_doubles_reference(twins, copies, counts, expected)
    assert same_bits(block, expected)
    assert (block[1] == -1.0).all() and (block[2] == -1.0).all() and (block[3, 2:] == -1.0).all()
    for rng, twin in zip(rngs, twins, strict=True):  # and the generators go on alike
        assert same_bits(rng.random(4), twin.random(4))


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copied_vector_env_draws_from_its_own_generators(how: str) -> None:
    venv = GraphBanditVectorEnv(num_envs=3, horizon=50)
    venv.reset(seed=1)
    actions = np.random.default_rng(0).integers(0, K, size=(20, 3))
    for a in actions[:5]:
        venv.step(a)
    twin = copy.deepcopy(venv) if how == "deepcopy" else pickle.loads(pickle.dumps(venv))
    assert not np.array_equal(twin._bitgens, venv._bitgens)
    for a in actions[5:]:
        ours, theirs = venv.step(a), twin.step(a)
        assert same_bits(ours[1], theirs[1])
        assert same_bits(ours[4]["observed_rewards"], theirs[4]["observed_rewards"])
    del venv  # the copy's generators are its own
    for a in actions:
        twin.step(a)


# ---------------------------------------------------------------------------------------------
# ndtri_many
# ---------------------------------------------------------------------------------------------


def quantile_arguments() -> np.ndarray:
    rng = np.random.default_rng(5)
    edges = [0.0, 5e-324, 1e-300, np.exp(-25.0), 0.075, 0.5, 0.925, 1 - 2**-53, 1.0]
    near = [np.nextafter(e, d) for e in edges for d in (-np.inf, np.inf)]
    return np.concatenate(
        [
            rng.random(200_000),
            rng.random(20_000) * 0.075,  # lower tail
            1 - rng.random(20_000) * 0.075,  # upper tail
            np.exp(-rng.random(5_000) * 700),  # far lower tail, r > 5
            edges,
            np.clip(near, 0.0, 1.0),
            [np.nan, -0.25, 1.25],  # outside [0, 1]: whatever ndtri gives, the same
        ]
    )


def test_ndtri_many_equals_ndtri_to_the_bit() -> None:
    p = quantile_arguments()
    out = np.empty_like(p)
    ndtri_many(p, out)
    assert same_bits(out, ndtri_one_by_one(p))
    for n in (0, 1, 3):  # short batches, tails only, none
        out = np.empty(n)
        ndtri_many(p[-n - 3 : -3] if n else p[:0], out)
        assert same_bits(out, ndtri_one_by_one(p[-n - 3 : -3] if n else p[:0]))


def test_the_quantile_s_written_out_polynomials_equal_horner_s_rule_to_the_bit() -> None:
    """The compiled regions write Horner's rule out; :func:`~bandit_envs.rewards.horner` is their reference."""
    q = np.random.default_rng(6).uniform(-0.425, 0.425, 2_000)
    r = np.concatenate([np.random.default_rng(7).uniform(0.0, 5.0, 2_000), [0.0, 1.6, 5.0]])
    far = np.random.default_rng(8).uniform(5.0, 27.0, 2_000)
    cases = (
        (
            rewards.ndtri_central,
            q,
            lambda x: horner(CENTRAL_NUM, 0.180625 - x * x) * x / horner(CENTRAL_DEN, 0.180625 - x * x),
        ),
        (rewards.ndtri_tail_near, r, lambda x: horner(NEAR_NUM, x - 1.6) / horner(NEAR_DEN, x - 1.6)),
        (rewards.ndtri_tail_far, far, lambda x: horner(FAR_NUM, x - 5.0) / horner(FAR_DEN, x - 5.0)),
    )
    for compiled, xs, reference in cases:
        got = _each(compiled)(xs)
        assert same_bits(got, np.array([reference(float(x)) for x in xs])), compiled.py_func.__name__


def _each(function: Any) -> Any:
    """A compiled loop applying the inline-only compiled ``function`` to every entry of an array."""

    @njit
    def each(xs):  # pragma: no cover - compiled
        out = np.empty_like(xs)
        for j in range(xs.shape[0]):
            out[j] = function(xs[j])
        return out

    return each


# ---------------------------------------------------------------------------------------------
# play_drawn_rows
# ---------------------------------------------------------------------------------------------


DRAW = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)


class StandInBitGen(ctypes.Structure):
    """numpy's ``bitgen_t`` layout, with a ``next_double`` that returns chosen values."""

    _fields_ = [
        ("state", ctypes.c_void_p),
        ("next_uint64", ctypes.c_void_p),
        ("next_uint32", ctypes.c_void_p),
        ("next_double", DRAW),
        ("next_raw", ctypes.c_void_p),
    ]


class StandInGenerator:
    """Returns the given uniforms in order, through a ``bitgen_t`` for compiled code and ``random`` for Python."""

    def __init__(self, values: np.ndarray) -> None:
        self._values: Iterator[float] = iter(values.tolist())
        self._draw = DRAW(lambda state: next(self._values))
        self.bitgen = StandInBitGen(None, None, None, self._draw, None)

    @property
    def address(self) -> int:
        return ctypes.addressof(self.bitgen)

    def random(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.array([next(self._values) for _ in range(int(np.prod(shape)))]).reshape(shape)


def chosen_uniforms(model: RewardModel, rows: int) -> np.ndarray:
    """Uniforms landing on AS241's region edges and the Bernoulli threshold of each arm, and [0, 1)'s ends."""
    per_arm = []
    for mean, lo, width in zip(model.loc, model.cdf_lo, model.cdf_width, strict=True):
        u = [(e - lo) / width for e in (0.075, 0.925, np.exp(-25.0))] + [mean]
        u = [np.nextafter(x, d) for x in u for d in (-np.inf, np.inf)] + u + [0.0, 5e-324, 0.5, 1 - 2**-53]
        per_arm.append([x for x in u if 0.0 <= x < 1.0])
    size = max(len(u) for u in per_arm)
    table = np.random.default_rng(4).random((rows, K))
    for k, u in enumerate(per_arm):
        table[:size, k] = (u * size)[:size]
    return table


#: Reward laws of the compiled paths: (reward, reward_std); a normal of σ = 1e17 truncated to [0, 1] is flat.
LAWS = [
    pytest.param("truncnorm", 0.1, id="truncnorm"),
    pytest.param("bernoulli", 0.1, id="bernoulli"),
    pytest.param("truncnorm", 1e17, id="flat"),
]


@pytest.mark.parametrize(("reward", "sd"), LAWS)
def test_play_drawn_rows_equals_its_reference_on_chosen_uniforms(reward: str, sd: float) -> None:
    env = GraphBanditEnv(reward=reward, reward_std=sd, means=np.linspace(0.0, 1.0, K), edge_probability=0.6)
    model = env.reward_model
    n = 40
    uniforms = chosen_uniforms(model, n)  # copy i draws row i
    rng = np.random.default_rng(1)
    actions = rng.integers(0, K, size=n)
    playing = rng.random(n) < 0.8
    ours = [StandInGenerator(row) for row in uniforms]
    theirs = [StandInGenerator(row) for row in uniforms]
    out = (np.empty(n), np.empty((n, K), dtype=bool), np.empty((n, K)), np.empty(n))
    play_drawn_rows(
        np.array([g.address for g in ours], dtype=np.uint64),
        playing,
        actions,
        env.neighbourhoods,
        env.gaps,
        *model.params(),
        *out,
    )
    expected = play_drawn_rows_reference(theirs, playing, actions, env.neighbourhoods, env.gaps, model)
    for got, want in zip(out, expected, strict=True):
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes()
    # and the rewards are those of the scalar map, entry by entry
    i, k = np.nonzero(out[1])
    kind, loc, scale, lo, width = model.params()
    assert same_bits(out[2][i, k], rewards_one_by_one(uniforms[i, k], k, kind, loc, scale, lo, width))


@pytest.mark.parametrize(("reward", "sd"), LAWS)
def test_play_drawn_rows_equals_its_reference_on_generators(reward: str, sd: float) -> None:
    env = GraphBanditEnv(reward=reward, reward_std=sd)
    n, steps = 300, 5
    rngs, twins = copy_generators(2, n), copy_generators(2, n)
    assert rngs is not None and twins is not None
    addresses = generator_addresses(rngs)
    rng = np.random.default_rng(2)
    for _ in range(steps):
        actions = rng.integers(0, K, size=n).astype(np.int32)  # any integer dtype
        playing = rng.random(n) < 0.9
        out = (np.empty(n), np.empty((n, K), dtype=bool), np.empty((n, K)), np.empty(n))
        play_drawn_rows(addresses, playing, actions, env.neighbourhoods, env.gaps, *env.reward_model.params(), *out)
        expected = play_drawn_rows_reference(twins, playing, actions, env.neighbourhoods, env.gaps, env.reward_model)
        for got, want in zip(out, expected, strict=True):
            assert got.tobytes() == want.tobytes()


# ---------------------------------------------------------------------------------------------
# Vector env, single env and simulate
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sd", [0.1, 1e17], ids=["truncnorm", "flat"])
def test_vector_single_and_simulate_give_the_same_rewards(sd: float) -> None:
    """Copy i's observed rewards are those of its single env and of simulate's lazy map, to the bit."""
    n, horizon, seed = 4, 1200, 21
    venv = GraphBanditVectorEnv(num_envs=n, horizon=horizon, graph=np.ones((K, K)) - np.eye(K), reward_std=sd)
    venv.reset(seed=seed)
    seen = np.array([venv.step(np.zeros(n, dtype=np.int64))[4]["observed_rewards"] for _ in range(horizon)])
    law = venv.reward_model
    for i in range(n):
        single = GraphBanditEnv(horizon=horizon, graph=np.ones((K, K)) - np.eye(K), reward_std=sd)
        single.reset(seed=seed + i)
        rows = np.array([single.step(0)[4]["observed_rewards"] for _ in range(horizon)])
        assert same_bits(seen[:, i], rows)
        uniforms = gym.utils.seeding.np_random(seed + i)[0].random((horizon, K))
        assert same_bits(law.from_uniforms(uniforms), rows)
        # simulate maps the uniforms it reads with reward_from_uniform: its sums of observed
        # rewards equal those over the env's rewards
        lazy = GAP(K, horizon, 1.0, venv.adjacency, seed=0)
        explicit = GAP(K, horizon, 1.0, venv.adjacency, seed=0)
        a = lazy.simulate(uniforms, venv.adjacency, venv.gaps, law=law, record_actions=True)
        b = explicit.simulate(rows, venv.adjacency, venv.gaps, record_actions=True)
        assert np.array_equal(a.actions, b.actions)
        for x, y in zip(lazy._state, explicit._state, strict=True):
            assert x.tobytes() == y.tobytes()


@pytest.mark.parametrize("steps", [1, 5, BLOCK_ROWS, BLOCK_ROWS + 1, 700])
def test_reset_in_mid_episode_continues_the_single_envs_stream(steps: int) -> None:
    """After a reset without a seed in mid-episode, copy i goes on as its single env, which drops
    the rest of its block of rows; the same for many copies (no block size depends on N)."""
    horizon, seed = 1100, 3
    for n in (2, 3000):
        venv = GraphBanditVectorEnv(num_envs=n, horizon=horizon)
        venv.reset(seed=seed)
        actions = np.random.default_rng(steps).integers(0, K, size=(steps + 30, n))
        for a in actions[:steps]:
            venv.step(a)
        venv.reset()
        after = [venv.step(a)[4]["observed_rewards"] for a in actions[steps:]]
        for i in (0, n - 1):
            single = GraphBanditEnv(horizon=horizon)
            single.reset(seed=seed + i)
            for a in actions[:steps, i].tolist():
                single.step(a)
            single.reset()
            for t, a in enumerate(actions[steps:, i].tolist()):
                assert same_bits(after[t][i], single.step(a)[4]["observed_rewards"])


def test_means_of_the_paper_instance_are_sampled_alike() -> None:
    """Many copies of the paper's instance: rewards in [0, 1], each arm's mean near its true mean."""
    venv = gym.make_vec("GraphBandit-v0", num_envs=2000, graph=np.ones((K, K)) - np.eye(K))
    venv.reset(seed=0)
    rewards = np.array([venv.step(np.zeros(2000, dtype=np.int64))[4]["observed_rewards"] for _ in range(20)])
    assert rewards.min() >= 0.0 and rewards.max() <= 1.0
    expected = RewardModel("truncnorm", paper_means(K, 0.1)).expected
    np.testing.assert_allclose(rewards.mean(axis=(0, 1)), expected, atol=0.005)
