"""Tests of the sampling streams (agents/common/sampling.py) and the Thompson sampling kernels built on them.

* the compiled SFC64 words equal numpy's SFC64 draw for draw; seeds give independent streams;
* normals, gammas and Betas equal their Python twins (SamplerReference) draw for draw, also
  through the all-copies pass (gamma_pass, then gamma_finish on its kept words), which must
  leave every stream where the twin's round of draws leaves it;
* the ziggurat's constants close its layers;
* each law is right: Kolmogorov–Smirnov tests at level ALPHA = 1e-3 with fixed seeds (so a
  correct sampler fails one with probability 1e-3 at a random seed; the seeds are fixed), each
  paired with a slightly wrong law the same test rejects, and the ziggurat's tail and wedges
  checked by their frequencies;
* ThompsonSampling equals its plain reference, copy i of a batch equals the single agent with
  seed s + i, and its choices follow the posterior (the probability the better arm wins).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import lazy_module

from agents import LDPThompsonSampling, ThompsonSampling
from agents.common import sampling
from agents.stochastic import thompson_kernels as ts_kernels
from bandit_envs._jit import njit  # cached on disk, with its dependencies stamped (a warm run loads it)

stats = lazy_module("scipy.stats")

ALPHA = 1e-3


@njit
def _words(streams, b, n):  # pragma: no cover
    out = np.empty(n, dtype=np.uint64)
    state = sampling.load(streams, b)
    for i in range(n):
        out[i], state = sampling.next_word(state)
    sampling.store(streams, b, state)
    return out


@njit
def _normals(streams, b, n):  # pragma: no cover
    out = np.empty(n)
    state = sampling.load(streams, b)
    for i in range(n):
        word, state = sampling.next_word(state)
        out[i], state = sampling.normal(word, state)
    sampling.store(streams, b, state)
    return out


@njit
def _gammas(streams, b, shape, n):  # pragma: no cover
    out = np.empty(n)
    d, c = sampling.shape_constants(shape)
    state = sampling.load(streams, b)
    for i in range(n):
        out[i], state = sampling.gamma(state, d, c)
    sampling.store(streams, b, state)
    return out


@njit
def _betas(streams, b, a, c, n):  # pragma: no cover
    """n Betas, each a round of one: X's first word, Y's, then whatever either needs further."""
    out = np.empty(n)
    da, ca = sampling.shape_constants(a)
    dc, cc = sampling.shape_constants(c)
    state = sampling.load(streams, b)
    for i in range(n):
        word_x, state = sampling.next_word(state)
        word_y, state = sampling.next_word(state)
        x, state = sampling.gamma_finish(word_x, state, da, ca)
        y, state = sampling.gamma_finish(word_y, state, dc, cc)
        out[i] = x / (x + y)
    sampling.store(streams, b, state)
    return out


@njit(error_model="numpy")
def _pass_rounds(streams, d, c, rounds):  # pragma: no cover
    """``rounds`` gamma passes over all copies, then each copy's undecided draws in round order."""
    copies = streams.shape[1]
    out = np.empty((rounds, copies))
    words = np.empty((rounds, copies), dtype=np.uint64)
    for j in range(rounds):
        sampling.gamma_pass(streams, d[j], c[j], out[j], words[j])
    undecided = 0
    for b in range(copies):
        state = sampling.load(streams, b)
        for j in range(rounds):
            if out[j, b] != out[j, b]:
                undecided += 1
                out[j, b], state = sampling.gamma_finish(words[j, b], state, d[j, b], c[j, b])
        sampling.store(streams, b, state)
    return out, undecided


def test_words_are_numpys_sfc64_and_streams_are_per_seed():
    seeds = [0, 9, 2**40 + 1]
    streams = sampling.new_streams(seeds)
    assert streams.shape == (4, 3)
    for b, seed in enumerate(seeds):
        expected = sampling.sampling_bit_generator(seed).random_raw(1000)
        np.testing.assert_array_equal(_words(streams, b, 1000), expected)
    # the sampling stream of a seed is neither default_rng's nor another seed's
    assert not np.array_equal(sampling.sampling_bit_generator(3).random_raw(4), np.random.SFC64(3).random_raw(4))
    assert sampling.copy_seeds(5, 3) == [5, 6, 7]
    seeds = sampling.copy_seeds(np.uint8(255), 2)  # a numpy integer seed: ints, not wrapping at the dtype's end
    assert seeds == [255, 256] and all(type(s) is int for s in seeds)
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0, got -1\.$"):
        sampling.copy_seeds(-1, 2)
    first = sampling.copy_seeds(None, 2)
    assert first[1] == first[0] + 1


def test_uniform_pass_draws_each_copys_next_uniform():
    seeds = [4, 5, 2**33]
    streams = sampling.new_streams(seeds)
    gens = [np.random.Generator(sampling.sampling_bit_generator(s)) for s in seeds]
    out = np.empty(len(seeds))
    for _ in range(3):
        sampling.uniform_pass(streams, out)
        np.testing.assert_array_equal(out, [g.random() for g in gens])


def test_kernels_equal_their_python_twins_draw_for_draw():
    streams = sampling.new_streams([11])
    twin = sampling.SamplerReference(11)
    np.testing.assert_array_equal(_normals(streams, 0, 3000), [twin.normal() for _ in range(3000)])
    for shape in (1.0, 1.5, 4.0, 250.0):
        np.testing.assert_array_equal(_gammas(streams, 0, shape, 1000), [twin.gamma(shape) for _ in range(1000)])
    np.testing.assert_array_equal(_betas(streams, 0, 3.0, 8.0, 1000), [twin.beta(3.0, 8.0) for _ in range(1000)])
    # both are still at the same place of the stream
    assert _words(streams, 0, 1)[0] == twin.word()


def test_all_copies_pass_draws_what_the_twin_draws_in_a_round():
    # small shapes (many slow paths) and large ones (the fast path's bound is tightest there):
    # a fast-path acceptance the exact test would refuse would show as a different draw
    copies, rounds = 3000, 3
    rng = np.random.default_rng(0)
    shapes = 1.0 + np.concatenate(
        [rng.integers(0, 40, (rounds, 2000)), rng.integers(40, 10**6, (rounds, 1000))], axis=1
    ).astype(np.float64)
    d = shapes - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    seeds = list(range(copies))
    streams = sampling.new_streams(seeds)
    out, undecided = _pass_rounds(streams, d, c, rounds)
    assert 0 < undecided < copies * rounds // 10  # the fast path decides most, not all
    for b in range(0, copies, 7):
        twin = sampling.SamplerReference(seeds[b])
        assert out[:, b].tolist() == twin.gammas(shapes[:, b].tolist())
        assert _words(streams, b, 1)[0] == twin.word()  # the stream is where the twin's is


@njit
def _fast_path_disagreements(words, d, c):  # pragma: no cover
    """(trials the fast path accepted, of those the ones gamma_finish decides otherwise or with more words)."""
    state = (np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4))
    accepted, wrong = 0, 0
    for i in range(words.shape[0]):
        value, ok = sampling.gamma_trial(words[i], d[i], c[i])
        if ok:
            accepted += 1
            exact, after = sampling.gamma_finish(words[i], state, d[i], c[i])
            if exact != value or after != state:
                wrong += 1
    return accepted, wrong


def test_the_fast_path_accepts_only_what_the_exact_test_accepts():
    # 4 million trials on shapes from 1 to 10^7 (the bound's margin matters most at large d,
    # where G = d y^4 (-3/4 + 3/5 y - y^2 / (2 min(1, 1 + y))) is computed from a tiny y): every acceptance of
    # gamma_trial must be an acceptance of gamma_finish on the same word, with no further word.
    rng = np.random.default_rng(11)
    n = 4_000_000
    words = rng.integers(0, 2**64, n, dtype=np.uint64)
    shapes = np.exp(rng.uniform(0.0, np.log(1e7), n))
    shapes[: n // 8] = 1.0 + rng.integers(0, 20, n // 8)
    d = shapes - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    accepted, wrong = _fast_path_disagreements(words, d, c)
    assert wrong == 0
    assert accepted > 0.9 * n  # and it does decide most trials


def test_the_ziggurats_constants_close_its_layers():
    # v = r f(r) + the tail's area beyond r, and the recursion from r reaches f = 1 at the top
    r, v = sampling.TAIL_START, sampling.LAYER_AREA
    tail = math.sqrt(2.0 * math.pi) * stats.norm.sf(r)
    assert abs(r * math.exp(-0.5 * r * r) + tail - v) < 1e-17
    edges = sampling._ziggurat_edges()
    top = edges[sampling.LAYERS - 1]
    assert abs(v / top + math.exp(-0.5 * top * top) - 1.0) < 1e-13
    assert np.all(np.diff(edges) < 0) and edges[1] == r and edges[-1] == 0.0
    # the share of draws that leave the inner rectangles, as the module states
    outside = np.mean(1.0 - edges[1:] / edges[:-1])
    assert 0.0042 < outside < 0.0044


def test_normals_have_the_normal_law_in_the_body_wedges_and_tail():
    streams = sampling.new_streams([1])
    x = _normals(streams, 0, 1_000_000)
    assert stats.kstest(x, stats.norm.cdf).pvalue > ALPHA
    assert stats.kstest(x, stats.norm(scale=1.02).cdf).pvalue < ALPHA
    # the tail beyond r = 4.039 (drawn by Marsaglia's method) has its probability 5.37e-5:
    # a count of about 54, Poisson sd about 7.3
    p_tail = 2 * stats.norm.sf(sampling.TAIL_START)
    tail = np.abs(x) > sampling.TAIL_START
    assert abs(tail.sum() - p_tail * x.size) < 4 * math.sqrt(p_tail * x.size)
    assert stats.kstest(np.abs(x[tail]) - sampling.TAIL_START, lambda t: _tail_cdf(t)).pvalue > ALPHA


def _tail_cdf(t: np.ndarray) -> np.ndarray:
    r = sampling.TAIL_START
    return 1.0 - stats.norm.sf(r + t) / stats.norm.sf(r)


@pytest.mark.parametrize("shape", [1.0, 2.0, 7.0, 300.0])
def test_gammas_have_the_gamma_law(shape: float) -> None:
    streams = sampling.new_streams([2])
    g = _gammas(streams, 0, shape, 100_000)
    assert stats.kstest(g, stats.gamma(shape).cdf).pvalue > ALPHA
    assert stats.kstest(g, stats.gamma(shape * 1.02).cdf).pvalue < ALPHA


def test_betas_have_the_beta_law():
    streams = sampling.new_streams([3])
    x = _betas(streams, 0, 3.0, 8.0, 50_000)
    assert stats.kstest(x, stats.beta(3.0, 8.0).cdf).pvalue > ALPHA
    assert stats.kstest(x, stats.beta(3.0, 7.5).cdf).pvalue < ALPHA


def test_thompson_sampling_equals_its_reference_and_copies_equal_single_agents():
    k, copies, rounds = 4, 6, 400
    table = (np.random.default_rng(5).random((rounds, copies, k)) < [0.2, 0.4, 0.5, 0.45]).astype(float)
    batch = ThompsonSampling(k, n_envs=copies, seed=20)
    refs = [ts_kernels.ThompsonReference(k, 20 + i) for i in range(copies)]
    single = ThompsonSampling(k, seed=23)
    for t in range(rounds):
        a = batch.act()
        assert [r.act() for r in refs] == a.tolist()
        assert single.act() == a[3]
        batch.update(a, table[t, np.arange(copies), a])
        single.update(int(a[3]), float(table[t, 3, a[3]]))
        for i, r in enumerate(refs):
            r.update(int(a[i]), float(table[t, i, a[i]]))
    np.testing.assert_array_equal(batch.successes, [r.successes for r in refs])
    assert batch.copy_seeds == [20 + i for i in range(copies)]


@pytest.mark.parametrize("shape_pair", [(1.0, 1.0), (2.0, 9.0), (40.0, 3.0)])
def test_both_forms_of_the_batched_choice_draw_the_same(shape_pair: tuple[float, float]) -> None:
    # The first trials in one loop (gathers) and in three (scalar table loads): the same words, trials,
    # arms and stream states, whichever form this machine's beta_choose is; small shapes leave many
    # trials to gamma_finish, so the finishing pass is compared too.
    k, copies = 7, 301
    successes = np.full((copies, k), shape_pair[0] - 1.0)
    failures = np.full((copies, k), shape_pair[1] - 1.0)
    shapes = np.empty((ts_kernels.SHAPE_WORDS, k, copies))
    ts_kernels.refresh_all(successes, failures, shapes)
    chosen = []
    for tables_apart in (False, True):
        choose = ts_kernels.compile_beta_choose(tables_apart)
        streams = sampling.new_streams(list(range(copies)))
        rounds = []
        for _ in range(20):
            out = np.empty(copies, dtype=np.int64)
            choose(shapes, streams, out)
            rounds.append(out)
        chosen.append((np.array(rounds), streams))
    np.testing.assert_array_equal(chosen[0][0], chosen[1][0])
    np.testing.assert_array_equal(chosen[0][1], chosen[1][1])
    assert len(np.unique(chosen[0][0])) == k  # every arm chosen somewhere: not a constant


@njit
def _entries(words):
    out = np.empty(words.shape[0])
    inner = np.empty(words.shape[0], dtype=np.int32)
    for i in range(words.shape[0]):
        out[i], inner[i] = sampling.ziggurat_entries(words[i])
    return out, inner


def test_table_entry_reads_the_entry():
    words = np.random.default_rng(3).integers(0, 2**63, 5000, dtype=np.uint64)
    widths, inner = _entries(words)
    np.testing.assert_array_equal(
        widths, sampling.SIGNED_WIDTHS[(words & np.uint64(2 * sampling.LAYERS - 1)).astype(np.int64)]
    )
    np.testing.assert_array_equal(inner, sampling.INNER[(words & np.uint64(sampling.LAYERS - 1)).astype(np.int64)])


def test_ts_n_equals_its_reference_with_side_observations():
    k, rounds = 5, 200
    rng = np.random.default_rng(2)
    agent = ThompsonSampling(k, side_observations=True, seed=4)
    ref = ts_kernels.ThompsonReference(k, 4)
    for _ in range(rounds):
        a = agent.act()
        assert a == ref.act()
        mask = rng.random(k) < 0.5
        mask[a] = True
        observed = np.where(mask, rng.random(k), 0.0)
        agent.update(a, observed[a], {"observed_mask": mask, "observed_rewards": observed})
        ref.update_observed(mask, observed)
    np.testing.assert_array_equal(agent.failures[0], ref.failures)


def test_thompson_choice_follows_the_posterior():
    # S, F fixed: the better of two arms wins with probability P(θ1 > θ0), θ0 ~ Beta(4, 8), θ1 ~ Beta(6, 6)
    copies = 20_000
    agent = ThompsonSampling(2, n_envs=copies, seed=9)
    for arm, s, f in ((0, 3, 7), (1, 5, 5)):
        for reward in [1.0] * s + [0.0] * f:
            agent.update(np.full(copies, arm), np.full(copies, reward))
    wins = float(np.mean(agent.act() == 1))
    grid = np.linspace(0, 1, 20_001)
    p = float(np.trapezoid(stats.beta(6, 6).pdf(grid) * stats.beta(4, 8).cdf(grid), grid))
    assert abs(wins - p) < 4 * math.sqrt(p * (1 - p) / copies)


def test_ldp_thompson_sampling_uses_the_sampling_streams_and_keeps_its_shapes():
    agent = LDPThompsonSampling(3, 1.0, n_envs=2, seed=1)
    for _ in range(50):
        a = agent.act()
        agent.update(a, np.array([1.0, 0.0]))
    d, c = sampling.gamma_constants(float(agent.successes[1, 2]) + 1.0)
    assert agent._shapes[0, 2, 1] == d and agent._shapes[1, 2, 1] == c
