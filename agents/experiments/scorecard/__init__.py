"""The scorecard of the field: one agent scored on a fixed, versioned suite, beside the built-in leaders.

``score(agent)`` (``banditlab score AGENT``) plays the suite of :mod:`~agents.experiments.scorecard.suite`
with the agent and every built-in agent of :mod:`~agents.experiments.scorecard.panel` that can play
each problem, on the same seeds, through the experiment machinery of ``banditlab run``
(:func:`agents.experiments.api.run_experiment`: local processes or Dask, resumable output
folders). It writes ``summary.md`` (the card), ``figure.png`` (radar), ``regret.png`` (per-problem
regret), ``results.csv`` and ``meta.json``, and returns the scores as a DataFrame
(:func:`~agents.experiments.scorecard.analysis.scores`). docs/score.md describes the suite.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from agents.experiments.api import AgentEntry, UsageError, check_flag, check_out, run_experiment
from agents.experiments.core.outputs import user_path
from agents.experiments.core.results import RESULTS, read_results
from agents.experiments.core.spec import Experiment, Family
from agents.experiments.scorecard import analysis
from agents.experiments.scorecard.panel import PANEL, SPEED_REFERENCE, check_non_private, check_plays
from agents.experiments.scorecard.suite import EPSILONS, FULL, PROBLEMS, QUICK, SUITE_VERSION, Scale, scaled_horizon
from agents.experiments.scorecard.task import N_CHECKPOINTS, graph_env, score_task, user_plays
from agents.user_agents import UserAgent, UserAgentError, agent_name, qualified, split_name
from bandit_envs.validation import summarize

__all__ = ["FULL", "PROBLEMS", "QUICK", "SUITE_VERSION", "Scale", "card", "default_folder", "score"]

#: Audit runs per input at each scale (the quick and test scales use the smaller number).
AUDIT_RUNS = {"full": 2000, "quick": 500}
AUDIT_MIN = 200


def _prepare(exp: Experiment, data: Sequence[str] | None, seed: int) -> Experiment:
    """Add an audit setting per ε for each user agent declaring itself private or local; record non-private versions.

    A user agent's ``non_private`` is recorded only if it declares one (checked by
    :func:`~agents.experiments.scorecard.panel.check_non_private`); without it the privacy-cost
    line divides by UCB's score on a context-free base problem and LinUCB's on movielens
    (:func:`~agents.experiments.scorecard.analysis.non_private_of`).
    """
    settings = list(exp.settings)
    non_private: dict[str, str] = {}
    for user in exp.user_agents:
        plays = user_plays(user)
        if {"private", "local"} & set(plays):
            settings += [{"problem": "audit", "agent": user.name, "audit": None, "epsilon": e} for e in EPSILONS]
        try:
            ref = check_non_private(getattr(user.factory(), "non_private", None), plays, f"agent {user.name}")
        except ValueError as exc:
            raise UserAgentError(str(exc)) from None
        if ref is not None:
            non_private[user.name] = ref
    return replace(exp, settings=tuple(settings), options={**exp.options, "non_private": non_private})


FAMILY = Family(
    name="score",
    task=score_task,
    summary=analysis.summary,
    figure=analysis.radar,
    extra_figures=(("regret.png", analysis.regret_figure),),
    builtin_agents=tuple(PANEL),
    prepare=_prepare,
    columns=("problem", "agent"),
    runs_per_task=10**9,
    checkpoints=N_CHECKPOINTS,
)


def card(agent: str | None, scale: Scale = FULL, builtins: Sequence[str] | None = None) -> Experiment:
    """The scorecard experiment: every problem, the built-ins, audits of the agent if it is a private built-in.

    ``agent`` is the highlighted built-in name (or a user agent's label, or None for the
    leaderboard: then every private built-in is audited at ε = 1). ``builtins`` restricts the
    built-in agents played (default: all of :data:`~agents.experiments.scorecard.panel.PANEL`); the
    speed reference UCB, a built-in ``agent`` and the non-private version of each built-in played
    (the privacy-cost lines' denominators) are always played.
    """
    if builtins is not None and (isinstance(builtins, str | bytes) or not isinstance(builtins, Iterable)):
        raise UsageError(
            f"builtins must be a list of built-in agent names (e.g. ['UCB', 'TS']) or None, got {summarize(builtins)}."
        )
    chosen = tuple(PANEL) if builtins is None else tuple(builtins)
    unknown = [b for b in chosen if not isinstance(b, str) or b not in PANEL]
    if unknown:
        raise UsageError(f"builtins must name built-in agents ({', '.join(PANEL)}), got {summarize(unknown[0])}.")
    keep = {*chosen, SPEED_REFERENCE, *([agent] if agent in PANEL else [])}
    # The non-private versions of the built-ins kept: each privacy-cost line divides by one of them.
    keep |= {ref for a in list(keep) if (ref := PANEL[a].non_private) is not None}
    panel = tuple(a for a in PANEL if a in keep)
    settings: list[dict[str, Any]] = [{"problem": p.name, "epsilon": p.epsilon} for p in PROBLEMS]
    audited = [agent] if agent in PANEL else list(panel) if agent is None else []
    for name in audited:
        entry = PANEL[name]
        if entry.audit is None:
            continue
        for e in EPSILONS if agent is not None else (1.0,):
            settings.append({"problem": "audit", "agent": name, "audit": entry.audit, "epsilon": e})
    horizon = max(scaled_horizon(p, scale.fraction) for p in PROBLEMS)
    return Experiment(
        id=f"score/{SUITE_VERSION}",
        title="The scorecard of the field",
        source="docs/score.md",
        family=FAMILY,
        settings=tuple(settings),
        agents=panel,
        horizon=horizon,
        runs=scale.runs,
        full_horizon=max(p.horizon for p in PROBLEMS),
        full_runs=FULL.runs,
        options={
            "suite": SUITE_VERSION,
            "scale": scale.name,
            "fraction": scale.fraction,
            "agent": agent,
            "audit_runs": AUDIT_RUNS.get(scale.name, AUDIT_MIN),
        },
    )


def _named_after_its_agent(user: UserAgent, plays: tuple[str, ...]) -> UserAgent:
    """``user`` labelled by the ``name`` of the agent it builds, as ``banditlab run`` labels it.

    Only a user agent known by its factory's function name is renamed (``--agent NAME=REF``
    keeps NAME), and only a context-free one, built once on the first problem's env with
    seed 0; if that fails, the factory's name stays (the run then reports the failure).
    """
    if user.named or "context-free" not in plays:
        return user
    try:
        built = agent_name(user.build(graph_env(PROBLEMS[0], 10), {"problem": PROBLEMS[0].name}, 0, guard=False))
    except Exception:  # noqa: BLE001 - the scored run reports a factory that fails, in one sentence
        return user
    return user if built is None else replace(user, name=qualified(built, user.ref, list(PANEL)))


def _label(agent: AgentEntry | None) -> tuple[str | None, list[AgentEntry]]:
    """(highlighted name, user agents to add) for an AGENT argument."""
    if agent is None:
        return None, []
    if isinstance(agent, str) and ":" not in agent:
        if agent not in PANEL:
            raise UsageError(
                f"agent {summarize(agent)} is not a built-in agent of the scorecard (built-in: {', '.join(PANEL)}); "
                "give your own as path/to/file.py:Factory or module.path:Factory."
            )
        return agent, []
    if isinstance(agent, str):
        name, _ = split_name(agent)
        return name, [agent]
    return None, [agent]


def score(
    agent: AgentEntry | None,
    *,
    quick: bool = False,
    out: Path | str | None = None,
    jobs: int | None = 1,
    seed: int = 0,
    backend: str = "local",
    scheduler: str | None = None,
    timeout: float = 10.0,
    fresh: bool = False,
    force: bool = False,
    progress: bool = False,
    scale: Scale | None = None,
    builtins: Sequence[str] | None = None,
    command: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Score ``agent`` on the suite and write the card to ``out``; return the scores (one row per problem × agent).

    The returned table's ``attrs["out"]`` names the output folder.

    Parameters
    ----------
    agent
        A built-in name of :data:`~agents.experiments.scorecard.panel.PANEL`, a user agent as for
        :func:`agents.experiments.run` (``"path/to/file.py:Factory"``, ``"module:Factory"``,
        ``"NAME=..."``, a callable, a ``(name, factory)`` pair), or None for the leaderboard (the
        built-ins only).
    quick
        The quick scale (:data:`~agents.experiments.scorecard.suite.QUICK`) instead of the full one.
    out
        The output folder (default ``results/score-NAME``, :func:`default_folder`); resumable as
        ``banditlab run``'s.
    jobs, seed, backend, scheduler, timeout, fresh, force
        As for :func:`agents.experiments.run_experiment`.
    scale
        Another scale (seeds and horizon fraction), for tests and benchmarks; overrides ``quick``.
    builtins
        The built-in agents to play beside ``agent`` (default all; UCB, the speed reference, and the
        non-private version of ``agent`` and of each built-in played, always).
    progress
        Show a progress bar on standard error.
    command
        The command line recorded in ``meta.json``.

    Raises
    ------
    agents.experiments.UsageError
        An unknown agent, a bad option or output folder: one sentence.
    """
    check_out(out)
    check_flag("quick", quick)
    if scale is not None and not isinstance(scale, Scale):
        raise UsageError(f"scale must be a Scale (QUICK, FULL or your own) or None, got {summarize(scale)}.")
    name, users = _label(agent)
    chosen = scale if scale is not None else QUICK if quick else FULL
    exp = card(name, chosen, builtins)
    if users:
        # The label of a user agent is known once it is loaded: the card highlights it.
        from agents.user_agents import user_agent

        try:
            loaded: UserAgent = user_agent(users[0], taken=list(PANEL))
            plays = check_plays(getattr(loaded.factory(), "plays", ("context-free",)), f"agent {loaded.name}")
            ref = check_non_private(getattr(loaded.factory(), "non_private", None), plays, f"agent {loaded.name}")
        except (UserAgentError, ValueError) as exc:
            raise UsageError(str(exc)) from None
        loaded = _named_after_its_agent(loaded, plays)
        if builtins is not None and {"private", "local"} & set(plays):  # (card() has checked builtins)
            # Its privacy-cost lines divide by its non-private version's score (UCB is always played).
            builtins = [*builtins, ref or ("LinUCB" if "contextual" in plays else "UCB")]
        exp = card(loaded.name, chosen, builtins)
        users = [loaded]
        name = loaded.name
    folder = user_path(out) if out is not None else default_folder(name)
    run_experiment(
        exp,
        agents=None,
        extra_agents=users,
        jobs=jobs,
        seed=seed,
        out=folder,
        progress=progress,
        backend=backend,
        scheduler=scheduler,
        timeout=timeout,
        fresh=fresh,
        force=force,
        command=command,
    )
    table = analysis.scores(read_results(folder / RESULTS))  # user names such as NA read as written
    table.attrs["out"] = str(folder)
    return table


def default_folder(name: str | None) -> Path:
    """``results/score-NAME`` for the agent labelled NAME on the card, ``results/score-leaderboard`` for None.

    A user agent's NAME is its label once loaded (``--agent NAME=REF``'s NAME, else the ``name``
    its factory's agent declares, else the factory's). Characters a folder name cannot hold
    (slashes, backslashes, colons) become ``-``.
    """
    label = "leaderboard" if name is None else name
    return Path("results") / ("score-" + label.replace("/", "-").replace("\\", "-").replace(":", "-"))


def meta_seconds(folder: Path) -> float:
    """The sweep's seconds recorded in ``folder/meta.json`` (NaN if absent)."""
    try:
        return float(json.loads((folder / "meta.json").read_text())["seconds"])
    except (OSError, ValueError, KeyError):
        return math.nan
