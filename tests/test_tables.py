"""Reward tables streamed in blocks (agents.common.tables) and the elimination agents fed from them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from agents.common.tables import BlockTable, UniformTable
from agents.elimination.policies import AAE, DPSE, GAP, GAPU, AlphaSample
from bandit_envs.graph import GraphBanditEnv

ROOT = Path(__file__).resolve().parents[1]


def test_uniform_table_blocks_make_the_in_memory_table() -> None:
    table = UniformTable(3, 1_000, 7, block_rows=64)
    blocks = list(table.blocks())
    assert [b.shape for b in blocks[:2]] == [(64, 7), (64, 7)] and blocks[-1].shape == (1_000 - 15 * 64, 7)
    np.testing.assert_array_equal(np.concatenate(blocks), np.random.default_rng(3).random((1_000, 7)))
    np.testing.assert_array_equal(table.array(), np.concatenate(list(table.blocks())))  # every pass is the same
    assert isinstance(table, BlockTable) and table.shape == (1_000, 7)


@pytest.mark.parametrize(
    ("args", "error", "words"),
    [
        ((np.random.default_rng(1), 10, 3), TypeError, "seed must be an int, a SeedSequence or None"),
        ((1, 0, 3), ValueError, "n_rounds"),
        ((1, 10, 3, 0), ValueError, "block_rows"),
        ((-1, 10, 3), ValueError, "negative"),
    ],
)
def test_uniform_table_refuses_bad_arguments(args, error, words) -> None:
    with pytest.raises(error, match=words):
        UniformTable(*args)


_SEEDS = "seed must be None, a non-negative integer, a sequence of non-negative integers or a SeedSequence, got "


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((-1, 10, 3), ValueError, _SEEDS + "-1 (int)."),
        (("a", 10, 3), TypeError, _SEEDS + "'a' (str)."),
        ((1.5, 10, 3), TypeError, _SEEDS + "1.5 (float)."),
        (([1, -2], 10, 3), ValueError, _SEEDS + "[1, -2] (list)."),
        ((1, 2**53 + 1, 3), ValueError, f"n_rounds must be an integer in [1, 2**53], got {2**53 + 1}."),
        ((1, 2**70, 3), ValueError, f"n_rounds must be an integer in [1, 2**53], got {2**70}."),
    ],
)
def test_uniform_table_names_the_argument_it_refuses(args, error, message) -> None:
    """In one sentence of ours naming the argument, never numpy's "expected non-negative integer"."""
    with pytest.raises(error) as refused:
        UniformTable(*args)
    assert str(refused.value) == message


def test_uniform_table_refuses_blocks_or_a_table_that_would_not_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BANDIT_ENVS_MEMORY_LIMIT", str(1 << 20))
    with pytest.raises(
        ValueError, match=r"^n_arms=100000 with 100 rows a block \(one block of the table\) would need "
    ):
        UniformTable(1, 100, 100_000)
    table = UniformTable(1, 10**6, 10, block_rows=1_000)  # a block of 80 kB fits, the whole table does not
    assert next(iter(table.blocks())).shape == (1_000, 10)
    with pytest.raises(ValueError, match=r"^n_rounds=1000000 with n_arms=10 \(the whole table\) would need "):
        table.array()


@pytest.mark.parametrize("make", [GAP, GAPU, DPSE, AAE, AlphaSample])
def test_simulate_refuses_negative_gaps(make) -> None:
    """Gaps are μ* − μ_k >= 0: negated gaps would give a negative total regret."""
    env = GraphBanditEnv(n_arms=4, edge_probability=0.5, gap=0.2, horizon=100, instance_seed=1)
    private = {GAP: (1.0, env.adjacency), GAPU: (1.0, env.adjacency), DPSE: (1.0,)}.get(make, ())
    agent = make(4, 100, *private, seed=0)
    table = UniformTable(3, 100, 4)
    with pytest.raises(ValueError) as refused:
        agent.simulate(table, env.adjacency, -env.gaps, law=env.reward_model)
    bad = int(np.argmax(-env.gaps < 0))
    assert str(refused.value) == (
        f"gaps must be non-negative (μ* − μ_k >= 0 for every arm k), got {float(-env.gaps[bad])!r} at arm {bad}."
    )
    assert agent.simulate(table, env.adjacency, env.gaps, law=env.reward_model).total_regret >= 0.0


def test_simulate_refuses_a_block_table_of_more_than_2_53_rows() -> None:
    env = GraphBanditEnv(n_arms=4, edge_probability=0.5, gap=0.2, horizon=100, instance_seed=1)
    agent = GAP(4, 100, 1.0, env.adjacency, delta=0.1, seed=0)
    huge = _Blocks((2**70, 4), [np.full((60, 4), 0.5)])
    with pytest.raises(ValueError, match=r"^table must have shape \(T, 4\) with T in \[1, 2\*\*53\], got \("):
        agent.simulate(huge, env.adjacency, env.gaps)


def _agents(env: GraphBanditEnv, horizon: int) -> Iterator[object]:
    yield GAP(10, horizon, 1.0, env.adjacency, delta=0.1, seed=2)
    yield DPSE(10, horizon, 1.0, beta=0.1, seed=2)
    yield AAE(10, horizon, delta=0.1, side_observations=True, seed=2)
    yield AlphaSample(10, horizon, delta=0.1, seed=2)


@pytest.mark.parametrize("block_rows", [1, 333, 50_000])
def test_streamed_run_equals_in_memory_run(block_rows: int) -> None:
    horizon = 20_000
    env = GraphBanditEnv(n_arms=10, edge_probability=0.3, gap=0.2, horizon=horizon, instance_seed=1)
    table = UniformTable(5, horizon, 10, block_rows=block_rows)
    checkpoints = np.array([1, 999, 10_000, horizon])
    for streamed_agent, memory_agent in zip(_agents(env, horizon), _agents(env, horizon), strict=True):
        kwargs = {"law": env.reward_model, "checkpoints": checkpoints, "record_actions": True}
        kwargs["override"] = (12_345, 0, 0.0)
        a = streamed_agent.simulate(table, env.adjacency, env.gaps, **kwargs)  # type: ignore[attr-defined]
        b = memory_agent.simulate(table.array(), env.adjacency, env.gaps, **kwargs)  # type: ignore[attr-defined]
        assert a.total_regret == b.total_regret
        np.testing.assert_array_equal(a.actions, b.actions)
        np.testing.assert_array_equal(a.checkpoint_regret, b.checkpoint_regret)
        for x, y in zip(streamed_agent._state, memory_agent._state, strict=True):  # type: ignore[attr-defined]
            np.testing.assert_array_equal(x, y)


class _Blocks:
    """A table whose blocks are given (to test what simulate refuses)."""

    def __init__(self, shape: tuple[int, int], blocks: list[np.ndarray]) -> None:
        self.shape = shape
        self._blocks = blocks

    def blocks(self) -> Iterator[np.ndarray]:
        yield from self._blocks


def test_simulate_refuses_blocks_that_do_not_make_the_table() -> None:
    env = GraphBanditEnv(n_arms=4, edge_probability=0.5, gap=0.2, horizon=100, instance_seed=1)
    agent = GAP(4, 100, 1.0, env.adjacency, delta=0.1, seed=0)
    short = _Blocks((100, 4), [np.full((60, 4), 0.5)])
    with pytest.raises(ValueError, match="table's blocks must make 100 rows"):
        agent.simulate(short, env.adjacency, env.gaps)
    wide = _Blocks((100, 4), [np.full((100, 5), 0.5)])
    with pytest.raises(ValueError, match=r"table must have shape \(T, 4\)"):
        agent.simulate(wide, env.adjacency, env.gaps)
    bad = _Blocks((100, 4), [np.full((50, 4), 0.5), np.full((50, 4), 2.0)])
    before = [a.copy() for a in agent._state]
    with pytest.raises(ValueError, match="at round 50"):
        agent.simulate(bad, env.adjacency, env.gaps)
    for x, y in zip(agent._state, before, strict=True):  # restored
        np.testing.assert_array_equal(x, y)


def test_fork_goes_on_exactly_like_the_original() -> None:
    env = GraphBanditEnv(n_arms=10, edge_probability=0.3, gap=0.2, horizon=20_000, instance_seed=1)
    table = UniformTable(5, 20_000, 10).array()
    agent = GAP(10, 20_000, 1.0, env.adjacency, delta=0.1, seed=2)
    agent.simulate(table[:7_000], env.adjacency, env.gaps, law=env.reward_model)
    twin = agent.fork()
    a = agent.simulate(table, env.adjacency, env.gaps, law=env.reward_model, record_actions=True)
    b = twin.simulate(table, env.adjacency, env.gaps, law=env.reward_model, record_actions=True)
    np.testing.assert_array_equal(a.actions, b.actions)
    assert agent.rng.random() == twin.rng.random()
    assert twin._state[0] is not agent._state[0]


def test_fork_of_a_batch_copies_every_copys_generator() -> None:
    # Each copy draws from its own generator (docs/design.md, "Agents", Seeds): the fork gets
    # its own copies of them, in their current states, and then goes on as the original.
    env = GraphBanditEnv(n_arms=10, edge_probability=0.3, gap=0.2, horizon=20_000, instance_seed=1)
    table = UniformTable(5, 20_000, 10).array()
    agent = GAPU(10, 20_000, 1.0, env.adjacency, delta=0.1, n_envs=3, seed=2)
    agent.simulate(table[:7_000], env.adjacency, env.gaps, law=env.reward_model, copy=1)
    twin = agent.fork()
    for copy in (1, 2):
        a = agent.simulate(table, env.adjacency, env.gaps, law=env.reward_model, record_actions=True, copy=copy)
        b = twin.simulate(table, env.adjacency, env.gaps, law=env.reward_model, record_actions=True, copy=copy)
        np.testing.assert_array_equal(a.actions, b.actions)
    for mine, theirs in zip(agent._copy_rngs, twin._copy_rngs, strict=True):
        assert mine is not theirs and mine.random() == theirs.random()


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the child's VmHWM from /proc")
def test_a_streamed_gap_run_of_1e8_rounds_stays_under_400_mb() -> None:
    child = textwrap.dedent(
        """
        import numpy as np
        from agents.elimination.policies import GAP
        from agents.common.tables import UniformTable
        from bandit_envs.graph import GraphBanditEnv
        horizon = 10**8
        env = GraphBanditEnv(n_arms=10, edge_probability=0.2, gap=0.1, horizon=horizon, instance_seed=3)
        checkpoints = np.linspace(1, horizon, 100).astype(np.int64)
        result = GAP(10, horizon, 0.1, env.adjacency, seed=5).simulate(
            UniformTable(6, horizon, 10), env.adjacency, env.gaps, law=env.reward_model, checkpoints=checkpoints
        )
        assert result.checkpoint_regret[-1] == result.total_regret > 0
        # VmHWM, the child's own peak: its ru_maxrss would include the peak of the parent (pytest)
        # from before the fork and exec that started it.
        print(next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) / 1024)
        """
    )
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, cwd=ROOT, check=True)
    assert float(out.stdout) <= 400.0


def test_gap_tasks_give_the_same_rows_with_a_streamed_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above IN_MEMORY_TABLE_BYTES the gap tasks stream their table; the rows do not change."""
    from agents.experiments.gap import task
    from agents.experiments.registry import get_experiment

    for experiment_id, run_task in (("gap/privacy", task.privacy_task), ("gap/regret-p", task.regret_task)):
        exp = get_experiment(experiment_id).scaled(runs=2, horizon=20_000)
        in_memory = [run_task(exp, s, 1, 0) for s in range(2)]
        task.uniforms.cache_clear()
        monkeypatch.setattr(task, "IN_MEMORY_TABLE_BYTES", 0)
        assert isinstance(task.uniforms(0, 1, 20_000, exp.n_arms), UniformTable)
        assert [run_task(exp, s, 1, 0) for s in range(2)] == in_memory
        monkeypatch.undo()
        task.uniforms.cache_clear()
