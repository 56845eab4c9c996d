# %% [markdown]
# # Exercise 4: the price of privacy, regret against the privacy budget epsilon
#
# GAP (the gap paper's graph-aware private elimination) and DPSE (private successive elimination,
# not graph-aware) are epsilon-differentially private: changing one reward entry changes the
# distribution of the arms they play by a factor of at most e^epsilon. They get there by adding
# Laplace noise of scale 1/(epsilon L) to means of L rewards, so a smaller epsilon needs longer
# epochs L before an arm can be eliminated, and that costs regret.
#
# Runs use the compiled fast path `agent.simulate(table, graph, gaps, law=...)`: the same
# agent code as the act/update loop, on a table of uniforms that the env's reward law turns into
# rewards. Every agent and every epsilon sees the same tables (common random numbers).
#
# Run: `python examples/teach_04_price_of_privacy.py [--out DIR]` (a few seconds), or run the cells one
# at a time in Jupyter. Guide: docs/teaching.md.

# %%
from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from agents import DPSE, GAP
from agents.teaching import out_folder, show
from bandit_envs.feedback_graphs import independence_number
from bandit_envs.graph import GraphBanditEnv
from bandit_envs.privacy import MAX_EPSILON

# %% [markdown]
# ## The instance
#
# As a script, `--out DIR` sets the folder the figure is saved to; in a notebook it shows inline.

# %%
OUT = out_folder("Exercise 4: regret against epsilon for GAP and DPSE.")
HORIZON = 100_000
RUNS = 4
EPSILONS = (0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
#: The largest epsilon the package accepts (above it numpy's bounded noise samplers break the
#: guarantee): Laplace noise of scale 1/(15 L), negligible at these epoch lengths L, so this is
#: nearly the non-private version of each agent.
NO_PRIVACY = MAX_EPSILON


# %% [markdown]
# ## The private agents
#
# GAP and DPSE with the paper's defaults (confidence 1/T); `epsilon` is their privacy budget.


# %%
def make(name: str, env: GraphBanditEnv, epsilon: float, seed: int) -> GAP | DPSE:
    """GAP or DPSE for ``env`` with budget ``epsilon`` (paper defaults: confidence 1/T)."""
    if name == "GAP":
        return GAP(env.n_arms, HORIZON, epsilon, env.adjacency, seed=seed)
    return DPSE(env.n_arms, HORIZON, epsilon, seed=seed)


# %% [markdown]
# ## The env and its reward tables
#
# Run `run` draws its table from `default_rng(run)` and seeds the agent with run too: safe, as
# private agents draw their noise from a stream of its own (docs/design.md, "Seeds").

# %%
env = GraphBanditEnv(horizon=HORIZON, gap=0.1, edge_probability=0.5, instance_seed=0)
tables = [np.random.default_rng(run).random((HORIZON, env.n_arms)) for run in range(RUNS)]
print(
    f"GraphBandit-v0: {env.n_arms} arms, gap 0.1, p = 0.5, alpha(G) = {independence_number(env.adjacency)};"
    f" mean regret of {RUNS} runs of T = {HORIZON:,}."
)

# %% [markdown]
# ## Regret at each budget
#
# Next to each regret: the pulls per arm of the first epoch (GAP's L_1, DPSE's R_1).

# %%
print("epsilon   GAP regret  GAP L_1   DPSE regret  DPSE R_1")
regret: dict[str, list[float]] = {"GAP": [], "DPSE": []}
for epsilon in (*EPSILONS, NO_PRIVACY):
    line = f"{epsilon:8.2f}"
    for name in regret:
        runs = [
            make(name, env, epsilon, seed=run).simulate(table, env.adjacency, env.gaps, law=env.reward_model)
            for run, table in enumerate(tables)
        ]
        regret[name].append(float(np.mean([r.total_regret for r in runs])))
        unplayed = make(name, env, epsilon, seed=0)
        first_epoch = unplayed.epoch_length[0] if name == "GAP" else unplayed.epoch_repetitions[0]
        line += f"  {regret[name][-1]:11.0f}  {first_epoch:7d}"
    print(line)
print(f"(epsilon = {NO_PRIVACY:g}, the largest the package accepts, adds negligible noise here: the 'no noise' row.)")

# %% [markdown]
# ## What the numbers say

# %%
for name, values in regret.items():
    extra = values[0] - values[-1]
    close = [eps for eps, value in zip(EPSILONS, values, strict=False) if value <= 1.1 * values[-1]]
    within = f"from epsilon = {close[0]}" if close else "nowhere on this grid"
    print(
        f"-> {name}: at epsilon = {EPSILONS[0]} privacy costs {extra:.0f} extra regret"
        f" ({values[0] / values[-1]:.1f}x); within 10% of no noise {within}."
    )
print("-> L_1 (GAP) and R_1 (DPSE) are the pulls per arm in the first epoch: the larger of a statistical term and")
print("   a privacy term ~ 1/epsilon. For small epsilon the privacy term sets them (halve epsilon, double L_1).")
print("   Above that, the price left comes from the noise allowance ~ 1/(epsilon L) in the elimination test,")
print("   which fades as epsilon grows.")
wins = sum(g < d for g, d in zip(regret["GAP"], regret["DPSE"], strict=True))
print(f"-> GAP has less regret than DPSE at {wins} of {len(regret['GAP'])} budgets: a pull of an arm also")
print("   reveals its neighbours' rewards, so GAP's epoch means average more data for the same number of rounds.")

# %% [markdown]
# ## The figure
#
# What to look for, and questions: docs/teaching.md, section 4.

# %%
fig = Figure(figsize=(6, 4))
FigureCanvasAgg(fig)
ax = fig.add_subplot()
for (name, values), colour in zip(regret.items(), ("C0", "C1"), strict=True):
    ax.plot(EPSILONS, values[:-1], "o-", color=colour, label=name)
    ax.axhline(values[-1], color=colour, linestyle=":", label=f"{name} without noise")
ax.set_xscale("log")
ax.set(xlabel="privacy budget epsilon", ylabel=f"regret after T = {HORIZON:,}", title="The price of privacy")
ax.legend()
show(fig, OUT, "teach_04_price_of_privacy.png")
