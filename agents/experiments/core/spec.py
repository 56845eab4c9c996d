"""What an experiment is: its settings as data, its family (task and analysis), its scale.

An :class:`Experiment` is one table or figure of a source paper. Its :class:`Family` (one per
paper family: ``gap``, ``budget``, ``ldp``, ``rl``, ``dpmab``) supplies the three parts every family has:

* ``task(experiment, setting_index, run, base_seed) -> rows``: a pure function (seeds included) that
  runs one setting's run and returns tidy rows;
* ``summary(results, experiment, meta) -> str`` and ``figure(results, experiment, path)``: its
  analysis, a pure function of the results table, with the paper's claims (declared as data in
  :mod:`agents.experiments.core.claims`) checked next to our numbers;
* ``schema``: the setting parameters a user may override (``--set key=value``), each a
  :class:`Param` that parses and validates the text.

The core (runner, backends, resume, results) never imports a family; families hand themselves
to the core through their experiments.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from agents.experiments.core.claims import Claim, scale_note, scale_words
from agents.user_agents import UserAgent
from bandit_envs.validation import summarize

Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Param:
    """One overridable setting parameter: its type, its allowed values and what it means."""

    name: str
    kind: type
    doc: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    choices: tuple[Any, ...] = ()
    #: ``"setting"`` (a key of every setting dict) or ``"experiment"`` (an attribute such as ``n_arms``).
    target: str = "setting"
    #: Apply only to settings of this agent (e.g. the LDP agent's ε), or to all settings if None.
    agent: str | None = None

    def allowed(self) -> str:
        """What is allowed, in words."""
        if self.choices:
            return "one of " + ", ".join(str(c) for c in self.choices)
        what = "an integer" if self.kind is int else "a number"
        if self.low is not None and self.high is not None:
            return f"{what} in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}]"
        if self.low is not None:
            return f"{what} {'>' if self.low_open else '≥'} {self.low:g}"
        return what

    def parse(self, text: Any) -> Any:
        """The value of ``text`` (a string from the command line, or a Python value); ValueError if not allowed."""
        value: Any
        try:
            if self.kind is str:
                value = str(text)
            elif self.kind is int:
                if isinstance(text, bool) or (isinstance(text, float) and not text.is_integer()):
                    raise ValueError
                value = int(text)
            else:
                if isinstance(text, bool):
                    raise ValueError
                value = float(text)
        except (TypeError, ValueError):
            raise ValueError(f"--set {self.name} must be {self.allowed()}, got {summarize(text)}.") from None
        bad = bool(self.choices) and value not in self.choices
        if self.kind is not str:
            bad = bad or not math.isfinite(value)
            if self.low is not None:
                bad = bad or (value <= self.low if self.low_open else value < self.low)
            if self.high is not None:
                bad = bad or value > self.high
        if bad:
            raise ValueError(f"--set {self.name} must be {self.allowed()}, got {summarize(text)}.")
        return value


@dataclass(frozen=True)
class Family:
    """A paper family: its task function, its analysis, its schema and how it resolves data.

    ``builtin_agents`` are the names its task can build (with their compiled fast paths).
    ``prepare(experiment, data, seed)`` resolves ``--data`` (and anything else that must be
    looked up once, in the calling process) into concrete settings, adding a setting per user
    agent where the family runs one setting per agent; ``validate(experiment)`` checks the final
    settings (after ``--set``) in the calling process, raising ValueError with one sentence.
    ``requires`` names modules the family needs at run time, with the install hint ``install``.
    """

    name: str
    task: Callable[[Experiment, int, int, int], Rows]
    summary: Callable[[pd.DataFrame, Experiment, Mapping[str, Any]], str]
    figure: Callable[[pd.DataFrame, Experiment, Path], None]
    schema: Mapping[str, Param] = field(default_factory=dict)
    builtin_agents: tuple[str, ...] = ()
    prepare: Callable[[Experiment, Sequence[str] | None, int], Experiment] | None = None
    validate: Callable[[Experiment], None] | None = None
    takes_data: bool = False
    #: Columns every results table of this family has (``banditlab report`` checks them).
    columns: tuple[str, ...] = ()
    #: Columns that together identify a row, each combination once (``banditlab report`` checks
    #: that too, and that every series holds the same checkpoints ``t`` and, with ``run``, every run).
    keys: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    install: str = ""
    #: Runs one task plays (as copies of batched agents on a native vector env): a task is then a
    #: setting and the block of runs ``run .. run + runs_per_task - 1`` (fewer at the end).
    runs_per_task: int = 1
    #: Builds a user agent as the first run of its first setting would, with seed 0 (``probe(experiment,
    #: user)``, the agent unguarded), so that :func:`agents.experiments.api.configure` can read its
    #: ``name`` (:func:`~agents.user_agents.agent_name`); ``None``: never built early.
    probe: Callable[[Experiment, UserAgent], Any] | None = None
    #: Most rows one run of one agent records (its checkpoints, or 1 for a run summarized in one
    #: row): the scale check (:func:`agents.experiments.api.check_scale`) bounds the results by it.
    checkpoints: int = 100
    #: Whether a first run may play the first task's built-in agents in groups on the worker
    #: processes, to compile their kernels side by side (:func:`~agents.experiments.core.runner.warm_up_parts`).
    #: Only for a small task (one run) that plays every agent of ``experiment.agents``, as the gap
    #: families' do: the groups then cost about one such task's work on later runs. Not where a
    #: setting names its one agent (each group would play the whole task again), where a task is
    #: a block of many runs (dp-mab, the scorecard: a block's work, for a few tasks in all), nor
    #: where an agent's run costs much more than compiling it (training a network).
    split_first_task: bool = False
    #: Further figures the report writes beside ``figure.png``: (file name, figure function) pairs.
    extra_figures: tuple[tuple[str, Callable[[pd.DataFrame, Experiment, Path], None]], ...] = ()


@dataclass(frozen=True)
class Experiment:
    """One figure or table of a source paper, as data.

    Attributes
    ----------
    id
        ``family/name``, e.g. ``gap/privacy``.
    family
        The :class:`Family` that runs and analyses it.
    settings
        Parameter dicts, one per setting (a row group of the results table).
    agents
        Built-in agent names compared.
    user_agents
        Agents brought by the user (:class:`~agents.user_agents.UserAgent`),
        run through the step API next to the built-in ones.
    claims
        The paper's claims this experiment tests (:class:`~agents.experiments.core.claims.Claim`).
    varied
        The parameter a figure varies across settings, if any.
    overrides
        Setting parameters set by the user (``--set``), already applied to ``settings``.
    full_horizon, full_runs
        The full scale (the declared ``horizon`` and ``runs``, kept by :meth:`scaled` copies), so a
        summary can say when a run is too small to decide a claim.
    """

    id: str
    title: str
    source: str
    family: Family
    settings: tuple[dict[str, Any], ...]
    agents: tuple[str, ...]
    horizon: int = 100_000
    runs: int = 100
    n_arms: int = 10
    varied: str | None = None
    claims: tuple[Claim, ...] = ()
    paper: dict[Any, Any] = field(default_factory=dict)
    quick_horizon: int = 20_000
    quick_runs: int = 10
    options: dict[str, Any] = field(default_factory=dict)
    quick_options: dict[str, Any] = field(default_factory=dict)
    user_agents: tuple[UserAgent, ...] = ()
    overrides: dict[str, Any] = field(default_factory=dict)
    full_horizon: int = 0
    full_runs: int = 0

    def __post_init__(self) -> None:
        # The declared scale is the full scale; copies made by ``scaled`` keep it.
        if self.full_horizon == 0:
            object.__setattr__(self, "full_horizon", self.horizon)
        if self.full_runs == 0:
            object.__setattr__(self, "full_runs", self.runs)

    @property
    def below_full_scale(self) -> bool:
        """Whether this run is shorter or has fewer runs than the experiment's full scale."""
        return self.horizon < self.full_horizon or self.runs < self.full_runs

    @property
    def full_command(self) -> str:
        """The command that runs this experiment at full scale."""
        return f"banditlab run {self.id}"

    def scale_note(self) -> str:
        """The note above the claims of a run below full scale (empty at full scale)."""
        return scale_note(self.horizon, self.runs, self.full_horizon, self.full_runs, self.full_command, self.id)

    def scale_words(self, unit: str = "runs per setting") -> str:
        """How large this run is, written next to each verdict it leaves open (``100 runs per setting, T = …``)."""
        return scale_words(self.horizon, self.runs, unit)

    @property
    def kind(self) -> str:
        """The family's name."""
        return self.family.name

    @property
    def all_agents(self) -> tuple[str, ...]:
        """Built-in agent names, then the user agents' names, in the order of tables and figures."""
        return self.agents + tuple(u.name for u in self.user_agents)

    def scaled(self, *, quick: bool = False, runs: int | None = None, horizon: int | None = None) -> Experiment:
        """A copy at quick scale and/or with another number of runs or horizon."""
        out = self
        if quick:
            out = replace(
                out, horizon=self.quick_horizon, runs=self.quick_runs, options={**self.options, **self.quick_options}
            )
        if runs is not None:
            out = replace(out, runs=runs)
        if horizon is not None:
            out = replace(out, horizon=horizon)
        return out

    def with_overrides(self, values: Mapping[str, Any]) -> Experiment:
        """A copy with setting parameters overridden (``--set``); ValueError names a bad key or value."""
        if not values:
            return self
        schema = self.family.schema
        out = self
        for key, text in values.items():
            if key not in schema:
                allowed = ", ".join(sorted(schema)) if schema else "none"
                raise ValueError(
                    f"--set key must be a setting parameter of {self.id} ({allowed}), got {summarize(key)}."
                )
            if key == self.varied:
                raise ValueError(
                    f"--set {key} is the parameter {self.id} varies across its settings; choose another parameter or "
                    "another experiment."
                )
            param = schema[key]
            value = param.parse(text)
            if param.target == "experiment":
                out = replace(out, **{key: value})
            else:
                settings = tuple(
                    {**s, key: value} if param.agent is None or s.get("agent") == param.agent else s
                    for s in out.settings
                )
                out = replace(out, settings=settings)
            out = replace(out, overrides={**out.overrides, key: value})
        return out
