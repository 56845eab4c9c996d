# %% [markdown]
# # Exercise 7: an RL agent (stable-baselines3 PPO) on a bandit
#
# A bandit is a one-state RL problem: `GraphBandit-v0` always observes 0, so the best policy is a
# fixed arm and nothing is gained by planning ahead (we set PPO's discount gamma to 0). PPO trains
# through the plain Gymnasium API, over many short episodes, and learns *which arm this instance
# rewards*; a bandit algorithm such as UCB learns the same thing inside one episode, with a
# confidence bound instead of a policy gradient. We compare the arm PPO ends up preferring with
# the best arm, and the regret PPO paid while training with UCB's over the same number of pulls.
#
# Needs the RL extra (`pip install -e ".[rl]"`: stable-baselines3 and torch); without it the
# exercise says so and its cells do nothing.
#
# Run: `python examples/teach_07_rl_agent.py [--out DIR]` (about ten seconds), or run the cells one at
# a time in Jupyter. Guide: docs/teaching.md.

# %%
from __future__ import annotations

import importlib.util
from typing import Any

import gymnasium as gym
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

import bandit_envs  # noqa: F401  (registers the environment ids)
from agents import UCB
from agents.teaching import out_folder, show

#: Whether the RL extra is installed; without it the cells below only say so.
RL = importlib.util.find_spec("stable_baselines3") is not None and importlib.util.find_spec("torch") is not None
if not RL:
    print('stable-baselines3 is not installed: skipping exercise 7 (pip install -e ".[rl]" to run it).')

# %% [markdown]
# ## The instance
#
# As a script, `--out DIR` sets the folder the figure is saved to; in a notebook it shows inline.

# %%
OUT = out_folder("Exercise 7: stable-baselines3 PPO on a bandit.")
#: An easy instance: five arms, Bernoulli rewards, the best (arm 3) ahead by 0.3.
MEANS = [0.3, 0.5, 0.4, 0.8, 0.2]
EPISODE = 32
TRAIN_STEPS = 2_048


# %% [markdown]
# ## The env and the bandit baseline
#
# PPO trains on short episodes of `make_env(EPISODE)`; UCB plays one long episode with as many
# pulls as PPO took while training.


# %%
def make_env(horizon: int) -> gym.Env:
    """The instance: ``MEANS`` on an empty feedback graph (no side observations), ``horizon`` rounds."""
    empty = np.zeros((len(MEANS), len(MEANS)), dtype=bool)
    return gym.make("GraphBandit-v0", graph=empty, means=MEANS, reward="bernoulli", horizon=horizon)


def ucb_regret(pulls: int) -> np.ndarray:
    """Per-round regret of UCB over ``pulls`` rounds of one long episode."""
    env = make_env(pulls)
    agent = UCB(len(MEANS))
    obs, info = env.reset(seed=0)
    regret = np.zeros(pulls)
    for t in range(pulls):
        action = agent.act(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        agent.update(action, reward, info)
        regret[t] = info["regret"]
    return regret


# %% [markdown]
# ## PPO
#
# `train_ppo` trains PPO on episodes of `EPISODE` rounds, keeping the regret of every training step,
# and returns its greedy arm, its policy's probabilities and that regret.


# %%
def train_ppo(env: gym.Env) -> tuple[int, np.ndarray, list[float]]:
    """Train PPO on ``env`` for ``TRAIN_STEPS`` steps: its greedy arm, its policy and its training regret."""
    import torch
    from stable_baselines3 import PPO

    training_regret: list[float] = []

    def record(local_vars: dict[str, Any], _globals: dict[str, Any]) -> bool:
        """SB3 callback: keep the regret of every training step (the env reports it in info)."""
        training_regret.extend(info["regret"] for info in local_vars["infos"])
        return True

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny network: extra threads only add overhead
    try:
        model = PPO("MlpPolicy", env, n_steps=256, batch_size=64, n_epochs=4, gamma=0.0, seed=0, device="cpu")
        model.learn(total_timesteps=TRAIN_STEPS, callback=record)
        obs, _ = env.reset(seed=0)
        greedy, _ = model.predict(obs, deterministic=True)
        with torch.no_grad():
            probabilities = model.policy.get_distribution(model.policy.obs_to_tensor(obs)[0]).distribution.probs
    finally:
        torch.set_num_threads(threads)
    return int(greedy), probabilities.numpy().ravel().astype(np.float64), training_regret


# %% [markdown]
# ## Train it and look at its policy

# %%
best = int(np.argmax(MEANS))
if RL:
    greedy, probabilities, training_regret = train_ppo(make_env(EPISODE))
    print(f"{len(MEANS)} Bernoulli arms, means {MEANS}; episodes of {EPISODE} rounds; {TRAIN_STEPS:,} PPO steps.")
    print(f"PPO's greedy arm: {greedy} (mean {MEANS[greedy]}); best arm: {best} (mean {MEANS[best]}).")
    print(f"PPO's policy: {np.round(probabilities, 3).tolist()}")
    print(
        f"expected reward per round: greedy PPO {MEANS[greedy]:.3f}, PPO's stochastic policy"
        f" {probabilities @ np.array(MEANS):.3f}, Random {np.mean(MEANS):.3f}, best arm {MEANS[best]:.3f}"
    )

# %% [markdown]
# ## UCB for as many pulls

# %%
if RL:
    pulls = len(training_regret)
    ucb = ucb_regret(pulls)
    print(f"regret over {pulls:,} pulls: PPO while training {sum(training_regret):.0f}, UCB {ucb.sum():.0f}")
    found = "finds" if greedy == best else "does not find"
    print(f"-> PPO {found} the best arm on this easy instance. It explores through the randomness (entropy) of its")
    print("   policy, not with confidence bounds, and learns across episodes of a repeated instance;")
    print("   UCB learns within one episode and, here, pays far less regret for the same number of pulls.")

# %% [markdown]
# ## The figure
#
# What to look for, and questions: docs/teaching.md, section 7.

# %%
if RL:
    fig = Figure(figsize=(6, 4))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    rounds = np.arange(1, pulls + 1)
    ax.plot(rounds, np.cumsum(training_regret), label="PPO (training)")
    ax.plot(rounds, np.cumsum(ucb), label="UCB (one long episode)")
    ax.set(xlabel="pulls", ylabel="cumulative regret", title="Learning the best arm: PPO vs UCB")
    ax.legend()
    show(fig, OUT, "teach_07_rl_agent.png")
