"""The built-in agents the scorecard plays on every problem they can play, and what each declares.

Each entry says what the agent can play (:data:`~agents.experiments.scorecard.suite.CAPABILITIES`),
how to build it for a problem (ε and horizon from the problem, ``n_envs`` copies), its fast path
(``"batch"``: one batched agent for all seeds; ``"simulate"``: the compiled single-run
``simulate`` of the elimination agents; ``"linear"``: the compiled ``run`` of the linear agents;
``"step"``: the step API), whether it plays the local-DP problems behind LDPWrapper as a built-in
(five representative ones do: the wrapper strips side observations, so the graph variants would
repeat their base agents), its non-private version (the privacy-cost line's denominator) and the
name :func:`agents.audit.audit` knows it by. Parameters are the agents' defaults unless stated.

A user agent declares its capabilities with a ``plays`` attribute on its factory or class (a
tuple of capability names; default ``("context-free",)``) and, if private, may name its
non-private version with ``non_private`` (a built-in name that plays the non-private problems its
private ones add noise to, :func:`check_non_private`; default ``UCB``, and ``LinUCB`` on movielens).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agents import (
    AAE,
    DPSE,
    DPTSUCB,
    GAP,
    KLUCB,
    MOSS,
    SMUCB,
    UCB,
    UCBN,
    AdaPUCB,
    AlphaSample,
    DPThompsonSampling,
    EpsilonGreedy,
    Exp3,
    Exp3IX,
    Exp3SET,
    FixedArm,
    HybridDPUCB,
    LDPLinUCB,
    LDPThompsonSampling,
    LinUCB,
    PrePullGaussianTS,
    Random,
    ThompsonSampling,
    TreeDPUCB,
)
from agents.experiments.scorecard.suite import CAPABILITIES, PROBLEMS, Problem
from bandit_envs.validation import summarize

#: (problem, n_arms, adjacency, horizon, n_envs, seed) → agent.
Builder = Callable[[Problem, int, Any, int, "int | None", int], Any]
#: The feature dimension of MovieLensRecommendation-v0's default construction (rank 20).
DIMENSION = 20


@dataclass(frozen=True)
class Entry:
    """A built-in agent of the card."""

    name: str
    plays: tuple[str, ...]
    build: Builder
    path: str = "batch"
    non_private: str | None = None
    audit: str | None = None
    #: Whether it plays the local-DP problems behind LDPWrapper as a built-in (a scored agent always does).
    ldp: bool = False


def _eps(p: Problem) -> float:
    if p.epsilon is None:  # pragma: no cover - the suite gives every private problem an ε
        raise ValueError(f"problem {p.name} has no ε")
    return p.epsilon


def _entries() -> tuple[Entry, ...]:
    cf = ("context-free",)
    return (
        Entry("Random", ("context-free", "budget"), lambda p, k, g, h, n, s: Random(k, n_envs=n, seed=s)),
        Entry("UCB", ("context-free", "budget"), lambda p, k, g, h, n, s: UCB(k, n_envs=n, seed=s), ldp=True),
        Entry("KLUCB", cf, lambda p, k, g, h, n, s: KLUCB(k, n_envs=n, seed=s), ldp=True),
        Entry("MOSS", cf, lambda p, k, g, h, n, s: MOSS(k, h, n_envs=n, seed=s)),
        Entry("TS", cf, lambda p, k, g, h, n, s: ThompsonSampling(k, n_envs=n, seed=s), ldp=True),
        Entry("EpsilonGreedy", cf, lambda p, k, g, h, n, s: EpsilonGreedy(k, n_envs=n, seed=s), ldp=True),
        Entry("Exp3", cf, lambda p, k, g, h, n, s: Exp3(k, h, n_envs=n, seed=s), ldp=True),
        Entry("UCBN", cf, lambda p, k, g, h, n, s: UCBN(k, n_envs=n, seed=s)),
        Entry("TS-N", cf, lambda p, k, g, h, n, s: ThompsonSampling(k, side_observations=True, n_envs=n, seed=s)),
        Entry("Exp3IX", cf, lambda p, k, g, h, n, s: Exp3IX(k, g, n_envs=n, seed=s)),
        Entry("Exp3SET", cf, lambda p, k, g, h, n, s: Exp3SET(k, g, h, n_envs=n, seed=s)),
        Entry("AAE", cf, lambda p, k, g, h, n, s: AAE(k, h, n_envs=n, seed=s), path="simulate"),
        Entry("AlphaSample", cf, lambda p, k, g, h, n, s: AlphaSample(k, h, n_envs=n, seed=s), path="simulate"),
        Entry("HybridDPUCB", ("context-free", "private"),
              lambda p, k, g, h, n, s: HybridDPUCB(k, _eps(p), n_envs=n, seed=s), non_private="UCB",
              audit="HybridDPUCB"),
        Entry("TreeDPUCB", ("context-free", "private"),
              lambda p, k, g, h, n, s: TreeDPUCB(k, h, _eps(p), n_envs=n, seed=s), non_private="UCB",
              audit="TreeDPUCB"),
        Entry("AdaPUCB", ("context-free", "private"),
              lambda p, k, g, h, n, s: AdaPUCB(k, _eps(p), n_envs=n, seed=s), non_private="UCB", audit="AdaPUCB"),
        Entry("DPTS", ("context-free", "private"),
              lambda p, k, g, h, n, s: DPThompsonSampling(k, _eps(p), n_envs=n, seed=s), non_private="TS",
              audit="DPThompsonSampling"),
        Entry("HybridDPUCB-paper", ("context-free", "private"),
              lambda p, k, g, h, n, s: HybridDPUCB(k, _eps(p), bound="paper", n_envs=n, seed=s), non_private="UCB"),
        Entry("PrePullGTS", ("context-free", "private"),
              lambda p, k, g, h, n, s: PrePullGaussianTS.for_budget(k, h, _eps(p), n_envs=n, seed=s),
              non_private="TS", audit="PrePullGaussianTS"),
        Entry("DPTSUCB", ("context-free", "private"),
              lambda p, k, g, h, n, s: DPTSUCB.for_budget(k, h, _eps(p), n_envs=n, seed=s), non_private="TS",
              audit="DPTSUCB"),
        Entry("DPSE", ("context-free", "private"), lambda p, k, g, h, n, s: DPSE(k, h, _eps(p), n_envs=n, seed=s),
              path="simulate", non_private="UCB", audit="DPSE"),
        Entry("GAP", ("context-free", "private"),
              lambda p, k, g, h, n, s: GAP(k, h, _eps(p), g, n_envs=n, seed=s), path="simulate",
              non_private="AlphaSample", audit="GAP"),
        Entry("LDPTS", ("context-free", "local"),
              lambda p, k, g, h, n, s: LDPThompsonSampling(k, _eps(p), n_envs=n, seed=s), non_private="TS",
              audit="LDPThompsonSampling"),
        Entry("LinUCB", ("contextual",), lambda p, k, g, h, n, s: LinUCB(DIMENSION, n_envs=n, seed=s), path="linear"),
        Entry("LDPLinUCB", ("contextual", "local"),
              lambda p, k, g, h, n, s: LDPLinUCB(DIMENSION, _eps(p), horizon=h, n_envs=n, seed=s), path="linear",
              non_private="LinUCB", audit="LDPLinUCB"),
        Entry("SM-UCB", ("budget",), lambda p, k, g, h, n, s: SMUCB(k, n_envs=n, seed=s)),
        Entry("FixHalf", ("budget",), lambda p, k, g, h, n, s: FixedArm.fix_half(k, n_envs=n, seed=s)),
    )  # fmt: skip


#: Every built-in agent of the card, by name.
PANEL: dict[str, Entry] = {e.name: e for e in _entries()}
#: The reference of the speed line: batched UCB, measured in the same run.
SPEED_REFERENCE = "UCB"


def check_plays(plays: Any, who: str) -> tuple[str, ...]:
    """The capabilities ``plays`` declares, checked; ValueError (one sentence) if not allowed."""
    if isinstance(plays, str):
        plays = (plays,)
    try:
        out = tuple(plays)
    except TypeError:
        out = (plays,)
    bad = [p for p in out if p not in CAPABILITIES]
    if bad or not out:
        raise ValueError(
            f"{who}'s plays must name capabilities among {', '.join(CAPABILITIES)}, got {summarize(plays)}."
        )
    if not any(eligible(out, p) for p in PROBLEMS):  # e.g. ("private",): a card of n/a only
        raise ValueError(
            f"{who}'s plays {summarize(plays)} plays no problem of the suite: 'private' and 'local' only qualify "
            "'context-free' (and 'local' also 'contextual'), e.g. plays = ('context-free', 'private')."
        )
    return out


def check_non_private(ref: Any, plays: Sequence[str], who: str) -> str | None:
    """A user agent's declared ``non_private`` (None if it declares none), checked; ValueError (one sentence) if not.

    It must name a built-in agent that plays a base problem of a private problem the agent plays
    (the privacy-cost line divides by its score there), e.g. ``"TS"`` for a central-DP
    context-free agent; an agent that plays no private problem may name any built-in.
    """
    if ref is None:
        return None
    if not isinstance(ref, str) or ref not in PANEL:
        raise ValueError(f"{who}'s non_private must name a built-in agent ({', '.join(PANEL)}), got {summarize(ref)}.")
    by_name = {p.name: p for p in PROBLEMS}
    bases = {p.base: by_name[p.base] for p in PROBLEMS if p.base is not None and eligible(plays, p)}
    if bases and not any(eligible(PANEL[ref].plays, b) for b in bases.values()):
        raise ValueError(
            f"{who}'s non_private must name a built-in agent that plays the non-private problems its private ones "
            f"add noise to ({', '.join(bases)}), got {ref!r}, which plays none of them."
        )
    return ref


def eligible(plays: Sequence[str], problem: Problem) -> bool:
    """Whether an agent declaring ``plays`` can play ``problem`` (its kind; docs/score.md)."""
    has = set(plays)
    private = bool(has & {"private", "local"})
    cf = "context-free" in has
    kind = problem.kind
    if kind in ("stochastic", "graph", "adversarial"):
        return cf and not private
    if kind == "central":
        return cf and "private" in has
    if kind == "local":
        return cf and ("local" in has or not private)
    if kind == "contextual":
        return "contextual" in has and not private
    if kind == "contextual-local":
        return "contextual" in has and "local" in has
    if kind == "budget":
        return "budget" in has
    return False  # pragma: no cover - every kind is listed


def wrapped(plays: Sequence[str], problem: Problem) -> bool:
    """Whether the agent plays ``problem`` through :class:`agents.LDPWrapper` (non-private, on a local problem)."""
    return problem.kind == "local" and "local" not in plays
