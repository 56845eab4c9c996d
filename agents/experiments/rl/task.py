"""``rl/graph``: PPO and DQN, trained through ``ArmStatistics``, beside UCB-N and GAP on ``GraphBandit-v0``.

Protocol (ours; see ``docs/rl.md``). Per run r, with its own training seeds (one for the model,
an independent one for the training envs' rewards):

1. Training. PPO and DQN each get ``options["train_timesteps"]`` interactions (100,000;
   ``--quick``: 5,000) with 8 copies of ``ArmStatistics(ShuffleArms(GraphBandit-v0))`` (episodes
   of ``options["train_horizon"]`` = 50 rounds; the experiment's K, p and Δmin; training graphs
   from instance seeds 10000–10007, never used for evaluation). ``ShuffleArms`` relabels the arms
   every episode, so the policies cannot memorize which arm is best (arms 0 and 1 in the paper's
   layout): they must learn to find it from the per-arm statistics, i.e. to explore.
2. Evaluation. All four agents play the same T-round episode: the graph of run r
   (``instance_seed = r``, as the gap experiments) with its arms relabelled by ``ShuffleArms``,
   and the same reward draws (common random numbers: ``reset(seed=table_seed(base, r))``). PPO
   and DQN act through :class:`agents.SB3Agent` with ``deterministic=False``, i.e. as they acted
   when training ended: PPO samples its policy (its exploration is that randomness: its greedy
   action can stay on the first decent arm forever); DQN is ε-greedy at its final ε. They do not
   learn during evaluation. GAP uses ε from the setting and δ = 1/T.

Training uses torch on one thread per process (``torch.set_num_threads(1)``) on the CPU, so a run
is reproducible from its seeds. stable-baselines3 also seeds Python's, numpy's global and torch's
generators of the worker process (``set_random_seed``); nothing else here reads them.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections import defaultdict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from agents.base import Agent
from agents.elimination.policies import GAP
from agents.experiments.core.checkpoints import evenly_spaced
from agents.experiments.core.claims import committed_summary
from agents.experiments.core.figures import regret_figure
from agents.experiments.core.graph_instances import check_instances, graph_instance
from agents.experiments.core.seeds import agent_seed, table_seed
from agents.experiments.core.spec import Experiment, Family, Param
from agents.experiments.core.stats import mean_ci
from agents.rl.sb3 import SB3Agent
from agents.stochastic.index import UCBN
from agents.user_agents import UserAgent
from bandit_envs.wrappers import ArmStatistics, ShuffleArms

if TYPE_CHECKING:
    from stable_baselines3.common.base_class import BaseAlgorithm

RL_AGENTS: tuple[str, ...] = ("PPO", "DQN")
N_CHECKPOINTS = 100
#: Parallel training envs and the instance seed of the first one (training graphs).
TRAIN_ENVS = 8
TRAIN_GRAPH_SEED = 10_000
#: Seed streams of a run's training: the model (``agent_seed(base, run, TRAIN_STREAM)``: torch,
#: numpy's legacy generator, the action space) and, independent of it, the training envs' rewards.
TRAIN_STREAM = 4
TRAIN_ENV_STREAM = 5

#: Hyperparameters [P], from a small manual search (a few configurations per algorithm, judged by
#: the regret at T = 2,000 over four runs): PPO's rollouts are one episode per env (8 × 50 steps);
#: no entropy bonus (with 0.01 its policy stayed too random to settle on the best arm); γ = 0.9
#: and λ = 0.8 did best (mean regret 143, against 190–470 for γ = 0.99, a lower learning rate or
#: larger nets), but every PPO configuration's regret varied several-fold with the training seed.
#: DQN with γ = 0.99 learned slowly (returns near 40 hide reward differences of 0.2); γ = 0.5 still
#: values exploring for a few rounds. Everything else is stable-baselines3's default.
HYPERPARAMETERS: dict[str, dict[str, Any]] = {
    "PPO": {
        "n_steps": 50,
        "batch_size": 200,
        "n_epochs": 10,
        "learning_rate": 1e-3,
        "ent_coef": 0.0,
        "gamma": 0.9,
        "gae_lambda": 0.8,
    },
    "DQN": {
        "learning_starts": 1_000,
        "buffer_size": 50_000,
        "train_freq": 4,
        "gradient_steps": 1,
        "target_update_interval": 250,
        "exploration_fraction": 0.3,
        "exploration_final_eps": 0.02,
        "learning_rate": 1e-3,
        "batch_size": 64,
        "gamma": 0.5,
    },
}


def _training_env(setting: dict[str, Any], n_arms: int, horizon: int, instance_seed: int) -> ArmStatistics:
    return ArmStatistics(ShuffleArms(graph_instance(n_arms, setting, horizon, instance_seed)))


@contextlib.contextmanager
def _one_torch_thread() -> Iterator[None]:
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def train(algorithm: str, setting: dict[str, Any], exp: Experiment, seed: int, env_seed: int) -> BaseAlgorithm:
    """Train ``algorithm`` (``"PPO"`` or ``"DQN"``) for ``options["train_timesteps"]`` steps on the training envs.

    ``seed`` seeds the model (stable-baselines3 seeds torch, numpy's legacy generator and the
    action space with it, and would seed the envs with it too); ``env_seed``, an independent
    seed, then replaces the envs' seeds before the first reset, so no generator shares a seed.
    """
    from stable_baselines3 import DQN, PPO
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import DummyVecEnv

    classes: dict[str, Any] = {"PPO": PPO, "DQN": DQN}
    if algorithm not in classes:
        raise ValueError(f"algorithm must be one of {sorted(classes)}, got {algorithm!r}.")
    envs = DummyVecEnv(
        [
            functools.partial(_training_env, setting, exp.n_arms, exp.options["train_horizon"], TRAIN_GRAPH_SEED + i)
            for i in range(TRAIN_ENVS)
        ]
    )
    model = classes[algorithm]("MlpPolicy", envs, seed=seed, device="cpu", **HYPERPARAMETERS[algorithm])
    envs.seed(env_seed)  # after the model's set_random_seed, which seeds the envs with `seed`
    # A logger that writes nowhere: without one, every `learn` makes an empty SB3-<time> folder in
    # the temporary directory (stable-baselines3's default), one per trained model.
    model.set_logger(Logger(folder=None, output_formats=[]))
    return cast("BaseAlgorithm", model.learn(exp.options["train_timesteps"]))


def _make_agent(
    name: str, reset_info: dict[str, Any], setting: dict[str, Any], horizon: int, models: dict[str, Any], seed: int
) -> Agent:
    graph = reset_info["feedback_graph"]
    if name == "UCB-N":
        return UCBN(graph.shape[0], seed=seed)
    if name == "GAP":
        return GAP(graph.shape[0], horizon, setting["epsilon"], graph, seed=seed)
    return SB3Agent(models[name], deterministic=False, name=name, seed=seed)


def play_env(exp: Experiment, setting: Mapping[str, Any], run: int) -> Any:
    """The env every agent of run ``run`` plays: the setting's graph (``instance_seed = run``), arms shuffled."""
    return _training_env(dict(setting), exp.n_arms, exp.horizon, run)


def probe_user(exp: Experiment, user: UserAgent) -> Any:
    """``user``'s agent as run 0 of the first setting builds it, seeded 0 (:attr:`Family.probe`)."""
    return user.build(play_env(exp, exp.settings[0], 0), exp.settings[0], 0, guard=False)


def rl_task(exp: Experiment, setting_index: int, run: int, base_seed: int) -> list[dict[str, Any]]:
    """One run: train the RL agents, then every agent's cumulative regret at ``N_CHECKPOINTS`` rounds."""
    setting = exp.settings[setting_index]
    horizon = exp.horizon
    checkpoints = set(evenly_spaced(horizon, N_CHECKPOINTS).tolist())
    rows: list[dict[str, Any]] = []
    users = {u.name: u for u in exp.user_agents}
    with _one_torch_thread():
        train_seed = agent_seed(base_seed, run, TRAIN_STREAM) % 2**32  # SB3 seeds numpy's legacy generator
        env_seed = agent_seed(base_seed, run, TRAIN_ENV_STREAM)
        models = {name: train(name, setting, exp, train_seed, env_seed) for name in exp.agents if name in RL_AGENTS}
        env = play_env(exp, setting, run)
        for name in exp.all_agents:
            obs, info = env.reset(seed=table_seed(base_seed, run))
            seed = agent_seed(base_seed, run)
            if name in users:
                agent = users[name].build(env, setting, seed)
            else:
                agent = _make_agent(name, info, setting, horizon, models, seed)
            regret = 0.0
            for t in range(1, horizon + 1):
                action = agent.act(obs)
                obs, reward, _, _, info = env.step(action)
                regret += info["regret"]  # before the agent's update, which may edit info in place
                agent.update(action, reward, info)
                if t in checkpoints:
                    rows.append(
                        {
                            **setting,
                            "setting": setting_index,
                            "run": run,
                            "agent": name,
                            "t": t,
                            "regret": regret,
                            "train_timesteps": exp.options["train_timesteps"] if name in models else 0,
                        }
                    )
    return rows


# -------------------------------------------------------------------------------- analysis


def _final(results: pd.DataFrame, horizon: int) -> dict[str, dict[int, float]]:
    out: dict[str, dict[int, float]] = defaultdict(dict)
    last = results[results["t"] == horizon]
    for a, run, reg in zip(last["agent"], last["run"], last["regret"], strict=True):
        out[str(a)][int(run)] = float(reg)
    return out


def _versus(rl: dict[int, float], other: dict[int, float], label: str) -> str:
    runs = sorted(set(rl) & set(other))
    diff = [rl[r] - other[r] for r in runs]
    m, _, h = mean_ci(diff)
    lower = sum(d < 0 for d in diff)
    if math.isnan(h):
        verdict = "one run: no interval"
    elif m + h < 0:
        verdict = f"lower than {label} (95% CI excludes 0)"
    elif m - h > 0:
        verdict = f"higher than {label} (95% CI excludes 0)"
    else:
        verdict = f"not distinguishable from {label} with {len(runs)} runs"
    return f"{m:+,.1f} ± {h:,.1f} → {verdict}; lower in {lower} of {len(runs)} runs"


def rl_summary(results: pd.DataFrame, exp: Experiment, meta: Mapping[str, Any]) -> str:
    """Markdown: the protocol, final regret (mean ± s.e.) per agent, RL − UCB-N and RL − GAP by run."""
    final = _final(results, exp.horizon)
    budget = int(results["train_timesteps"].max()) if len(results) else 0
    s = exp.settings[0]
    train_horizon = exp.options["train_horizon"]
    lines = [
        f"# `{exp.id}`: {exp.title}",
        "",
        f"Source: {exp.source}. Instance (the gap paper's §5 layout): GraphBandit-v0, K = {exp.n_arms}, "
        f"p = {s['edge_probability']:g}, "
        f"Δmin = {s['gap']:g}, truncated-normal rewards (σ = 0.1); GAP at ε = {s['epsilon']:g}, δ = 1/T. "
        f"Scale: T = {exp.horizon:,}, {exp.runs} runs, base seed {meta.get('seed', 0)}. "
        f"Wall time {meta.get('seconds', math.nan):.1f} s on {meta.get('jobs', 1)} process(es), training included.",
        "",
        f"Protocol: in every run PPO and DQN are trained from scratch with their own seed, {budget:,} interactions "
        f"each ({TRAIN_ENVS} envs, episodes of {train_horizon} rounds, arms relabelled at random every episode by "
        "`ShuffleArms`, observation `ArmStatistics`: per-arm observation frequencies and means, side observations "
        "included; training graphs differ from the evaluation graphs). Then all four agents play the run's "
        f"graph for T = {exp.horizon:,} rounds with the same relabelling and reward draws. PPO and DQN act as at the "
        "end of training (PPO samples its policy, DQN is ε-greedy at ε = "
        f"{HYPERPARAMETERS['DQN']['exploration_final_eps']:g}) and do not learn while evaluated. "
        "Hyperparameters: `agents.experiments.rl.task.HYPERPARAMETERS`.",
        "",
        f"## Cumulative regret at T = {exp.horizon:,} (mean ± standard error over runs)",
        "",
        "| agent | regret | per run |",
        "|---|---|---|",
    ]
    for a in exp.all_agents:
        values = final.get(a, {})
        m, se, _ = mean_ci(list(values.values()))
        per_run = ", ".join(f"{values[r]:,.0f}" for r in sorted(values))
        lines.append(f"| {a} | {m:,.1f} ± {se:,.1f} | {per_run} |")
    lines += ["", "## Outcome (paired by run, 95% CI of the mean difference)", ""]
    if exp.below_full_scale:
        lines += [
            f"This run is smaller than full scale (T = {exp.horizon:,} against {exp.full_horizon:,}, {exp.runs} "
            f"against {exp.full_runs} runs); the full-scale outcome is in the repository's "
            f"`{committed_summary(exp.id)}` (`{exp.full_command}` reproduces it).",
            "",
        ]
    for a in (x for x in exp.all_agents if x in RL_AGENTS or x in {u.name for u in exp.user_agents}):
        for b in ("UCB-N", "GAP"):
            if b in exp.agents:
                lines.append(f"- {a} − {b}: {_versus(final.get(a, {}), final.get(b, {}), b)}.")
    no_graph = np.zeros((exp.n_arms, exp.n_arms), dtype=bool)
    first_epoch = int(GAP(exp.n_arms, exp.horizon, s["epsilon"], no_graph).epoch_length[0])
    gap_note = (
        f"more than T = {exp.horizon:,} as soon as that set has two arms, so over T its regret grows linearly"
        if 2 * first_epoch >= exp.horizon
        else "so it can start eliminating arms within T"
    )
    lines += [
        "",
        "What this does and does not show:",
        "",
        "- The RL policies were trained on this family of instances (the same K, p and Δmin, rewards in [0, 1]) "
        "and on shorter episodes than T; they carry no regret guarantee and would need retraining for other "
        "instances. Their regret varies with the training seed (see the per-run values).",
        "- GAP is ε-differentially private and pays for it: before it eliminates anything, its first epoch pulls "
        f"each arm of its independent set Ω_1 L_1 = {first_epoch:,} times (ε = {s['epsilon']:g}, δ = 1/T), "
        f"{first_epoch:,} × |Ω_1| rounds: {gap_note}. "
        "UCB-N and the RL agents are not private.",
        f"- With Δmin = {s['gap']:g} against reward noise σ = 0.1, a few observations per arm already separate the "
        "best arms, which favours policies that explore little; UCB-N's exploration follows a fixed rule and does "
        "not exploit that.",
        "",
    ]
    return "\n".join(lines)


def rl_figure(results: pd.DataFrame, exp: Experiment, path: Path) -> None:
    """Cumulative regret curves of every agent (mean ± s.e. over runs)."""
    regret_figure(results, exp, path)


SCHEMA: dict[str, Param] = {
    "gap": Param("gap", float, "Δmin of the instance", 0.0, 0.9, low_open=True),
    "edge_probability": Param("edge_probability", float, "p of the Erdős–Rényi feedback graph", 0.0, 1.0),
    "epsilon": Param("epsilon", float, "ε of GAP", 0.0, None, low_open=True),
}

FAMILY = Family(
    name="rl",
    task=rl_task,
    summary=rl_summary,
    figure=rl_figure,
    schema=SCHEMA,
    builtin_agents=("UCB-N", "GAP", *RL_AGENTS),
    probe=probe_user,
    validate=check_instances,
    requires=("stable_baselines3", "torch"),
    # PyTorch's CPU build from its own index (the package index's Linux wheels are the multi-GB CUDA
    # build), then stable-baselines3 from the package index, as the README's test command installs them.
    install=(
        'pip install --extra-index-url https://download.pytorch.org/whl/cpu "torch==2.13.0+cpu" '
        '&& pip install "stable-baselines3>=2.3"'
    ),
    columns=("setting", "run", "agent", "t", "regret", "train_timesteps"),
    keys=("setting", "run", "agent", "t"),
)

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        id="rl/graph",
        title="PPO and DQN trained through ArmStatistics, beside UCB-N and GAP",
        source="our RL protocol (docs/rl.md)",
        family=FAMILY,
        settings=({"gap": 0.2, "edge_probability": 0.2, "epsilon": 0.5},),
        agents=("UCB-N", "GAP", *RL_AGENTS),
        horizon=2_000,
        runs=4,
        quick_horizon=500,
        quick_runs=2,
        options={"train_timesteps": 100_000, "train_horizon": 50},
        quick_options={"train_timesteps": 5_000},
    ),
)
