"""What an audit runs: an agent or mechanism, its privacy claim and unit, its neighbouring inputs, its sampler.

A :class:`Subject` bundles everything :func:`agents.audit.procedure.run_audit` needs: the claim
(ε, δ) and the unit it is claimed for, candidate neighbouring pairs (:mod:`agents.audit.neighbours`),
a sampler that runs the mechanism n times with fresh noise on either input of a pair, and the event
family over its outputs (:mod:`agents.audit.events`).

Built-in subjects (:data:`BUILTINS`, by name) use the agents' fast paths and pairs placed where the
agent's first release decides (:func:`agents.audit.neighbours.release_pairs`):

* ``GAP``, ``GAPU``, ``DPSE``: central DP per reward entry, ε from ``epsilon``, δ = 0; two adjacent
  arms, T ends two rounds after the first release (the horizon at which it happens, with the
  agents' default confidence δ = 1/T); the compiled table simulator;
* ``LDPWrapper``: :class:`agents.LDPWrapper` (Laplace) around :class:`agents.UCB`, per report,
  claim ``privacy_per_report``; batched step API on ``GraphBandit-v0``;
* ``LDPLinUCB``: per report, claim ``privacy_per_report`` (ε, δ); two arms with features e₁, e₂,
  rewards ±1, the changed report's reward +1 → −1; the compiled linear ``run``;
* the central-DP index and Thompson agents and LDP-TS (:func:`stream_subject`): pairs that change
  the first rewards (:func:`index_pairs`), T = 16, batched step API; HybridDPUCB and TreeDPUCB are
  observed through their releases by default (:data:`VIEWS`), the others through their arms;
* controls (:mod:`agents.audit.canaries`): ``OverclaimedGAP``, ``NonPrivateUCB``, ``LaplaceCount``.

Any other agent (:func:`agent_subject`): a user factory (``module:Factory`` as ``banditlab run
--agent`` takes it, :mod:`agents.user_agents`) or an :class:`agents.base.Agent`
subclass, built for two arms; claim ``privacy_per_report`` if the agent has one (unit "report"),
else ``epsilon`` (unit "report" if its ``privacy_unit`` mentions reports, else "entry"); played
through the step API on ``GraphBandit-v0`` replaying 0/1 tables (:func:`generic_pairs` at round 0
and :func:`search_pairs` across the horizon; the note lists the rounds searched and the power
statement is scoped to them), batched when the factory takes ``n_envs``, or with the simulator for
an elimination agent of :mod:`agents.elimination` itself (a subclass defined elsewhere may override
``act`` or ``update``, which the simulator never calls, so it is played through the step API:
:func:`simulates_its_steps`).
"""

from __future__ import annotations

import inspect
import math
import numbers
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.audit.canaries import LaplaceCount, NonPrivateUCB, OverclaimedGAP
from agents.audit.events import ArmSequenceEvents, EventFamily, ReleaseEvents, ReleaseRuns, ThresholdEvents
from agents.audit.neighbours import (
    UNITS,
    Neighbours,
    generic_pairs,
    laplace_scale,
    release_pairs,
    search_pairs,
    search_rounds,
    two_arm_graph,
)
from agents.audit.runner import graph_env, linear_runs, run_seeds, simulate_runs, spent_after, step_runs
from agents.base import Agent, PrivateAgent, as_float, check_choice, check_float, check_int, describe
from agents.central_dp.base import StreamPrivateAgent
from agents.central_dp.gaussian_ts import DPTSUCB, PrePullGaussianTS
from agents.central_dp.thompson import DPThompsonSampling
from agents.central_dp.ucb import AdaPUCB, HybridDPUCB, TreeDPUCB
from agents.elimination.policies import DPSE, GAP, GAPU, EliminationAgent
from agents.linear import LDPLinUCB, LinearAgent
from agents.local_dp.thompson import LDPThompsonSampling
from agents.local_dp.wrapper import LDPWrapper
from agents.stochastic.index import UCB
from agents.user_agents import (
    UserAgent,
    UserAgentError,
    accepts_n_envs,
    optional_attribute,
    user_agent,
    users_code,
)
from bandit_envs.privacy._checks import check_epsilon
from bandit_envs.validation import summarize

__all__ = [
    "AUDIT_ENVS",
    "BUILTINS",
    "Subject",
    "agent_subject",
    "builtin_subject",
    "dpse_subject",
    "gap_subject",
    "laplace_count_subject",
    "ldp_linucb_subject",
    "ldp_wrapper_subject",
    "index_pairs",
    "nonprivate_ucb_subject",
    "declared_releases",
    "release_increments",
    "stream_subject",
    "claimed_number",
    "simulates_its_steps",
]

#: What an audit observes of an agent: its arm sequence, or its private releases (and its arms).
VIEWS = ("arms", "releases")
#: The note of a subject observed through its releases.
RELEASES_NOTE = "view: releases (the arm sequence and every release, which the agent's guarantee covers)"


#: Envs that replay a reward table (``reset(options={"reward_table": R})``).
AUDIT_ENVS = ("GraphBandit-v0",)
#: Distances from the decision boundary, in noise scales, of the pairs of :func:`release_pairs`.
OFFSETS = (1.0, 2.5, 4.0)
#: Horizon of the step-API subjects when none is given.
DEFAULT_HORIZON = 1000
#: Horizon of LDP-LinUCB when none is given (its arms follow θ from the first report on).
LINEAR_HORIZON = 200


@dataclass(frozen=True)
class Subject:
    """An audited mechanism: claim, unit, neighbouring pairs, sampler and events.

    Attributes
    ----------
    name
        Its name in the report.
    epsilon, delta
        The claimed (ε, δ) for one change of ``unit``.
    unit
        The neighbouring relation audited (a key of :data:`agents.audit.neighbours.UNITS`, or a
        mechanism's own, e.g. "record").
    unit_text
        What one neighbouring change is, in words.
    pairs
        Candidate neighbouring inputs; the audit picks the pair and the event on the selection runs.
    sample
        ``sample(pair, which, n, seed)``: n outputs with fresh noise on the pair's first input
        (``which`` = 0, D) or second (1, D′), seeded by ``seed``.
    events
        The event family over the outputs.
    describe_pair
        One line saying what a pair is (the change and how D was built).
    note
        Anything the report should add (e.g. how the horizon was chosen).
    scope
        What the power statement covers, when the pairs are a search over positions (appended to it).
    """

    name: str
    epsilon: float
    delta: float
    unit: str
    unit_text: str
    pairs: tuple[Any, ...]
    sample: Callable[[Any, int, int, int], Any]
    events: EventFamily
    describe_pair: Callable[[Any], str]
    note: str = ""
    scope: str = ""

    def __post_init__(self) -> None:
        """Check the claim: a NaN ε would make every comparison with the bound false (never a violation)."""
        object.__setattr__(self, "epsilon", claimed_number(f"the claimed epsilon of {self.name}", self.epsilon))
        object.__setattr__(self, "delta", claimed_number(f"the claimed delta of {self.name}", self.delta, top=1.0))


def claimed_number(name: str, value: Any, top: float = math.inf) -> float:
    """``value`` as a float if it is a real number in [0, ``top``] (ε: ``top`` = inf, an infinite claim allowed).

    A claim is compared with the audit's lower bound, so it must be a number: NaN (every comparison
    false: never a violation), a negative number, a bool or a string (read as 1.0 or parsed) are
    refused with one sentence. An infinite ε claims nothing, and its audit is inconclusive.

    Raises
    ------
    ValueError
        If ``value`` is NaN or outside [0, ``top``].
    TypeError
        If ``value`` is not a real number (bools and strings included).
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {summarize(value)} ({type(value).__name__}).")
    v = as_float(value)
    if not 0.0 <= v <= top:  # NaN fails too
        interval = "[0, inf]" if math.isinf(top) else f"[0, {top:g}]"
        raise ValueError(f"{name} must be a number in {interval}, got {summarize(value)}.")
    return v


def _neighbours_line(pair: Neighbours) -> str:
    return f"{pair.change()}; {pair.label}"


def _release_horizon(epoch_end: Callable[[int], int], margin: int) -> int:
    """The T at which the first release ends ``margin`` rounds before the end (its length depends on T)."""
    horizon = 1000
    for _ in range(60):
        following = epoch_end(horizon) + margin
        if following == horizon:
            break
        horizon = max(following, 2)
    return horizon


def _simulated(make: Callable[[int], EliminationAgent]) -> Callable[[Any, int, int, int], Any]:
    """A sampler running ``make(horizon)`` with the compiled simulator on either table of a pair."""
    agents: dict[int, EliminationAgent] = {}

    def sample(pair: Neighbours, which: int, n: int, seed: int) -> Any:
        agent = agents.get(pair.horizon)
        if agent is None:
            agent = agents[pair.horizon] = make(pair.horizon)
        return simulate_runs(agent, pair.tables()[which], pair.graph, run_seeds(seed, n))

    return sample


def gap_subject(
    epsilon: float,
    *,
    horizon: int | None = None,
    group: int = 1,
    uniform: bool = False,
    factor: float | None = None,
) -> Subject:
    """GAP (or GAPU with ``uniform``, or :class:`OverclaimedGAP` with ``factor``) on two adjacent arms.

    Epoch 1 pulls one arm L_1 times and observes both (Ω_1 is one arm of the edge), then releases
    both means with Laplace(1/(εL_1)) noise (gap paper, Algorithm 1 line 21). GAP's Ω_2 is the arm
    with the larger noisy mean (GetIndSet, lines 26-32), so the arm played after the release shows
    which arm leads: pairs around a mean difference of 0. GAPU draws Ω_2 at random, so only the
    elimination shows (line 23: arm 1 is dropped below max μ̄ − w, w =
    √(2 ln(8·2/δ)/L_1) + 2 ln(4·2/δ)/(εL_1) for two active arms in epoch 1): pairs around w.
    """
    eps = check_epsilon("epsilon", epsilon)
    graph = two_arm_graph()

    def make(rounds: int) -> GAP:
        if factor is not None:
            return OverclaimedGAP(2, rounds, eps, graph, factor=factor, seed=0)
        return (GAPU if uniform else GAP)(2, rounds, eps, graph, seed=0)

    def epoch_end(rounds: int) -> int:
        probe = make(rounds)
        return int(probe.epoch_length[0]) * len(probe.independent_set[0])

    rounds = _release_horizon(epoch_end, 2) if horizon is None else check_int("horizon", horizon, minimum=2)
    probe = make(rounds)
    length = int(probe.epoch_length[0])
    reads = list(range(min(length, rounds)))  # with the edge, every round of epoch 1 reveals arm 0
    if len(reads) <= group:
        raise ValueError(f"horizon must exceed group = {group} rounds, got {rounds}.")
    scale = laplace_scale(eps, length)
    if uniform:
        dlt = probe.delta
        center = math.sqrt(2.0 * math.log(16.0 / dlt) / length) + 2.0 * math.log(8.0 / dlt) / (eps * length)
        decision = "arm 1's elimination"
    else:
        center, decision = 0.0, "which arm leads"
    pairs = release_pairs(rounds, reads, scale, center, OFFSETS, group=group, decision=decision)
    name = "OverclaimedGAP" if factor is not None else ("GAPU" if uniform else "GAP")
    end = length * len(probe.independent_set[0])
    return _first_release_subject(name, eps, make, probe, pairs, rounds, end, f"L_1 = {length}")


def _first_release_subject(
    name: str,
    eps: float,
    make: Callable[[int], EliminationAgent],
    probe: PrivateAgent,
    pairs: Sequence[Any],
    rounds: int,
    end: int,
    epoch: str,
) -> Subject:
    """An elimination agent on two arms (``probe = make(rounds)``), audited through its arms around one release.

    ``end`` is the round after which that release is made (``epoch`` names its epoch's length);
    the note says when it falls beyond the horizon, where the outputs cannot depend on the data.
    """
    note = f"first release after round {end} ({epoch})" + (
        "" if end < rounds else f", not within T = {rounds}: the outputs cannot depend on the data"
    )
    return Subject(
        name,
        eps,
        0.0,
        "entry",
        str(probe.privacy_unit),
        tuple(pairs),
        _simulated(make),
        ArmSequenceEvents(2),
        _neighbours_line,
        note,
    )


def dpse_subject(epsilon: float, *, horizon: int | None = None, group: int = 1) -> Subject:
    """DP-SE on two arms: pairs around the elimination width of its first release.

    Epoch 1 pulls arms 0 and 1 in turn R_1 times each (arm 0 at even rounds), then releases both
    means with Laplace(1/(εR_1)) noise and drops arm 1 if max μ̃ − μ̃_1 > 2w(h_1 + c_1), with
    h_1 = √(ln(8·2/β)/(2R_1)) and c_1 = ln(4·2/β)/(εR_1) (Sajed & Sheffet, ICML 2019, DP-SE; the
    agent's ``width_scale`` w = 1, β = 1/T). The round after the release shows whether arm 1 is left.
    """
    eps = check_epsilon("epsilon", epsilon)

    def make(rounds: int) -> DPSE:
        return DPSE(2, rounds, eps, seed=0)

    def epoch_end(rounds: int) -> int:
        return 2 * int(make(rounds).epoch_repetitions[0])

    rounds = _release_horizon(epoch_end, 2) if horizon is None else check_int("horizon", horizon, minimum=2)
    probe = make(rounds)
    reps = int(probe.epoch_repetitions[0])
    reads = list(range(0, min(2 * reps, rounds), 2))
    if len(reads) <= group:
        raise ValueError(f"horizon must exceed 2·group = {2 * group} rounds, got {rounds}.")
    beta = probe.beta
    h = math.sqrt(math.log(16.0 / beta) / (2.0 * reps))
    c = math.log(8.0 / beta) / (eps * reps)
    center = 2.0 * probe.width_scale * (h + c)
    pairs = release_pairs(
        rounds, reads, laplace_scale(eps, reps), center, OFFSETS, group=group, decision="arm 1's elimination"
    )
    return _first_release_subject("DPSE", eps, make, probe, pairs, rounds, 2 * reps, f"R_1 = {reps}")


def _stepped(
    build: Callable[[Any, int | None, int], Any],
    batched: bool,
    env_id: str,
    user: str | None = None,
    increments: tuple[tuple[int, float], ...] | None = None,
) -> Callable[[Any, int, int, int], Any]:
    """A sampler playing the step API; a ``user`` agent that raises becomes one :class:`UserAgentError` sentence.

    With ``increments`` (the agent's ``release_increment`` for n = 1..T) it keeps the releases too
    and returns :class:`~agents.audit.events.ReleaseRuns` of the pair, else the arm sequences.
    """

    def play(pair: Neighbours, which: int, n: int, seed: int) -> Any:
        tables = pair.tables()
        if increments is None:
            return step_runs(build, tables[which], pair.graph, n, seed, batched=batched, env_id=env_id)
        values = np.empty((n, pair.horizon))
        actions = step_runs(build, tables[which], pair.graph, n, seed, batched=batched, env_id=env_id, releases=values)
        return ReleaseRuns(actions, values, tables[0], tables[1], increments)

    def sample(pair: Neighbours, which: int, n: int, seed: int) -> Any:
        if user is None:
            return play(pair, which, n, seed)
        with users_code(user, f"failed while replaying a reward table on {env_id}"):
            return play(pair, which, n, seed)

    return sample


def release_increments(agent: Any, rounds: int, label: str) -> tuple[tuple[int, float], ...]:
    """``agent.release_increment(n)`` for n = 1..``rounds``, checked: what ``view="releases"`` needs.

    Raises
    ------
    ValueError
        One sentence if the agent has no ``release_increment`` and ``released_sums``
        (:class:`agents.central_dp.base.StreamPrivateAgent`) describing its releases.
    """
    describe_release = optional_attribute(agent, "release_increment")
    sums = optional_attribute(agent, "released_sums")
    if not callable(describe_release) or describe_release(1) is None or sums is None:
        raise ValueError(
            f"view must be 'arms' for {label} (it does not describe its releases with release_increment and "
            "released_sums, as agents.central_dp.base.StreamPrivateAgent's counters do), got 'releases'."
        )
    out = []
    for n in range(1, rounds + 1):
        m, b = describe_release(n)
        m = check_int(f"release_increment({n})[0]", m, minimum=0)
        if m >= n:
            raise ValueError(f"release_increment({n}) must give m < {n} for {label}, got m = {m}.")
        out.append((m, check_float(f"release_increment({n})[1]", b, low=0.0, low_open=True)))
    return tuple(out)


def _report_scope(rounds: str, where: str) -> str:
    """The scope line of a local-DP subject whose pairs change only the first rounds' reports."""
    return (
        f"This covers only the reports of {rounds}: every other round's report goes through the same "
        f"mechanism with fresh noise ({where}), so these stand for any others."
    )


def _first_rounds(group: int) -> str:
    return "round 0" if group == 1 else f"rounds 0..{group - 1}"


def ldp_wrapper_subject(
    epsilon: float, *, horizon: int | None = None, group: int = 1, mechanism: str = "laplace"
) -> Subject:
    """:class:`agents.LDPWrapper` around :class:`agents.UCB` (noise-aware index), audited per report.

    Claim: ``privacy_per_report`` (ε, 0) of the mechanism (Laplace or randomized response). The
    pairs change round 0's rewards, 1 on D and 0 on D′, so the report of round 0 changes.
    """
    eps = check_epsilon("epsilon", epsilon)
    mech = check_choice("mechanism", mechanism, ("laplace", "randomized_response"))
    rounds = DEFAULT_HORIZON if horizon is None else check_int("horizon", horizon, minimum=2)

    def build(env: Any, n_envs: int | None, seed: int) -> LDPWrapper:
        return LDPWrapper(UCB(2, n_envs=n_envs, seed=seed), mech, eps, seed=seed)

    probe = build(None, None, 0)
    claim_eps, claim_delta = probe.privacy_per_report
    pairs = generic_pairs(rounds, 2, "report", group)
    return Subject(
        "LDPWrapper",
        claim_eps,
        claim_delta,
        "report",
        UNITS["report"] + " — the wrapper's privacy_per_report",
        tuple(pairs),
        _stepped(build, True, "GraphBandit-v0"),
        ArmSequenceEvents(2),
        _neighbours_line,
        f"{mech} reports (ε = {claim_eps:g} each), wrapping agents.UCB",
        _report_scope(_first_rounds(group), "agents/local_dp/wrapper.py"),
    )


def ldp_linucb_subject(
    epsilon: float, *, delta: float = 0.1, horizon: int | None = None, group: int = 1, sigma_method: str = "classic"
) -> Subject:
    """:class:`agents.LDPLinUCB` on two arms with features e₁ and e₂, audited per report.

    Claim: ``privacy_per_report`` (ε, δ′), δ′ the exact δ of its σ when that exceeds δ (classic σ
    at ε ≥ 1). Rewards are ±1 (the clipping range l_y = 1), and round 0's rewards change from +1
    on D to −1 on D′: the report y·x + ξ of round 0 moves by 2 in one coordinate.
    """
    eps = check_epsilon("epsilon", epsilon)
    rounds = LINEAR_HORIZON if horizon is None else check_int("horizon", horizon, minimum=2)
    method = check_choice("sigma_method", sigma_method, ("classic", "analytic"))

    def build(n_envs: int | None, seed: int) -> LDPLinUCB:
        return LDPLinUCB(2, eps, delta, horizon=rounds, sigma_method=method, n_envs=n_envs, seed=seed)

    probe = build(None, 0)
    claim_eps, claim_delta = probe.privacy_per_report
    features = np.broadcast_to(np.eye(2), (rounds, 2, 2)).copy()
    pairs = generic_pairs(rounds, 2, "report", group, low=-1.0, high=1.0)

    def sample(pair: Neighbours, which: int, n: int, seed: int) -> Any:
        return linear_runs(lambda n_envs, s: build(n_envs, s), features, pair.tables()[which], n, seed)

    return Subject(
        "LDPLinUCB",
        claim_eps,
        claim_delta,
        "report",
        UNITS["report"] + " — privacy_per_report",
        tuple(pairs),
        sample,
        ArmSequenceEvents(2),
        lambda pair: _neighbours_line(pair).replace("0/1 table", "±1 table (features e₁, e₂)"),
        scope=_report_scope(_first_rounds(group), "agents/linear/ldp_linucb.py"),
    )


def nonprivate_ucb_subject(epsilon: float, *, horizon: int | None = None, group: int = 1) -> Subject:
    """:class:`NonPrivateUCB` (UCB claiming ε-DP per entry): must be rejected."""
    eps = check_epsilon("epsilon", epsilon)
    rounds = 200 if horizon is None else check_int("horizon", horizon, minimum=2)

    def build(env: Any, n_envs: int | None, seed: int) -> NonPrivateUCB:
        return NonPrivateUCB(2, eps, n_envs=n_envs, seed=seed)

    return Subject(
        "NonPrivateUCB",
        eps,
        0.0,
        "entry",
        NonPrivateUCB.privacy_unit,
        tuple(generic_pairs(rounds, 2, "entry", group)),
        _stepped(build, True, "GraphBandit-v0"),
        ArmSequenceEvents(2),
        _neighbours_line,
    )


def laplace_count_subject(epsilon: float, *, noise_epsilon: float | None = None) -> Subject:
    """:class:`LaplaceCount`: a count of 1 on D and 0 on D′ answered with Laplace(1/``noise_epsilon``)."""
    mech = LaplaceCount(epsilon, noise_epsilon)

    def sample(pair: tuple[float, float], which: int, n: int, seed: int) -> Any:
        return mech.sample(pair[which], n, np.random.default_rng(seed))

    return Subject(
        "LaplaceCount",
        mech.epsilon,
        0.0,
        "record",
        LaplaceCount.privacy_unit,
        ((1.0, 0.0),),
        sample,
        ThresholdEvents("answer"),
        lambda pair: f"count {pair[0]:g} on D, {pair[1]:g} on D′ (Laplace noise drawn for ε = {mech.noise_epsilon:g})",
        ""
        if noise_epsilon is None
        else f"mis-calibrated control: noise for ε = {mech.noise_epsilon:g}, claim {mech.epsilon:g}",
    )


def _claim(
    agent: Any, epsilon: float, delta: float | None, unit: str | None, spent: tuple[Any, Any] | None = None
) -> tuple[float, float, str, str]:
    """The agent's claimed (ε, δ), the unit key and its text.

    The claim is, in this order: its ``privacy_per_report`` (a local agent's report); ``spent``,
    its own ``privacy_spent`` after the audited horizon (what it states for such a run), or its
    ``epsilon`` attribute with δ = 0 where that states less (the stronger claim is audited); its
    ``epsilon`` attribute with δ = 0; the ``epsilon`` the audit was given.
    """
    text = str(optional_attribute(agent, "privacy_unit") or "")
    label = type(agent).__name__
    per_report = optional_attribute(agent, "privacy_per_report")
    if per_report is not None:
        try:
            eps_raw, delta_raw = per_report
        except (TypeError, ValueError):
            raise ValueError(
                f"{label}.privacy_per_report must be a pair (epsilon, delta), got {summarize(per_report)}."
            ) from None
        claim_eps = claimed_number(f"{label}.privacy_per_report[0] (its claimed epsilon)", eps_raw)
        claim_delta = claimed_number(f"{label}.privacy_per_report[1] (its claimed delta)", delta_raw, top=1.0)
        key = "report"
    elif spent is not None:  # the stronger of its two statements: privacy_spent, or an epsilon attribute below it
        raw = optional_attribute(agent, "epsilon")
        stated = as_float(raw) if isinstance(raw, numbers.Real) and not isinstance(raw, bool) else math.inf
        spent_eps = claimed_number(f"{label}.privacy_spent[0] (its claimed epsilon)", spent[0])
        spent_delta = claimed_number(f"{label}.privacy_spent[1] (its claimed delta)", spent[1], top=1.0)
        claim_eps, claim_delta = (stated, 0.0) if stated < spent_eps else (spent_eps, spent_delta)
        key = "report" if "report" in text.lower() else "entry"
    else:
        raw = optional_attribute(agent, "epsilon")
        claim_eps = epsilon if raw is None else claimed_number(f"{label}.epsilon (its claimed epsilon)", raw)
        claim_delta = 0.0
        key = "report" if "report" in text.lower() else "entry"
    if delta is not None:
        claim_delta = check_float("delta", delta, low=0.0, high=1.0, high_open=True)
    if unit is not None:
        key = check_choice("unit", unit, tuple(UNITS))
    return claim_eps, claim_delta, key, (text or UNITS[key])


def class_factory(cls: type[Agent], epsilon: float, horizon: int, graph: Any) -> Callable[[Any, int | None, int], Any]:
    """``build(env, n_envs, seed)`` for an Agent subclass: ``cls(2, [horizon, epsilon, graph,] n_envs=, seed=)``.

    Of ``horizon``, ``epsilon`` and ``feedback_graph`` only those its signature has are passed (by
    name); ``n_envs`` and ``seed`` always are (an :class:`agents.base.Agent` takes both), so any
    such agent whose other parameters have defaults can be built.
    """
    params = inspect.signature(cls).parameters
    offered = {"horizon": horizon, "epsilon": epsilon, "feedback_graph": graph}
    missing = [
        name
        for name, p in params.items()
        if name not in (*offered, "n_arms", "n_envs", "seed")
        and p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if missing:
        raise UserAgentError(
            f"agent {cls.__name__} cannot be built for an audit: its required parameters {missing} have no "
            "value; give a factory with --agent module:Factory instead."
        )
    kwargs = {name: value for name, value in offered.items() if name in params}

    def build(env: Any, n_envs: int | None, seed: int) -> Any:
        return cls(2, **kwargs, n_envs=n_envs, seed=seed)

    return build


def declared_releases(agent: Any, rounds: int, label: str) -> tuple[int, ...]:
    """The rounds after whose reward ``agent`` releases something, from its optional ``release_rounds``.

    ``release_rounds`` (an attribute or property: a sequence of ints in [0, T)) lets an agent whose
    releases fall at rounds of its own (epoch ends, tree nodes) have the audit search there too.

    Raises
    ------
    agents.user_agents.UserAgentError
        One sentence if ``release_rounds`` is not a sequence of rounds in [0, T).
    """
    declared = optional_attribute(agent, "release_rounds")
    if declared is None:
        return ()
    try:
        values = [operator.index(r) for r in declared]
    except TypeError:
        values = None
    if values is None or any(not 0 <= r < rounds for r in values):
        raise UserAgentError(
            f"agent {label!r} has release_rounds {summarize(declared)}; they must be a sequence of round numbers "
            f"in [0, {rounds}) (the rounds after whose reward it releases something)."
        )
    return tuple(sorted(set(values)))


def simulates_its_steps(agent: EliminationAgent) -> bool:
    """Whether ``agent``'s compiled ``simulate`` plays as its ``act`` and ``update``: its class is agents.elimination's.

    ``simulate`` never calls ``act`` or ``update``, so a subclass defined elsewhere (which may override
    them, say to release a raw reward) is audited through the step API, on what it actually does; so is an
    agent whose ``act`` or ``update`` was replaced on the instance.
    """
    own = type(agent).__module__.split(".")[:2] == ["agents", "elimination"]
    return own and not any(name in vars(agent) for name in ("act", "update", "simulate"))


def agent_subject(
    agent: str | Callable[..., Any] | UserAgent,
    epsilon: float = 1.0,
    *,
    horizon: int | None = None,
    group: int = 1,
    unit: str | None = None,
    delta: float | None = None,
    env_id: str = "GraphBandit-v0",
    name: str | None = None,
    view: str | None = None,
) -> Subject:
    """Any agent: a factory (``module:Factory``, ``path.py:Factory`` or a callable) or an Agent subclass.

    A factory is called as in ``banditlab run --agent`` (:mod:`agents.user_agents`):
    ``factory(env, setting, seed[, n_envs])`` with the two-arm ``GraphBandit-v0`` env and
    ``setting = {"epsilon": ε, "horizon": T, "n_arms": 2}``; an Agent subclass is built by
    :func:`class_factory`. The claim is read from the agent built with seed 0 (:func:`_claim`):
    a private agent's own ``privacy_spent`` after replaying T rounds, as a subclass of a built-in
    agent states it (its ``epsilon`` attribute can be another number, e.g. TreeDPUCB's ε against
    its ε/K per entry).
    ``view="releases"`` (default ``"arms"``) observes the releases too, for an agent that describes
    them as :class:`agents.central_dp.base.StreamPrivateAgent`'s counters do (:func:`release_increments`).

    Raises
    ------
    agents.user_agents.UserAgentError
        One sentence if the agent cannot be loaded or built.
    ValueError
        For ``env_id`` not in :data:`AUDIT_ENVS`, or bad ``epsilon``, ``horizon``, ``group``, ``unit``.
    """
    eps = check_epsilon("epsilon", epsilon)
    rounds = DEFAULT_HORIZON if horizon is None else check_int("horizon", horizon, minimum=2)
    if env_id not in AUDIT_ENVS:
        raise ValueError(f"env must be an env that replays reward tables, one of {list(AUDIT_ENVS)}, got {env_id!r}.")
    graph = two_arm_graph()
    build: Callable[[Any, int | None, int], Any]
    if isinstance(agent, type) and issubclass(agent, Agent):
        build = class_factory(agent, eps, rounds, graph)
        batched = "n_envs" in inspect.signature(agent).parameters
        label = name or agent.__name__
    else:
        user = agent if isinstance(agent, UserAgent) else user_agent(agent, ())
        setting = {"epsilon": eps, "horizon": rounds, "n_arms": 2}

        def build(env: Any, n_envs: int | None, seed: int) -> Any:
            return user.build(env, setting, seed, n_envs, guard=False)

        batched = accepts_n_envs(user.factory())
        label = name or user.name
    env = graph_env(np.zeros((rounds, 2)), graph, env_id)
    try:
        with users_code(label, "could not be built"):
            probe = build(env, None, 0)
    finally:
        env.close()
    if isinstance(probe, LinearAgent):
        raise UserAgentError(
            f"agent {label!r} is a linear contextual agent, which needs feature contexts that a reward-table audit "
            "does not give; LDPLinUCB has its own audit (banditlab audit LDPLinUCB)."
        )
    spent = None
    states_spent = optional_attribute(probe, "privacy_spent") is not None
    if optional_attribute(probe, "privacy_per_report") is None and states_spent:
        with users_code(label, f"failed while replaying a reward table on {env_id}"):  # what it states for T rounds
            spent = spent_after(build, np.zeros((rounds, 2)), graph, env_id)
    claim_eps, claim_delta, key, text = _claim(probe, eps, delta, unit, spent)
    releases = declared_releases(probe, rounds, label)
    pairs = generic_pairs(rounds, 2, key, group) + search_pairs(rounds, 2, key, group, releases=releases)
    starts = ", ".join(str(t) for t in sorted({0, *search_rounds(rounds, group, releases)}))
    which = "arms 0 and 1" if key == "entry" else "all arms at once"
    declared = f", with the rounds ending at its declared releases {list(releases)}" if releases else ""
    searched = f"changes searched at rounds {starts} ({which}, 2 reward patterns{declared}; {len(pairs)} pairs)"
    units = f"{group} units from" if group > 1 else "unit"
    scope = (
        f"This covers only the changes tried, the {units} at rounds {starts} of T = {rounds}: "
        "a reward of any other round can leak undetected."
    )
    sample: Callable[[Any, int, int, int], Any]
    events: EventFamily = ArmSequenceEvents(2)
    notes = []
    if check_choice("view", "arms" if view is None else view, VIEWS) == "releases":
        sample = _stepped(build, batched, env_id, user=label, increments=release_increments(probe, rounds, label))
        events = ReleaseEvents(2)
        notes.append(RELEASES_NOTE)
    elif isinstance(probe, EliminationAgent) and simulates_its_steps(probe):  # the compiled table simulator
        fixed = probe

        def sample(pair: Neighbours, which: int, n: int, seed: int) -> Any:
            return simulate_runs(fixed, pair.tables()[which], pair.graph, run_seeds(seed, n))

    else:
        sample = _stepped(build, batched, env_id, user=label)
    statements = ("privacy_per_report", "epsilon")
    stated = spent is not None or any(optional_attribute(probe, a) is not None for a in statements)
    if not stated:
        notes.insert(0, f"{label} states no ε (no epsilon attribute): the claim audited is ε = {eps:g}")
    notes.insert(0, searched)
    return Subject(
        label,
        claim_eps,
        claim_delta,
        key,
        text,
        tuple(pairs),
        sample,
        events,
        _neighbours_line,
        "; ".join(notes),
        scope,
    )


#: Changed entries of :func:`index_pairs`, in order: (round, arm, value on D, value on D′). Arms 0
#: and 1 are pulled once each at rounds 0 and 1 by every index and Thompson agent here (lowest
#: index first), so the first two are read for sure and the first decision (round 2) compares
#: them; the third is arm 0's second reward when arm 0 wins that decision (more likely on D).
INDEX_CHANGES = ((0, 0, 1.0, 0.0), (1, 1, 0.0, 1.0), (2, 0, 1.0, 0.0), (3, 1, 0.0, 1.0), (4, 0, 1.0, 0.0))
#: Rewards of arms 0 and 1 outside the changed entries, one pair of tables each.
INDEX_FILLS = ((0.5, 0.5), (0.3, 0.7))
#: Horizon of the central-DP index and Thompson subjects when none is given.
INDEX_HORIZON = 16


def index_pairs(horizon: int, group: int, unit: str = "entry") -> list[Neighbours]:
    """Pairs for two-arm agents that pull each arm once and then compare their first private releases.

    D has r_{0,0} = 1 and r_{1,1} = 0; D′ changes the first ``group`` entries of
    :data:`INDEX_CHANGES` (for ``unit="report"`` every arm's reward in those rounds, to the same
    values), so every change pushes the comparison the same way: arm 0 leads on D, arm 1 on D′.
    The first release of each arm (after its first pull) includes the first two changed entries,
    and the decision at round 2 (and, for the counters, at every later round at which the pull
    counts are equal) compares noisy sums that contain them.
    """
    if group > len(INDEX_CHANGES):
        raise ValueError(f"group must be at most {len(INDEX_CHANGES)} for this agent's pairs, got {group}.")
    if horizon <= max(t for t, _, _, _ in INDEX_CHANGES[:group]) + 1:
        raise ValueError(
            f"horizon must exceed {INDEX_CHANGES[group - 1][0] + 1} rounds for group {group}, got {horizon}."
        )
    pairs = []
    for fill0, fill1 in INDEX_FILLS:
        table = np.empty((horizon, 2))
        table[:, 0], table[:, 1] = fill0, fill1
        for t, k, before, _ in INDEX_CHANGES:
            table[t, k] = before
        changed: list[tuple[int, int, float]] = []
        for t, k, before, after in INDEX_CHANGES[:group]:
            if unit == "report":
                table[t, :] = before
                changed.extend((t, arm, after) for arm in range(2))
            else:
                changed.append((t, k, after))
        label = (
            f"2 arms, r_{{0,0}} = 1, r_{{1,1}} = 0, r_{{2,0}} = 1, r_{{3,1}} = 0 on D, the other rewards "
            f"{fill0:g} (arm 0) and {fill1:g} (arm 1) (T = {horizon})"
        )
        pairs.append(Neighbours(table, tuple(changed), two_arm_graph(), unit, label))
    return pairs


def _claimed(probe: StreamPrivateAgent) -> tuple[float, float]:
    """The agent's own ``privacy_spent`` after one reward (before any, it reports (0, 0))."""
    probe.act()
    probe.update(0, 0.5)
    eps, dlt = probe.privacy_spent
    return float(eps), float(dlt)


def stream_subject(
    name: str, epsilon: float, *, horizon: int | None = None, group: int = 1, view: str | None = None
) -> Subject:
    """A central-DP index or Thompson agent (Hybrid/Tree-DP-UCB, AdaP-UCB, DP-TS, the Gaussian-DP samplers) or LDP-TS.

    The claim is the agent's :attr:`privacy_spent` (for TreeDPUCB with ``per_arm_budget="split"``,
    ε/K: each reward enters one arm's tree, so that is what the agent claims per entry, and what
    is audited). Unit: one reward entry (central DP, event level), or one report for
    LDPThompsonSampling. Pairs: :func:`index_pairs`. The agents run batched (``n_envs`` copies,
    each with its own Philox noise stream) through the step API on ``GraphBandit-v0``.
    TreeDPUCB gets ``horizon`` = T as its trees' size; PrePullGaussianTS and DPTSUCB are sized by
    their ``for_budget`` (ε, δ = 10⁻⁵) for T rounds, and claim that (ε, δ).

    ``view`` (:data:`VIEWS`): ``"arms"`` observes the arm sequence (:class:`ArmSequenceEvents`);
    ``"releases"`` also the agent's releases (``released_sums``), with the events of
    :class:`~agents.audit.events.ReleaseEvents` (the privacy loss of the releases), for an agent
    whose releases have independent Laplace increments (``release_increment``: HybridDPUCB and
    TreeDPUCB). The guarantee is about the releases (the arms are their post-processing), so that
    audit bounds the agent's ε as tightly as any. Default: ``"releases"`` for the counter agents,
    whose arm sequences cannot show a violation on three changed entries (their first decisions
    read only a part of each counter's noise), ``"arms"`` for the others.
    """
    eps = check_epsilon("epsilon", epsilon)
    rounds = INDEX_HORIZON if horizon is None else check_int("horizon", horizon, minimum=2)
    makers: dict[str, Callable[[int | None, int], StreamPrivateAgent]] = {
        "HybridDPUCB": lambda n, s: HybridDPUCB(2, eps, n_envs=n, seed=s),
        "TreeDPUCB": lambda n, s: TreeDPUCB(2, rounds, eps, n_envs=n, seed=s),
        "TreeDPUCB-parallel": lambda n, s: TreeDPUCB(2, rounds, eps, per_arm_budget="parallel", n_envs=n, seed=s),
        "AdaPUCB": lambda n, s: AdaPUCB(2, eps, n_envs=n, seed=s),
        "AdaPUCB-cumulative": lambda n, s: AdaPUCB(2, eps, variant="cumulative", n_envs=n, seed=s),
        "DPThompsonSampling": lambda n, s: DPThompsonSampling(2, eps, n_envs=n, seed=s),
        "LDPThompsonSampling": lambda n, s: LDPThompsonSampling(2, eps, n_envs=n, seed=s),
        "PrePullGaussianTS": lambda n, s: PrePullGaussianTS.for_budget(2, rounds, eps, n_envs=n, seed=s),
        "DPTSUCB": lambda n, s: DPTSUCB.for_budget(2, rounds, eps, n_envs=n, seed=s),
    }
    make = makers[name]

    def build(env: Any, n_envs: int | None, seed: int) -> StreamPrivateAgent:
        return make(n_envs, seed)

    probe = make(None, 0)
    unit = "report" if isinstance(probe, LDPThompsonSampling) else "entry"
    if isinstance(probe, (PrePullGaussianTS, DPTSUCB)):  # their guarantee is for the T rounds they are sized for
        claim_eps, claim_delta = float(probe.epsilon), float(probe.delta)
    else:
        claim_eps, claim_delta = _claimed(make(None, 0))
    if view is None:
        view = "releases" if probe.release_increment(1) is not None else "arms"
    view = check_choice("view", view, VIEWS)
    notes = []
    if isinstance(probe, TreeDPUCB) and probe.per_arm_budget == "split":
        notes.append(
            f"per_arm_budget='split': the agent claims ε/K = {claim_eps:g} per entry (privacy_spent), "
            f"built with ε = {eps:g}; that claim is audited"
        )
    elif isinstance(probe, LDPThompsonSampling):
        notes.append(
            "the audit sees arm sequences only, post-processing of all reports: a weak bound on the report's ε"
        )
    sample: Callable[[Any, int, int, int], Any]
    events: EventFamily
    if view == "releases":
        sample = _stepped(build, True, "GraphBandit-v0", increments=release_increments(probe, rounds, name))
        events = ReleaseEvents(2)
        notes.append(RELEASES_NOTE)
    else:
        sample, events = _stepped(build, True, "GraphBandit-v0"), ArmSequenceEvents(2)
        notes.append("view: arms (the arm sequence only)")
    return Subject(
        name,
        claim_eps,
        claim_delta,
        unit,
        str(probe.privacy_unit),
        tuple(index_pairs(rounds, group, unit)),
        sample,
        events,
        _neighbours_line,
        "; ".join(notes),
    )


#: The stream-noise agents audited by :func:`stream_subject`, by built-in name.
STREAM_AGENTS = (
    "HybridDPUCB",
    "TreeDPUCB",
    "TreeDPUCB-parallel",
    "AdaPUCB",
    "AdaPUCB-cumulative",
    "DPThompsonSampling",
    "LDPThompsonSampling",
    "PrePullGaussianTS",
    "DPTSUCB",
)

#: Built-in subjects by name: ``builder(epsilon, horizon, group)``.
BUILTINS: dict[str, Callable[[float, int | None, int], Subject]] = {
    "GAP": lambda e, h, g: gap_subject(e, horizon=h, group=g),
    "GAPU": lambda e, h, g: gap_subject(e, horizon=h, group=g, uniform=True),
    "DPSE": lambda e, h, g: dpse_subject(e, horizon=h, group=g),
    "LDPWrapper": lambda e, h, g: ldp_wrapper_subject(e, horizon=h, group=g),
    "LDPLinUCB": lambda e, h, g: ldp_linucb_subject(e, horizon=h, group=g),
    "OverclaimedGAP": lambda e, h, g: gap_subject(e, horizon=h, group=g, factor=3.0),
    "NonPrivateUCB": lambda e, h, g: nonprivate_ucb_subject(e, horizon=h, group=g),
    "LaplaceCount": lambda e, h, g: laplace_count_subject(e),
}


def _stream_builder(name: str) -> Callable[[float, int | None, int], Subject]:
    def build(e: float, h: int | None, g: int) -> Subject:
        return stream_subject(name, e, horizon=h, group=g)

    return build


BUILTINS.update({name: _stream_builder(name) for name in STREAM_AGENTS})


def builtin_subject(
    name: str, epsilon: float = 1.0, *, horizon: int | None = None, group: int = 1, view: str | None = None
) -> Subject:
    """The built-in subject ``name`` (case-insensitive), or an agent class exported by :mod:`agents`.

    ``view`` (:data:`VIEWS`): what is observed of a stream agent (:func:`stream_subject`); every
    other subject observes arm sequences (or its own outputs) only, and takes ``None`` or ``"arms"``.

    Raises
    ------
    ValueError
        One sentence naming the allowed names for an unknown ``name``, or for a view the agent lacks.
    """
    if not isinstance(name, str):
        raise TypeError(f"agent must be a name, a factory or an Agent subclass, got {describe(name)}.")
    check_epsilon("epsilon", epsilon)
    check_int("group", group, minimum=1)
    if view is not None:
        check_choice("view", view, VIEWS)
    lookup = {key.lower(): key for key in BUILTINS}
    key = lookup.get(name.lower())
    if key in STREAM_AGENTS:
        return stream_subject(key, epsilon, horizon=horizon, group=group, view=view)
    if key is not None:
        if view == "releases":
            raise ValueError(f"view must be 'arms' for {key} (it does not describe its releases), got 'releases'.")
        return BUILTINS[key](epsilon, horizon, group)
    import agents  # an agent class exported by the package: audited generically

    exported = {n.lower(): n for n in getattr(agents, "__all__", ())}
    cls = getattr(agents, exported.get(name.lower(), ""), None)
    if isinstance(cls, type) and issubclass(cls, Agent) and not inspect.isabstract(cls):
        return agent_subject(cls, epsilon, horizon=horizon, group=group, name=cls.__name__, view=view)
    raise ValueError(
        f"agent must be one of {sorted(BUILTINS)}, an agent class of the agents package, or a label with "
        f"--agent module:Factory, got {describe(name, typed=False)}."
    )
