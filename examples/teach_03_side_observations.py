# %% [markdown]
# # Exercise 3: side observations and the independence number alpha(G)
#
# On a feedback graph, pulling arm a also reveals the rewards of a's neighbours. UCB ignores them;
# UCB-N (Caron et al. 2012) adds them to its means. We use 12 arms split into c disjoint cliques
# (all arms of a clique see each other), from 12 cliques of one arm (no side observations) to one
# clique of 12 (pulling any arm reveals everything). The independence number alpha(G), the largest
# set of arms none of which sees another, is then c: the number of arms one must really explore.
#
# Run: `python examples/teach_03_side_observations.py [--out DIR]` (a few seconds), or run the cells one
# at a time in Jupyter. Guide: docs/teaching.md.

# %%
from __future__ import annotations

import gymnasium as gym
import networkx as nx
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

import bandit_envs  # noqa: F401  (registers the environment ids)
from agents import UCB, UCBN, Agent
from agents.teaching import out_folder, show
from bandit_envs.feedback_graphs import independence_number

# %% [markdown]
# ## The instance
#
# As a script, `--out DIR` sets the folder the figure is saved to; in a notebook it shows inline.

# %%
OUT = out_folder("Exercise 3: side observations and the independence number.")
N_ARMS = 12
MEANS = np.linspace(0.9, 0.3, N_ARMS)
HORIZON = 3_000
RUNS = 4


# %% [markdown]
# ## Feedback graphs made of cliques
#
# `cliques(c)` splits the arms into c cliques of consecutive arms: its independence number is c.
# `regret` plays the copies of a vector env in lock-step (`gym.make_vec(..., num_envs=RUNS)` and
# an agent built with `n_envs=RUNS`).


# %%
def cliques(n_cliques: int) -> np.ndarray:
    """Adjacency of ``N_ARMS`` arms split into ``n_cliques`` cliques of consecutive arms."""
    graph = nx.disjoint_union_all([nx.complete_graph(N_ARMS // n_cliques)] * n_cliques)
    return nx.to_numpy_array(graph, nodelist=range(N_ARMS), dtype=bool)


def regret(agent: Agent, env: gym.vector.VectorEnv) -> float:
    """Mean cumulative regret over the copies of a vector env, all played in lock-step by ``agent``."""
    obs, info = env.reset(seed=0)
    total = np.zeros(env.num_envs)
    for _ in range(HORIZON):
        action = agent.act(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        agent.update(action, reward, info)
        total += info["regret"]
    return float(total.mean())


# %% [markdown]
# ## UCB and UCB-N on graphs of fewer and fewer cliques
#
# For each graph: its edges, density and alpha(G), and the mean regret of both agents.

# %%
print(f"{N_ARMS} arms, means {MEANS[0]:.2f} down to {MEANS[-1]:.2f}; mean regret of {RUNS} runs of {HORIZON:,}.")
print("cliques  edges  density  alpha(G)  UCB regret  UCB-N regret")
rows = []
for n_cliques in (12, 6, 4, 3, 2, 1):
    adjacency = cliques(n_cliques)
    alpha = independence_number(adjacency)
    # RUNS copies of the env stepped by one numpy call; agents with n_envs=RUNS play them together.
    env = gym.make_vec("GraphBandit-v0", num_envs=RUNS, graph=adjacency, means=MEANS, horizon=HORIZON)
    ucb, ucbn = regret(UCB(N_ARMS, n_envs=RUNS), env), regret(UCBN(N_ARMS, n_envs=RUNS), env)
    edges = int(adjacency.sum()) // 2
    density = edges / (N_ARMS * (N_ARMS - 1) / 2)
    print(f"{n_cliques:7d}  {edges:5d}  {density:7.2f}  {alpha:8d}  {ucb:10.1f}  {ucbn:12.1f}")
    rows.append((alpha, ucb, ucbn))

# %% [markdown]
# ## What the numbers say

# %%
alphas, ucb_regret, ucbn_regret = (np.array(column) for column in zip(*rows, strict=True))
slope = np.polyfit(alphas, ucbn_regret, 1)[0]
print("-> UCB's regret does not depend on the graph: it throws the side observations away")
print("   (with no edges UCB-N is exactly UCB, hence the equal first row).")
print(f"-> UCB-N's regret falls with alpha(G), about {slope:.0f} per unit of alpha here: it pays to explore")
print("   one arm per clique, not every arm. With alpha = 1 one pull shows all arms: almost no regret.")

# %% [markdown]
# ## The figure
#
# What to look for, and questions: docs/teaching.md, section 3.

# %%
fig = Figure(figsize=(6, 4))
FigureCanvasAgg(fig)
ax = fig.add_subplot()
ax.plot(alphas, ucb_regret, "o-", label="UCB (ignores side observations)")
ax.plot(alphas, ucbn_regret, "s-", label="UCB-N (uses them)")
ax.set(xlabel="independence number alpha(G)", ylabel=f"regret after T = {HORIZON:,}", title="Regret vs alpha(G)")
ax.legend()
show(fig, OUT, "teach_03_side_observations.png")
