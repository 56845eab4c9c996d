"""The Python API: ``run(experiment_id, agents=..., ...)`` returns the tidy results as a DataFrame.

>>> from agents.experiments import run
>>> df = run("gap/regret-eps", agents=["GAP", my_factory], quick=True)  # doctest: +SKIP

``agents`` mixes built-in names (the family's, with their compiled fast paths) and user entries:
any callable that builds an agent from ``(env, setting, seed)`` (and ``n_envs`` if it supports
batches), an :class:`agents.base.Agent` subclass, ``"module.path:Factory"`` or
``"path/to/file.py:Factory"`` text (``"NAME=..."`` to name it), or a ``(name, factory)`` pair;
a user agent not named so is labelled by its own ``name`` (:func:`configure`). ``None`` keeps the
experiment's own agents. :func:`run_experiment` does the same and also writes ``results.csv``,
``meta.json``, ``summary.md`` and ``figure.png`` to a folder, resumable (the CLI uses it). It
never replaces or deletes a file it did not write there itself
(:mod:`agents.experiments.core.outputs`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd
from tqdm import tqdm

from agents.experiments.core.backends import (
    BackendError,
    SweepInterrupted,
    check_interrupted,
    errors_after_a_stop,
    make_backend,
    stop_reason,
)
from agents.experiments.core.data import MOVIELENS_NAMES
from agents.experiments.core.limits import MAX_HORIZON, MAX_RUNS, MAX_SEED, MIN_HORIZON, check_count, shown
from agents.experiments.core.outputs import NO_SPACE, SCRATCH, OutputError, OutputFolder, check_folder_path, user_path
from agents.experiments.core.partial import PARTS, ManifestMismatch, PartialStore, manifest_for
from agents.experiments.core.results import (
    META,
    RESULTS,
    ResultsError,
    check_complete,
    check_results,
    provenance,
    to_frame,
    write_csv,
)
from agents.experiments.core.runner import SettingError, Task, default_jobs, tasks_for
from agents.experiments.core.spec import Experiment
from agents.experiments.core.verdict import links_from
from agents.experiments.registry import get_experiment
from agents.user_agents import UserAgent, UserAgentError, agent_name, qualified, user_agent
from bandit_envs.validation import check_memory, memory_limit, summarize

AgentEntry = str | Callable[..., Any] | UserAgent | tuple[str, Any]


class UsageError(ValueError):
    """A bad option value, agent or data set, reported as one sentence without a traceback."""


class WriteError(Exception):
    """A file of the output folder that could not be written, as one sentence saying what is saved.

    For want of space (:data:`NO_SPACE`), or because the folder was removed, moved or made
    read-only while the run went on (any other :class:`OSError`). Every file written before is
    kept: banditlab writes each file to a scratch name and renames it.
    """


class NoSpaceError(WriteError):
    """A file that could not be written for want of space (:data:`NO_SPACE`), as one sentence."""


def no_space_sentence(exc: OSError, folder: Path | None = None) -> str:
    """The start of a sentence saying that writing to ``folder`` (default: the file's) failed for want of space."""
    where = folder if folder is not None else Path(str(exc.filename)).parent if exc.filename else "a file"
    return (
        f"cannot write to {where}: {exc.strerror or os.strerror(exc.errno or 0)} (a full disk, a disk quota or a "
        "file-size limit); free some space or raise the limit"
    )


def write_error_sentence(exc: OSError, folder: Path | None = None) -> str:
    """The start of a sentence saying that writing into ``folder`` failed, naming the file and the OS's reason.

    A full disk reads as :func:`no_space_sentence`. Otherwise the file is named as banditlab
    writes it (a scratch file by the name it was to get), e.g. ``cannot write /x/out/parts/000017.json:
    No such file or directory (...)``; a scratch folder (or probe) that could not be made, by the
    folder it was to be made in: ``cannot write into /x/out: Operation not permitted (...)``.
    """
    if exc.errno in NO_SPACE:
        return no_space_sentence(exc, folder)
    path: Path | str = folder if folder is not None else "a file"
    into = ""
    if exc.filename:
        path = Path(os.fsdecode(exc.filename))
        if path.parent.name.startswith(SCRATCH):  # a scratch file in its private folder: the output's name
            path = path.parent.parent / path.name
        elif path.name.startswith(SCRATCH):  # a scratch folder or probe, not made: the folder it was to be in
            path, into = path.parent, "into "
        if path.name.endswith(".tmp"):  # a partial store's file before its rename
            path = path.with_name(path.name[: -len(".tmp")])
    reason = exc.strerror or (os.strerror(exc.errno) if exc.errno else type(exc).__name__)
    where = f" {folder}" if folder is not None else " the output folder"
    return (
        f"cannot write {into}{path}: {reason} (was{where} removed, moved or made read-only while banditlab wrote "
        "it?); make sure it exists and can be written"
    )


#: The files a run writes into its output folder, besides the partial store ``parts/``.
FIGURE = "figure.png"
SUMMARY = "summary.md"
OUTPUTS = (RESULTS, META, FIGURE, SUMMARY)


def _check_data_cache(data: Sequence[str] | None) -> None:
    """UsageError if a ``--data`` value to download names a cache folder that cannot be one or be made."""
    var = "BANDIT_ENVS_DATA"  # where bandit_envs.datasets keeps its downloads
    downloads = [d for d in data or () if d in MOVIELENS_NAMES or d == "gowalla"]
    if not downloads:
        return
    from bandit_envs.datasets import get_data_home

    home = get_data_home()
    where = f"${var}" if os.environ.get(var) else "the default data cache folder"
    option = f"--data {downloads[0]} is downloaded into {where}, but"
    try:
        check_folder_path(home, option, f"set {var} to a folder")
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    if not home.exists():
        existing = next(p for p in home.parents if p.exists())
        if not os.access(existing, os.W_OK | os.X_OK):
            raise UsageError(
                f"{option} {home} cannot be created ({existing} is not writable); set {var} to a folder you can "
                "write to."
            )


def configure(
    experiment_id: str | Experiment,
    *,
    agents: Sequence[AgentEntry] | None = None,
    extra_agents: Sequence[AgentEntry] = (),
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    data: Sequence[str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Experiment:
    """The concrete experiment: scale, agents (built-in and user), data, overridden parameters.

    ``agents`` replaces the experiment's agents (``None`` keeps them); ``extra_agents`` are
    added after them (the CLI's ``--agent``). A user agent that is neither named (``NAME=``, a
    ``(name, factory)`` pair) nor a class declaring its ``name`` is built once here, as the first
    run of the first setting would build it with seed 0, and labelled by that agent's ``name`` if
    it has one (:func:`_named_by_their_agents`). An :class:`Experiment` not in the registry (the
    scorecard's, :mod:`agents.experiments.scorecard`) may be given instead of an id. ``runs``,
    ``horizon`` and ``seed`` must be integers in the ranges of :mod:`agents.experiments.core.limits`
    (those of ``banditlab run``); ``quick`` True or False; ``agents`` and ``extra_agents`` lists (never a
    string or a mapping); ``data`` a list of names or paths, never a single string; ``overrides`` a
    mapping. Raises :class:`UsageError` with one sentence.
    """
    check_flag("quick", quick)
    if overrides is not None and not isinstance(overrides, Mapping):
        raise UsageError(
            f"overrides must be a mapping of setting parameters to values (e.g. {{'n_arms': 5}}), got "
            f"{summarize(overrides)}."
        )
    try:
        if runs is not None:
            runs = check_count("--runs", runs, 1, MAX_RUNS)
        if horizon is not None:
            horizon = check_count("--horizon", horizon, MIN_HORIZON, MAX_HORIZON)
        seed = check_count("--seed", seed, 0, MAX_SEED)
        data = _data_list(data)
        base = experiment_id if isinstance(experiment_id, Experiment) else get_experiment(experiment_id)
        exp = base.scaled(quick=quick, runs=runs, horizon=horizon)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    family = exp.family
    missing = [m for m in family.requires if importlib.util.find_spec(m) is None]
    if missing:
        names = " and ".join(m.replace("_", "-") for m in family.requires)
        raise UsageError(f"{exp.id} needs {names}, which are not installed: {family.install}.")
    if data and not family.takes_data:
        raise UsageError(f"--data applies only to the budget and ldp-linucb experiments, not to {exp.id!r}.")
    _check_data_cache(data)
    try:
        exp = _with_agents(exp, agents, extra_agents)
        # Overrides apply to the declared settings (so what ``prepare`` derives from them, e.g. the
        # ε grid of user agents, sees them) and again to the prepared ones (e.g. a scenario's γ).
        exp = exp.with_overrides(dict(overrides or {}))
        if family.prepare is not None:
            exp = family.prepare(exp, data, seed).with_overrides(dict(overrides or {}))
        if family.validate is not None:
            family.validate(exp)
        exp = _named_by_their_agents(exp)
    except (ValueError, OSError) as exc:  # a bad agent, --set, or --data (missing or corrupt file, too few users)
        raise UsageError(str(exc)) from None
    check_scale(exp)
    return exp


def _data_list(data: Any) -> list[str] | None:
    """``data`` as a list of ``--data`` values (text; a path is taken as its text); ValueError for anything else.

    A single string is refused rather than split into its characters or taken as one value, as
    ``agents`` is: give ``["synthetic-movielens"]``.
    """
    if data is None:
        return None
    if isinstance(data, str | bytes | os.PathLike):
        what = "the string " if isinstance(data, str) else ""
        raise ValueError(
            f"data must be a list of data sets (names or paths), got {what}{shown(data)}; give [{shown(data)}] for one."
        )
    try:
        values = list(data)
    except TypeError:
        raise ValueError(f"data must be a list of data sets (names or paths), got {shown(data)}.") from None
    for i, value in enumerate(values):
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str):
            raise ValueError(f"data must hold names or paths (text), got {shown(value)} at position {i}.")
        values[i] = value
    return values


#: Bytes of memory per task of the task list (the task, its place in the queue and in the store's index).
TASK_BYTES = 512
#: Bytes of memory per row of results (the row as returned, as read back from the store, in the table).
ROW_BYTES = 512


def check_scale(exp: Experiment) -> None:
    """Refuse a number of runs whose task list and results would exceed the memory limit, before building either.

    The estimate is settings × runs × (:data:`TASK_BYTES` per task + agents × checkpoints ×
    :data:`ROW_BYTES`), with the family's :attr:`~agents.experiments.core.spec.Family.checkpoints`
    (at most one per round); the limit is the envs' (:func:`bandit_envs.validation.memory_limit`).

    Raises
    ------
    UsageError
        One sentence naming ``--runs``, its value, the estimate, the limit and the largest ``--runs``
        that fits.
    """
    rows = len(exp.all_agents) * min(exp.horizon, exp.family.checkpoints)
    per_run = len(exp.settings) * (TASK_BYTES / exp.family.runs_per_task + rows * ROW_BYTES)
    try:
        largest = int(memory_limit() // max(per_run, 1.0))
        check_memory(
            f"--runs {exp.runs} ({len(exp.settings)} settings, {rows} result row{'s' if rows != 1 else ''} per setting "
            "and run: the task list and the results)",
            exp.runs * per_run,
            f"the largest --runs for {exp.id} is {largest:,}",
        )
    except ValueError as exc:  # also a malformed memory limit
        raise UsageError(str(exc)) from None


def _agent_list(name: str, entries: Any) -> list[Any]:
    """``entries`` (``agents`` or ``extra_agents``) as a list; UserAgentError (one sentence) unless it is one.

    A string is refused rather than split into its characters, and a mapping rather than taken
    for its keys: name an agent with a ``(name, factory)`` pair.
    """
    what = "a list of agents (built-in names, callables, module:Factory text or (name, factory) pairs)"
    if isinstance(entries, str | bytes):
        raise UserAgentError(
            f"{name} must be {what}, got the string {summarize(entries)}; give [{summarize(entries)}]."
        )
    if isinstance(entries, Mapping):
        raise UserAgentError(
            f"{name} must be {what}, got the mapping {summarize(entries)}; name an agent with a (name, factory) pair."
        )
    try:
        return list(entries)
    except TypeError:
        raise UserAgentError(f"{name} must be {what}, got {summarize(entries)}.") from None


def _with_agents(exp: Experiment, agents: Sequence[AgentEntry] | None, extra: Sequence[AgentEntry]) -> Experiment:
    chosen = None if agents is None else _agent_list("agents", agents)
    more = _agent_list("extra_agents", extra)
    known = exp.family.builtin_agents
    builtin: list[str] = list(exp.agents) if chosen is None else []
    users: list[UserAgent] = []
    for entry in [*(chosen or ()), *more]:
        if isinstance(entry, str) and ":" not in entry:
            if entry not in known:
                raise UserAgentError(
                    f"agent {summarize(entry)} is not a built-in agent of {exp.id} (built-in: {', '.join(known)}); "
                    "give your own agent as a callable, module.path:Factory or path/to/file.py:Factory."
                )
            if entry in builtin:
                raise UserAgentError(f"agent names must be unique, but {summarize(entry)} is given twice.")
            builtin.append(entry)
        else:
            users.append(user_agent(entry, taken=[*builtin, *(u.name for u in users), *known]))
    if not builtin and not users:
        raise UserAgentError(f"agents must name at least one agent for {exp.id}.")
    settings = exp.settings
    if chosen is not None and settings and "agent" in settings[0]:
        # Families with one setting per agent configuration keep the chosen agents' settings.
        settings = tuple(s for s in settings if s["agent"] in builtin)
    # Names the family does not build itself (e.g. the LDP family's "uniform random" line) stay listed.
    listed = (*builtin, *(a for a in exp.agents if a not in known and a not in builtin))
    return replace(exp, agents=tuple(listed), user_agents=tuple(users), settings=settings)


def _named_by_their_agents(exp: Experiment) -> Experiment:
    """Name each user agent known only by its function factory's name after the agent it builds, if that has one.

    The family builds the agent once, as the first run of the first setting would with seed 0
    (:attr:`~agents.experiments.core.spec.Family.probe`); a factory that fails there is reported as
    in a run (:class:`UserAgentError`). A name that clashes is qualified by the module, as a factory's
    name is; one that still clashes is refused.
    """
    probe = exp.family.probe
    if probe is None or all(u.named for u in exp.user_agents):
        return exp
    users = list(exp.user_agents)
    renamed: dict[str, str] = {}
    for i, user in enumerate(users):
        if user.named or (built := agent_name(probe(exp, user))) is None:
            continue
        taken = [*exp.agents, *exp.family.builtin_agents, *(u.name for j, u in enumerate(users) if j != i)]
        name = qualified(built, user.ref, taken)
        if name in taken:
            raise UserAgentError(
                f"agent names must be unique, but {summarize(name)} (the name of the agent {user.name} builds) is "
                f"given twice; name it with --agent NAME={summarize(user.key)}."
            )
        renamed[user.name] = name
        users[i] = replace(user, name=name)
    settings = tuple({**s, "agent": renamed[s["agent"]]} if s.get("agent") in renamed else s for s in exp.settings)
    return replace(exp, user_agents=tuple(users), settings=settings)


def _data_names(exp: Experiment) -> dict[str, str]:
    names: dict[str, str] = {}
    for s in exp.settings:
        if "data_name" in s:
            names[s.get("scenario", "movielens")] = s["data_name"]
    return names


def _execute(
    tasks: Sequence[Task],
    pending: Sequence[tuple[int, Task]],
    executor: Any,
    label: str,
    progress: bool,
    done: int,
    save: Callable[[int, list[dict[str, Any]]], None],
) -> None:
    # No bar without standard error (closed, as by `2>&-`): tqdm would fail writing to it after the first task.
    bar_shown = progress and sys.stderr is not None
    bar = tqdm(total=len(tasks), initial=done, desc=label, unit="run", disable=not bar_shown, file=sys.stderr)
    try:
        with executor, contextlib.closing(executor.run(pending, label=label)) as finished:
            for index, rows in finished:  # closing: an interruption stops the workers at once
                save(index, rows)
                bar.update(1)
                check_interrupted()  # a Ctrl-C or SIGTERM swallowed where it was raised (e.g. while compiling)
    finally:
        bar.close()


def run(
    experiment_id: str,
    *,
    agents: Sequence[AgentEntry] | None = None,
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    jobs: int = 1,
    data: Sequence[str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    progress: bool = False,
    task_timeout: float | None = None,
) -> pd.DataFrame:
    """Run an experiment in memory and return its tidy results (one row per setting × agent × run × checkpoint).

    Parameters
    ----------
    experiment_id
        An id of :data:`agents.experiments.EXPERIMENTS` (``banditlab list``).
    agents
        Built-in names and user agents (see the module docstring); ``None`` keeps the experiment's.
    quick, runs, horizon, seed
        Scale and base seed: ``quick`` (True or False) is the small scale of ``banditlab run --quick``;
        ``runs`` in [1, 2**53], ``horizon`` in [10, 2**53] and ``seed`` in [0, 2**63 - 1] are integers, as
        on the command line (:mod:`agents.experiments.core.limits`).
    jobs
        Worker processes (user agents defined in ``__main__`` or a test module need ``jobs=1``
        unless the workers can import them).
    data
        ``--data`` values of the budget and LDP families: a list of names or paths (``["ml-100k"]`` for
        one; a single string is refused).
    overrides
        Setting parameters to override, validated against the experiment's schema (``--set``).
    progress
        Show a progress bar on standard error.
    task_timeout
        Stop a task (one setting and run) that runs longer than this many seconds (``--task-timeout``).

    Raises
    ------
    UsageError
        A bad option, agent or data set: one sentence naming it.
    agents.user_agents.UserAgentError
        A user agent that fails while it plays (raises, calls ``sys.exit`` or returns an invalid
        action), or a task stopped by ``task_timeout``: one sentence naming the agent, the
        setting, the run and the round, with the agent's own frames of the traceback in ``frames``.
    """
    check_flag("progress", progress)
    exp = configure(
        experiment_id, agents=agents, quick=quick, runs=runs, horizon=horizon, seed=seed, data=data, overrides=overrides
    )
    tasks = tasks_for(exp, seed)
    results: dict[int, list[dict[str, Any]]] = {}
    try:
        executor = make_backend("local", jobs=jobs, task_timeout=task_timeout)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _execute(tasks, list(enumerate(tasks)), executor, exp.id, progress, 0, results.__setitem__)
    return to_frame([row for i in range(len(tasks)) for row in results[i]])


def run_experiment(
    experiment_id: str | Experiment,
    *,
    agents: Sequence[AgentEntry] | None = None,
    extra_agents: Sequence[AgentEntry] = (),
    quick: bool = False,
    runs: int | None = None,
    horizon: int | None = None,
    jobs: int | None = 1,
    seed: int = 0,
    out: Path | None = None,
    progress: bool = True,
    data: list[str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    timeout: float = 10.0,
    fresh: bool = False,
    force: bool = False,
    command: Sequence[str] | None = None,
    task_timeout: float | None = None,
) -> tuple[Path, str]:
    """Run an experiment and write its CSV, meta, figure and summary; return (folder, summary).

    ``backend="local"`` runs the tasks on ``jobs`` processes (``None``: one per core, at most one
    per task; a ``jobs`` above the number of tasks is capped, with a line on standard error),
    ``backend="dask"`` on the Dask scheduler at ``scheduler`` (connecting within ``timeout``
    seconds). ``task_timeout`` stops a task that runs longer than that many seconds (local backend).
    Finished tasks are saved under ``out/parts`` as they arrive (in batches, at most
    :data:`~agents.experiments.core.partial.FLUSH_SECONDS` apart); a later call with the same
    arguments resumes from them (``fresh=True`` discards them).

    The output folder ``out`` is written by the rules of :mod:`agents.experiments.core.outputs`:
    only files this function wrote and recorded there are replaced or deleted. A folder that
    holds other files, or the results of another command, is refused unless ``force=True``; even
    then a file it did not write (or one edited since) is never replaced, and a link planted under
    a name it writes is refused. The folder is locked while the run goes on: another run or report
    on it meanwhile is refused (:class:`UsageError`).

    Raises :class:`UsageError` for bad options or an output folder it may not write to,
    :class:`~agents.experiments.core.backends.BackendError` (with an exit code) when the cluster
    fails, :class:`~agents.user_agents.UserAgentError` when a user agent fails
    while it plays or a task outlives ``task_timeout`` (with the agent's frames in ``frames``),
    and :class:`~agents.experiments.core.backends.SweepInterrupted` on Ctrl-C (or SIGTERM, when
    the caller turns it into :class:`~agents.experiments.core.backends.Terminated`); each
    says how to resume.
    """
    _check_options(out=out, timeout=timeout, fresh=fresh, force=force, progress=progress, command=command)
    explicit_jobs = jobs is not None
    if jobs is None:
        jobs = default_jobs()
    try:
        executor = make_backend(backend, jobs=jobs, scheduler=scheduler, timeout=timeout, task_timeout=task_timeout)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    exp = configure(
        experiment_id,
        agents=agents,
        extra_agents=extra_agents,
        quick=quick,
        runs=runs,
        horizon=horizon,
        seed=seed,
        data=data,
        overrides=overrides,
    )
    data_names = _data_names(exp)
    folder = user_path(out) if out is not None else Path("results") / exp.id.replace("/", "-")
    tasks = tasks_for(exp, seed)
    manifest = manifest_for(exp, seed, len(tasks), data_names)
    try:
        output = OutputFolder.open(folder)
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    with output:  # locked until the run ends: a second run or report on the folder meanwhile is refused
        try:
            output.check_may_write(manifest, force, (*OUTPUTS, *(n for n, _ in exp.family.extra_figures), PARTS))
        except OutputError as exc:
            raise UsageError(str(exc)) from None
        store = PartialStore(folder, manifest, task_check(exp))
        try:
            done = store.finished(fresh)
        except (ManifestMismatch, OutputError) as exc:
            raise UsageError(str(exc)) from None
        for line in store.redone:
            print(f"banditlab: {line}", file=sys.stderr)
        pending = [(i, task) for i, task in enumerate(tasks) if i not in done]
        if backend == "local" and explicit_jobs and pending and jobs > len(pending):
            n = len(pending)
            then = "it runs in this process" if n == 1 else f"{n} worker processes start"
            print(f"banditlab: --jobs {jobs} is more than the {n} task{'s' if n > 1 else ''} to run, so {then}.",
                  file=sys.stderr)  # fmt: skip
        start = time.perf_counter()
        try:
            # The outputs of another command (--force) go before any of this run's: never mixed with them.
            output.set_command(manifest, (SUMMARY, *(n for n, _ in exp.family.extra_figures), FIGURE, META, RESULTS))
            if pending:
                if done:
                    print(
                        f"Resuming from {store.path}: {len(done)} of {len(tasks)} tasks are already done.",
                        file=sys.stderr,
                    )
                output.claim_folder(PARTS)
                store.prepare(done)

                def save(index: int, rows: list[dict[str, Any]]) -> None:
                    store.save(index, tasks[index].setting_index, tasks[index].run, rows)

                label = f"{exp.id}-{manifest['fingerprint'][:8]}"
                try:
                    try:
                        with errors_after_a_stop():  # a signal landing in compiled code may surface as another error
                            _execute(tasks, pending, executor, label, progress, len(done), save)
                    finally:  # the store buffers finished tasks: write them before anything counts them
                        store.flush()
                except BackendError as exc:
                    raise BackendError(_resume_note(str(exc), store, len(tasks)), exc.code) from None
                except UserAgentError as exc:  # a user agent that failed in a task: fix it, then resume
                    raise UserAgentError(_resume_note(str(exc).rstrip("."), store, len(tasks)), exc.frames) from None
                except SettingError as exc:  # the same command would fail again: no resume note
                    if exc.out_of_memory or done:
                        raise UsageError(str(exc)) from None
                    # Parameters no task can run with: the tasks this command saved can never be
                    # resumed, and would make the corrected command ask for --fresh.
                    store.remove()
                    output.release_folder(PARTS)
                    raise UsageError(f"{str(exc).rstrip('.')}; nothing of this sweep was kept.") from None
            seconds = time.perf_counter() - start
            results = to_frame(store.rows())  # canonical task order, whatever order the tasks finished in
            meta: dict[str, Any] = {
                "experiment": exp.id,
                "seed": seed,
                "seconds": seconds,
                "jobs": executor.workers if pending else jobs,
                "runs": exp.runs,
                "horizon": exp.horizon,
                "data": data_names,
                "agents": list(exp.all_agents),
                "user_agents": {u.name: u.key for u in exp.user_agents},
                "overrides": dict(exp.overrides),
                "backend": backend,
                "resumed_tasks": len(done),
                **provenance(command),
            }
            if scheduler is not None:
                meta["scheduler"] = scheduler
            output.write(RESULTS, lambda path: write_csv(results, path))
            output.write_text(META, json.dumps(meta, indent=1, default=str) + "\n")
            text = write_report(results, exp, output, meta)
        except KeyboardInterrupt as exc:
            reason = stop_reason(exc)
            raise SweepInterrupted(_resume_note(reason, store, len(tasks))) from None
        except OutputError as exc:  # a file edited or created by someone else while the sweep ran
            raise UsageError(_resume_note(str(exc).rstrip("."), store, len(tasks))) from None
        except OSError as exc:  # a full disk, or the folder removed, moved or made read-only meanwhile
            _write_failed(exc, folder, store, len(tasks))
        try:
            store.remove()  # only once every output is written: until then the saved tasks can be reused
            output.release_folder(PARTS)
        except OSError as exc:
            _write_failed(exc, folder, store, len(tasks))
        return folder, text


def check_out(out: Any) -> None:
    """UsageError unless ``out`` is None or a folder path (a str or an ``os.PathLike`` of text, not empty, no NUL)."""
    if out is None:
        return
    path = os.fspath(out) if isinstance(out, str | os.PathLike) else None
    if not isinstance(path, str) or not path.strip() or "\0" in path:
        raise UsageError(f"out must be a folder path (a str or a pathlib.Path), got {summarize(out)}.")


def check_flag(name: str, flag: Any) -> None:
    """UsageError unless ``flag`` is True or False (a numpy bool too): ``quick="no"`` would read as True."""
    if not isinstance(flag, bool | np.bool_):
        raise UsageError(f"{name} must be True or False, got {summarize(flag)}.")


def _check_options(*, out: Any, timeout: Any, fresh: Any, force: Any, progress: Any, command: Any) -> None:
    """UsageError (one sentence naming the argument) for a run option of the wrong kind, before anything runs."""
    check_out(out)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < math.inf:
        raise UsageError(f"timeout must be a number of seconds > 0, got {summarize(timeout)}.")
    for name, flag in (("fresh", fresh), ("force", force), ("progress", progress)):
        check_flag(name, flag)
    if command is not None and (isinstance(command, str) or not all(isinstance(c, str) for c in _iterable(command))):
        raise UsageError(
            f"command must be a sequence of strings (the command line to record), got {summarize(command)}."
        )


def _iterable(value: Any) -> list[Any]:
    try:
        return list(value)
    except TypeError:
        return [None]  # not iterable: refused as not a sequence of strings


def write_report(results: pd.DataFrame, exp: Experiment, folder: Path | OutputFolder, meta: Mapping[str, Any]) -> str:
    """Write ``figure.png`` and ``summary.md`` for an experiment's results; return the summary.

    ``folder`` is a path or an :class:`~agents.experiments.core.outputs.OutputFolder`; an
    existing figure or summary is replaced only if banditlab wrote it there and it is unedited
    (:class:`~agents.experiments.core.outputs.OutputError` otherwise, before anything is written).
    """
    if not isinstance(folder, OutputFolder):
        with OutputFolder.open(Path(folder), "the folder") as output:
            return write_report(results, exp, output, meta)
    extra = exp.family.extra_figures
    folder.check_replaceable([FIGURE, SUMMARY, *(name for name, _ in extra)])
    text = links_from(folder.path, exp.family.summary(results, exp, meta)) + "\n![figure](figure.png)\n"
    text += "".join(f"\n![{Path(name).stem}]({name})\n" for name, _ in extra)
    folder.write(FIGURE, lambda path: exp.family.figure(results, exp, path))
    for name, draw in extra:
        folder.write(name, functools.partial(_draw, draw, results, exp))
    folder.write_text(SUMMARY, text)
    return text


def _draw(
    draw: Callable[[pd.DataFrame, Experiment, Path], None], results: pd.DataFrame, exp: Experiment, path: Path
) -> None:
    draw(results, exp, path)


def task_check(exp: Experiment) -> Callable[[Mapping[str, Any]], str | None]:
    """The check of one saved task's rows that the partial store applies when it reads them back.

    The checks ``banditlab report`` applies to ``results.csv``
    (:func:`~agents.experiments.core.results.check_results`,
    :func:`~agents.experiments.core.results.check_complete`), on the rows of one task: the
    family's columns in every row, filled with values of one type, each key once, every series
    holding the checkpoints up to the horizon, and the task's runs. None if they pass, else why not.
    """
    family = exp.family
    columns = tuple(dict.fromkeys((*family.columns, *family.keys)))
    n_settings = len(exp.settings) if "setting" in family.columns else None

    def check(record: Mapping[str, Any]) -> str | None:
        rows = record["rows"]
        names = list(rows[0])
        if any(list(row) != names for row in rows):
            return "its rows do not all have the same columns"
        missing = [c for c in columns if c not in names]
        if missing:
            return f"its rows lack the columns {missing}"
        frame = to_frame(rows)
        run = record.get("run")
        runs = min(family.runs_per_task, exp.runs - run) if type(run) is int and 0 <= run < exp.runs else 1
        try:
            check_results(frame, Path("rows"), columns, n_settings, exp.runs)
            check_complete(frame, Path("rows"), family.keys, runs, exp.horizon)
        except ResultsError as exc:
            text = str(exc).split("; rerun")[0].split(", so the file")[0].removeprefix("rows: ")
            return re.sub(r"line (\d+)", lambda m: f"row {int(m[1]) - 1}", text)
        return None

    return check


def _write_failed(exc: OSError, folder: Path, store: PartialStore, n_tasks: int) -> NoReturn:
    """Raise the :class:`WriteError` (:class:`NoSpaceError`) saying why ``exc`` stopped the run and what is saved."""
    note = _resume_note(write_error_sentence(exc, folder), store, n_tasks)
    if not store.count():
        note = f"{note[:-1]}, then run the same command again."
    raise (NoSpaceError if exc.errno in NO_SPACE else WriteError)(note) from None


def _resume_note(message: str, store: PartialStore, n_tasks: int) -> str:
    saved = store.count()
    if not saved:
        return f"{message}."
    return (
        f"{message}; {saved} of {n_tasks} tasks are saved in {store.path}, and running the same command again "
        "resumes from them."
    )
