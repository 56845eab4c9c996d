# %% [markdown]
# # Exercise 1: a first bandit, and what regret measures
#
# Five arms with Bernoulli rewards (no feedback graph, so pulling an arm shows only its own reward).
# Four players: Random, greedy (play each arm once, then always the best mean so far: ε-greedy with
# ε = 0), ε-greedy with ε = 0.1 (the same, but a uniformly random arm in 10% of the rounds) and UCB.
# Regret after T rounds is the sum over rounds of (best mean - mean of the arm played): the price
# of not knowing the best arm. The env reports each round's share in `info["regret"]`.
#
# Run: `python examples/teach_01_first_bandit.py [--out DIR]` (a few seconds), or run the cells one at
# a time in Jupyter. Guide: docs/teaching.md.

# %%
from __future__ import annotations

import gymnasium as gym
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

import bandit_envs  # noqa: F401  (registers the environment ids)
from agents import UCB, Agent, EpsilonGreedy, Random
from agents.teaching import out_folder, show

# %% [markdown]
# ## The instance
#
# As a script, `--out DIR` sets the folder the figure is saved to; in a notebook it shows inline.

# %%
OUT = out_folder("Exercise 1: a first bandit and its regret.")
MEANS = [0.3, 0.4, 0.5, 0.6, 0.7]
HORIZON = 2_000
RUNS = 10


# %% [markdown]
# ## One episode
#
# The act/update loop every agent and env in this project share.


# %%
def play(agent: Agent, env: gym.Env, seed: int) -> tuple[np.ndarray, int]:
    """One episode of the act/update loop: per-round regret and the arm played most at the end."""
    obs, info = env.reset(seed=seed)
    agent.reset()
    regret = np.zeros(HORIZON)
    actions = np.zeros(HORIZON, dtype=np.int64)
    for t in range(HORIZON):
        action = agent.act(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        agent.update(action, reward, info)
        regret[t] = info["regret"]
        actions[t] = action
    return regret, int(np.bincount(actions[-HORIZON // 10 :]).argmax())


# %% [markdown]
# ## The env and the players

# %%
k = len(MEANS)
empty_graph = np.zeros((k, k), dtype=bool)
env = gym.make("GraphBandit-v0", graph=empty_graph, means=MEANS, reward="bernoulli", horizon=HORIZON)
best = int(np.argmax(MEANS))
players = {
    "Random": Random(k, seed=0),
    # Unplayed arms first, then the best mean so far; ε = 0 never explores.
    "greedy": EpsilonGreedy(k, epsilon=0.0, seed=0),
    "ε-greedy": EpsilonGreedy(k, epsilon=0.1, seed=0),
    "UCB": UCB(k),
}
print(f"{k} arms with Bernoulli means {MEANS}; the best is arm {best}. {RUNS} runs of {HORIZON:,} rounds.")

# %% [markdown]
# ## Play them
#
# Each player plays `RUNS` episodes; `curves` holds its mean cumulative regret per round.

# %%
curves = {}
for name, agent in players.items():
    results = [play(agent, env, seed) for seed in range(RUNS)]
    curves[name] = np.mean([np.cumsum(r) for r, _ in results], axis=0)
    stuck = sum(favourite != best for _, favourite in results)
    late = curves[name][-1] - curves[name][-201]
    print(
        f"{name:8s} regret after T: {curves[name][-1]:6.1f}, in the last 200 rounds: {late:5.1f};"
        f" ends on a worse arm in {stuck:2d}/{RUNS} runs"
    )

# %% [markdown]
# ## What the numbers say

# %%
random_regret = (max(MEANS) - np.mean(MEANS)) * HORIZON
print(f"-> Random never learns: its regret grows linearly, (best - average mean) x T = {random_regret:.0f}.")
print("-> greedy trusts its first noisy draws: when the best arm starts with a 0 it may never try it again.")
floor = 0.1 * (max(MEANS) - np.mean(MEANS))
print(
    "-> ε-greedy keeps trying every arm, so it finds the best one, but it pays for its random rounds for ever:"
    f" ε x (best - average mean) = {floor:.2f} per round ({200 * floor:.1f} in 200 rounds), however long it plays."
)
print("-> UCB adds a bonus to rarely tried arms, so it keeps checking them; its regret flattens (~ log T).")

# %% [markdown]
# ## The figure
#
# What to look for, and questions: docs/teaching.md, section 1.

# %%
fig = Figure(figsize=(6, 4))
FigureCanvasAgg(fig)
ax = fig.add_subplot()
for name, curve in curves.items():
    ax.plot(np.arange(1, HORIZON + 1), curve, label=name)
ax.set(xlabel="round t", ylabel="cumulative regret", title=f"Bernoulli bandit, mean of {RUNS} runs")
ax.legend()
show(fig, OUT, "teach_01_first_bandit.png")
