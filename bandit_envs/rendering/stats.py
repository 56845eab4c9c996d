"""What an episode has shown so far, per copy: the statistics a frame is drawn from.

Kept only by an env whose ``render_mode`` is not None (its :class:`~bandit_envs.rendering.Renderer`
owns one :class:`EpisodeStats`); an env without rendering keeps none of this. Updated from what
``step`` returns (the action, the reward and the step info), so the statistics are exactly those a
learner could compute: per arm the pulls, the observations and the sum of observed rewards (its
empirical mean), and the cumulative regret (the sum of ``info["regret"]``).

An observation is a reward the learner saw. On a feedback graph (the gap paper, §2.1) pulling arm
``a`` shows the rewards of its closed neighbourhood N(a) (``info["observed_mask"]``,
``info["observed_rewards"]``); every other env of the suite shows the pulled arm's reward only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bandit_envs._types import BoolArray, FloatArray, IntArray

#: Most points of a copy's regret curve held at once: when full, every other point is dropped and
#: the spacing doubles, so a curve of any length takes at most 8 KiB per copy.
CURVE_POINTS = 1024


def _kept(value: Any) -> Any:
    """``value`` as kept for a frame: a Python scalar, or a copy of an array."""
    if isinstance(value, np.ndarray):
        return value.item() if value.ndim == 0 else value.copy()
    if isinstance(value, np.generic):
        return value.item()
    return value


class EpisodeStats:
    """Per copy of an env (one for a single env): the current episode's statistics.

    Parameters
    ----------
    num_envs : int
        Number of copies (1 for a single env).
    n_arms : int
        Number of arms K.
    info_keys : sequence of str
        Step-info entries kept from each copy's last step (for the frame's detail line).
    curve_points : int
        Most points of the regret curve held per copy (:data:`CURVE_POINTS`); even, >= 2.

    Attributes
    ----------
    t : ndarray of int64, shape (num_envs,)
        Steps played in the episode.
    pulls, observations : ndarray of int64, shape (num_envs, K)
        Times each arm was pulled; times its reward was observed.
    sums : ndarray of float64, shape (num_envs, K)
        Sum of each arm's observed rewards.
    regret : ndarray of float64, shape (num_envs,)
        Regret so far: the sum of ``info["regret"]`` over the episode's steps.
    last_action : ndarray of int64, shape (num_envs,)
        The last action (-1 before the first step of the episode).
    last_reward : ndarray of float64, shape (num_envs,)
        The last reward.
    last_observed : ndarray of bool, shape (num_envs, K)
        The arms whose rewards the last step showed.
    last_info : list of dict
        Per copy, the ``info_keys`` entries of its last step (empty before the first step).
    """

    def __init__(self, num_envs: int, n_arms: int, info_keys: Sequence[str] = (), curve_points: int = CURVE_POINTS):
        self.num_envs, self.n_arms = num_envs, n_arms
        self.info_keys = tuple(info_keys)
        self.curve_points = curve_points
        n = num_envs
        self.t = np.zeros(n, dtype=np.int64)
        self.pulls = np.zeros((n, n_arms), dtype=np.int64)
        self.observations = np.zeros((n, n_arms), dtype=np.int64)
        self.sums = np.zeros((n, n_arms))
        self.regret = np.zeros(n)
        self.last_action = np.full(n, -1, dtype=np.int64)
        self.last_reward = np.zeros(n)
        self.last_observed = np.zeros((n, n_arms), dtype=bool)
        self.last_info: list[dict[str, Any]] = [{} for _ in range(n)]
        # The regret curve: point j of copy i is the regret after (j + 1) * stride[i] steps.
        self._curve = np.zeros((n, curve_points))
        self._points = np.zeros(n, dtype=np.int64)
        self._stride = np.ones(n, dtype=np.int64)

    def reset(self, which: BoolArray | None = None) -> None:
        """Start a new episode in the copies ``which`` (all copies if None)."""
        at: Any = slice(None) if which is None else which
        for arr in (self.t, self.pulls, self.observations, self.sums, self.regret, self.last_reward, self._points):
            arr[at] = 0
        self.last_action[at] = -1
        self.last_observed[at] = False
        self._stride[at] = 1
        for i in range(self.num_envs) if which is None else np.flatnonzero(which):
            self.last_info[i] = {}

    def record(self, action: int, reward: float, info: dict[str, Any]) -> None:
        """One step of a single env (copy 0): its action, reward and step info (scalars)."""
        observed = self.last_observed[0]
        if "observed_mask" in info:  # a feedback graph: the closed neighbourhood of the action
            observed[:] = info["observed_mask"]
            self.observations[0] += observed
            self.sums[0] += info["observed_rewards"]
        else:
            observed[:] = False
            observed[action] = True
            self.observations[0, action] += 1
            self.sums[0, action] += reward
        self.pulls[0, action] += 1
        self.t[0] += 1
        self.regret[0] += float(info["regret"])
        self.last_action[0] = action
        self.last_reward[0] = reward
        self.last_info[0] = {key: _kept(info[key]) for key in self.info_keys if key in info}
        self._extend_curve(np.zeros(1, dtype=np.int64))

    def record_batch(self, actions: IntArray, rewards: FloatArray, info: dict[str, Any], playing: BoolArray) -> None:
        """One step of a vector env: the copies in ``playing`` played ``actions`` (batched step info)."""
        copies = np.flatnonzero(playing)
        if copies.size == 0:
            return
        acts = actions[copies]
        self.last_observed[copies] = False
        if "observed_mask" in info:
            mask = np.asarray(info["observed_mask"])[copies]
            self.last_observed[copies] = mask
            self.observations[copies] += mask
            self.sums[copies] += np.asarray(info["observed_rewards"])[copies]
        else:
            self.last_observed[copies, acts] = True
            self.observations[copies, acts] += 1
            self.sums[copies, acts] += rewards[copies]
        self.pulls[copies, acts] += 1
        self.t[copies] += 1
        self.regret[copies] += np.asarray(info["regret"], dtype=np.float64)[copies]
        self.last_action[copies] = acts
        self.last_reward[copies] = rewards[copies]
        kept = [key for key in self.info_keys if key in info]
        for i in copies:
            self.last_info[i] = {key: _kept(np.asarray(info[key])[i]) for key in kept}
        self._extend_curve(copies)

    def _extend_curve(self, copies: IntArray) -> None:
        """Add the current regret of ``copies`` to their curves when a point is due."""
        due = copies[self.t[copies] % self._stride[copies] == 0]
        if due.size == 0:
            return
        self._curve[due, self._points[due]] = self.regret[due]
        self._points[due] += 1
        for i in due[self._points[due] == self.curve_points]:
            # Keep the points at even multiples of the stride: (j + 1) * stride for odd j.
            half = self.curve_points // 2
            self._curve[i, :half] = self._curve[i, 1::2]
            self._points[i] = half
            self._stride[i] *= 2

    def means(self, copy: int = 0) -> FloatArray:
        """Empirical mean of each arm's observed rewards (NaN for an arm never observed)."""
        n = self.observations[copy]
        out = np.full(self.n_arms, np.nan)
        np.divide(self.sums[copy], n, out=out, where=n > 0)
        return out

    def regret_curve(self, copy: int = 0) -> tuple[IntArray, FloatArray]:
        """Steps and regret so far: from (0, 0) to the current step, at most ``curve_points + 2`` points."""
        m, stride, t = int(self._points[copy]), int(self._stride[copy]), int(self.t[copy])
        steps = np.concatenate([[0], (np.arange(m) + 1) * stride])
        values = np.concatenate([[0.0], self._curve[copy, :m]])
        if steps[-1] != t:
            steps = np.append(steps, t)
            values = np.append(values, self.regret[copy])
        return steps.astype(np.int64), values
