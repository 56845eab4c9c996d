"""gymnax's Bernoulli bandit, N copies under ``jax.vmap``, T steps per request (run by its own venv's Python).

Parameters (JSON): ``copies`` N, ``steps`` T, ``seed``. gymnax's ``BernoulliBandit-misc`` has two
arms, with means (0.1, 0.9) in a random order per copy (``reward_prob = 0.1``); the episode
length is set beyond T so no copy resets. Actions are pre-drawn (T, N) uniform arms. Modes:

* ``scan``: the whole run as one compiled call (``jit`` of ``lax.scan`` over the vmapped step),
  gymnax's fastest use, for code that needs no Python between steps;
* ``step``: one jitted vmapped step (key split included) called once per Python step, as a
  Gymnasium-style loop with an agent in Python would call it.

The process is pinned to one CPU before jax is imported, so XLA uses one core, as our numpy
vector env does.
"""

from __future__ import annotations

import os
import time
from importlib.metadata import version

from _serve import parameters, serve

if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import gymnax  # noqa: E402
import jax  # noqa: E402

params = parameters()
copies, steps, seed = int(params["copies"]), int(params["steps"]), int(params["seed"])
env, env_params = gymnax.make("BernoulliBandit-misc")
env_params = env_params.replace(max_steps_in_episode=float(steps + 1))
vreset = jax.vmap(env.reset, in_axes=(0, None))
vstep = jax.vmap(env.step, in_axes=(0, 0, 0, None))
key = jax.random.key(seed)
key, reset_key, action_key = jax.random.split(key, 3)
_, state0 = jax.jit(vreset)(jax.random.split(reset_key, copies), env_params)
actions = jax.random.randint(action_key, (steps, copies), 0, 2)
action_rows = list(actions)


@jax.jit
def run(state, key, actions):  # type: ignore[no-untyped-def]
    def body(carry, a):  # type: ignore[no-untyped-def]
        state, key = carry
        key, sub = jax.random.split(key)
        _, state, reward, *_ = vstep(jax.random.split(sub, copies), state, a, env_params)
        return (state, key), reward

    (state, key), rewards = jax.lax.scan(body, (state, key), actions)
    return state, key, rewards


@jax.jit
def one_step(state, key, a):  # type: ignore[no-untyped-def]
    key, sub = jax.random.split(key)
    _, state, reward, *_ = vstep(jax.random.split(sub, copies), state, a, env_params)
    return state, key, reward


def scanned() -> tuple[float, int]:
    start = time.perf_counter()
    out = run(state0, key, actions)
    jax.block_until_ready(out)
    return time.perf_counter() - start, steps * copies


def stepped() -> tuple[float, int]:
    state, k = state0, key
    start = time.perf_counter()
    for a in action_rows:
        state, k, reward = one_step(state, k, a)
    jax.block_until_ready(reward)
    return time.perf_counter() - start, steps * copies


serve(f"{version('gymnax')} (jax {jax.__version__})", {"scan": scanned, "step": stepped})
