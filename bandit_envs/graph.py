"""Stochastic bandits with graph feedback: ``GraphBandit-v0`` (gap paper §2.1 and §5)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from bandit_envs.feedback_graphs import as_adjacency, closed_neighbourhoods, erdos_renyi
from bandit_envs.rewards import RewardModel
from bandit_envs.validation import check_choice, check_float, check_int, check_unit_array

#: Rows of uniforms drawn per refill; rewards are a function of the uniforms, so the block size
#: changes speed, never results.
BLOCK_ROWS = 512


def paper_means(n_arms: int, gap: float) -> npt.NDArray[np.float64]:
    """The gap paper's §5 instance: arms 0, 1 at 0.9, arm k≥2 at 0.9 − Δmin − 0.05(k−2)."""
    k = np.arange(n_arms, dtype=float)
    mu = 0.9 - gap - 0.05 * (k - 2)
    mu[: min(2, n_arms)] = 0.9
    return mu


def observe(
    rewards: npt.NDArray[np.float64],
    actions: Any,
    closed: npt.NDArray[np.bool_],
    gaps: npt.NDArray[np.float64],
) -> tuple[Any, npt.NDArray[np.bool_], npt.NDArray[np.float64], Any]:
    """One transition of the graph bandit, for one env (``rewards`` (K,)) or a batch ((N, K)).

    Returns the reward of the pulled arm, the observed mask (the closed neighbourhood of the
    action), the observed rewards (0 where not observed) and the step's regret.
    """
    mask = closed[actions]
    observed = rewards * mask
    if rewards.ndim == 1:
        reward = rewards[actions]
    else:
        reward = rewards[np.arange(rewards.shape[0]), actions]
    return reward, mask, observed, gaps[actions]


class _GraphBanditCore:
    """Instance construction and validation shared by the single and the vector env."""

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
        if graph is not None:
            adjacency = as_adjacency(graph)
            n_arms = adjacency.shape[0]
        else:
            n_arms = check_int("n_arms", n_arms, minimum=2)
            edge_probability = check_float("edge_probability", edge_probability, low=0.0, high=1.0)
            adjacency = erdos_renyi(n_arms, edge_probability, self.instance_seed)
        if means is None:
            gap = check_float("gap", gap, low=0.0, high=0.9, low_open=True)
            loc = paper_means(n_arms, gap)
            if loc.min() < 0.0:
                raise ValueError(
                    f"gap={gap!r} with n_arms={n_arms} gives negative means under the paper's "
                    "layout 0.9 − gap − 0.05(k−2); use a smaller gap, fewer arms or pass means."
                )
        else:
            loc = check_unit_array("means", means, shape=(n_arms,))
        self.n_arms = n_arms
        self.adjacency = adjacency
        #: Closed neighbourhoods N(a) as rows (the adjacency plus self loops).
        self.adjacency.setflags(write=False)
        self.neighbourhoods = closed_neighbourhoods(adjacency)
        self.neighbourhoods.setflags(write=False)
        self.reward_model = RewardModel(reward, loc, check_float("reward_std", reward_std, low=0.0, low_open=True))  # type: ignore[arg-type]
        self.expected_rewards = self.reward_model.expected
        self.optimal_action = int(np.argmax(self.expected_rewards))
        self.gaps = self.expected_rewards.max() - self.expected_rewards

    def _check_table(self, table: Any, leading: tuple[int, ...] = ()) -> npt.NDArray[np.float64]:
        shape = (*leading, self.horizon, self.n_arms)
        arr = table if isinstance(table, np.ndarray) else check_unit_array("reward_table", table)
        if arr.shape != shape and leading and arr.shape == shape[1:]:
            arr = np.broadcast_to(arr, shape)
        return check_unit_array("reward_table", arr, shape=shape)


class GraphBanditEnv(_GraphBanditCore, gym.Env[np.int64, np.int64]):
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

    ## Arguments
    ``n_arms`` (10), ``edge_probability`` (0.2), ``gap`` (Δmin, 0.1), ``graph`` (networkx graph
    or K×K boolean adjacency; overrides ``n_arms``/``edge_probability``), ``means`` (per-arm
    locations in [0,1]; overrides ``gap``), ``reward`` (``"truncnorm"`` or ``"bernoulli"``),
    ``reward_std`` (0.1), ``horizon`` (100000), ``instance_seed`` (0: fixes the graph).
    ``reset(seed=...)`` seeds the reward noise; ``reset(options={"reward_table": R})`` replays a
    (horizon × K) table instead of sampling (neighbouring-data experiments).

    ## Version History
    * v0: initial version.
    """

    metadata: dict[str, Any] = {"render_modes": []}

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
        if render_mode is not None:
            raise ValueError(f"render_mode must be None (GraphBandit-v0 has no rendering), got {render_mode!r}.")
        self._build(n_arms, edge_probability, gap, graph, means, reward, reward_std, horizon, instance_seed)
        self.action_space = spaces.Discrete(self.n_arms)
        self.observation_space = spaces.Discrete(1)
        self._closed_f = [row for row in self.neighbourhoods.astype(np.float64)]
        self._closed_rows = [row for row in self.neighbourhoods]
        self._gaps = [float(g) for g in self.gaps]
        self._expected = [float(m) for m in self.expected_rewards]
        self._block: npt.NDArray[np.float64] = np.empty((0, self.n_arms))
        self._pos = 0
        self._t = 0
        self._replay = False
        self._obs = np.int64(0)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.int64, dict[str, Any]]:
        """Start an episode; ``options["reward_table"]`` replays a (horizon × K) table."""
        super().reset(seed=seed)
        self._t = 0
        self._pos = 0
        self._replay = False
        self._block = np.empty((0, self.n_arms))
        if options:
            unknown = set(options) - {"reward_table"}
            if unknown:
                raise ValueError(f"options may only contain 'reward_table', got {sorted(unknown)!r}.")
            if options.get("reward_table") is not None:
                self._block = self._check_table(options["reward_table"])
                self._replay = True
        return self._obs, {"feedback_graph": self.adjacency.copy(), "expected_rewards": self.expected_rewards.copy()}

    def step(self, action: Any) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        """Pull ``action``; observe its closed neighbourhood's rewards."""
        if self._t >= self.horizon:
            raise RuntimeError(f"the episode ended after horizon={self.horizon} steps; call reset().")
        try:
            a = int(action)
        except (TypeError, ValueError):
            a = -1
        # ``a != action`` refuses values int() would silently truncate or parse (1.5, "3").
        if not 0 <= a < self.n_arms or a != action:
            raise ValueError(f"action must be an integer in [0, {self.n_arms - 1}], got {action!r}.")
        if self._pos >= self._block.shape[0]:
            n = min(BLOCK_ROWS, self.horizon - self._t)
            self._block = self.reward_model.sample(self.np_random, n)
            self._pos = 0
        row = self._block[self._pos]
        self._pos += 1
        self._t += 1
        info = {
            "observed_mask": self._closed_rows[a].copy(),
            "observed_rewards": row * self._closed_f[a],
            "regret": self._gaps[a],
            "expected_reward": self._expected[a],
            "optimal_action": self.optimal_action,
        }
        return self._obs, float(row[a]), False, self._t >= self.horizon, info


class GraphBanditVectorEnv(_GraphBanditCore, VectorEnv):
    """``num_envs`` independent copies of :class:`GraphBanditEnv` stepped by one numpy call.

    All copies share the instance (graph and means, fixed by ``instance_seed``); each has its
    own noise generator. ``reset(seed=s)`` seeds copy i with ``s + i`` (or ``seed[i]`` for a
    list), so copy i reproduces ``GraphBanditEnv`` reset with that seed, action for action.
    Autoreset follows Gymnasium's NEXT_STEP mode. ``options={"reward_table": R}`` accepts a
    (horizon × K) table for all copies or a (num_envs × horizon × K) stack; replayed tables are
    kept across autoresets. Step info holds the same keys as the single env with a batch axis.
    """

    metadata: dict[str, Any] = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

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
        if render_mode is not None:
            raise ValueError(f"render_mode must be None (GraphBandit-v0 has no rendering), got {render_mode!r}.")
        self.num_envs = check_int("num_envs", num_envs, minimum=1)
        self._build(n_arms, edge_probability, gap, graph, means, reward, reward_std, horizon, instance_seed)
        self.single_action_space = spaces.Discrete(self.n_arms)
        self.single_observation_space = spaces.Discrete(1)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        n = self.num_envs
        self._rngs = [np.random.default_rng() for _ in range(n)]
        self._t = np.zeros(n, dtype=np.int64)
        self._pos = np.zeros(n, dtype=np.int64)
        self._len = np.zeros(n, dtype=np.int64)
        self._block = np.empty((n, BLOCK_ROWS, self.n_arms))
        self._tables: npt.NDArray[np.float64] | None = None
        self._done = np.zeros(n, dtype=bool)
        self._obs = np.zeros(n, dtype=np.int64)
        self._arange = np.arange(n)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.int64], dict[str, Any]]:
        """Reset every copy; see the class docstring for seeding and reward tables."""
        n = self.num_envs
        seeds: list[int | None] | None
        if seed is None:
            seeds = None  # as in gym.Env.reset: no seed keeps each copy's generator running
        elif isinstance(seed, int | np.integer):
            seeds = [int(seed) + i for i in range(n)]
        else:
            seeds = list(seed)
            if len(seeds) != n:
                raise ValueError(f"seed must be an int or a list of num_envs={n} seeds, got {len(seeds)} seeds.")
        if seeds is not None:
            self._rngs = [gym.utils.seeding.np_random(s)[0] for s in seeds]
        self._t[:] = 0
        self._pos[:] = 0
        self._len[:] = 0
        self._done[:] = False
        self._tables = None
        if options:
            unknown = set(options) - {"reward_table"}
            if unknown:
                raise ValueError(f"options may only contain 'reward_table', got {sorted(unknown)!r}.")
            if options.get("reward_table") is not None:
                self._tables = self._check_table(options["reward_table"], leading=(n,))
        info = {
            "feedback_graph": np.broadcast_to(self.adjacency, (n, self.n_arms, self.n_arms)),
            "expected_rewards": np.broadcast_to(self.expected_rewards, (n, self.n_arms)),
        }
        return self._obs.copy(), info

    def _rows(self) -> npt.NDArray[np.float64]:
        if self._tables is not None:
            return self._tables[self._arange, self._t]
        empty = np.flatnonzero(self._pos >= self._len)
        for i in empty:
            rows = int(min(BLOCK_ROWS, self.horizon - self._t[i]))
            self._block[i, :rows] = self.reward_model.sample(self._rngs[i], rows)
            self._len[i] = rows
            self._pos[i] = 0
        rows_now = self._block[self._arange, self._pos]
        self._pos += 1
        return rows_now

    def step(
        self, actions: Any
    ) -> tuple[
        npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]
    ]:
        """Step every copy (copies truncated at the previous step are reset instead)."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(
                f"actions must be an integer array of shape ({self.num_envs},), got {a.dtype} array of shape {a.shape}."
            )
        if a.size and (a.min() < 0 or a.max() >= self.n_arms):
            raise ValueError(f"actions must lie in [0, {self.n_arms - 1}], got values in [{a.min()}, {a.max()}].")
        if self._done.any():
            # NEXT_STEP autoreset: the finished copies restart; their rewards this step are 0.
            self._t[self._done] = 0
            self._len[self._done] = 0
            self._pos[self._done] = 0
        rows = self._rows()
        reward, mask, observed, regret = observe(rows, a, self.neighbourhoods, self.gaps)
        was_done = self._done.copy()
        reward = np.where(was_done, 0.0, reward)
        regret = np.where(was_done, 0.0, regret)
        if was_done.any():
            # A reset step consumes no reward row and observes nothing (the row is the next step's).
            self._pos[was_done] -= 1
            mask = mask & ~was_done[:, None]
            observed = observed * mask
        self._t += ~was_done
        truncated = self._t >= self.horizon
        self._done = truncated.copy()
        info = {
            "observed_mask": mask,
            "observed_rewards": observed,
            "regret": regret,
            "expected_reward": self.expected_rewards[a],
            "optimal_action": np.full(self.num_envs, self.optimal_action),
        }
        return self._obs.copy(), reward, np.zeros(self.num_envs, dtype=bool), truncated, info
