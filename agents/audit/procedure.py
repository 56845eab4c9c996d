r"""The audit itself: selection runs choose the event, estimation runs bound its privacy loss.

Procedure (a black-box statistical test in the manner of Ding et al., "Detecting violations of
differential privacy", CCS 2018, and of the auditing bound of Jagielski, Ullman & Oprea, NeurIPS
2020; Lu et al., NeurIPS 2022, frame such audits generally):

1. *Selection.* Half of the runs per input (split equally among the subject's candidate
   neighbouring pairs) are played on D and on D′ with fresh noise. Every candidate event of the
   subject's event family is counted, and the (pair, event, negation, direction) whose
   Clopper–Pearson lower bound would be largest on the estimation runs, were their frequencies
   the selection runs', is chosen (:func:`agents.audit.events.choose`).
2. *Estimation.* The other half are fresh runs on the chosen pair only. The chosen event is now
   fixed independently of them, so the interval of :func:`agents.audit.bounds.loss_interval` on
   their counts holds with probability ≥ 95%, and its lower end is a valid lower bound on ε:
   P(E|D) ≤ e^ε P(E|D′) + δ fails for any ε below it (at ≥ 97.5% confidence).
3. *Verdict.* ``violation`` if that bound exceeds the claimed ε; ``inconclusive`` if the audit
   could not have found any violation (:func:`power`); else ``no violation found``.

What the verdict cannot say: a mechanism that passes may still violate its claim on pairs or
events the audit did not try, or by too little for the runs to resolve; only ``violation`` is a
proof (of a false claim, with the stated confidence).
"""

from __future__ import annotations

import dataclasses
import math

from agents.audit.bounds import ALPHA, ceiling, detectable_probability, loss_interval, runs_needed
from agents.audit.events import Candidates, ReleaseEvents, choose
from agents.audit.result import INCONCLUSIVE, NO_VIOLATION, VIOLATION, AuditResult, Power
from agents.audit.runner import run_seeds
from agents.audit.subjects import Subject
from agents.base import check_int
from bandit_envs.validation import check_memory

__all__ = ["DEFAULT_RUNS", "MIN_RUNS", "check_size", "power", "run_audit"]

#: Runs per input when none is given (half choose the event, half bound it).
DEFAULT_RUNS = 10_000
#: Fewest runs per input accepted: below, Clopper–Pearson bounds on 100 runs are too wide to bound anything.
MIN_RUNS = 200


def _seed(seed: int, phase: int, pair: int, which: int) -> int:
    return run_seeds(seed, 1, phase, pair, which)[0]


def power(epsilon: float, delta: float, n: int, varied: bool, p_best: float, alpha: float = ALPHA) -> Power:
    """Whether an audit with ``n`` estimation runs per input could have detected a violation of ε.

    Parameters
    ----------
    epsilon, delta
        The claim.
    n
        Estimation runs per input.
    varied
        Whether any candidate event's frequency differed between D and D′ or lay strictly
        between 0 and 1 in the selection runs (if not, every run gave the same output).
    p_best
        The best event's frequency (on the input it is more frequent on), for the statement.
    alpha
        1 − confidence of the audit's interval.
    """
    top = ceiling(n, delta, alpha)
    alternative = 2.0 * epsilon
    if not varied:
        return Power(
            False,
            top,
            alternative,
            None,
            "none: every run on D and on D′ gave the same output, so nothing the agent output depended on its "
            "noise or on the changed data; make the agent release something that does (e.g. a longer horizon).",
        )
    if top <= epsilon:
        need = runs_needed(epsilon, delta, alpha)
        more = "" if need is None else f"; showing any violation needs ≥ {need} (--runs {2 * need})"
        return Power(
            False,
            top,
            alternative,
            None,
            f"none: with {n} estimation runs per input no event can bound ε above {top:.3f} ≤ claimed "
            f"{epsilon:g}{more}.",
        )
    least = detectable_probability(epsilon, alternative, n, delta, alpha)
    if least is None:
        text = (
            f"weak: even an event of probability 1 whose loss were 2× the claim ({alternative:.3g}) would be flagged "
            f"with probability < 1/2; only losses up to {top:.3f} can be shown with {n} runs per input."
        )
    else:
        fits = "" if p_best >= least else " (the best event here was rarer)"
        text = (
            f"an event with loss 2× the claim ({alternative:.3g}) is flagged with probability ≥ 1/2 if it has "
            f"probability ≥ {least:.3g} under D{fits}; no event can show more than {top:.3f} with {n} runs per input."
        )
    return Power(True, top, alternative, least, text)


def check_size(subject: Subject, runs: int) -> None:
    """Refuse ``runs`` whose outputs would exceed the memory limit.

    Arm sequences: 2 bytes per run, round and input, twice; with the releases
    (:class:`~agents.audit.events.ReleaseEvents`) 8 more for each release and 24 for the privacy loss's
    work arrays.
    """
    rounds = max((int(getattr(pair, "horizon", 1)) for pair in subject.pairs), default=1)
    per_round = 34.0 if isinstance(subject.events, ReleaseEvents) else 2.0
    check_memory(
        f"runs={runs} with a horizon of {rounds} rounds (the runs' outputs)",
        4.0 * runs * rounds * per_round,
        "use fewer runs or a shorter horizon",
    )


def run_audit(subject: Subject, runs: int = DEFAULT_RUNS, seed: int = 0, alpha: float = ALPHA) -> AuditResult:
    """Audit ``subject``'s claim with ``runs`` runs per input (half selection, half estimation).

    Parameters
    ----------
    subject
        What to audit (:mod:`agents.audit.subjects`).
    runs
        Runs per input (≥ :data:`MIN_RUNS`): the first half is spread over the candidate pairs to
        choose the event, the second half bounds it.
    seed
        Seed of every run's noise (the result is a pure function of it).
    alpha
        1 − confidence of the interval (0.05: a 95% interval).

    Returns
    -------
    AuditResult

    Raises
    ------
    ValueError
        One sentence for runs below :data:`MIN_RUNS`, a bad seed, or outputs above the memory limit.
    """
    runs = check_int("runs", runs, minimum=MIN_RUNS)
    seed = check_int("seed", seed, minimum=0)
    check_size(subject, runs)
    n_pairs = len(subject.pairs)
    n_est = runs - runs // 2
    n_sel = max(1, (runs // 2) // n_pairs)
    blocks: list[tuple[int, Candidates]] = []
    for p, pair in enumerate(subject.pairs):
        first = subject.sample(pair, 0, n_sel, _seed(seed, 0, p, 0))
        second = subject.sample(pair, 1, n_sel, _seed(seed, 0, p, 1))
        blocks.extend((p, block) for block in subject.events.candidates(first, second))
    choice = choose(blocks, n_sel, n_sel, subject.delta, alpha, n_est)
    pair = subject.pairs[choice.pair]
    k_first = choice.event.count(subject.sample(pair, 0, n_est, _seed(seed, 1, choice.pair, 0)))
    k_second = choice.event.count(subject.sample(pair, 1, n_est, _seed(seed, 1, choice.pair, 1)))
    if choice.swap:
        interval = loss_interval(k_second, n_est, k_first, n_est, subject.delta, alpha)
    else:
        interval = loss_interval(k_first, n_est, k_second, n_est, subject.delta, alpha)
    p_top = interval.p_first
    strength = power(subject.epsilon, subject.delta, n_est, choice.varied, p_top, alpha)
    if subject.scope:
        strength = dataclasses.replace(strength, text=f"{strength.text} {subject.scope}")
    if interval.low > subject.epsilon:
        verdict = VIOLATION
    elif not strength.has_power:
        verdict = INCONCLUSIVE
    else:
        verdict = NO_VIOLATION
    return AuditResult(
        agent=subject.name,
        unit=subject.unit,
        unit_text=subject.unit_text,
        epsilon=subject.epsilon,
        delta=subject.delta,
        epsilon_lower=max(0.0, interval.low) if not math.isnan(interval.low) else 0.0,
        interval=(interval.low, interval.high),
        estimate=interval.estimate,
        event=choice.event.description,
        direction="D′ over D" if choice.swap else "D over D′",
        p_first=k_first / n_est,
        p_second=k_second / n_est,
        neighbours=subject.describe_pair(pair),
        runs=runs,
        selection_runs=n_sel,
        estimation_runs=n_est,
        power=strength,
        verdict=verdict,
        seed=seed,
        note=subject.note,
    )
