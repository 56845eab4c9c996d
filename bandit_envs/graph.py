"""Stochastic bandits with graph feedback: ``GraphBandit-v0`` (gap paper §2.1 and §5)."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from bandit_envs._draw_kernels import skip_doubles
from bandit_envs._jit import entry_point, njit
from bandit_envs._types import BoolArray, FloatArray, IntArray
from bandit_envs.core import (
    GENERATOR_BYTES,
    BanditEnv,
    BanditVectorEnv,
    NoiseBlock,
    check_num_envs,
    check_options,
    check_render_mode,
    next_double,
)
from bandit_envs.feedback_graphs import as_adjacency, closed_neighbourhoods, erdos_renyi
from bandit_envs.rendering import Scene, graph_scene
from bandit_envs.rewards import (
    FLAT,
    RewardModel,
    bernoulli_from_uniform,
    ndtri_many,
    truncnorm_from_normal,
    truncnorm_quantile_argument,
)
from bandit_envs.validation import check_choice, check_float, check_int, check_unit_array

#: Rows of uniforms the single env draws per refill (fewer when the episode has fewer rows left).
#: Rewards are a function of the uniforms, so within an episode the block size changes speed,
#: never results; a reset in the middle of an episode discards the rest of the block, so the
#: stream that the next episode continues depends on it, and the vector env follows the same cuts
#: (:meth:`GraphBanditVectorEnv.reset`).
BLOCK_ROWS = 512


def step_scratch_bytes(n_arms: int) -> int:
    """Most bytes per copy that :func:`play_drawn_rows` allocates while it runs: 56·K.

    For each arm of each copy at most: its quantile argument, arm and place (three 8-byte
    entries), its normal quantile, and :func:`~bandit_envs.rewards.ndtri_many`'s three entries
    for a tail argument. Freed when the step returns.
    """
    return 7 * 8 * n_arms


def copy_bytes(n_arms: int) -> int:
    """Memory of one copy of the vector env: about 1.7 KiB + 65·K bytes (2.3 KiB at K = 10).

    Its generator and that generator's address, its step counters, its share of a step's
    returned arrays (observed mask and rewards, reward, regret, info: 9·K + 48 bytes) and of the
    step's scratch (:func:`step_scratch_bytes`). No rows are drawn ahead.
    """
    return GENERATOR_BYTES + 192 + 9 * n_arms + step_scratch_bytes(n_arms)


def paper_means(n_arms: int, gap: float) -> npt.NDArray[np.float64]:
    """The gap paper's §5 instance: arms 0, 1 at 0.9, arm k≥2 at 0.9 − Δmin − 0.05(k−2)."""
    k = np.arange(n_arms, dtype=float)
    mu = 0.9 - gap - 0.05 * (k - 2)
    mu[: min(2, n_arms)] = 0.9
    return mu


def observe(
    rewards: npt.NDArray[np.float64],
    actions: Any,
    closed: Any,
    gaps: Any,
    weights: Any = None,
) -> tuple[Any, npt.NDArray[np.bool_], npt.NDArray[np.float64], Any]:
    """One transition of the graph bandit (gap paper §2.1), for one env or a batch of copies.

    Parameters
    ----------
    rewards : ndarray of float64
        The round's rewards of every arm: shape (K,) for one env, (N, K) for N copies.
    actions : int or ndarray of int
        The pulled arm (an int), or one per copy (shape (N,)).
    closed : ndarray of bool
        The closed neighbourhoods N(a) as rows (K, K); one env may pass the list of the rows
        (indexing a list by an int is faster).
    gaps : ndarray of float64
        Best expected reward minus each arm's (K,); one env may pass them as a list of floats.
    weights : ndarray of float64, optional
        ``closed`` as 0.0/1.0 (or the list of its rows): the product with the rewards is then a
        float product (faster; the values are the same).

    Returns
    -------
    tuple
        The reward of the pulled arm, the observed mask (the closed neighbourhood of the action),
        the observed rewards (0 where not observed) and the step's regret.
    """
    mask = closed[actions]
    observed = rewards * (mask if weights is None else weights[actions])
    if rewards.ndim == 1:
        reward = rewards[actions]
    else:
        reward = rewards[np.arange(rewards.shape[0]), actions]
    return reward, mask, observed, gaps[actions]


@njit
def play_drawn_rows(
    bitgens: Any,
    playing: Any,
    actions: Any,
    closed: Any,
    gaps: Any,
    kind: int,
    loc: Any,
    scale: float,
    cdf_lo: Any,
    cdf_width: Any,
    reward: Any,
    mask: Any,
    observed: Any,
    regret: Any,
) -> None:  # pragma: no cover - compiled
    """One step of the vector env's copies that draw their rewards (reference: :func:`play_drawn_rows_reference`).

    Each playing copy i draws its row of K uniforms from its generator (at address
    ``bitgens[i]``, :func:`bandit_envs.core.next_double`), in arm order: the doubles its single
    env gets from ``np_random.random((rows, K))``. The uniforms of the closed neighbourhood of its
    action become rewards by :func:`~bandit_envs.rewards.reward_from_uniform`'s steps; for a
    truncated normal the normal quantiles of all copies' entries are computed in one batch
    (:func:`~bandit_envs.rewards.ndtri_many`), and a flat one (:data:`~bandit_envs.rewards.FLAT`)
    keeps its uniforms. The other uniforms are drawn and not used
    (:func:`observe` multiplies them by 0). Then, as :func:`observe` of the row: ``reward[i]`` the
    pulled arm's reward, ``mask[i]`` its closed neighbourhood, ``observed[i]`` the rewards there
    and 0.0 elsewhere, ``regret[i]`` its gap. A copy that does not play (it restarts at this step)
    draws nothing and gets 0 everywhere, ``mask[i]`` False.
    """
    n, k_arms = observed.shape
    p = np.empty(n * k_arms)  # truncated normal: the quantile argument of each observed entry
    arms = np.empty(n * k_arms, dtype=np.int64)  # its arm
    at = np.empty(n * k_arms, dtype=np.int64)  # its index in observed
    m = 0
    for i in range(n):
        a = actions[i]
        for k in range(k_arms):
            observed[i, k] = 0.0
            mask[i, k] = False
        if not playing[i]:
            reward[i] = 0.0
            regret[i] = 0.0
            continue
        regret[i] = gaps[a]
        bitgen = bitgens[i]
        for k in range(k_arms):
            u = next_double(bitgen)
            if closed[a, k]:
                mask[i, k] = True
                if kind == 1:
                    observed[i, k] = bernoulli_from_uniform(u, loc[k])
                else:
                    p[m] = truncnorm_quantile_argument(u, cdf_lo[k], cdf_width[k])
                    arms[m] = k
                    at[m] = i * k_arms + k
                    m += 1
    if m:
        flat = observed.reshape(n * k_arms)
        if kind == FLAT:  # the quantile argument is the uniform (cdf_lo 0, cdf_width 1), and so is the reward
            for j in range(m):
                flat[at[j]] = p[j]
        else:
            z = np.empty(m)
            ndtri_many(p[:m], z)
            for j in range(m):
                flat[at[j]] = truncnorm_from_normal(z[j], loc[arms[j]], scale)
    for i in range(n):
        if playing[i]:
            reward[i] = observed[i, actions[i]]


def play_drawn_rows_reference(
    rngs: Any, playing: BoolArray, actions: IntArray, closed: BoolArray, gaps: FloatArray, model: RewardModel
) -> tuple[FloatArray, BoolArray, FloatArray, FloatArray]:
    """Readable reference of :func:`play_drawn_rows`, drawing through the generators themselves.

    Returns ``(reward, mask, observed, regret)``.
    """
    n, k_arms = actions.shape[0], closed.shape[0]
    reward, regret = np.zeros(n), np.zeros(n)
    mask, observed = np.zeros((n, k_arms), dtype=bool), np.zeros((n, k_arms))
    for i in np.flatnonzero(playing):
        row = model.from_uniforms(rngs[i].random((1, k_arms)))[0]
        reward[i], mask[i], observed[i], regret[i] = observe(row, int(actions[i]), closed, gaps)
    return reward, mask, observed, regret


class _GraphBanditCore:
    """Instance construction and validation shared by the single and the vector env."""

    env_id = "GraphBandit-v0"

    def _build(
        self,
        n_arms: int,
        edge_probability: float,
        gap: float,
        graph: Any,
        means: Any,
        reward: str,
        reward_std: float,
        horizon: int,
        instance_seed: int,
    ) -> None:
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.instance_seed = check_int("instance_seed", instance_seed, minimum=0)
        check_choice("reward", reward, ("truncnorm", "bernoulli"))
        # Checked even where graph or means overrides them: a bad value is refused, not dropped unseen.
        n_arms = check_int("n_arms", n_arms, minimum=2)
        edge_probability = check_float("edge_probability", edge_probability, low=0.0, high=1.0)
        gap = check_float("gap", gap, low=0.0, high=0.9, low_open=True)
        if graph is not None:
            adjacency = as_adjacency(graph)  # as erdos_renyi, refuses a graph too large for memory
            n_arms = adjacency.shape[0]
        else:
            adjacency = erdos_renyi(n_arms, edge_probability, self.instance_seed)
        if means is None:
            loc = paper_means(n_arms, gap)
            if loc.min() < 0.0:
                raise ValueError(
                    f"gap={gap!r} with n_arms={n_arms} gives negative means under the paper's "
                    "layout 0.9 − gap − 0.05(k−2); use a smaller gap, fewer arms or pass means."
                )
        else:
            loc = check_unit_array("means", means, shape=(n_arms,), booleans=False)
        self.n_arms = self.n_actions = n_arms
        self.adjacency = adjacency
        #: Closed neighbourhoods N(a) as rows (the adjacency plus self loops).
        self.adjacency.setflags(write=False)
        self.neighbourhoods = closed_neighbourhoods(adjacency)
        self.neighbourhoods.setflags(write=False)
        self.reward_model = RewardModel(reward, loc, check_float("reward_std", reward_std, low=0.0, low_open=True))  # type: ignore[arg-type]
        self.expected_rewards = self.reward_model.expected
        self.optimal_action = int(np.argmax(self.expected_rewards))
        self.gaps = self.expected_rewards.max() - self.expected_rewards

    def _scene(self) -> Scene:
        """Frames show the feedback graph and the arms' true means (:func:`~bandit_envs.rendering.graph_scene`)."""
        return graph_scene(self.env_id, self.horizon, self.adjacency, self.expected_rewards)

    def _check_table(self, table: Any, leading: tuple[int, ...] = ()) -> npt.NDArray[np.float64]:
        """The checked table as a read-only copy: later edits of ``table`` by the caller change nothing.

        A (horizon × K) table given to a vector env is copied once and broadcast to every copy.
        """
        shape = (*leading, self.horizon, self.n_arms)
        arr = table if isinstance(table, np.ndarray) else check_unit_array("reward_table", table, booleans=False)
        shared = bool(leading) and arr.shape != shape and arr.shape == shape[1:]
        if leading and arr.shape not in (shape, shape[1:]):  # both shapes a vector env takes
            raise ValueError(f"reward_table must have shape {shape[1:]} or {shape}, got shape {arr.shape}.")
        arr = check_unit_array("reward_table", arr, shape=shape[1:] if shared else shape, booleans=False)
        arr = np.array(arr, dtype=np.float64, order="C", copy=True)
        arr.setflags(write=False)
        return np.broadcast_to(arr, shape) if shared else arr


class GraphBanditEnv(_GraphBanditCore, BanditEnv[np.int64]):
    r"""K-armed stochastic bandit with an undirected feedback graph.

    ## Description
    The graphical bandit of the gap paper (Lu, Wang, Qiu, Zhang, J. Software 2022, §2.1):
    each round all K arms draw a reward in [0, 1]; the learner pulls arm ``a`` and observes
    the rewards of the closed neighbourhood N(a) of the feedback graph. Defaults reproduce
    the §5 instance: K=10, Erdős–Rényi graph G(K, p), arms 0 and 1 at location 0.9, arm
    k≥2 at 0.9 − Δmin − 0.05(k−2), normal rewards with variance 0.01 truncated to [0, 1].

    ## Action Space
    ``Discrete(K)``: the arm to pull.

    ## Observation Space
    ``Discrete(1)``: a bandit has no state; the observation is always 0.

    ## Rewards
    The reward of the pulled arm. Side observations are in ``info``.

    ## Info
    ``reset``: ``feedback_graph`` (K×K bool adjacency, no self loops), ``expected_rewards``.
    ``step``: ``observed_mask`` (bool[K], N(a)), ``observed_rewards`` (float[K], 0 where not
    observed), ``regret`` (best expected reward minus that of the action), ``expected_reward``,
    ``optimal_action``. Expected rewards are the true means of the sampled law: a truncated
    normal's mean is not its location (0.9 → 0.8712 at σ=0.1).

    ## Episode End
    ``truncated=True`` after ``horizon`` steps; ``terminated`` is always False.

    ## Rendering
    ``render_mode`` None (default: nothing is tracked), ``"ansi"`` (``render()`` returns a text
    frame: round, action, reward, regret so far, and per arm its pulls, observations, empirical
    mean and true mean, the pulled arm marked ``*`` and the rest of its neighbourhood ``+``),
    ``"rgb_array"`` (a 360 × 640 × 3 uint8 picture of the feedback graph, the pulled arm and its
    observed neighbourhood highlighted, each node labelled with its empirical mean and
    pulls/observations, beside the regret curve) or ``"human"`` (the text frame printed at every
    reset and step). See :mod:`bandit_envs.rendering`.

    ## Arguments
    ``n_arms`` (10), ``edge_probability`` (0.2), ``gap`` (Δmin, 0.1), ``graph`` (networkx graph
    or K×K boolean adjacency; overrides ``n_arms``/``edge_probability``), ``means`` (per-arm
    locations in [0,1]; overrides ``gap``; an overridden argument is still checked),
    ``reward`` (``"truncnorm"`` or ``"bernoulli"``), ``reward_std`` (0.1; from 10⁵ on the
    truncated normal is flat and its rewards uniform on [0, 1], see :mod:`bandit_envs.rewards`),
    ``horizon`` (100000), ``instance_seed`` (0: fixes the graph).
    ``reset(seed=...)`` seeds the reward noise; ``reset(options={"reward_table": R})`` replays a
    (horizon × K) table instead of sampling (neighbouring-data experiments); the table is checked
    and copied, so later edits of ``R`` change nothing. ``n_arms`` (or a graph) whose K×K tables
    (20 bytes per pair of arms) would exceed :func:`bandit_envs.validation.memory_limit` is
    refused.

    ## Version History
    * v0: initial version.
    """

    def __init__(
        self,
        n_arms: int = 10,
        edge_probability: float = 0.2,
        gap: float = 0.1,
        graph: Any = None,
        means: Any = None,
        reward: str = "truncnorm",
        reward_std: float = 0.1,
        horizon: int = 100_000,
        instance_seed: int = 0,
        render_mode: str | None = None,
    ) -> None:
        check_render_mode(self.env_id, render_mode)
        self._build(n_arms, edge_probability, gap, graph, means, reward, reward_std, horizon, instance_seed)
        self.action_space = spaces.Discrete(self.n_arms)
        self.observation_space = spaces.Discrete(1)
        # Per-arm rows as lists: indexing a list by an int is faster than indexing an array.
        self._closed_rows = list(self.neighbourhoods)
        self._weights = list(self.neighbourhoods.astype(np.float64))
        self._gaps = [float(g) for g in self.gaps]
        self._expected = [float(m) for m in self.expected_rewards]
        self._noise = NoiseBlock(self._draw, BLOCK_ROWS)
        self._rows = iter(())
        self._t = self.horizon  # no episode before the first reset
        self._obs = np.int64(0)
        self._init_rendering(render_mode)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.int64, dict[str, Any]]:
        """Start an episode; ``options["reward_table"]`` replays a (horizon × K) table."""
        table = check_options(self.env_id, options, ("reward_table",)).get("reward_table")
        replayed = None if table is None else self._check_table(table)
        self._start_episode(seed)
        self._rows = self._noise.restart(self.horizon, replayed)
        return self._obs, {"feedback_graph": self.adjacency.copy(), "expected_rewards": self.expected_rewards.copy()}

    def _draw(self, rows: int) -> FloatArray:
        return self.reward_model.sample(self.np_random, rows)

    def step(self, action: Any) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        """Pull ``action``; observe its closed neighbourhood's rewards."""
        a = self._check_step(action)
        reward, mask, observed, regret = observe(next(self._rows), a, self._closed_rows, self._gaps, self._weights)
        info = {
            "observed_mask": mask.copy(),
            "observed_rewards": observed,
            "regret": regret,
            "expected_reward": self._expected[a],
            "optimal_action": self.optimal_action,
        }
        self._t += 1
        if self._renderer is not None:
            self._renderer.record(a, float(reward), info)
        return self._obs, float(reward), False, self._t >= self.horizon, info


class GraphBanditVectorEnv(_GraphBanditCore, BanditVectorEnv):
    """``num_envs`` independent copies of :class:`GraphBanditEnv` stepped together.

    All copies share the instance (graph and means, fixed by ``instance_seed``); each has its
    own noise generator. ``reset(seed=s)`` seeds copy i with ``s + i`` (or ``seed[i]`` for a
    list), so copy i reproduces ``GraphBanditEnv`` reset with that seed, action for action.
    Autoreset follows Gymnasium's NEXT_STEP mode. ``options={"reward_table": R}`` accepts a
    (horizon × K) table for all copies or a (num_envs × horizon × K) stack; it is checked and
    copied (later edits of ``R`` change nothing), and replayed tables are kept across autoresets.
    Step info holds the same keys as the single env with a batch axis.

    Each step draws every playing copy's row of uniforms from its generator and maps the observed
    ones to rewards, all copies in one compiled pass (:func:`play_drawn_rows`); nothing is drawn
    ahead. A reset without a seed in the middle of an episode first discards, in each copy, the
    rest of the block of :data:`BLOCK_ROWS` rows that the single env would have drawn, so the next
    episode continues the stream where the single env's does.

    Memory: a copy takes about 1.7 KiB + 65·K bytes (:func:`copy_bytes`), 2.3 KiB at K = 10,
    whatever the number of copies. ``num_envs`` whose copies would exceed
    :func:`bandit_envs.validation.memory_limit` is refused before anything is allocated.

    ``render_mode`` as the single env's, for at most
    :data:`~bandit_envs.rendering.MAX_RENDERED_COPIES` copies: ``render()`` returns the tuple of
    the copies' frames.
    """

    def __init__(
        self,
        num_envs: int = 1,
        n_arms: int = 10,
        edge_probability: float = 0.2,
        gap: float = 0.1,
        graph: Any = None,
        means: Any = None,
        reward: str = "truncnorm",
        reward_std: float = 0.1,
        horizon: int = 100_000,
        instance_seed: int = 0,
        render_mode: str | None = None,
    ) -> None:
        check_render_mode(self.env_id, render_mode, num_envs)
        self._build(n_arms, edge_probability, gap, graph, means, reward, reward_std, horizon, instance_seed)
        num_envs = check_num_envs(self.env_id, num_envs, copy_bytes(self.n_arms))
        self._init_copies(num_envs, spaces.Discrete(self.n_arms), spaces.Discrete(1))
        self._tables: FloatArray | None = None
        self._obs = np.zeros(self.num_envs, dtype=np.int64)
        # The step's own copies, as the single env's lists: an edit of the public ``gaps`` or
        # ``expected_rewards`` (a factory normalising what it read, in place) changes no regret.
        self._step_gaps = self.gaps.copy()
        self._step_expected = self.expected_rewards.copy()
        #: Every copy's best arm, copied into each step's info (a new array: the caller may write into it).
        self._optimal_actions = np.full(self.num_envs, self.optimal_action)
        #: ``play_drawn_rows`` compiled for this env's arguments (numba's dispatcher types 14 of them at
        #: every call: about 3 us a step); made at the first step, dropped when the env is copied or pickled.
        self._step_entry: Any = None
        self._init_rendering(render_mode)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.int64], dict[str, Any]]:
        """Reset every copy; see the class docstring for seeding and reward tables."""
        n = self.num_envs
        table = check_options(self.env_id, options, ("reward_table",)).get("reward_table")
        tables = None if table is None else self._check_table(table, leading=(n,))
        if self._tables is None and self._keeps_streams(seed):
            self._discard_block_rests()
        self._seed(seed)
        self._restart_all()
        self._tables = tables
        info = {
            "feedback_graph": np.broadcast_to(self.adjacency, (n, self.n_arms, self.n_arms)),
            "expected_rewards": np.broadcast_to(self.expected_rewards, (n, self.n_arms)),
        }
        return self._obs.copy(), info

    def _discard_block_rests(self) -> None:
        """Draw and drop, in each copy, the rows its single env holds unread when reset in mid-episode.

        The single env draws its rows :data:`BLOCK_ROWS` at a time (fewer at the episode's end);
        after ``t`` steps it has drawn ``min(horizon, BLOCK_ROWS·ceil(t / BLOCK_ROWS))`` rows, and a
        reset drops the unread ones. Copies that finished their episode, or have not started one,
        hold none. A ``horizon`` beyond int64 (a step count never reaches it) counts as the largest int64.
        """
        t = self._t
        horizon = min(self.horizon, int(np.iinfo(np.int64).max))
        drawn = np.minimum(horizon, -(-t // BLOCK_ROWS) * BLOCK_ROWS)
        if (drawn > t).any():
            skip_doubles(self._bitgens, (drawn - t) * self.n_arms)

    def _play(self, actions: IntArray, restarting: BoolArray) -> tuple[Any, FloatArray, dict[str, Any]]:
        n, k_arms = self.num_envs, self.n_arms
        if self._tables is not None:
            rows = self._tables[self._arange, self._t]
            reward, mask, observed, regret = observe(rows, actions, self.neighbourhoods, self._step_gaps)
            if np.count_nonzero(restarting):
                # A reset step consumes no reward row and observes nothing.
                reward = np.where(restarting, 0.0, reward)
                regret = np.where(restarting, 0.0, regret)
                mask = mask & ~restarting[:, None]
                observed = observed * mask
        else:
            reward, regret = np.empty(n), np.empty(n)
            mask, observed = np.empty((n, k_arms), dtype=bool), np.empty((n, k_arms))
            args = (self._bitgens, ~restarting, actions, self.neighbourhoods, self._step_gaps,
                    *self.reward_model.params(), reward, mask, observed, regret)  # fmt: skip
            play = self._step_entry
            if play is None:  # the kernel for these arguments' types, which every step passes alike
                play = self._step_entry = entry_point(play_drawn_rows, tuple(numba.typeof(a) for a in args))
            play(*args)
        info = {
            "observed_mask": mask,
            "observed_rewards": observed,
            "regret": regret,
            # A reset step plays nothing: its expected reward is 0, as its reward and regret (and the other envs').
            "expected_reward": (
                np.where(restarting, 0.0, self._step_expected[actions])
                if np.count_nonzero(restarting)
                else self._step_expected[actions]
            ),
            "optimal_action": self._optimal_actions.copy(),
        }
        return self._obs.copy(), reward, info
