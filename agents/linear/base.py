r"""Machinery shared by LinUCB and LDP-LinUCB: the step API and the compiled fast path.

:class:`LinearAgent` runs the protocol of :mod:`agents.linear.protocol` for one env or ``B``
copies in lock-step: ``act`` is the client's choice, ``update`` the client's report followed by
the server's update, and :meth:`LinearAgent.run` plays a block of rounds in one compiled loop
(:func:`agents.linear._kernels.run_copy`) with the same kernels and the same random draws, so it
chooses the same actions as the step API. Subclasses set the schedule of (γ_t, c_t, β_t), the
noise scale and the clipping bounds; they add no per-round logic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
import numpy.typing as npt

from agents.base import Agent, _as_array, _space, check_int, check_state_size, check_values, describe, env_arms
from agents.linear._kernels import choose_batch, fill_normals, report_batch, round_schedule, run_parallel, run_serial
from agents.linear.protocol import LinUCBServer, as_features

__all__ = ["LinearAgent", "LinearRunResult"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Normal draws kept in memory at once by the fast path (per chunk of rounds), ~4 MB.
_NOISE_CHUNK = 1 << 19


@dataclass
class LinearRunResult:
    """What :meth:`LinearAgent.run` returns (copy axis last, dropped when the agent has ``n_envs=None``).

    Attributes
    ----------
    total_regret
        Cumulative regret over the block, float or (B,).
    checkpoint_regret
        Cumulative regret at each checkpoint, (n_checkpoints,) or (n_checkpoints, B).
    actions
        Arms played, (T,) or (T, B), if ``record_actions``; else None.
    """

    total_regret: float | FloatArray
    checkpoint_regret: FloatArray
    actions: IntArray | None


class LinearAgent(Agent):
    """Shared machinery of LinUCB and LDP-LinUCB: server, client calls, step API and fast path."""

    _sched: FloatArray
    _sigma: float
    _l_x: float
    _l_y: float
    _quadratic: bool
    _initial_shift: float

    def __init__(self, n_features: int, *, n_envs: int | None, seed: int | None) -> None:
        # The arm count is read from each observation; Agent's fixed-K check does not apply.
        self.n_features = check_int("n_features", n_features, minimum=1)
        super().__init__(2, n_envs=n_envs, seed=seed)
        self.n_arms = 0

    def _check_state_size(self) -> None:
        # Server (V, U, θ, u) and the per-step report and noise buffers: about 4d² + 4d floats per copy.
        d = float(self.n_features)
        copies = "" if self.n_envs is None else f"n_envs={self.n_envs} with "
        check_state_size(8.0 * self.batch * (4.0 * d * d + 4.0 * d + 8.0), f"{copies}n_features={self.n_features}")

    def check_env(self, env: Any) -> None:
        """Check that ``env`` fits the agent: feature matrices (n_arms, d) with d = ``n_features``.

        The env's observation space (``single_observation_space`` of a vector env) must be a Box of
        shape (K, d) with K its number of arms, and the env single (``n_envs=None``) or a vector
        env with ``num_envs == n_envs``.

        Raises
        ------
        ValueError
            One sentence naming what differs.
        """
        n_arms = env_arms(env)
        space = _space(env, "observation_space")
        shape = getattr(space, "shape", None)
        if shape is None or len(shape) != 2 or shape[0] != n_arms or shape[1] != self.n_features:
            raise ValueError(
                f"env must observe feature matrices of shape ({n_arms}, {self.n_features}), one row of "
                f"n_features={self.n_features} per arm, got observations of shape {shape}."
            )
        self._check_env_copies(env)

    @property
    def _noise_size(self) -> int:
        d = self.n_features
        return d * (d + 1) // 2 + d if self._sigma > 0 else 0

    def _reset_state(self) -> None:
        self.server = LinUCBServer(self.n_features, self.batch, self._initial_shift)
        self._clips: IntArray = np.zeros((self.batch, 2), dtype=np.int64)
        self._last_obs: FloatArray | None = None

    def _per_copy(self, values: IntArray) -> int | IntArray:
        return int(values[0]) if self.n_envs is None else values.copy()

    @property
    def t(self) -> int:
        """Rounds completed (reports received by the server)."""
        return self.server.t

    @property
    def theta(self) -> FloatArray:
        """Current estimate θ, (d,) or (B, d)."""
        return self.server.theta[0] if self.n_envs is None else self.server.theta

    @property
    def n_eig_floor(self) -> int | IntArray:
        """Rounds in which V + cI was indefinite and the eigenvalue floor was used (per copy)."""
        return self._per_copy(self.server.n_eig_floor)

    def schedule(self, t: int) -> tuple[float, float, float]:
        """(γ_t, c_t, β_t) of round ``t`` (1-based): noise bound, shift and exploration width."""
        gamma, shift, beta = round_schedule(check_int("t", t, minimum=1), self._sched)
        return float(gamma), float(shift), float(beta)

    def act(self, obs: Any = None) -> Any:
        """Client side of round t+1: score the candidates of ``obs`` with the broadcast θ, U, β_{t+1}.

        ``obs`` is the (n_arms, d) feature matrix (with ``n_envs=N``: (N, n_arms, d)); it is kept
        for ``update``, which reports the chosen row.
        """
        lead = () if self.n_envs is None else (self.n_envs,)
        x = as_features("obs", obs, lead, self.n_features).reshape((self.batch, -1, self.n_features))
        self.n_arms = x.shape[1]
        _, _, beta = round_schedule(self.server.t + 1, self._sched)
        out = np.empty(self.batch, dtype=np.int64)
        choose_batch(x, self.server.theta, self.server.chol, beta, self._l_x, self._quadratic, out)
        self._last_obs = x
        return self._out(out)

    def update(self, action: Any, reward: Any, info: dict[str, Any] | None = None) -> None:
        """Client report of the arm played in the last ``act`` (features kept from it), then server update.

        ``info`` is not used (its ``regret`` is the env's business, not the learner's), but its
        per-arm arrays and ``optimal_action`` must fit the arm count of the last observation.
        """
        if self._last_obs is None:
            raise RuntimeError("update() needs the features of the last act(obs); call act(obs) first.")
        a, r = self._feedback(action, reward, info, n_arms=self._last_obs.shape[1])
        d = self.n_features
        noise = np.empty((self.batch, self._noise_size))
        fill_normals(self.rng, noise)
        gram, vec = np.empty((self.batch, d, d)), np.empty((self.batch, d))
        flags = np.empty(self.batch, dtype=np.int64)
        report_batch(self._last_obs, a, r, self._l_x, self._l_y, self._sigma, noise, gram, vec, flags)
        self._clips[:, 0] += flags & 1
        self._clips[:, 1] += flags >> 1
        self._last_obs = None
        _, shift, _ = round_schedule(self.server.t + 1, self._sched)
        self.server.receive(gram, vec, shift)

    def run(
        self,
        features: npt.ArrayLike,
        rewards: npt.ArrayLike,
        expected_rewards: npt.ArrayLike | None = None,
        *,
        checkpoints: npt.ArrayLike | None = None,
        record_actions: bool = False,
        parallel: bool | None = None,
    ) -> LinearRunResult:
        """Play a block of T rounds from the current state in a compiled loop (the fast path).

        Same kernels, same random draws and hence the same actions as T ``act``/``update`` calls;
        call it again with the next block to continue (the round counter and the model carry on).

        Parameters
        ----------
        features
            (T, n_arms, d) feature matrices, shared by every copy, or (T, N, n_arms, d), one per copy.
        rewards
            (T, n_arms) or (T, N, n_arms): the reward the client observes if it plays each arm.
        expected_rewards
            Same shape rules: expected rewards, for the regret max_a E[r_a] - E[r_played]. Default
            ``rewards`` (the regret of the authors' code, on realized ratings).
        checkpoints
            Ascending round counts within the block (1..T) at which to record the cumulative regret.
        record_actions
            Keep the arms played.
        parallel
            Spread the copies over numba's threads (``numba.set_num_threads`` limits them). Default:
            when there are several copies and several threads. The result is the same either way.

        Returns
        -------
        LinearRunResult
            Regret over this block (not since reset) and optionally the actions.
        """
        n_copies = self.batch
        d = self.n_features
        if not isinstance(record_actions, bool | np.bool_):
            raise TypeError(f"record_actions must be True or False, got {describe(record_actions)}.")
        if parallel is not None and not isinstance(parallel, bool | np.bool_):
            raise TypeError(f"parallel must be True, False or None, got {describe(parallel)}.")
        raw = _as_array(features)
        if raw is None or raw.dtype.kind not in "iuf":
            raise TypeError(f"features must be a real array, got {describe(features)}.")
        feat = np.ascontiguousarray(raw, dtype=np.float64)
        per_copy = feat.ndim == 4
        if feat.ndim not in (3, 4) or (per_copy and (self.n_envs is None or feat.shape[1] != n_copies)):
            allowed = "(T, n_arms, d)" + ("" if self.n_envs is None else f" or (T, {n_copies}, n_arms, d)")
            raise ValueError(f"features must have shape {allowed} with d={d}, got {feat.shape}.")
        n_steps = feat.shape[0]
        lead = (n_steps, n_copies) if per_copy else (n_steps,)
        feat = as_features("features", feat, lead, d).reshape(n_steps, -1, feat.shape[-2], d)
        n_arms = feat.shape[2]
        rew = self._table("rewards", rewards, n_steps, n_arms)
        exp = rew if expected_rewards is None else self._table("expected_rewards", expected_rewards, n_steps, n_arms)
        ck = self._checkpoints(checkpoints, n_steps)
        regret_out = np.zeros((ck.shape[0], n_copies))
        actions = np.zeros((n_steps if record_actions else 0, n_copies), dtype=np.int64)
        cum = np.zeros(n_copies)
        counters = np.zeros((n_copies, 3), dtype=np.int64)
        m = self._noise_size
        chunk = max(1, _NOISE_CHUNK // max(1, n_copies * m))
        if parallel is None:
            parallel = n_copies > 1 and numba.get_num_threads() > 1
        srv = self.server
        for start in range(0, n_steps, chunk):
            stop = min(n_steps, start + chunk)
            noise = np.empty((stop - start, n_copies, m))
            fill_normals(self.rng, noise)
            slot = np.full(stop - start, -1, dtype=np.int64)
            hit = (ck > start) & (ck <= stop)
            slot[ck[hit] - start - 1] = np.flatnonzero(hit)
            driver = run_parallel if parallel else run_serial
            driver(
                (feat[start:stop], rew[start:stop], exp[start:stop], noise, slot, regret_out, actions[start:stop]),
                (srv.t, self._sched, self._l_x, self._l_y, self._sigma, self._quadratic),
                (srv.gram, srv.moment, srv.chol, srv.theta, cum, counters),
            )
            srv.t += stop - start
        self._clips += counters[:, :2]
        srv.n_eig_floor += counters[:, 2]
        self._last_obs = None
        if self.n_envs is None:
            return LinearRunResult(float(cum[0]), regret_out[:, 0], actions[:, 0] if record_actions else None)
        return LinearRunResult(cum, regret_out, actions if record_actions else None)

    def _table(self, name: str, value: Any, n_steps: int, n_arms: int) -> FloatArray:
        """Reward-like table as (T, 1 or B, n_arms) float64, finite."""
        raw = _as_array(value)
        if raw is None or raw.dtype.kind not in "iuf":
            raise TypeError(f"{name} must be a real array, got {describe(value)}.")
        arr = np.ascontiguousarray(raw, dtype=np.float64)
        shapes = [(n_steps, n_arms)] + ([] if self.n_envs is None else [(n_steps, self.batch, n_arms)])
        if arr.shape not in shapes:
            allowed = " or ".join(str(s) for s in shapes)
            raise ValueError(f"{name} must have shape {allowed} to match features, got {arr.shape}.")
        # The same rule and message as ``update``'s reward check.
        axes = ("round", "copy", "arm") if arr.ndim == 3 else ("round", "arm")
        check_values(name, arr, self.reward_bounds, self._bounds_reason(), axes)
        return arr.reshape(n_steps, -1, n_arms)

    @staticmethod
    def _checkpoints(checkpoints: Any, n_steps: int) -> IntArray:
        if checkpoints is None:
            return np.zeros(0, dtype=np.int64)
        raw = _as_array(checkpoints)
        if raw is None or raw.ndim != 1 or raw.dtype.kind not in "iu":
            raise ValueError(f"checkpoints must be a 1-d array of integers, got {describe(checkpoints)}.")
        if raw.size and (raw.min() < 1 or raw.max() > n_steps):
            raise ValueError(
                f"checkpoints must be round counts in [1, {n_steps}], got values from {raw.min()} to {raw.max()}."
            )
        ck = raw.astype(np.int64)
        if np.any(np.diff(ck) <= 0):
            raise ValueError(
                f"checkpoints must be strictly increasing round counts in [1, {n_steps}], got {ck.size} values "
                "not in increasing order."
            )
        return ck
