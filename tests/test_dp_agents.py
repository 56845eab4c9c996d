"""Tests of the private agents of agents/central_dp/ucb.py and agents/central_dp/thompson.py and their noise streams.

* the compiled noise streams equal numpy's Philox generator draw for draw (agents/common/philox.py;
  the samplers' streams are tested in tests/test_sampling.py);
* each agent equals its plain-Python reference (agents/central_dp/reference.py): same releases, same arms;
* copy i of a batch equals the single agent with copy i's seed; seeds reproduce runs;
* known answers: noise terms and Laplace draws per release, epoch boundaries, budgets;
* the noise of a release has the claimed Laplace law (KS tests, fixed seeds, level ALPHA, each
  paired with a wrong scale the same test rejects);
* regret sanity: with a huge ε the agents are close to (or no worse than a factor of) UCB / TS.

What an empirical privacy audit would test is not here (agents.audit).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import lazy_module
from rollouts import assert_plays_like_reference, lockstep_from_seed, play_table

from agents import (
    UCB,
    AdaPUCB,
    DPThompsonSampling,
    HybridDPUCB,
    LDPThompsonSampling,
    PrivateAgent,
    ThompsonSampling,
    TreeDPUCB,
)
from agents.central_dp import reference as ref
from agents.common import philox
from agents.local_dp import reference as ldp_ref
from bandit_envs._jit import njit  # cached on disk, with its dependencies stamped (a warm run loads it)
from bandit_envs.privacy._checks import laplace_tail_delta
from bandit_envs.privacy.counters import laplace_sum_bound, tree_depth
from bandit_envs.privacy.streams import philox_noise_generator

stats = lazy_module("scipy.stats")

ALPHA = 1e-3
K = 3

#: name -> (make(n_envs, seed), make the plain-Python reference(seed)), all on K arms.
AGENTS: dict[str, tuple[Callable[[int | None, int], Any], Callable[[int], Any]]] = {
    "HybridDPUCB": (
        lambda n, s: HybridDPUCB(K, 1.0, n_envs=n, seed=s),
        lambda s: ref.ReferenceHybridDPUCB(K, 1.0, seed=s),
    ),
    "TreeDPUCB-split-mt15": (
        lambda n, s: TreeDPUCB(K, 2000, 2.0, n_envs=n, seed=s),
        lambda s: ref.ReferenceTreeDPUCB(K, 2000, 2.0, seed=s),
    ),
    "TreeDPUCB-parallel-mt15": (
        lambda n, s: TreeDPUCB(K, 2000, 1.0, "parallel", n_envs=n, seed=s),
        lambda s: ref.ReferenceTreeDPUCB(K, 2000, 1.0, "parallel", seed=s),
    ),
    "TreeDPUCB-parallel-exact": (
        lambda n, s: TreeDPUCB(K, 2000, 1.0, "parallel", "exact", n_envs=n, seed=s),
        lambda s: ref.ReferenceTreeDPUCB(K, 2000, 1.0, "parallel", "exact", seed=s),
    ),
    "AdaPUCB": (
        lambda n, s: AdaPUCB(K, 1.0, n_envs=n, seed=s),
        lambda s: ref.ReferenceAdaPUCB(K, 1.0, seed=s),
    ),
    "AdaPUCB-cumulative": (
        lambda n, s: AdaPUCB(K, 0.5, variant="cumulative", n_envs=n, seed=s),
        lambda s: ref.ReferenceAdaPUCB(K, 0.5, variant="cumulative", seed=s),
    ),
    "DPThompsonSampling": (
        lambda n, s: DPThompsonSampling(K, 1.0, n_envs=n, seed=s),
        lambda s: ref.ReferenceDPThompsonSampling(K, 1.0, seed=s),
    ),
    "LDPThompsonSampling": (
        lambda n, s: LDPThompsonSampling(K, 1.0, n_envs=n, seed=s),
        lambda s: ldp_ref.ReferenceLDPThompsonSampling(K, 1.0, seed=s),
    ),
}


def bernoulli(shape: tuple[int, ...], means: list[float], seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).random(shape) < np.array(means)).astype(np.float64)


# Noise streams ------------------------------------------------------------------------------------


@njit
def _draw(streams, b, kind, n, out):  # pragma: no cover
    for i in range(n):
        if kind == 0:
            out[i] = philox.next_double(streams, b)
        else:
            out[i] = philox.laplace(streams, b, 0.7)


def test_compiled_streams_are_numpys_philox_draw_for_draw():
    seeds = [0, 7, 2**40 + 3]
    streams = philox.new_streams(seeds)
    gens = [philox_noise_generator(s) for s in seeds]
    out = np.empty(2000)
    for b, gen in enumerate(gens):  # several blocks of 4 words per stream, streams interleaved
        _draw(streams, b, 0, 2000, out)
        np.testing.assert_array_equal(out, gen.random(2000))
        _draw(streams, b, 1, 2000, out)
        np.testing.assert_array_equal(out, [gen.laplace(0.0, 0.7) for _ in range(2000)])
    both = np.empty(len(seeds))
    for _ in range(9):  # across refills of the 4-word buffers
        philox.double_pass(streams, both)
        np.testing.assert_array_equal(both, [gen.random() for gen in gens])


def test_laplace_stream_draws_have_the_right_law():
    streams = philox.new_streams([1])
    out = np.empty(20000)
    _draw(streams, 0, 1, 20000, out)
    assert stats.kstest(out, stats.laplace(scale=0.7).cdf).pvalue > ALPHA
    assert stats.kstest(out, stats.laplace(scale=0.8).cdf).pvalue < ALPHA


# Compiled agents equal their references; copies equal single agents ---------------------------------


@pytest.mark.parametrize("name", AGENTS)
@pytest.mark.parametrize("seed", [3, 2**33])
def test_agent_equals_its_plain_python_reference(name, seed):
    agent, reference = lockstep_from_seed(AGENTS[name], seed, K)
    if hasattr(reference, "counters"):
        np.testing.assert_array_equal(agent.released[0], [c.value for c in reference.counters])
    if hasattr(reference, "mean"):
        np.testing.assert_array_equal(agent.released_means[0], reference.mean)


FLOAT_AGENTS: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
    "HybridDPUCB": (
        lambda: HybridDPUCB(K, 1.0, seed=5, sampler="float"),
        lambda: ref.ReferenceHybridDPUCB(K, 1.0, seed=5, sampler="float"),
    ),
    "TreeDPUCB": (
        lambda: TreeDPUCB(K, 2000, 2.0, seed=5, sampler="float"),
        lambda: ref.ReferenceTreeDPUCB(K, 2000, 2.0, seed=5, sampler="float"),
    ),
    "AdaPUCB": (
        lambda: AdaPUCB(K, 1.0, seed=5, sampler="float"),
        lambda: ref.ReferenceAdaPUCB(K, 1.0, seed=5, sampler="float"),
    ),
    "AdaPUCB-cumulative": (
        lambda: AdaPUCB(K, 0.5, variant="cumulative", seed=5, sampler="float"),
        lambda: ref.ReferenceAdaPUCB(K, 0.5, variant="cumulative", seed=5, sampler="float"),
    ),
    "DPThompsonSampling": (
        lambda: DPThompsonSampling(K, 1.0, seed=5, sampler="float"),
        lambda: ref.ReferenceDPThompsonSampling(K, 1.0, seed=5, sampler="float"),
    ),
}


@pytest.mark.parametrize("name", FLOAT_AGENTS)
def test_float_sampler_agent_equals_its_reference_and_differs_from_the_lattice(name):
    """sampler="float" keeps the raw releases (the reference's raw noise); the default rounds them to the grid."""
    make, make_reference = FLOAT_AGENTS[name]
    table = np.random.default_rng(6).random((600, K))
    agent, reference = make(), make_reference()
    assert_plays_like_reference(agent, reference, table)
    released = agent.released[0] if hasattr(reference, "counters") else agent.released_means[0]
    expected = [c.value for c in reference.counters] if hasattr(reference, "counters") else reference.mean
    np.testing.assert_array_equal(released, expected)
    assert agent.grid == 0.0


@pytest.mark.parametrize("name", AGENTS)
def test_copy_i_of_a_batch_is_the_single_agent_with_copy_i_seed(name):
    make, _ = AGENTS[name]
    table = bernoulli((600, 4, K), [0.7, 0.5, 0.45], seed=2)
    batch = make(4, 100)
    assert batch._copy_seeds == [100, 101, 102, 103]
    actions = play_table(batch, table)
    for i in range(4):
        single = make(None, 100 + i)
        np.testing.assert_array_equal(play_table(single, table[:, i]), actions[:, i])


@pytest.mark.parametrize("name", AGENTS)
def test_seeds_reproduce_runs_and_reset_continues_the_noise(name):
    make, _ = AGENTS[name]
    table = np.random.default_rng(4).random((300, K))
    agent = make(None, 8)
    first = play_table(agent, table)
    np.testing.assert_array_equal(play_table(make(None, 8), table), first)
    agent.reset()  # fresh noise: the same table gives another run
    assert agent.t == 0 and agent.privacy_spent == (0.0, 0.0)
    assert (play_table(agent, table) != first).any()
    agent.reset(seed=8)  # an explicit seed restarts its streams
    np.testing.assert_array_equal(play_table(agent, table), first)
    unseeded = make(None, None)  # copy 0's seed drawn from the operating system, kept as private state
    again = make(None, unseeded._copy_seeds[0])
    np.testing.assert_array_equal(play_table(again, table), play_table(unseeded, table))


# Known answers ------------------------------------------------------------------------------------


def test_hybrid_draws_once_per_update_and_bounds_its_release_noise():
    eps = 2.0
    agent = HybridDPUCB(2, eps, seed=0)
    for arm in [0, 1, 0, 0, 0, 1]:  # arm 0: 4 pulls, arm 1: 2
        agent.update(arm, 0.5)
    assert agent.n_draws == 6 and agent.t == 6
    np.testing.assert_array_equal(agent.counts, [[4, 2]])
    # n = 4: three logarithmic terms of 2w/eps = w; n = 2: two. Round 7: gamma = 7^-4. w = 1 + grid:
    # the lattice sampler's widened sensitivity (1 for the float sampler).
    w = 1.0 + agent.grid
    assert 0.0 < agent.grid <= 2.0**-20 / eps
    bounds = agent.noise_bound()[0]
    gamma = 7.0**-4
    assert bounds[0] == pytest.approx(laplace_sum_bound([w] * 3, gamma), rel=1e-12)
    assert bounds[1] == pytest.approx(laplace_sum_bound([w] * 2, gamma), rel=1e-12)
    agent.update(1, 0.5)  # arm 1: n = 3 = 2 + 1, two log terms and one p-sum of scale w / (eps/2) = w
    assert agent.noise_bound()[0][1] == pytest.approx(laplace_sum_bound([w] * 3, 8.0**-4), rel=1e-12)
    raw = HybridDPUCB(2, eps, seed=0, sampler="float")
    raw.update(0, 0.5)
    assert raw.grid == 0.0 and raw.noise_bound()[0][0] == pytest.approx(laplace_sum_bound([1.0], 2.0**-4), rel=1e-12)


@pytest.mark.usefixtures("uncapped_epsilon")
def test_hybrid_plays_every_arm_once_then_its_index():
    agent = HybridDPUCB(3, 1e6, alpha=1.0, seed=0)
    arms = []
    for reward in [1.0, 0.0, 0.5, 1.0]:
        arms.append(agent.act())
        agent.update(arms[-1], reward)
    assert arms[:3] == [0, 1, 2]
    assert arms[3] == 0  # eps = 1e6: the index is UCB's up to ~1e-5: 1 + sqrt(ln 4) is the largest


def test_tree_depth_budget_and_relaxation():
    k, horizon, eps = 4, 1000, 2.0
    agent = TreeDPUCB(k, horizon, eps)
    assert agent.depth == tree_depth(horizon) == 10
    assert agent.epsilon_per_arm == eps / k
    log_t = math.log(horizon)
    assert agent.relaxation == pytest.approx(k * log_t**2 * math.log(k * horizon * log_t * horizon) / eps)
    assert TreeDPUCB(k, horizon, eps, "parallel", "exact").relaxation == 0.0
    # The relaxation is ln²T ln(K T ln T/γ)/ε_arm: with "parallel" trees (ε each), K times narrower
    # than with the split's ε/K (the published K ln²T ln(·)/ε is the split's).
    parallel = TreeDPUCB(k, horizon, eps, "parallel")
    assert parallel.relaxation == pytest.approx(log_t**2 * math.log(k * horizon * log_t * horizon) / eps)
    assert agent.relaxation == pytest.approx(k * parallel.relaxation)
    # K = 10, T = 1e5, eps = 5, split (the dp-mab/epsilon setting): c = 10 ln²T ln(10 T² ln T)/5 ≈ 7362.2.
    assert TreeDPUCB(10, 10**5, 5.0).relaxation == pytest.approx(7362.2, abs=0.1)
    assert agent.privacy_spent == (0.0, 0.0)
    agent.update(0, 1.0)
    depth = tree_depth(horizon)  # a reward enters at most depth p-sums at ε_arm/depth each
    assert agent.privacy_spent == (eps / k, depth * laplace_tail_delta(eps / k / depth))
    assert TreeDPUCB(k, horizon, eps, "parallel", n_envs=2).epsilon_per_arm == eps


def test_tree_learns_nothing_past_its_horizon():
    agent = TreeDPUCB(2, 3, 1.0, seed=0)
    for arm in [0, 1, 0]:
        agent.update(arm, 0.5)
    released = agent.released
    agent.update(1, 1.0)
    assert agent.t == 4
    np.testing.assert_array_equal(agent.released, released)
    assert agent.n_draws == 3
    with pytest.raises(ValueError, match="reward"):
        agent.update(1, 2.0)  # still checked


def test_adap_ucb_episodes_double_each_arms_pulls():
    agent = AdaPUCB(2, 1.0, seed=1)
    arms = play_table(agent, np.full((200, 2), 0.5))
    runs = []  # (arm, length) of consecutive pulls
    for a in arms:
        if runs and runs[-1][0] == a:
            runs[-1][1] += 1
        else:
            runs.append([int(a), 1])
    assert runs[0] == [0, 1] and runs[1] == [1, 1]  # every arm once
    pulls = {0: 1, 1: 1}
    for arm, length in runs[2:-1]:  # every complete episode pulls its arm as often as it was pulled
        assert length % pulls[arm] == 0  # (two episodes of the same arm can follow each other)
        pulls[arm] += length
    # One Laplace draw per closed episode; an arm pulled n times closed 1 + floor(log2 n) episodes
    # when n is a power of 2.
    counts = agent.counts[0]
    lengths = agent.epoch_lengths[0]
    closed = [1 + int(math.log2(length)) for length in lengths]
    assert agent.n_draws == sum(closed)
    assert all(length & (length - 1) == 0 for length in lengths)
    assert all(counts[a] >= lengths[a] for a in range(2))


def test_epoch_sizes_and_releases_of_dp_thompson_sampling():
    agent = DPThompsonSampling(2, 1.0, seed=0)
    sizes = []
    for _ in range(8):
        agent.update(0, 1.0)
        sizes.append(int(agent.release_sizes[0, 0]))
    # Releases after 1, 2, 4, 8 pulls over epochs of 1, 1, 2, 4 rewards.
    assert sizes == [1, 1, 1, 2, 2, 2, 2, 4]
    assert agent.n_draws == 4
    np.testing.assert_array_equal(agent.epoch_lengths, [[8, 1]])
    assert agent.act() == 1  # an arm without a release goes first


@pytest.mark.usefixtures("uncapped_epsilon")
def test_ldp_thompson_sampling_reports_are_the_r_coins_at_huge_epsilon():
    agent = LDPThompsonSampling(2, 1e3, seed=0)
    rewards = [1.0, 0.0, 1.0, 1.0, 0.0]
    for r in rewards:
        agent.update(0, r)
    np.testing.assert_array_equal(agent.successes, [[3, 0]])
    np.testing.assert_array_equal(agent.failures, [[2, 0]])
    assert agent.privacy_spent == pytest.approx((5e3, 0.0))  # no user ids: the stream is one user
    assert agent.stream_privacy_spent == (5e3, 0.0)


def test_ldp_thompson_sampling_composes_the_reports_of_each_user():
    agent = LDPThompsonSampling(2, 1.0, seed=0)
    for _ in range(1000):
        agent.update(agent.act(), 0.5, {"user_id": 7})
    assert agent.max_user_reports == 1000 and agent.privacy_per_report == (1.0, 0.0)
    assert agent.privacy_spent == pytest.approx((1000.0, 0.0))
    agent.reset()
    assert agent.privacy_spent == (0.0, 0.0)
    for t in range(1000):  # two users, 500 reports each
        agent.update(agent.act(), 0.5, {"user_id": t % 2})
    assert agent.max_user_reports == 500 and agent.privacy_spent == pytest.approx((500.0, 0.0))
    batch = LDPThompsonSampling(2, 1.0, n_envs=2, seed=0)
    for t in range(10):
        batch.update(batch.act(), np.full(2, 0.5), {"user_id": np.array([7, t])})
    np.testing.assert_array_equal(batch.max_user_reports, [10, 1])
    assert batch.privacy_spent == pytest.approx((10.0, 0.0))


def test_privacy_attributes():
    for name, (make, _) in AGENTS.items():
        agent = make(None, 0)
        assert isinstance(agent, PrivateAgent)
        unit = "one user" if isinstance(agent, LDPThompsonSampling) else "one round's reward"
        assert agent.privacy_unit and "\n" not in agent.privacy_unit and unit in agent.privacy_unit
        assert agent.privacy_spent == (0.0, 0.0), name
        agent.update(agent.act(), 0.5)
        # pure ε mechanisms: δ is only the bounded noise draws' tail (bandit_envs/privacy/lattice.py)
        assert agent.privacy_spent[0] > 0.0 and 0.0 <= agent.privacy_spent[1] < 1e-9, name


# Noise laws of the releases -----------------------------------------------------------------------


def first_release_noise(agent: Any, reward: float) -> np.ndarray:
    """Every copy pulls arm 0 once with ``reward``: its release minus the exact value."""
    n = agent.n_envs
    agent.update(np.zeros(n, dtype=np.int64), np.full(n, reward))
    if hasattr(agent, "released"):
        return np.asarray(agent.released[:, 0] - reward)
    return np.asarray(agent.released_means[:, 0] - reward)


@pytest.mark.parametrize(
    ("make", "scale"),
    [
        (lambda: HybridDPUCB(K, 0.5, n_envs=4000, seed=10), 2.0 / 0.5),
        (lambda: TreeDPUCB(K, 100, 0.5, n_envs=4000, seed=10), tree_depth(100) / (0.5 / K)),
        (lambda: TreeDPUCB(K, 100, 0.5, "parallel", n_envs=4000, seed=10), tree_depth(100) / 0.5),
        (lambda: AdaPUCB(K, 0.5, n_envs=4000, seed=10), 1.0 / 0.5),
        (lambda: DPThompsonSampling(K, 0.5, n_envs=4000, seed=10), 1.0 / 0.5),
    ],
    ids=["hybrid", "tree-split", "tree-parallel", "adap", "dp-ts"],
)
def test_a_release_has_laplace_noise_of_the_claimed_scale(make, scale):
    noise = first_release_noise(make(), 0.3)
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > ALPHA
    assert stats.kstest(noise, stats.laplace(scale=0.8 * scale).cdf).pvalue < ALPHA


def test_an_episode_release_has_the_noise_of_its_size():
    # Arm 0 pulled 4 times: its third release averages an episode of 2 rewards: Laplace(1/(2 eps)).
    eps = 0.5
    agent = AdaPUCB(K, eps, n_envs=4000, seed=20)
    zeros = np.zeros(4000, dtype=np.int64)
    for r in [0.1, 0.2, 0.4, 0.8]:
        agent.update(zeros, np.full(4000, r))
    assert (agent.release_sizes[:, 0] == 2).all()
    noise = agent.released_means[:, 0] - 0.6
    assert stats.kstest(noise, stats.laplace(scale=1.0 / (2 * eps)).cdf).pvalue > ALPHA
    assert stats.kstest(noise, stats.laplace(scale=1.0 / eps).cdf).pvalue < ALPHA


# Regret sanity -------------------------------------------------------------------------------------

MEANS = [0.8, 0.55, 0.5]
GAPS = np.max(MEANS) - np.array(MEANS)


def mean_regret(agent: Any, table: np.ndarray) -> float:
    return float(GAPS[play_table(agent, table)].sum(axis=0).mean())


@pytest.mark.usefixtures("uncapped_epsilon")
def test_with_a_huge_epsilon_the_private_agents_are_close_to_ucb_and_ts():
    copies, horizon = 100, 3000
    table = bernoulli((horizon, copies, K), MEANS, seed=6)
    ucb = mean_regret(UCB(K, n_envs=copies), table)
    ts = mean_regret(ThompsonSampling(K, n_envs=copies, seed=1), table)
    big = 1e6
    hybrid = mean_regret(HybridDPUCB(K, big, n_envs=copies, seed=1), table)
    tree = mean_regret(TreeDPUCB(K, horizon, big, n_envs=copies, seed=1), table)
    adap = mean_regret(AdaPUCB(K, big, n_envs=copies, seed=1), table)
    dpts = mean_regret(DPThompsonSampling(K, big, n_envs=copies, seed=1), table)
    ldpts = mean_regret(LDPThompsonSampling(K, big, n_envs=copies, seed=1), table)
    assert abs(hybrid - ucb) <= 0.05 * ucb  # the same index up to noise ~1e-6
    assert abs(tree - ucb) <= 0.1 * ucb
    assert abs(ldpts - ts) <= 0.3 * ts  # TS on the r-coins themselves (another random stream)
    # Other algorithms (doubling episodes, Gaussian samples): within a factor of UCB, and far
    # below uniform play.
    uniform = GAPS.mean() * horizon
    for regret in (adap, dpts):
        assert regret <= 4.0 * ucb and regret < 0.5 * uniform
    # And privacy costs regret: at eps = 0.1 each agent does worse than at a huge eps.
    assert mean_regret(AdaPUCB(K, 0.1, n_envs=copies, seed=1), table) > adap
    assert mean_regret(HybridDPUCB(K, 0.1, n_envs=copies, seed=1), table) > hybrid


# Arguments ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: HybridDPUCB(K, 0.0), ValueError, "epsilon"),
        (lambda: HybridDPUCB(K, 1e-300), ValueError, r"epsilon must be in \[1e-100"),
        (lambda: HybridDPUCB(K, 1.0, alpha=-1.0), ValueError, "alpha"),
        (lambda: HybridDPUCB(K, 1.0, confidence_power=0.0), ValueError, "confidence_power"),
        (lambda: TreeDPUCB(K, 0, 1.0), ValueError, "horizon"),
        (lambda: TreeDPUCB(K, 10, 1.0, per_arm_budget="half"), ValueError, "per_arm_budget"),
        (lambda: TreeDPUCB(K, 10, 1.0, width="paper"), ValueError, "width"),
        (lambda: TreeDPUCB(K, 10, 1.0, gamma=1.0), ValueError, "gamma"),
        (lambda: AdaPUCB(K, 1.0, variant="both"), ValueError, "variant"),
        (lambda: AdaPUCB(K, "1"), TypeError, "epsilon"),
        (lambda: DPThompsonSampling(1, 1.0), ValueError, "n_arms"),
        (lambda: LDPThompsonSampling(K, math.inf), ValueError, "epsilon"),
        (lambda: HybridDPUCB(10, 1.0, n_envs=10**10), ValueError, "agent state"),
        (lambda: TreeDPUCB(10, 10**6, 1.0, n_envs=10**9), ValueError, "agent state"),
    ],
)
def test_bad_arguments_are_refused_in_one_sentence(call, error, match):
    with pytest.raises(error, match=match) as exc:
        call()
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 300


@pytest.mark.parametrize("name", AGENTS)
def test_a_refused_update_changes_nothing(name):
    make, _ = AGENTS[name]
    agent, twin = make(3, 1), make(3, 1)
    table = np.random.default_rng(2).random((50, 3, K))
    play_table(agent, table[:20])
    play_table(twin, table[:20])
    a = agent.act()
    twin.act()
    with pytest.raises(ValueError, match="copy 1"):
        agent.update(a, np.array([0.5, 1.5, 0.5]))
    with pytest.raises(ValueError, match="copy 2"):
        agent.update(np.array([0, 1, K]), np.full(3, 0.5))
    agent.update(a, np.full(3, 0.5))
    twin.update(a, np.full(3, 0.5))
    np.testing.assert_array_equal(play_table(agent, table[20:]), play_table(twin, table[20:]))


def test_counters_state_the_laplace_draws_tail_of_every_release_a_reward_enters():
    # bandit_envs/privacy/lattice.py: a bounded Laplace release at ε is (ε, e**(ε − 36.04)/2)-DP.
    hybrid = HybridDPUCB(3, 2.0, seed=0)
    for _ in range(100):
        hybrid.update(hybrid.act(), 0.5)
    levels = (100).bit_length()  # one logarithmic increment at ε/2, at most 7 p-sums at ε/14
    assert hybrid.privacy_spent == (2.0, laplace_tail_delta(1.0) + levels * laplace_tail_delta(2.0 / (2 * levels)))
    assert 0.0 < hybrid.privacy_spent[1] < 2e-15


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: TreeDPUCB(3, 100, 1e-100), "epsilon=1e-100"),  # its scale squared overflowed a float power
        (lambda: TreeDPUCB(3, 50, 1.0, gamma=1e-320), "gamma=1e-320"),
        (lambda: TreeDPUCB(3, 50, 1.0, relaxation_epsilon=1e-320), "relaxation_epsilon=1e-320"),
    ],
)
def test_tree_ucb_names_the_parameter_that_makes_its_index_infinite(make, match):
    with pytest.raises(ValueError, match=match):
        make()
