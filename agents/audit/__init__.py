"""Empirical privacy audits: a statistical lower bound on the ε an agent really spends, next to its claim.

:func:`audit` runs an agent many times, with fresh privacy noise, on two neighbouring inputs for
its stated unit (one reward entry for central DP, one report for local DP), searches events over
its outputs (the arm played at each round, pull counts, elimination times, whole arm sequences;
for the counter agents also the privacy loss of their releases, ``view="releases"``)
and returns an :class:`AuditResult`: the best event's privacy loss ln((P(E|D) − δ)/P(E|D′)) with a
95% Clopper–Pearson interval, whose lower end bounds ε from below; the verdict against the claim;
and whether the runs could have detected a violation at all. ``banditlab audit AGENT`` prints it.

Modules, one concept each: :mod:`~agents.audit.bounds` (confidence bounds, power),
:mod:`~agents.audit.events` (events and their choice), :mod:`~agents.audit.neighbours` (neighbouring
reward tables), :mod:`~agents.audit.runner` (running agents on a table),
:mod:`~agents.audit.subjects` (what is audited), :mod:`~agents.audit.canaries` (controls with known
and broken privacy), :mod:`~agents.audit.procedure` (the test), :mod:`~agents.audit.result` (the
record). docs/audit.md says what an audit proves and what it cannot.

Examples
--------
>>> from agents.audit import audit
>>> result = audit("GAP", epsilon=1.0, runs=2000, seed=0)  # doctest: +SKIP
>>> print(result.report())  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from agents.audit.bounds import ALPHA
from agents.audit.neighbours import UNITS
from agents.audit.procedure import DEFAULT_RUNS, MIN_RUNS, run_audit
from agents.audit.result import INCONCLUSIVE, NO_VIOLATION, VIOLATION, AuditResult, Power, table_header
from agents.audit.subjects import AUDIT_ENVS, BUILTINS, VIEWS, Subject, agent_subject, builtin_subject
from agents.base import Agent, check_choice, check_float, check_int, check_int_range, describe
from bandit_envs.privacy._checks import check_epsilon
from bandit_envs.validation import check_memory, summarize

__all__ = [
    "AUDIT_ENVS",
    "BUILTINS",
    "DEFAULT_RUNS",
    "INCONCLUSIVE",
    "MIN_RUNS",
    "NO_VIOLATION",
    "UNITS",
    "VIEWS",
    "VIOLATION",
    "AuditResult",
    "Power",
    "Subject",
    "audit",
    "subject_for",
    "table_header",
]


#: Bounds the bytes a subject's neighbouring inputs take per round (reward tables, features), checked
#: before they are built; the runs' outputs are checked once the subject is known (``check_size``).
INPUT_BYTES_PER_ROUND = 256


def _builtin_class(cls: type) -> bool:
    """Whether ``cls`` is the class a built-in subject audits (not a subclass or namesake)."""
    from agents import (
        DPSE,
        DPTSUCB,
        GAP,
        GAPU,
        AdaPUCB,
        DPThompsonSampling,
        HybridDPUCB,
        LDPLinUCB,
        LDPThompsonSampling,
        LDPWrapper,
        PrePullGaussianTS,
        TreeDPUCB,
    )
    from agents.audit.canaries import NonPrivateUCB, OverclaimedGAP

    return cls in (
        GAP,
        GAPU,
        DPSE,
        LDPWrapper,
        LDPLinUCB,
        OverclaimedGAP,
        NonPrivateUCB,
        HybridDPUCB,
        TreeDPUCB,
        AdaPUCB,
        DPThompsonSampling,
        LDPThompsonSampling,
        PrePullGaussianTS,
        DPTSUCB,
    )


def _builtin(agent: Any) -> bool:
    """Whether ``agent`` is a class a built-in subject audits."""
    return isinstance(agent, type) and BUILTINS.get(agent.__name__) is not None and _builtin_class(agent)


def subject_for(
    agent: str | Callable[..., Any] | type[Agent] | Subject,
    *,
    epsilon: float = 1.0,
    delta: float | None = None,
    horizon: int | None = None,
    group: int = 1,
    unit: str | None = None,
    env_id: str = "GraphBandit-v0",
    factory: str | Callable[..., Any] | None = None,
    view: str | None = None,
) -> Subject:
    """The :class:`Subject` :func:`audit` runs for these arguments (see there)."""
    eps = check_epsilon("epsilon", epsilon)
    if view is not None:
        check_choice("view", view, VIEWS)
    if view is not None and isinstance(agent, Subject):
        raise ValueError(f"view must be None for a ready Subject (it has its own events), got {summarize(view)}.")
    group = check_int("group", group, minimum=1)
    if horizon is not None:
        horizon = check_int("horizon", horizon, minimum=2)
        check_memory(
            f"horizon={horizon} (the neighbouring inputs, about {INPUT_BYTES_PER_ROUND} bytes a round)",
            float(INPUT_BYTES_PER_ROUND) * horizon,
            "use a shorter horizon",
        )
    if unit is not None:
        check_choice("unit", unit, tuple(UNITS))
    if env_id not in AUDIT_ENVS:
        raise ValueError(
            f"env must be an env that replays reward tables, one of {list(AUDIT_ENVS)}, got {summarize(env_id)}."
        )
    if isinstance(agent, Subject):
        subject = agent
    elif factory is not None:
        if not isinstance(agent, str):
            raise TypeError(
                f"agent must be a name (the label of factory) when factory is given, got {describe(agent)}."
            )
        return agent_subject(
            factory, eps, horizon=horizon, group=group, unit=unit, delta=delta, env_id=env_id, name=agent, view=view
        )
    elif isinstance(agent, str):
        subject = builtin_subject(agent, eps, horizon=horizon, group=group, view=view)
    elif _builtin(agent):
        assert isinstance(agent, type)
        subject = builtin_subject(agent.__name__, eps, horizon=horizon, group=group, view=view)
    elif (isinstance(agent, type) and issubclass(agent, Agent)) or callable(agent):
        return agent_subject(agent, eps, horizon=horizon, group=group, unit=unit, delta=delta, env_id=env_id, view=view)
    else:
        raise TypeError(
            f"agent must be a built-in name, an Agent subclass, a factory or a Subject, got {describe(agent)}."
        )
    if unit is not None and unit != subject.unit:
        raise ValueError(
            f"unit must be {subject.unit!r} for {subject.name} (its documented unit), got {summarize(unit)}."
        )
    if delta is not None:
        subject = dataclasses.replace(subject, delta=check_float("delta", delta, low=0.0, high=1.0, high_open=True))
    return subject


def audit(
    agent: str | Callable[..., Any] | type[Agent] | Subject,
    *,
    epsilon: float = 1.0,
    delta: float | None = None,
    runs: int = DEFAULT_RUNS,
    seed: int = 0,
    horizon: int | None = None,
    group: int = 1,
    unit: str | None = None,
    env_id: str = "GraphBandit-v0",
    factory: str | Callable[..., Any] | None = None,
    alpha: float = ALPHA,
    view: str | None = None,
) -> AuditResult:
    """Audit an agent's differential-privacy claim empirically (a lower bound on its ε, with power).

    Parameters
    ----------
    agent
        A built-in name (:data:`BUILTINS`: ``"GAP"``, ``"GAPU"``, ``"DPSE"``, ``"LDPWrapper"``,
        ``"LDPLinUCB"``, ``"HybridDPUCB"``, ``"TreeDPUCB"``, ``"TreeDPUCB-parallel"``, ``"AdaPUCB"``,
        ``"AdaPUCB-cumulative"``, ``"DPThompsonSampling"``, ``"LDPThompsonSampling"`` and the controls
        ``"OverclaimedGAP"``, ``"NonPrivateUCB"``, ``"LaplaceCount"``; case-insensitive), the name of
        another agent class of :mod:`agents`, an :class:`~agents.base.Agent` subclass, a factory
        (``factory(env, setting, seed[, n_envs])`` as for ``banditlab run --agent``), or a ready
        :class:`Subject`. With ``factory``, the label.
    epsilon
        ε to build the agent with (> 0); the claim is read from the agent (``privacy_per_report``
        or ``epsilon``), which for the built-ins is this ε.
    delta
        Claimed δ (overrides the agent's; default: its ``privacy_per_report`` δ, else 0).
    runs
        Runs per input (≥ :data:`MIN_RUNS`); half choose the event, half bound it.
    seed
        Seed of all the runs' noise.
    horizon
        T; default: two rounds after the first release for GAP, GAPU, DPSE, 16 for the index and
        Thompson agents of :func:`~agents.audit.subjects.stream_subject`, 200 for LDPLinUCB and
        NonPrivateUCB, 1000 otherwise.
    group
        Number of units changed at once (rounds 0..G−1, or t..t+G−1 at each round t searched for
        an agent without built-in pairs); a claim for one unit is then tested on G
        (an ε-DP mechanism is only Gε-DP there, so expect a violation for G > 1).
    unit
        ``"entry"`` or ``"report"`` for an agent that does not say (default: from its ``privacy_unit``).
    env_id
        Env replaying the tables (:data:`AUDIT_ENVS`).
    factory
        ``"module:Factory"``, ``"path/file.py:Factory"`` or a callable, with ``agent`` its label.
    alpha
        1 − confidence of the interval.
    view
        What is observed (:data:`VIEWS`): ``"arms"``, the arm sequence, or ``"releases"``, the arm
        sequence and the agent's private releases, with events on their privacy loss
        (:func:`agents.audit.events.release_loss`), for an agent that describes its releases
        (``release_increment`` and ``released_sums`` of :class:`agents.central_dp.base.StreamPrivateAgent`:
        HybridDPUCB, TreeDPUCB, or yours). Default: ``"releases"`` for the built-in HybridDPUCB,
        TreeDPUCB and TreeDPUCB-parallel, whose arm sequences cannot show the loss of three changed
        entries, ``"arms"`` for every other agent. The report's note names it.

    Returns
    -------
    AuditResult
        The record (``print(result.report())`` for the table line and details).

    Raises
    ------
    ValueError, TypeError
        One sentence for an unknown agent name, ε ≤ 0, too few runs, or another bad argument.
    agents.user_agents.UserAgentError
        If a user agent cannot be loaded or built (a ValueError).
    """
    check_int("runs", runs, minimum=MIN_RUNS)
    check_int_range("seed", seed, 0, 2**63 - 1, "as banditlab run's seeds: a numpy int64")
    check_float("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    subject = subject_for(
        agent,
        epsilon=epsilon,
        delta=delta,
        horizon=horizon,
        group=group,
        unit=unit,
        env_id=env_id,
        factory=factory,
        view=view,
    )
    return run_audit(subject, runs, seed, alpha)
