"""Bring your own agent: run a plain-Python agent in a paper experiment, next to the built-in ones.

``MyUCBN`` below is UCB-N (Caron et al. 2012) written from scratch with the Agent interface
(``act`` / ``update`` / ``reset``): after each pull it adds every side observation the env
reports in ``info["observed_mask"]`` / ``info["observed_rewards"]`` (the closed neighbourhood of
the pulled arm on ``GraphBandit-v0``'s feedback graph). ``make_agent(env, setting, seed)`` is
the factory the experiments call for every (setting, run); ``setting`` is the setting's
parameter dict (here ``gap``, ``edge_probability`` and ``epsilon``). UCB-N is not private, so
it ignores ``epsilon``: a non-private reference line beside the private GAP and DPSE.

``run("gap/regret-eps", agents=[...])`` runs the gap paper's Figure 3 at a small scale: the
built-in GAP and DPSE (compiled fast paths) and our agent (through the Gymnasium step API) see
the same graphs and reward draws (common random numbers). It returns the tidy results as a
pandas DataFrame: one row per setting, agent, run and checkpoint round ``t``.

The same agent from the command line (the module only defines things at import, so the file
is a valid ``--agent`` target; the summary's tables and the figure then include it)::

    banditlab run gap/regret-eps --quick --agent examples/bring_your_own_agent.py:make_agent --out results/mine

Run: ``python examples/bring_your_own_agent.py [--out DIR] [--runs N] [--horizon T]`` (about
15 s of CPU time).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from agents import Agent
from agents.experiments import UsageError, run
from agents.teaching import output_folder, temp_folder

# The quick scale's horizon (the paper's is 100,000): GAP's regret already falls as ε grows.
RUNS = 3
HORIZON = 20_000
#: Where the results go without ``--out``: a folder of this user's in the temporary folder (shared by all users).
DEFAULT_OUT = temp_folder("bandit-envs-byoa")


class MyUCBN(Agent):
    """UCB-N in plain Python: UCB on all observations, side observations included (one env)."""

    name = "MyUCB-N"

    def __init__(self, n_arms: int, *, seed: int | None = None) -> None:
        super().__init__(n_arms, seed=seed)
        self._reset_state()

    def _reset_state(self) -> None:
        self.sums = np.zeros(self.n_arms)
        self.counts = np.zeros(self.n_arms)
        self.t = 0

    def act(self, obs: Any = None) -> int:
        unseen = np.flatnonzero(self.counts == 0)
        if unseen.size:  # arms never observed first
            return int(unseen[0])
        index = self.sums / self.counts + np.sqrt(2.0 * np.log(self.t + 1) / self.counts)
        return int(np.argmax(index))

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        if info is None or "observed_mask" not in info:
            raise ValueError("info must contain 'observed_mask' and 'observed_rewards' (use GraphBandit-v0).")
        mask = np.asarray(info["observed_mask"], dtype=bool)
        self.sums[mask] += np.asarray(info["observed_rewards"], dtype=float)[mask]
        self.counts[mask] += 1
        self.t += 1


def make_agent(env: Any, setting: dict[str, Any], seed: int) -> MyUCBN:
    """The factory: one agent for one run of one setting, on ``env`` (a ``GraphBandit-v0``)."""
    return MyUCBN(int(env.action_space.n), seed=seed)


def main() -> None:
    parser = argparse.ArgumentParser(description="Run your own agent in gap/regret-eps next to GAP and DPSE.")
    parser.add_argument(
        "--out", default=DEFAULT_OUT, help=f"folder for the CSV, a leading ~ expanded (default: {DEFAULT_OUT})"
    )
    parser.add_argument("--runs", type=int, default=RUNS, help="runs per setting")
    parser.add_argument("--horizon", type=int, default=HORIZON, help="rounds per run")
    args = parser.parse_args()
    # The folder first, so that one that cannot be written stops the script before the experiment runs;
    # in the shared temporary folder only a folder of this user's is written to (agents.teaching.output_folder).
    try:
        out = output_folder(args.out)
    except (ValueError, PermissionError) as exc:
        parser.error(f"argument --out: {exc}")

    # Built-in names and user entries mix; a (name, factory) pair names the agent in the table.
    try:
        df = run(
            "gap/regret-eps",
            agents=["GAP", "DPSE", ("MyUCB-N", make_agent)],
            runs=args.runs,
            horizon=args.horizon,
        )
    except UsageError as exc:  # e.g. --runs 0: one sentence, not a traceback
        parser.error(str(exc))
    final = df[df["t"] == df["t"].max()]
    table = final.pivot_table(index="epsilon", columns="agent", values="regret", aggfunc="mean")
    fixed = f"Δmin = {final['gap'].iloc[0]:g}, p = {final['edge_probability'].iloc[0]:g}"
    print(f"gap/regret-eps: mean regret at T = {args.horizon:,} over {args.runs} runs ({fixed}), by ε and agent")
    print(table[["GAP", "DPSE", "MyUCB-N"]].round(1).to_string())
    print("-> MyUCB-N ignores ε (same graphs and draws in every setting); GAP's regret falls as ε grows.")

    path = out / "bring_your_own_agent.csv"
    df.to_csv(path, index=False)
    print(f"results ({len(df):,} tidy rows): {path}")


if __name__ == "__main__":
    main()
