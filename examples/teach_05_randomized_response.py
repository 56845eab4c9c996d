# %% [markdown]
# # Exercise 5: local differential privacy, and what it does to an estimate
#
# In the local model each user randomizes their own datum before sending it, so the server never
# sees a true value. Randomized response (RR) keeps a bit with probability e^eps / (1 + e^eps) and
# flips it otherwise; the server debiases the average of the reports with `rr_debias`. The
# estimate stays unbiased but noisier: over n users its variance is e^eps / (e^eps - 1)^2 / n
# (for a fixed population; exact, not an approximation). For values in [0, 1] the Laplace
# mechanism adds Laplace(1/eps) noise to each value: variance 2 / (eps^2 n) for the mean.
# Central DP (a trusted curator adds noise once to the mean, sensitivity 1/n) needs only
# 2 / (eps n)^2: local privacy costs a factor n in variance.
#
# Run: `python examples/teach_05_randomized_response.py [--out DIR]` (a few seconds), or run the cells
# one at a time in Jupyter. Guide: docs/teaching.md.

# %%
from __future__ import annotations

import math

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from agents.teaching import out_folder, show
from bandit_envs.privacy import laplace_mechanism, randomized_response, rr_debias
from bandit_envs.privacy.streams import noise_generator

# %% [markdown]
# ## The survey
#
# As a script, `--out DIR` sets the folder the figure is saved to; in a notebook it shows inline.

# %%
OUT = out_folder("Exercise 5: randomized response and the Laplace mechanism.")
N_USERS = 1_000
REPEATS = 1_000
TRUE_SHARE = 0.3
EPSILONS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)


# %% [markdown]
# ## The theory to check
#
# The variance of the debiased randomized-response estimate of a share, which the experiment
# compares with the spread it measures.


# %%
def rr_variance(epsilon: float, n: int) -> float:
    """Variance of the debiased RR estimate of a share over ``n`` users (fixed population)."""
    return math.exp(epsilon) / math.expm1(epsilon) ** 2 / n


# %% [markdown]
# ## Two random streams
#
# The users' data and the mechanisms' noise each have a generator of their own.

# %%
rng = np.random.default_rng(0)  # the users' data
noise = noise_generator(0)  # the mechanisms' noise: a stream of its own (docs/design.md, "Seeds")

# %% [markdown]
# ## Randomized response on a survey
#
# Each repeated survey randomizes every user's bit; `rr_debias` turns the share of 1s back into an estimate.

# %%
bits = np.zeros(N_USERS, dtype=np.int64)
bits[: int(TRUE_SHARE * N_USERS)] = 1  # e.g. "watched this film": 30% of the users say yes
print(f"Randomized response: {N_USERS:,} users, true share {TRUE_SHARE}; {REPEATS:,} repeated surveys.")
print("epsilon  raw share  debiased mean  sd theory  sd empirical  users for sd 0.01")
rr_sd = []
# Each of the REPEATS rows is one hypothetical run of the survey, simulated to measure the spread: in one
# run each user sends one randomized bit, eps-LDP. They are trials, not releases: a user who really answered
# all REPEATS surveys about the same bit would have spent REPEATS * eps. The true share printed here is the
# simulation's ground truth, to compare the estimates with; a real survey never sees it.
for epsilon in EPSILONS:
    reports = randomized_response(np.broadcast_to(bits, (REPEATS, N_USERS)), epsilon, noise)
    raw = reports.mean(axis=1)
    estimates = rr_debias(raw, epsilon)
    theory = math.sqrt(rr_variance(epsilon, N_USERS))
    rr_sd.append(estimates.std())
    needed = rr_variance(epsilon, 1) / 0.01**2
    print(
        f"{epsilon:7.2f}  {raw.mean():9.3f}  {estimates.mean():13.3f}  {theory:9.4f}  {estimates.std():12.4f}"
        f"  {needed:17,.0f}"
    )
print(f"-> the raw share of 1s is pulled towards 0.5 (the coin); rr_debias removes that bias: mean ~ {TRUE_SHARE}.")
print("-> the spread matches e^eps/(e^eps-1)^2/n; for small eps it is ~ 1/(eps^2 n): halve eps, 4x the users.")

# %% [markdown]
# ## The Laplace mechanism, local and central

# %%
values = rng.beta(2.0, 5.0, size=N_USERS)  # e.g. normalized ratings in [0, 1]
# The true mean is printed as the simulation's ground truth (the thing the mechanisms estimate), not released.
print(f"\nLaplace mechanism on a mean of {N_USERS:,} values in [0, 1] (true mean {values.mean():.3f}).")
print("epsilon  local sd theory  local sd empirical  central sd theory  central sd empirical")
local_sd, central_sd = [], []
# Each of the REPEATS rows is one hypothetical run of the survey, simulated to measure the spread: in one
# run each user sends one report, eps-LDP. They are trials, not releases: a user who really sent all
# REPEATS reports of the same value would have spent REPEATS * eps.
for epsilon in EPSILONS:
    noisy = laplace_mechanism(np.broadcast_to(values, (REPEATS, N_USERS)), epsilon, noise, lower=0.0, upper=1.0)
    local = noisy.mean(axis=1)
    # Central model: the curator sees the true values and noises their mean once (sensitivity 1/n), eps-DP;
    # again REPEATS independent trials of that one release (all of them released would cost REPEATS * eps).
    central = laplace_mechanism(np.full(REPEATS, values.mean()), epsilon, noise, sensitivity=1.0 / N_USERS)
    local_sd.append(local.std())
    central_sd.append(central.std())
    print(
        f"{epsilon:7.2f}  {math.sqrt(2 / N_USERS) / epsilon:15.4f}  {local.std():18.4f}"
        f"  {math.sqrt(2) / (epsilon * N_USERS):17.5f}  {central.std():20.5f}"
    )
print(f"-> local noise is {math.sqrt(N_USERS):.0f}x (sqrt n) larger in sd than central noise at the same epsilon:")
print("   the price of not trusting the server.")
print(f"-> Laplace noise does not depend on the values, so on bits at eps = {EPSILONS[0]} it would also give sd")
print(f"   {local_sd[0]:.3f}, against {rr_sd[0]:.3f} for RR: for bits, RR is the better mechanism (~ sqrt 2).")

# %% [markdown]
# ## The figure
#
# What to look for, and questions: docs/teaching.md, section 5.

# %%
fig = Figure(figsize=(6, 4))
FigureCanvasAgg(fig)
ax = fig.add_subplot()
grid = np.geomspace(EPSILONS[0], EPSILONS[-1], 50)
ax.plot(grid, [math.sqrt(rr_variance(e, N_USERS)) for e in grid], color="C0", label="RR theory")
ax.plot(EPSILONS, rr_sd, "o", color="C0", label="RR + rr_debias, empirical")
ax.plot(grid, math.sqrt(2 / N_USERS) / grid, color="C1", label="local Laplace theory")
ax.plot(EPSILONS, local_sd, "s", color="C1", label="local Laplace, empirical")
ax.plot(grid, math.sqrt(2) / (grid * N_USERS), color="C2", label="central Laplace theory")
ax.plot(EPSILONS, central_sd, "^", color="C2", label="central Laplace, empirical")
ax.set(xscale="log", yscale="log", xlabel="epsilon", ylabel=f"sd of the estimate (n = {N_USERS:,})")
ax.set_title("What privacy noise does to an estimate")
ax.legend(fontsize=8)
show(fig, OUT, "teach_05_randomized_response.png")
