"""Events over a mechanism's outputs, and the choice of the event that shows the most privacy loss.

An audit can only bound ε through events E it counts on both neighbouring inputs (the module
docstring of :mod:`agents.audit.bounds`). The event families here turn many runs' outputs into
many candidate events at once: for a bandit agent its arm sequence (the arm played at each round,
how often each arm was pulled, the last round each arm was pulled, i.e. when it was eliminated,
and whole sequences seen often), for a real-valued mechanism threshold events {y ≥ c}, and for an
agent observed through its releases (:class:`ReleaseRuns`) also threshold events on the privacy
loss of those releases (:func:`release_loss`). Every
candidate is also taken negated and in both directions (D over D′ and D′ over D).

Validity. :func:`choose` picks the event on the *selection* runs only; the bound is then computed
on fresh *estimation* runs, on which the chosen event is a fixed event, so the Clopper–Pearson
bound keeps its coverage however many candidates were searched (as Ding et al., CCS 2018, run the
event selection and the hypothesis test of their detector on separate runs). Thresholds and
sequences are read from the selection runs, never from the estimation runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from scipy import special

from agents.audit.bounds import ALPHA, loss_lower
from bandit_envs._types import BoolArray, FloatArray, IntArray

__all__ = [
    "ArmSequenceEvents",
    "Candidates",
    "Choice",
    "Event",
    "EventFamily",
    "ReleaseEvents",
    "ReleaseRuns",
    "ThresholdEvents",
    "choose",
    "release_loss",
]


#: Most thresholds per real-valued feature (quantiles of the selection runs).
MAX_THRESHOLDS = 64
#: Most whole sequences taken as events (the most frequent in the selection runs).
MAX_SEQUENCES = 32
#: One-sided level of the cautious frequencies :func:`choose` scores with (two standard deviations).
CAUTION = float(special.ndtr(-2.0))  # the normal upper tail at 2, scipy.stats.norm.sf(2.0)


@dataclass(frozen=True)
class Event:
    """A set of outputs: a description and the test of each run's output (outputs → bool per run)."""

    description: str
    test: Callable[[Any], BoolArray]

    def negated(self) -> Event:
        """The complement."""
        test = self.test
        return Event(f"not ({self.description})", lambda outputs: ~test(outputs))

    def count(self, outputs: Any) -> int:
        """In how many runs the event occurred."""
        return int(np.count_nonzero(self.test(outputs)))


@dataclass(frozen=True)
class Candidates:
    """Candidate events with their counts on the selection runs of D (``first``) and D′ (``second``)."""

    first: IntArray
    second: IntArray
    event: Callable[[int], Event]


class EventFamily(Protocol):
    """Builds candidate events from the selection runs' outputs on D and D′."""

    def candidates(self, first: Any, second: Any) -> list[Candidates]:
        """Candidate blocks, with their counts on ``first`` (runs on D) and ``second`` (runs on D′)."""
        ...


@dataclass(frozen=True)
class Choice:
    """The chosen event, its direction and its score on the selection runs."""

    event: Event
    swap: bool  # True: the loss is ln(P(E|D′)/P(E|D)) (D′ over D)
    score: float  # lower bound on the selection runs
    pair: int  # index of the neighbouring pair it was found on
    varied: bool  # some candidate's counts differed between D and D′ or were strictly between 0 and n


def _thresholds(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """At most :data:`MAX_THRESHOLDS` thresholds c for events {value ≥ c}: quantiles of the pooled values."""
    unique = np.unique(values)
    if unique.size <= 1:
        return unique[:0]
    unique = unique[1:]  # {value ≥ min} is every run
    if unique.size > MAX_THRESHOLDS:
        picks = np.unique(np.linspace(0, unique.size - 1, MAX_THRESHOLDS).round().astype(np.int64))
        unique = unique[picks]
    return unique


def _count_at_least(values: npt.NDArray[Any], thresholds: npt.NDArray[Any]) -> IntArray:
    """For each threshold c, how many values are ≥ c."""
    ordered = np.sort(values)
    return (values.shape[0] - np.searchsorted(ordered, thresholds, side="left")).astype(np.int64)


def _feature_block(
    first: npt.NDArray[Any], second: npt.NDArray[Any], describe: Callable[[Any], str], feature: Callable[[Any], Any]
) -> Candidates | None:
    """Threshold events {feature ≥ c} for one real feature (values of the selection runs given)."""
    thresholds = _thresholds(np.concatenate([first, second]))
    if thresholds.size == 0:
        return None

    def make(i: int) -> Event:
        c = thresholds[i]
        return Event(describe(c), lambda outputs: feature(outputs) >= c)

    return Candidates(_count_at_least(first, thresholds), _count_at_least(second, thresholds), make)


class ThresholdEvents:
    """Events {y_j ≥ c} for real outputs y of shape (n,) or (n, m) (the Laplace mechanism's, say).

    Thresholds are quantiles of the selection runs' values (both inputs pooled), at most 64 per
    column; with negation and both directions, {y < c} and the reverse ratio are covered too.
    """

    def __init__(self, name: str = "output") -> None:
        self.name = name

    def candidates(self, first: Any, second: Any) -> list[Candidates]:
        """One block of threshold events per column."""
        a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
        one = a.ndim == 1
        a2, b2 = (a[:, None], b[:, None]) if one else (a, b)
        blocks = []
        for j in range(a2.shape[1]):
            label = self.name if one else f"{self.name}[{j}]"

            def column(outputs: Any, j: int = j) -> Any:
                arr = np.asarray(outputs, dtype=np.float64)
                return arr if arr.ndim == 1 else arr[:, j]

            block = _feature_block(a2[:, j], b2[:, j], partial(_at_least, label), column)
            if block is not None:
                blocks.append(block)
        return blocks


#: Runs per block when comparing arm sequences (bounds the boolean temporaries to ROW_BLOCK × T).
ROW_BLOCK = 512


def _last_pull(actions: npt.NDArray[Any], arm: int) -> IntArray:
    """Per run, the last round at which ``arm`` was played (−1 if never): its elimination time."""
    out = np.empty(actions.shape[0], dtype=np.int64)
    rounds = actions.shape[1]
    for start in range(0, actions.shape[0], ROW_BLOCK):
        hit = actions[start : start + ROW_BLOCK] == arm
        last = rounds - 1 - np.argmax(hit[:, ::-1], axis=1)
        out[start : start + ROW_BLOCK] = np.where(hit.any(axis=1), last, -1)
    return out


def _pulls(actions: npt.NDArray[Any], arm: int) -> IntArray:
    """Per run, how often ``arm`` was played."""
    out = np.empty(actions.shape[0], dtype=np.int64)
    for start in range(0, actions.shape[0], ROW_BLOCK):
        out[start : start + ROW_BLOCK] = np.count_nonzero(actions[start : start + ROW_BLOCK] == arm, axis=1)
    return out


def _played(actions: npt.NDArray[Any], arm: int) -> IntArray:
    """Per round, in how many runs ``arm`` was played."""
    out = np.zeros(actions.shape[1], dtype=np.int64)
    for start in range(0, actions.shape[0], ROW_BLOCK):
        out += np.count_nonzero(actions[start : start + ROW_BLOCK] == arm, axis=0)
    return out


def _pulls_of(arm: int, outputs: Any) -> IntArray:
    return _pulls(np.asarray(outputs), arm)


def _last_of(arm: int, outputs: Any) -> IntArray:
    return _last_pull(np.asarray(outputs), arm)


def _at_least(label: str, c: Any) -> str:
    return f"{label} ≥ {c:.6g}"


def _pulls_text(arm: int, c: Any) -> str:
    return f"arm {arm} pulled ≥ {int(c)} times"


def _last_text(arm: int, c: Any) -> str:
    return f"arm {arm} last played at round ≥ {int(c)}"


def run_lengths(sequence: npt.NDArray[Any], limit: int = 6) -> str:
    """A sequence of arms as runs, e.g. ``0×1283, 1×2`` (at most ``limit`` runs, then ``…``)."""
    seq = np.asarray(sequence)
    if seq.size == 0:
        return "(empty)"
    starts = np.flatnonzero(np.diff(seq) != 0) + 1
    bounds = np.concatenate([[0], starts, [seq.size]])
    parts = [f"{int(seq[s])}×{int(e - s)}" for s, e in zip(bounds[:-1], bounds[1:], strict=True)]
    return ", ".join(parts[:limit]) + (", …" if len(parts) > limit else "")


class ArmSequenceEvents:
    """Events over arm sequences, outputs of shape (n runs, T rounds) holding arm indices.

    * the arm played at round t, for every round t and arm k: {a_t = k};
    * pull counts: {N_k ≥ c}, N_k the number of pulls of arm k;
    * elimination times: {last_k ≥ c}, last_k the last round arm k was played (−1 if never);
    * whole sequences: {a_{0..T−1} = s} for the 32 sequences seen most often in the selection runs.

    Parameters
    ----------
    n_arms
        K; arms are 0..K−1.
    """

    def __init__(self, n_arms: int) -> None:
        self.n_arms = n_arms

    def candidates(self, first: Any, second: Any) -> list[Candidates]:
        """The four families above, counted on the selection runs."""
        a, b = np.asarray(first), np.asarray(second)
        rounds = a.shape[1]
        arms = range(1, self.n_arms) if self.n_arms == 2 else range(self.n_arms)  # with 2 arms, a_t = 0 is a negation
        blocks: list[Candidates] = []
        arm_list = list(arms)
        if rounds:
            counts_a = np.stack([_played(a, k) for k in arm_list])
            counts_b = np.stack([_played(b, k) for k in arm_list])

            def played(i: int) -> Event:
                k, t = arm_list[i // rounds], i % rounds
                return Event(f"arm {k} played at round {t}", lambda outputs: np.asarray(outputs)[:, t] == k)

            blocks.append(Candidates(counts_a.ravel(), counts_b.ravel(), played))
        for k in range(self.n_arms):
            block = _feature_block(_pulls(a, k), _pulls(b, k), partial(_pulls_text, k), partial(_pulls_of, k))
            if block is not None:
                blocks.append(block)
            block = _feature_block(_last_pull(a, k), _last_pull(b, k), partial(_last_text, k), partial(_last_of, k))
            if block is not None:
                blocks.append(block)
        blocks.append(self._sequences(a, b))
        return blocks

    @staticmethod
    def _sequences(a: npt.NDArray[Any], b: npt.NDArray[Any]) -> Candidates:
        keys_a = [row.tobytes() for row in np.ascontiguousarray(a)]
        keys_b = [row.tobytes() for row in np.ascontiguousarray(b)]
        count_a, count_b = Counter(keys_a), Counter(keys_b)
        top = [key for key, _ in (count_a + count_b).most_common(MAX_SEQUENCES)]
        rows: dict[bytes, npt.NDArray[Any]] = {}
        for key, row in zip(keys_a + keys_b, list(a) + list(b), strict=True):
            if key in top and key not in rows:
                rows[key] = row.copy()

        def make(i: int) -> Event:
            seq = rows[top[i]]
            return Event(
                f"arm sequence = {run_lengths(seq)}",
                lambda outputs: np.all(np.asarray(outputs) == seq[None, :], axis=1),
            )

        first = np.array([count_a[key] for key in top], dtype=np.int64)
        second = np.array([count_b[key] for key in top], dtype=np.int64)
        return Candidates(first, second, make)


@dataclass(frozen=True)
class ReleaseRuns:
    """Runs of an agent observed through its private releases, with the neighbouring pair they were played on.

    Attributes
    ----------
    actions
        (n, T) the arm played at each round.
    values
        (n, T) the release of the arm played at round t after that round's update (a noisy
        reward sum, :attr:`agents.central_dp.base.StreamPrivateAgent.released_sums`).
    first, second
        (T, K) the reward tables D and D′ of the pair (the same for the runs on either).
    increments
        (m, b) of :meth:`agents.central_dp.base.StreamPrivateAgent.release_increment` for an arm's
        releases n = 1, 2, ..., T.
    """

    actions: npt.NDArray[Any]
    values: FloatArray
    first: FloatArray
    second: FloatArray
    increments: tuple[tuple[int, float], ...]


def release_loss(runs: ReleaseRuns) -> FloatArray:
    r"""Per run, the privacy loss ln(p(output | D) / p(output | D′)) of its arms and releases.

    For agents whose releases have independent Laplace increments
    (:meth:`agents.central_dp.base.StreamPrivateAgent.release_increment`: arm k's release after its
    n-th pull is R_k(n) = R_k(m) + Σ_{j=m+1}^{n} r_{t_j,k} + Laplace(b), t_j the round of its j-th
    pull) and choose their arms from the releases alone, the output's density factorises over
    the releases, and the log ratio is

    .. math:: \Lambda = \sum_k \sum_{n \le N_k} \frac{|I_{k,n} - \mu'_{k,n}| - |I_{k,n} - \mu_{k,n}|}{b_n},

    with I_{k,n} = R_k(n) − R_k(m) and μ, μ′ the exact reward sums of those pulls on D and D′
    (read from the tables at the rounds the run pulled arm k). Only the increments that contain a
    changed entry contribute. {Λ ≥ c} is the likelihood-ratio (Neyman–Pearson) event, the most
    powerful of its size; it is a fixed function of the output for the pair, so its bound is valid
    whatever the agent really does (a wrong ``increments`` only costs power). For an ε-DP agent
    Λ ≤ ε on one changed entry (the classical privacy-loss variable, Dwork & Roth, "The
    Algorithmic Foundations of Differential Privacy", 2014, §3.5).
    """
    actions = np.asarray(runs.actions)
    values = np.asarray(runs.values, dtype=np.float64)
    n, rounds = actions.shape
    loss = np.zeros(n)
    for k in range(runs.first.shape[1]):
        pulled = actions == k
        number = np.cumsum(pulled, axis=1)  # the pull number of arm k at each of its rounds
        most = min(int(number[:, -1].max()) if rounds else 0, len(runs.increments))
        if most == 0:
            continue
        rows, cols = np.nonzero(pulled & (number <= most))
        at = number[rows, cols]
        release = np.zeros((n, most + 1))
        exact = np.zeros((n, most + 1))
        exact_other = np.zeros((n, most + 1))
        release[rows, at] = values[rows, cols]
        exact[rows, at] = runs.first[cols, k]
        exact_other[rows, at] = runs.second[cols, k]
        exact = np.cumsum(exact, axis=1)
        exact_other = np.cumsum(exact_other, axis=1)
        pulls = number[:, -1]
        for j in range(1, most + 1):
            m, b = runs.increments[j - 1]
            mu = exact[:, j] - exact[:, m]
            mu_other = exact_other[:, j] - exact_other[:, m]
            changed = (pulls >= j) & (mu != mu_other)
            if not changed.any():
                continue
            step = release[:, j] - release[:, m]
            loss += np.where(changed, (np.abs(step - mu_other) - np.abs(step - mu)) / b, 0.0)
    return loss


def _loss_text(c: Any) -> str:
    return f"privacy loss of the releases ln(p(output|D)/p(output|D′)) ≥ {c:.6g}"


def _release_loss_of(outputs: Any) -> FloatArray:
    return release_loss(outputs)


def _on_actions(event: Event) -> Event:
    test = event.test
    return Event(event.description, lambda outputs: test(outputs.actions))


def _wrapped(make: Callable[[int], Event], i: int) -> Event:
    return _on_actions(make(i))


class ReleaseEvents:
    """Events over :class:`ReleaseRuns`: every event of :class:`ArmSequenceEvents`, and {Λ ≥ c}.

    Λ is :func:`release_loss`, thresholds the quantiles of the selection runs (both inputs
    pooled), as for :class:`ThresholdEvents`. The arm-sequence events are post-processing of
    the releases, so this family sees at least what :class:`ArmSequenceEvents` sees.
    """

    def __init__(self, n_arms: int) -> None:
        self.arms = ArmSequenceEvents(n_arms)

    def candidates(self, first: Any, second: Any) -> list[Candidates]:
        """The arm-sequence candidates on the runs' actions, then the thresholds on their releases' privacy loss."""
        blocks = [
            Candidates(block.first, block.second, partial(_wrapped, block.event))
            for block in self.arms.candidates(first.actions, second.actions)
        ]
        loss = _feature_block(release_loss(first), release_loss(second), _loss_text, _release_loss_of)
        if loss is not None:
            blocks.append(loss)
        return blocks


def _jeffreys(counts: IntArray, n: int) -> tuple[FloatArray, FloatArray]:
    """Lower and upper two-σ (:data:`CAUTION`) Jeffreys limits of a frequency seen k times in n runs."""
    k = np.asarray(counts, dtype=np.float64)
    from scipy import stats  # imported when used: scipy.stats takes a large part of a second to import

    low = np.where(k > 0, stats.beta.ppf(CAUTION, k + 0.5, n - k + 0.5), 0.0)
    high = np.where(k < n, stats.beta.isf(CAUTION, k + 0.5, n - k + 0.5), 1.0)
    return low, high


def choose(
    blocks: Sequence[tuple[int, Candidates]],
    n_first: int,
    n_second: int,
    delta: float,
    alpha: float = ALPHA,
    n_target: int | None = None,
) -> Choice:
    """The (event, negation, direction) whose bound on the estimation runs is predicted largest.

    Every candidate is scored four ways: E and not-E, each as ln((P(·|D) − δ)/P(·|D′)) and as the
    reverse. The score is the lower bound :func:`agents.audit.bounds.loss_lower` would give on
    ``n_target`` estimation runs if the frequencies there were the selection runs', taken
    cautiously: the numerator's at the lower and the denominator's at the upper two-σ Jeffreys
    limit (:data:`CAUTION`), so that a rare event whose ratio rests on a few selection runs does
    not win on noise over a frequent one (which made the chosen event, and the verdict, depend on
    the seed); ties go to the larger smoothed point estimate ((k + ½)/(n + 1)), then to the first
    candidate. Events every selection run agrees on (on
    both inputs) are not chosen unless all are. Only the selection runs are looked at.

    Parameters
    ----------
    blocks
        (index of the neighbouring pair, candidates counted on its selection runs).
    n_first, n_second
        Selection runs per input.
    delta
        The claimed δ.
    alpha
        1 − confidence of the bound.
    n_target
        Estimation runs per input (default ``n_first``).
    """
    if not blocks:
        raise ValueError("blocks must hold at least one block of candidate events, got none.")
    target = n_first if n_target is None else n_target
    k1 = np.concatenate([c.first for _, c in blocks])
    k2 = np.concatenate([c.second for _, c in blocks])
    varied = bool(np.any(k1 * n_second != k2 * n_first) or np.any((k1 > 0) & (k1 < n_first)))
    varied |= bool(np.any((k2 > 0) & (k2 < n_second)))
    p1 = (k1 + 0.5) / (n_first + 1.0)
    p2 = (k2 + 0.5) / (n_second + 1.0)
    # Four ways: (E, D over D′), (E, D′ over D), (not E, D over D′), (not E, D′ over D).
    ways = [(p1, p2), (p2, p1), (1.0 - p1, 1.0 - p2), (1.0 - p2, 1.0 - p1)]
    # Scored on cautious frequencies (the numerator's at its lower, the denominator's at its upper
    # two-σ Jeffreys limit), so that a rare event whose ratio rests on a handful of selection runs
    # is not preferred, on noise, to a frequent one whose ratio is known.
    low1, high1 = _jeffreys(k1, n_first)
    low2, high2 = _jeffreys(k2, n_second)
    cautious = [(low1, high2), (low2, high1), (1.0 - high1, 1.0 - low2), (1.0 - high2, 1.0 - low1)]
    scores = np.concatenate([loss_lower(pa * target, target, pb * target, target, delta, alpha) for pa, pb in cautious])
    # An event every selection run agrees on (never, or always, on both inputs) cannot show a loss.
    constant = np.tile(((k1 == 0) & (k2 == 0)) | ((k1 == n_first) & (k2 == n_second)), 4)
    if not constant.all():
        scores = np.where(constant, -np.inf, scores)
    with np.errstate(divide="ignore", invalid="ignore"):
        smooth = np.concatenate([np.log(np.maximum(pa - delta, 1e-300)) - np.log(pb) for pa, pb in ways])
    # Equal up to rounding (equivalent events, e.g. {a_4 = 1} and not {N_0 ≥ 6}): the first candidate wins.
    best = int(np.lexsort((-np.arange(scores.size), np.round(smooth, 9), np.round(scores, 9)))[-1])
    way, index = divmod(best, k1.size)
    offsets = np.cumsum([0] + [c.first.size for _, c in blocks])
    block = int(np.searchsorted(offsets, index, side="right")) - 1
    pair, candidates = blocks[block]
    event = candidates.event(index - int(offsets[block]))
    if way >= 2:
        event = event.negated()
    return Choice(event, way % 2 == 1, float(scores[best]), pair, varied)
