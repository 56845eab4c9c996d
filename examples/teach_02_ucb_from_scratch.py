# %% [markdown]
# # Exercise 2: UCB from scratch, checked action for action against `agents.UCB`
#
# An agent is three methods: `act` (choose an arm), `update` (learn from the step) and
# `reset`/`_reset_state` (forget). `MyUCB` below is UCB1 in about fifteen lines: play every arm
# once (lowest index first), then in round t (1-based) play argmax_i mean_i + alpha sqrt(ln t / N_i),
# ties to the lowest index. Both agents see the same rewards; if the two implementations agree,
# they must choose the same arm every round.
#
# Run: `python examples/teach_02_ucb_from_scratch.py [--out DIR]` (a few seconds), or run the cells one
# at a time in Jupyter. Guide: docs/teaching.md.

# %%
from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

import bandit_envs  # noqa: F401  (registers the environment ids)
from agents import UCB, Agent
from agents.teaching import out_folder, show

# %% [markdown]
# ## The horizon
#
# As a script, `--out DIR` sets the folder the figure is saved to; in a notebook it shows inline.

# %%
OUT = out_folder("Exercise 2: UCB from scratch against agents.UCB.")
HORIZON = 2_000


# %% [markdown]
# ## The agent
#
# Three methods make an agent: `_reset_state` (forget), `act` (choose an arm) and `update` (learn
# from the step). Edit `MyUCB`, run the cells below again, and see whether it still agrees with
# `agents.UCB`.


# %%
class MyUCB(Agent):
    """UCB1: unplayed arms first, then the largest mean + alpha * sqrt(ln t / N)."""

    name = "MyUCB"

    def __init__(self, n_arms: int, alpha: float = math.sqrt(2.0)) -> None:
        super().__init__(n_arms)
        self.alpha = alpha
        self._reset_state()

    def _reset_state(self) -> None:
        self.sums = np.zeros(self.n_arms)
        self.counts = np.zeros(self.n_arms, dtype=np.int64)
        self.t = 0  # rounds completed

    def act(self, obs: Any = None) -> int:
        unplayed = np.flatnonzero(self.counts == 0)
        if unplayed.size:
            return int(unplayed[0])
        t = self.t + 1  # the round about to be played, counted from 1
        index = self.sums / self.counts + self.alpha * np.sqrt(math.log(t) / self.counts)
        return int(np.argmax(index))  # argmax returns the first maximum: ties go to the lowest index

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        self.sums[action] += reward
        self.counts[action] += 1
        self.t += 1


# %% [markdown]
# ## The check
#
# `compare` plays `MyUCB` and asks `agents.UCB` in every round which arm it would pull. Both see
# the same rewards, so they agree in every round only if they follow the same rule.


# %%
def compare(env: gym.Env, alpha: float, seed: int) -> tuple[bool, np.ndarray, np.ndarray]:
    """Play ``MyUCB`` on ``env``, asking ``agents.UCB`` every round what it would do."""
    mine, reference = MyUCB(env.action_space.n, alpha), UCB(env.action_space.n, alpha=alpha)
    obs, info = env.reset(seed=seed)
    actions = np.zeros(HORIZON, dtype=np.int64)
    same = True
    for t in range(HORIZON):
        action = mine.act(obs)
        same &= action == reference.act(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        mine.update(action, reward, info)
        reference.update(action, reward, info)
        actions[t] = action
    same &= bool(np.array_equal(mine.counts, reference.counts[0]))
    return same, actions, mine.counts


# %% [markdown]
# ## Both agents on two reward laws
#
# Three seeds each, with UCB's default alpha on truncated-normal rewards and alpha = 0.5 on Bernoulli ones.

# %%
checks = []
for reward, alpha in (("truncnorm", math.sqrt(2.0)), ("bernoulli", 0.5)):
    env = gym.make("GraphBandit-v0", reward=reward, horizon=HORIZON)
    for seed in range(3):
        same, actions, counts = compare(env, alpha, seed)
        checks.append(same)
        print(f"{reward:9s} rewards, alpha={alpha:.3f}, seed {seed}: same actions in {HORIZON:,} rounds: {same}")
        if len(checks) == 1:
            means, first_actions, first_counts = env.unwrapped.expected_rewards, actions, counts

# %% [markdown]
# ## What the numbers say

# %%
print(f"identical actions: {all(checks)}")
print(f"first 14 actions of the first run: {first_actions[:14].tolist()} -> every arm once, then the index.")
print(f"pulls per arm: {first_counts.tolist()}; true means {np.round(means, 3).tolist()}")
print("-> arms 0 and 1 share the best mean; the closer an arm is to the best, the longer UCB keeps trying it.")

# %% [markdown]
# ## The figure
#
# What to look for, and questions: docs/teaching.md, section 2.

# %%
fig = Figure(figsize=(6, 4))
FigureCanvasAgg(fig)
ax = fig.add_subplot()
arms = np.arange(len(means))
ax.bar(arms, first_counts)
ax.set_yscale("log")
for arm, mean in zip(arms, means, strict=True):
    ax.annotate(f"{mean:.2f}", (arm, first_counts[arm]), ha="center", va="bottom", fontsize=8)
ax.set(xlabel="arm (label: true mean)", ylabel="pulls (log scale)", title=f"MyUCB = agents.UCB, T = {HORIZON:,}")
show(fig, OUT, "teach_02_ucb_from_scratch.png")
