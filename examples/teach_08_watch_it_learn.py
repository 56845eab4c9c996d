# %% [markdown]
# # Exercise 8: watch a bandit learn, round by round
#
# Every env of the suite can draw itself, with Gymnasium's render modes: built with
# `render_mode="ansi"`, `env.render()` returns a text frame (the round, the action, the reward,
# the regret so far, and per arm its pulls, observations and empirical mean); with
# `render_mode="rgb_array"` an image (an (H, W, 3) uint8 array) of the feedback graph with the
# pulled arm and the neighbours it revealed highlighted. We follow one episode of UCB on
# `GraphBandit-v0`: the text frames of the first rounds are printed, and pictures of the episode
# are saved as an animated GIF (shown inline in a notebook). Without a render mode (the default) an
# env keeps nothing for rendering and runs at full speed.
#
# Needs imageio for the GIF (`pip install -e ".[teaching]"`); without it the exercise prints the text
# frames, says so and writes no GIF.
#
# Run: `python examples/teach_08_watch_it_learn.py [--out DIR]` (about ten seconds), or run the cells one
# at a time in Jupyter. Guide: docs/teaching.md.

# %%
from __future__ import annotations

import importlib.util
from pathlib import Path

import gymnasium as gym
import numpy as np

import bandit_envs  # noqa: F401  (registers the environment ids)
from agents import UCB
from agents.teaching import out_folder, output_folder, show_file

# %% [markdown]
# ## The episode
#
# `--out DIR` sets the folder the GIF is written to (in a notebook too, the default folder; it shows
# inline there).

# %%
OUT = out_folder("Exercise 8: watch UCB learn, in text and pictures.")
#: The gap paper's §5 instance (10 arms, Erdős–Rényi feedback graph, truncated-normal rewards) with a
#: wider gap than its default 0.1, so that learning shows within a short episode.
INSTANCE = {"gap": 0.3}
HORIZON = 500
SEED = 0
#: Rounds printed as text frames (after round 0, the frame of the reset).
TEXT_ROUNDS = 3
#: Rounds drawn into the GIF: every round while UCB tries each arm once, then every 25th.
FILMED = set(range(0, 12)) | set(range(25, HORIZON + 1, 25))

# %% [markdown]
# An env renders in the mode it was built with. Two envs of the same instance, reset with the same
# seed and given the same actions, play the same rounds: one of them draws text, the other pictures.


# %% [markdown]
# ## Play and film


# %%
def play(text_env: gym.Env, picture_env: gym.Env) -> tuple[list[str], list[np.ndarray], list[int]]:
    """One episode of UCB: the text frames of the first rounds, the filmed pictures and the actions."""
    n_arms = int(text_env.action_space.n)
    agent = UCB(n_arms)
    obs, _ = text_env.reset(seed=SEED)
    picture_env.reset(seed=SEED)
    texts, pictures, actions = [text_env.render()], [picture_env.render()], []
    for t in range(1, HORIZON + 1):
        action = agent.act(obs)
        obs, reward, terminated, truncated, info = text_env.step(action)
        twin_reward = picture_env.step(action)[1]
        assert twin_reward == reward, "same instance, same seed, same action: the same reward"
        agent.update(action, reward, info)
        actions.append(int(action))
        if t <= TEXT_ROUNDS:
            texts.append(text_env.render())
        if t in FILMED:
            pictures.append(picture_env.render())
    texts.append(text_env.render())
    return texts, pictures, actions


# %% [markdown]
# ## Save the GIF


# %%
def save_gif(pictures: list[np.ndarray], path: Path, fps: float) -> bool:
    """Write the pictures as an animated GIF (looping); False if imageio is not installed."""
    if importlib.util.find_spec("imageio") is None:
        return False
    import imageio.v3 as iio

    iio.imwrite(path, np.stack(pictures), extension=".gif", duration=1000 / fps, loop=0)
    return True


# %% [markdown]
# ## Play one episode
#
# Two envs of one instance: one draws text (`ansi`), the other pictures (`rgb_array`).

# %%
text_env = gym.make("GraphBandit-v0", **INSTANCE, horizon=HORIZON, render_mode="ansi")
picture_env = gym.make("GraphBandit-v0", **INSTANCE, horizon=HORIZON, render_mode="rgb_array")
env = text_env.unwrapped
best = np.flatnonzero(env.expected_rewards == env.expected_rewards.max()).tolist()
print(
    f"GraphBandit-v0: {env.n_arms} arms, best arms {best} (true mean {env.expected_rewards.max():.3f}); "
    f"render modes {text_env.metadata['render_modes']}. UCB plays {HORIZON} rounds, seed {SEED}."
)
texts, pictures, actions = play(text_env, picture_env)

# %% [markdown]
# ## The first frames
#
# The frame of the reset and of the first rounds.

# %%
for frame in texts[: TEXT_ROUNDS + 1]:
    print()
    print(frame)
print()
print(f"-> round 0 is the frame of the reset; UCB then pulls every arm once, lowest index first: {actions[:10]}.")
print("-> '*' is the pulled arm, '+' its neighbours: their rewards were shown too ('obs' > 'pulls').")

# %% [markdown]
# ## The last frame, and what it says

# %%
print()
print(texts[-1])
half = HORIZON // 2
on_best = np.isin(actions, best)
gaps = env.gaps[actions]
print()
print(
    f"-> the best arms got {on_best[:half].mean():.0%} of the pulls of rounds 1-{half}, "
    f"{on_best[half:].mean():.0%} of rounds {half + 1}-{HORIZON};"
)
print(f"   the regret of those halves: {gaps[:half].sum():.1f} and {gaps[half:].sum():.1f}.")
print("   UCB's bonus shrinks as an arm is pulled, so the rounds move to the arms with the best means")
print("   and the regret curve bends (watch the GIF).")
print("-> UCB ignores the side observations ('obs'); UCB-N (agents.UCBN) uses them. Try it.")

# %% [markdown]
# ## The pictures
#
# What to look for, and questions: docs/teaching.md, section 8.

# %%
picture = pictures[-1]
fps = picture_env.metadata["render_fps"]
print()
print(f"rgb_array frames: {len(pictures)} of shape {picture.shape} and dtype {picture.dtype}, {fps} per second.")
# Created if missing; in the shared temporary folder, only a folder of this user's (agents.teaching.output_folder).
path = output_folder(OUT) / "teach_08_watch_it_learn.gif"
if save_gif(pictures, path, fps):
    print(f"GIF: {path}")
    show_file(path)  # in a notebook, the animation shows here
else:
    print('imageio is not installed (pip install -e ".[teaching]"): no GIF written.')
text_env.close()
picture_env.close()  # closes the env's matplotlib figure
