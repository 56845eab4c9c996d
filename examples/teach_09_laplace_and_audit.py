# %% [markdown]
# # Exercise 9: the Laplace mechanism's accuracy, a private UCB, and an audit of its claim
#
# A counting query ("how many users have property P?") changes by at most 1 when one user's
# record changes (sensitivity 1), so adding Laplace(1/eps) noise makes its answer eps-DP (the
# Laplace mechanism, Dwork & Roth 2014, Thm. 3.6). How accurate is it? Laplace noise of scale b
# satisfies P(|noise| > a) = exp(-a/b) exactly, so the answer is (alpha, beta)-accurate,
# P(|noise| > alpha) <= beta, with alpha = ln(1/beta) / eps (Dwork & Roth, Thm. 3.8): the error
# grows like 1/eps and only logarithmically in the confidence. We measure that by sampling.
# In this exercise *alpha* always means this accuracy.
#
# Private bandit agents are built from such releases. AdaP-UCB (Azize & Basu, NeurIPS 2022,
# Algorithm 1) releases each arm's mean at the end of each of its doubling episodes with Laplace
# noise and widens UCB's index by a term c ln t / (eps n), where c is its exploration constant
# (3.1 by default; the library's `AdaPUCB` takes it as its `alpha=` argument): it is eps-DP for one
# reward (event level). We run it at two epsilons next to UCB on a small Bernoulli bandit, then audit
# its claim with `agents.audit.audit`: many runs with fresh noise on two reward tables that differ in
# one reward give a statistical *lower bound* on the epsilon it really spends (docs/audit.md).
#
# Run: `python examples/teach_09_laplace_and_audit.py [--out DIR]` (about ten seconds), or run the cells
# one at a time in Jupyter. Guide: docs/teaching.md.

# %%
from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

import bandit_envs  # noqa: F401  (registers the environment ids)
from agents import UCB, AdaPUCB
from agents.audit import audit
from agents.teaching import out_folder, show
from bandit_envs.privacy import laplace_mechanism
from bandit_envs.privacy.streams import noise_generator

# %% [markdown]
# ## The setting
#
# As a script, `--out DIR` sets the folder the figure is saved to; in a notebook it shows inline.

# %%
OUT = out_folder("Exercise 9: Laplace accuracy, AdaP-UCB, and a privacy audit.")
#: Part (a): epsilons and failure probabilities of the accuracy check, and noise draws per epsilon.
EPSILONS = (0.5, 1.0, 2.0)
BETAS = (0.1, 0.01, 0.001)
DRAWS = 200_000
#: Part (b): a Bernoulli bandit (no side observations), its horizon and runs, and AdaP-UCB's epsilons.
MEANS = (0.7, 0.5, 0.4)
HORIZON = 3000
RUNS = 50
AGENT_EPSILONS = (0.5, 4.0)
#: Part (c): runs per input of the audit (small: a quick, weak audit).
AUDIT_RUNS = 2000

# %% [markdown]
# ## The theory to check
#
# The accuracy bound of the Laplace mechanism: with probability at least 1 - beta its error is
# at most alpha(eps, beta) = ln(1/beta) / eps (sensitivity 1).


# %%
def alpha(epsilon: float, beta: float) -> float:
    """The error a Laplace(1/eps) count exceeds with probability exactly beta: ln(1/beta)/eps."""
    return math.log(1.0 / beta) / epsilon


# %% [markdown]
# ## A private bandit
#
# `regret_curves` plays one batched agent (``n_envs`` copies, each with its own noise) on the
# vector env and returns the mean cumulative regret per round.


# %%
def regret_curves(make, seed: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Mean cumulative regret over RUNS copies of ``make(n_envs, seed)`` on the Bernoulli bandit."""
    k = len(MEANS)
    env = gym.make_vec(
        "GraphBandit-v0",
        num_envs=RUNS,
        vectorization_mode="vector_entry_point",
        graph=np.zeros((k, k), dtype=bool),
        means=MEANS,
        reward="bernoulli",
        horizon=HORIZON,
    )
    agent = make(RUNS, seed)
    obs, _ = env.reset(seed=seed)
    gaps = max(MEANS) - np.asarray(MEANS)
    regret = np.zeros(HORIZON)
    for t in range(HORIZON):
        action = agent.act(obs)
        obs, reward, _, _, info = env.step(action)
        agent.update(action, reward, info)
        regret[t] = gaps[np.asarray(action)].mean()
    env.close()
    return np.cumsum(regret)


# %% [markdown]
# ## The mechanism's noise
#
# A stream of its own (docs/design.md, "Seeds").

# %%
noise = noise_generator(0)  # the mechanism's noise: a stream of its own (docs/design.md, "Seeds")

# %% [markdown]
# ## (a) The accuracy of a Laplace count
#
# For each epsilon, many noisy answers to one count; the share of errors above alpha(eps, beta) is compared with beta.

# %%
true_count = 412  # e.g. 412 of 1,000 users have property P
print(f"(a) Laplace counting query: true count {true_count}, {DRAWS:,} noisy answers per epsilon.")
print("epsilon   beta    alpha = ln(1/beta)/eps   P(|error| > alpha) measured")
measured = {}
# Each entry is one release of the count, eps-DP on its own (sensitivity 1: one user changes it by 1).
# The DRAWS entries are independent trials of that release, drawn at once to measure its error; they
# are not one release (all of them published together would cost DRAWS * eps).
for epsilon in EPSILONS:
    answers = laplace_mechanism(np.full(DRAWS, float(true_count)), epsilon, noise, sensitivity=1.0)
    errors = np.abs(answers - true_count)
    for beta in BETAS:
        measured[(epsilon, beta)] = float(np.mean(errors > alpha(epsilon, beta)))
        print(f"{epsilon:7.2f}  {beta:6.3f}  {alpha(epsilon, beta):23.2f}   {measured[(epsilon, beta)]:.4f}")
print("-> the measured failure rate matches beta: for Laplace noise the bound is exact, not loose.")
print("-> halving eps doubles alpha; 100x more confidence (beta 0.1 -> 0.001) only triples it.")

# %% [markdown]
# ## (b) The price of privacy in a bandit
#
# UCB and AdaP-UCB at two epsilons, each on `RUNS` copies of the bandit.

# %%
print(f"\n(b) {len(MEANS)}-armed Bernoulli bandit, means {MEANS}, T = {HORIZON}, {RUNS} runs each.")
curves = {"UCB": regret_curves(lambda n, s: UCB(len(MEANS), n_envs=n, seed=s), 1)}
for epsilon in AGENT_EPSILONS:
    curves[f"AdaP-UCB, eps = {epsilon:g}"] = regret_curves(
        lambda n, s, e=epsilon: AdaPUCB(len(MEANS), e, n_envs=n, seed=s), 2
    )
print("agent                  regret at T/10   regret at T")
for name, curve in curves.items():
    print(f"{name:22s} {curve[HORIZON // 10 - 1]:14.1f}   {curve[-1]:11.1f}")
ucb = curves["UCB"][-1]
low, high = (curves[f"AdaP-UCB, eps = {e:g}"][-1] for e in AGENT_EPSILONS)
print(f"-> privacy costs regret: {low / ucb:.1f}x UCB's at eps = {AGENT_EPSILONS[0]:g}, "
      f"{high / ucb:.1f}x at eps = {AGENT_EPSILONS[1]:g}.")  # fmt: skip
print("   The index's privacy term c ln t/(eps n) shrinks as eps grows; what remains at a large eps comes")
print("   from the doubling episodes and the wider confidence term (exploration constant c = 3.1), not the noise.")

# %% [markdown]
# ## (c) Audit the claim

# %%
print(f"\n(c) Audit of AdaP-UCB's claim (eps = 1 per reward), {AUDIT_RUNS} runs per input.")
one = audit("AdaPUCB", epsilon=1.0, runs=AUDIT_RUNS, seed=0)
print(f"claimed eps = {one.epsilon:g}; empirical lower bound {one.epsilon_lower:.3f} "
      f"(95% CI [{max(one.interval[0], 0.0):.3f}, {one.interval[1]:.3f}]); verdict: {one.verdict}")  # fmt: skip
print(f"-> the audit only bounds eps from below: it found an event ({one.event}) whose probability")
print("   changes by that much when one reward changes; it cannot prove the claim, only refute it.")
print("   Read the lower bound against the claim: a violation is found only when it exceeds the claim.")
print("   An interval whose upper end is above the claim is not evidence of a violation either: it means")
print("   only that this many runs cannot rule out a larger epsilon.")

# %% [markdown]
# ### How to read the audit line
#
# `claimed eps = 1; empirical lower bound L (95% CI [lo, hi]); verdict: ...` reads:
#
# - **L is what the audit shows.** It is the lower end of a 95% interval for the privacy loss of the
#   event the audit found (floored at 0). A violation is reported only when L is above the claimed
#   epsilon.
# - **An upper end above the claim is not evidence of a violation.** The interval's width is how
#   precisely `AUDIT_RUNS` runs pin down that privacy loss. When the upper end is above 1 (it can be,
#   with fewer runs or another seed), that means only that these runs cannot tell a loss of 1 from a
#   larger one. "no violation found" is then the right verdict: the claim was not refuted, and it was
#   not proven either.
# - More runs narrow the interval from both sides; no number of runs turns an audit into a proof
#   (docs/audit.md, "What an audit proves, and what it cannot").
#
# Then the same audit with three rewards changed instead of one.

# %%
three = audit("AdaPUCB", epsilon=1.0, runs=AUDIT_RUNS * 2, group=3, seed=0)
print(f"three rewards changed: lower bound {three.epsilon_lower:.3f} against the one-reward claim 1; "
      f"verdict: {three.verdict}")  # fmt: skip
print("-> group privacy: an eps-DP agent is only 3 eps-DP for three rewards, and the audit can see that.")

# %% [markdown]
# ## The figure
#
# Left, part (a): the measured failure rate of each epsilon against beta; the points of the three epsilons
# fall on the same line, so they are drawn with different markers and shifted slightly sideways.
# Right, part (b): the regret curves. What to look for, and questions: docs/teaching.md, section 9.

# %%
fig = Figure(figsize=(10, 4))
FigureCanvasAgg(fig)
left, right = fig.subplots(1, 2)
# The three epsilons' points lie on the same line (the bound is exact for each): distinct markers, and a
# small sideways shift on the log axis, keep all three visible.
for i, (epsilon, marker) in enumerate(zip(EPSILONS, ("o", "s", "^"), strict=True)):
    shift = 1.15 ** (i - (len(EPSILONS) - 1) / 2)
    left.plot(
        [b * shift for b in BETAS],
        [measured[(epsilon, b)] for b in BETAS],
        marker,
        color=f"C{i}",
        mfc="none",
        label=f"eps = {epsilon:g}",
    )
left.plot(BETAS, BETAS, color="black", lw=1, label="beta (the bound)")
left.set(
    xscale="log",
    yscale="log",
    xlabel="beta (points shifted sideways per eps)",
    ylabel="P(|error| > ln(1/beta)/eps), measured",
)
left.set_title("Laplace count: (alpha, beta)-accuracy")
left.legend(fontsize=8)
for name, curve in curves.items():
    right.plot(np.arange(1, HORIZON + 1), curve, label=name)
right.set(xlabel="round t", ylabel=f"mean cumulative regret ({RUNS} runs)")
right.set_title("The price of privacy on a Bernoulli bandit")
right.legend(fontsize=8)
show(fig, OUT, "teach_09_laplace_and_audit.png")
