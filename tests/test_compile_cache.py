"""A second process compiles nothing: every numba function the built-in experiments reach is cached on disk.

Each case runs a small workload twice, each time in a fresh interpreter, with a fresh, empty
``NUMBA_CACHE_DIR`` shared by the two runs (numba then keeps its cache files there rather than
beside the sources). A listener on numba's event API records the outermost ``"numba:compile"``
events of each run (compiling a function compiles the functions it calls first, inside its own
event; a function loaded from the disk cache sends no event). The first run must compile
something (else the listener hears nothing and the test would prove nothing), the second run
nothing; a failure names the functions that the second run compiled.

The families' cases run ``banditlab run`` in-process (``--jobs 1``) on a few small experiments and
take from half a minute to minutes when nothing is cached, so they are ``slow``; the step-API
case (environments and index agents stepped one round at a time) runs by default. The dp-mab
case also steps the agents of the dp-mab kernels that no experiment plays, and names the kernels
(:data:`DPMAB_KERNELS`) its first run must compile, so that a workload that stopped reaching one
fails rather than passing vacuously.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agents.experiments import cli
from agents.experiments.core import backends
from agents.experiments.core.compiling import CompileWatch

ROOT = Path(__file__).resolve().parents[1]

#: Runs the workload ``sys.argv[1]`` (Python source) with a listener on numba's compile events that
#: appends ``pid module.qualname`` of each outermost compilation to the file ``sys.argv[2]``: worker
#: processes forked by the workload inherit the listener and report their compilations there too.
_CHILD = r"""
import os, sys
from numba.core import event

depth = 0


class Outermost(event.Listener):
    def on_start(self, ev):
        global depth
        if depth == 0:
            function = ev.data["dispatcher"].py_func
            with open(sys.argv[2], "a") as log:
                log.write(f"{os.getpid()} {function.__module__}.{function.__qualname__}\n")
        depth += 1

    def on_end(self, ev):
        global depth
        depth -= 1


event.register("numba:compile", Outermost())
exec(compile(sys.argv[1], "<workload>", "exec"))
"""

#: The environments and index agents one round at a time (Gymnasium step API), single and vector.
_STEP_API = """
import gymnasium as gym
import numpy as np
import agents
import bandit_envs

env = gym.make("GraphBandit-v0", horizon=60)
obs, info = env.reset(seed=1)
ucbn = agents.UCBN(env.unwrapped.n_arms, seed=2)
for _ in range(60):
    action = ucbn.act(obs)
    obs, reward, terminated, truncated, step_info = env.step(action)
    ucbn.update(action, reward, step_info)
vector = gym.make_vec("GraphBandit-v0", num_envs=3, horizon=20)
obs, info = vector.reset(seed=0)
ucb = agents.UCB(vector.single_action_space.n, n_envs=3, seed=3)
for _ in range(20):
    action = ucb.act(obs)
    obs, reward, terminated, truncated, step_info = vector.step(action)
    ucb.update(action, reward, step_info)
single = env.unwrapped
obs, info = env.reset(seed=1)
gap = agents.GAP(single.n_arms, 60, 1.0, single.adjacency, delta=0.1, seed=4)
for _ in range(30):
    action = gap.act(obs)
    obs, reward, terminated, truncated, step_info = env.step(action)
    gap.update(action, reward, step_info)
table = np.random.default_rng(5).random((60, single.n_arms))
gap.simulate(table, single.adjacency, single.gaps, law=single.reward_model, checkpoints=np.array([60]))
"""


#: The stochastic and adversarial agents of the dp-mab kernels that no built-in experiment plays
#: (EpsilonGreedy, MOSS, Exp3, LDP Thompson sampling), on a gymnasium vector env, a few rounds each.
_DPMAB_AGENTS = """
import gymnasium as gym
import agents
import bandit_envs

vector = gym.make_vec("GraphBandit-v0", num_envs=2, horizon=30)
k = vector.single_action_space.n
for agent in (
    agents.EpsilonGreedy(k, 0.1, n_envs=2, seed=1),
    agents.EpsilonGreedy(k, schedule="decaying", n_envs=2, seed=1),
    agents.MOSS(k, 30, n_envs=2),
    agents.Exp3(k, 30, n_envs=2, seed=2),
    agents.LDPThompsonSampling(k, 1.0, n_envs=2, seed=3),
):
    obs, info = vector.reset(seed=0)
    for _ in range(30):
        action = agent.act(obs)
        obs, reward, terminated, truncated, step_info = vector.step(action)
        agent.update(action, reward, step_info)
"""

#: The kernels of the dp-mab families (central-DP UCBs, AdaP, DP-TS, LDP-TS, KL-UCB, MOSS,
#: ε-greedy, Exp3 and its graph versions) that Python calls (directly or through a compiled entry
#: point): the first run of the "dp-mab" case must compile each of them (so the second run's
#: silence is about them). The functions they call compile inside them and send no outermost
#: event: Exp3's ``sample``, the noise streams of ``agents.common.philox``
#: (``_refill``, ``laplace``), the sampling passes of ``agents.common.sampling`` (``gamma_pass``,
#: ``gamma_pass_finish``), ``standard_laplace``, ``tree_add`` and the ``inline="always"`` helpers.
DPMAB_KERNELS = frozenset(
    f"agents.{module}.{name}"
    for module, names in {
        "central_dp.kernels": (
            "hybrid_update", "bound_choose", "tree_update", "epoch_update", "adap_choose", "gaussian_ts_choose",
            "rr_update",
        ),
        "stochastic.thompson_kernels": (
            "refresh_all", "compile_beta_choose.<locals>.beta_choose", "coin_update", "coin_update_observed",
        ),
        "stochastic.index_kernels": ("mean_update", "greedy_choose", "klucb_update", "klucb_choose", "moss_choose"),
        "adversarial.kernels": ("exp3_update", "exp3set_update", "exp3ix_update"),
    }.items()
    for name in names
)  # fmt: skip


def _banditlab(*commands: str, jobs: int = 1) -> str:
    """Workload: ``banditlab`` commands run in the child's process (by default one job: no worker processes)."""
    lines = ["import os, tempfile", "from agents.experiments.cli import main", "out = tempfile.mkdtemp()"]
    for i, command in enumerate(commands):
        argv = [*command.split(), "--jobs", str(jobs), "--no-progress"]
        lines.append(f"assert main({argv!r} + ['--out', os.path.join(out, '{i}')]) == 0, {command!r}")
    return "\n".join(lines) + "\n"


def _family_case(case_id: str, *commands: str, extra: str = "", kernels: frozenset[str] = frozenset()) -> Any:
    """A slow case: ``banditlab`` ``commands`` (then the code ``extra``) and the kernels its first run must compile."""
    return pytest.param(_banditlab(*commands) + extra, kernels, id=case_id, marks=pytest.mark.slow)


CASES = [
    pytest.param(_STEP_API, frozenset(), id="step-api"),
    _family_case(
        "gap", "run gap/regret-eps --quick --runs 1 --horizon 400", "run gap/privacy --quick --runs 1 --horizon 400"
    ),
    _family_case("budget", "run budget/alpha --quick --horizon 50", "run budget/baselines --quick --horizon 50"),
    _family_case(
        "ldp-linucb",
        "run ldp-linucb/epsilon --quick --horizon 500",
        "run ldp-linucb/sqrt-t --quick --horizon 500",
        "run ldp-linucb/realistic --quick --horizon 500",
    ),
    _family_case(
        "dp-mab",
        "run dp-mab/epsilon --quick --runs 2 --horizon 300",
        "run graph/side-observations --quick --runs 2 --horizon 300",
        extra=_DPMAB_AGENTS,
        kernels=DPMAB_KERNELS,
    ),
    _family_case("rl", "run rl/graph --quick --runs 1 --horizon 50"),
]


class Run:
    """A workload run in a fresh interpreter: its pid, standard error and outermost compilations."""

    def __init__(self, workload: str, cache: Path, tmp_path: Path) -> None:
        log = tmp_path / "compiled.log"
        log.unlink(missing_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
        env["NUMBA_CACHE_DIR"] = str(cache)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
        with subprocess.Popen(
            [sys.executable, "-c", _CHILD, workload, str(log)],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        ) as child:
            self.pid = child.pid
            _, self.stderr = child.communicate(timeout=1800)
        assert child.returncode == 0, f"exit {child.returncode}; stderr:\n{self.stderr[-3000:]}"
        lines = log.read_text().splitlines() if log.exists() else []
        #: (pid, ``module.qualname``) of each outermost compilation, in order.
        self.compiled = [(int(pid), name) for pid, name in (line.split(" ", 1) for line in lines)]

    def names(self) -> str:
        """The compiled functions, for a failure message."""
        return ", ".join(sorted({name for _, name in self.compiled}))


@pytest.mark.integration  # a fresh Python process per case, which loads every kernel from the disk cache
@pytest.mark.parametrize(("workload", "kernels"), CASES)
def test_a_second_process_compiles_nothing(workload: str, kernels: frozenset[str], tmp_path: Path) -> None:
    cache = tmp_path / "numba-cache"
    first = Run(workload, cache, tmp_path)
    assert first.compiled, "the first run compiled nothing: the cache was not empty, or the listener heard nothing"
    missing = kernels - {name for _, name in first.compiled}
    assert not missing, f"the workload does not reach (or did not compile) {', '.join(sorted(missing))}"
    second = Run(workload, cache, tmp_path)
    assert not second.compiled, (
        f"the second run compiled {len(second.compiled)} function(s) instead of loading them from numba's disk "
        f"cache: {second.names()}"
    )


@pytest.mark.slow
def test_with_jobs_banditlab_compiles_in_its_own_process_and_says_so(tmp_path: Path) -> None:
    """``--jobs 2``: the first task runs in banditlab's process, which compiles, saves and times the kernels.

    The workers load them from the disk cache (every task of ldp-linucb/epsilon uses the same kernels).
    """
    workload = _banditlab("run ldp-linucb/epsilon --quick --horizon 500", jobs=2)
    cache = tmp_path / "numba-cache"
    first = Run(workload, cache, tmp_path)
    assert first.compiled
    if multiprocessing.get_start_method() == "fork":  # forked workers inherit the listener and report too
        workers = sorted({name for pid, name in first.compiled if pid != first.pid})
        assert not workers, f"the workers compiled {', '.join(workers)} instead of loading them from the cache"
    assert "Compiling numba kernels (first run only)..." in first.stderr, first.stderr
    pattern = r"Compiled numba kernels in \d+\.\d s \(cached: later runs skip this\)\."
    assert re.search(pattern, first.stderr), first.stderr
    second = Run(workload, cache, tmp_path)
    assert not second.compiled, second.names()
    assert "ompil" not in second.stderr, second.stderr


@pytest.mark.slow
def test_workers_outlive_a_parallel_kernel_run_in_banditlab_s_process(tmp_path: Path) -> None:
    """The first task (Gowalla, UCB) runs the parallel ``_count`` in banditlab's process, the second in a worker.

    A process forked once GNU OpenMP's threads run aborts: the workers must start before the first task.
    """
    workload = _banditlab("run budget/alpha --quick --horizon 50 --data synthetic-gowalla", jobs=2)
    first = Run(workload, tmp_path / "numba-cache", tmp_path)  # exit status 0: no worker died
    assert "bandit_envs.budget._geo._count" in {name for pid, name in first.compiled if pid == first.pid}


def _fresh_pair() -> Any:
    """An uncompiled numba function that calls another (both new, so compiling them sends events)."""
    import numba

    @numba.njit
    def inner(x: float) -> float:
        return x + 1.0

    @numba.njit
    def outer(x: float) -> float:
        return inner(x) * 2.0

    return outer


def test_compile_watch_counts_outermost_compilations_and_their_time() -> None:
    outer = _fresh_pair()
    firsts: list[bool] = []
    with CompileWatch(on_first=firsts.append) as watch:
        assert outer(1.0) == 4.0
        assert outer(2.0) == 6.0  # compiled already: no event
    assert watch.active is False  # unregistered on exit
    assert [name.rsplit(".", 1)[-1] for name in watch.names] == ["outer"]
    assert watch.names[0].startswith(f"{__name__}._fresh_pair.")
    assert watch.seconds > 0.0
    assert watch.cached_seconds == 0.0  # plain numba.njit: nothing saved on disk
    assert firsts == [False]
    assert (
        watch.message()
        == f"Compiled numba kernels in {watch.seconds:.1f} s (not cached on disk: every run compiles them)."
    )
    outer2 = _fresh_pair()
    outer2(1.0)
    assert len(watch.names) == 1, "the watch still listens after the with block"


def test_compile_watch_never_breaks_a_compilation(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(cached: bool) -> None:
        raise RuntimeError("standard error is closed")

    with CompileWatch(on_first=fail) as watch:
        assert _fresh_pair()(1.0) == 4.0
    assert len(watch.names) == 1 and watch.seconds > 0.0
    import numba.core

    monkeypatch.delattr(numba.core, "event")  # a numba without the event API (its own modules keep theirs)
    monkeypatch.setitem(sys.modules, "numba.core.event", None)
    with CompileWatch(on_first=fail) as missing:
        assert _fresh_pair()(1.0) == 4.0
    assert missing.active is False and missing.names == [] and missing.seconds == 0.0


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_compile_watch_ignores_forked_children(tmp_path: Path) -> None:
    said = tmp_path / "said"

    def say(cached: bool) -> None:
        with said.open("a") as out:
            out.write(f"{os.getpid()}\n")

    with CompileWatch(on_first=say) as watch:
        child = multiprocessing.get_context("fork").Process(target=lambda: _fresh_pair()(1.0))
        child.start()
        child.join(timeout=120)
        assert child.exitcode == 0
        assert not said.exists() and watch.names == []
        _fresh_pair()(1.0)
    assert said.read_text() == f"{os.getpid()}\n" and len(watch.names) == 1


def test_compile_watch_message_says_what_later_runs_skip() -> None:
    watch = CompileWatch()
    watch.seconds, watch.cached_seconds = 12.34, 12.34
    assert watch.message() == "Compiled numba kernels in 12.3 s (cached: later runs skip this)."
    watch.cached_seconds = 8.0
    assert watch.message() == "Compiled numba kernels in 12.3 s (later runs skip the 8.0 s cached on disk)."


def test_compile_watch_says_when_a_cached_kernel_could_not_be_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # numba says nothing when it cannot save a compilation (a full disk): the index file is missing.
    (tmp_path / "cached_kernel.py").write_text(
        "import numba\n\n@numba.njit(cache=True)\ndef twice(x):\n    return 2.0 * x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    module = importlib.import_module("cached_kernel")
    with CompileWatch() as watch:
        assert module.twice(1.5) == 3.0
    assert watch.unsaved() == 0 and "(cached: later runs skip this)" in watch.message()
    indexes = list(tmp_path.rglob("cached_kernel.twice-*.nbi"))  # beside the module, or in $NUMBA_CACHE_DIR
    indexes += list(Path(os.environ.get("NUMBA_CACHE_DIR", tmp_path)).rglob("cached_kernel.twice-*.nbi"))
    assert indexes
    for index in set(indexes):
        index.unlink()
    assert watch.unsaved() == 1
    assert "1 of the kernels meant for the disk cache could not be saved there" in watch.message()
    sys.modules.pop("cached_kernel", None)


def test_banditlab_run_says_it_compiles_and_for_how_long(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    kernel = _fresh_pair()

    def run(args: Any, argv: Any) -> tuple[Path, str]:  # compiles ``kernel`` the first time only
        assert kernel(1.0) == 4.0
        return tmp_path, "the summary"

    monkeypatch.setattr(cli, "_run_from_args", run)
    monkeypatch.setattr(cli, "NOTE_SECONDS", 1e-9)
    assert cli.main(["run", "gap/regret-eps", "--quick"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("the summary\n")
    lines = err.splitlines()
    assert lines[0] == "Compiling numba kernels..."
    assert re.fullmatch(
        r"Compiled numba kernels in \d+\.\d s \(not cached on disk: every run compiles them\)\.", lines[-1]
    )
    assert cli.main(["run", "gap/regret-eps", "--quick"]) == 0  # nothing left to compile: nothing said
    assert "ompil" not in capsys.readouterr().err


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="only forked workers see the patched run_task")
def test_with_workers_the_first_task_runs_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backends, "run_task", lambda task: [{"pid": os.getpid(), "task": task}])
    monkeypatch.setattr(backends, "warm_up_parts", lambda task, parts: [])
    pending: list[Any] = [(i, f"task {i}") for i in range(6)]
    done = list(backends.LocalBackend(2).run(pending))
    assert done[0] == (0, [{"pid": os.getpid(), "task": "task 0"}])
    assert sorted(index for index, _ in done) == list(range(6))
    assert all(rows == [{"pid": rows[0]["pid"], "task": f"task {index}"}] for index, rows in done)
    assert os.getpid() not in {rows[0]["pid"] for _, rows in done[1:]}


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="only forked workers see the patched run_task")
def test_with_workers_the_first_tasks_agents_compile_in_groups_side_by_side(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The first task's later group of agents is played by a worker while this process plays the first group;
    this process plays the full first task only once both have finished, then the workers play the rest."""
    log = tmp_path / "log"

    def run_task(task: Any) -> list[dict[str, Any]]:
        with log.open("a") as f:
            f.write(f"{os.getpid()} start {task}\n")
        if task == "group 1":
            time.sleep(0.5)  # a worker still compiling while this process has finished its group
        with log.open("a") as f:
            f.write(f"{os.getpid()} end {task}\n")
        return [{"pid": os.getpid(), "task": task}]

    monkeypatch.setattr(backends, "run_task", run_task)
    groups = ["group 0", "group 1"]
    monkeypatch.setattr(backends, "warm_up_parts", lambda task, parts: groups if task == "task 0" else [])
    pending: list[Any] = [(i, f"task {i}") for i in range(6)]
    done = list(backends.LocalBackend(2).run(pending))
    assert done[0] == (0, [{"pid": os.getpid(), "task": "task 0"}])
    assert sorted(index for index, _ in done) == list(range(6))
    events = [line.split(" ", 1) for line in log.read_text().splitlines()]
    me = str(os.getpid())
    assert [event for pid, event in events if pid == me] == [
        "start group 0", "end group 0", "start task 0", "end task 0"
    ]  # fmt: skip
    worker = {pid for pid, event in events if event == "start group 1"}
    assert len(worker) == 1 and me not in worker
    order = [event for _, event in events]
    assert order.index("end group 1") < order.index("start task 0")


def test_warm_up_parts_split_the_built_in_agents_into_contiguous_groups() -> None:
    from agents.experiments.core.runner import tasks_for, warm_up_parts
    from agents.experiments.registry import get_experiment
    from agents.user_agents import UserAgent

    exp = get_experiment("gap/regret-eps").scaled(runs=2, horizon=2000)
    assert exp.agents == ("GAP", "GAPU", "AlphaSample", "DPSE", "AAE")
    task = tasks_for(exp, 3)[0]
    groups = warm_up_parts(task, 2)
    assert [g.experiment.agents for g in groups] == [("GAP", "GAPU"), ("AlphaSample", "DPSE", "AAE")]
    assert all((g.setting_index, g.run, g.base_seed) == (task.setting_index, task.run, task.base_seed) for g in groups)
    assert [g.experiment.agents for g in warm_up_parts(task, 9)] == [(a,) for a in exp.agents]
    assert warm_up_parts(task, 1) == []
    with_user = dataclasses.replace(task, experiment=dataclasses.replace(exp, user_agents=(UserAgent("mine", "m:f"),)))
    # A user's code runs only in real tasks.
    assert all(g.experiment.user_agents == () for g in warm_up_parts(with_user, 2))
    single = tasks_for(get_experiment("gap/privacy").scaled(runs=2, horizon=2000), 0)[0]
    assert warm_up_parts(single, 2) == []  # one agent: nothing to split
    rl = get_experiment("rl/graph").scaled(runs=1, horizon=2000)
    assert warm_up_parts(tasks_for(rl, 0)[0], 2) == []  # training a network costs more than it compiles
    ldp = get_experiment("ldp-linucb/epsilon").scaled(runs=1, horizon=2000)
    assert len(ldp.agents) > 1 and warm_up_parts(tasks_for(ldp, 0)[0], 2) == []  # a setting names its one agent
    dpmab = get_experiment("dp-mab/epsilon").scaled(runs=2, horizon=2000)
    assert warm_up_parts(tasks_for(dpmab, 0)[0], 2) == []  # a task is a block of runs: too much to play twice


_REGISTRIES = r"""
import sys
import agents.experiments.cli  # everything banditlab imports before it forks its workers
from agents.experiments.core.backends import load_numba_registries
from agents.experiments.core.compiling import CompileWatch
import numba.np.ufunc.parallel as parallel

before = "numba.core.typing.arraydecl" in sys.modules
with CompileWatch() as watch:
    load_numba_registries()
print(before, "numba.core.typing.arraydecl" in sys.modules, watch.names, parallel._is_initialized)
"""


def test_banditlab_loads_numba_s_registries_before_forking_without_compiling_or_starting_threads() -> None:
    """What its workers inherit instead of loading again; a thread pool started before the fork would abort them."""
    out = subprocess.run([sys.executable, "-c", _REGISTRIES], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "[]", "False"]


@pytest.mark.parametrize("xdg", ["", "relative/cache"])
def test_an_empty_or_relative_xdg_cache_home_is_ignored(xdg: str, tmp_path: Path) -> None:
    # The XDG rule: only an absolute $XDG_CACHE_HOME counts. Taken as given, "" or a relative one
    # would put the kernels' pickles under the folder a run starts in.
    env = {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"}
    code = "import bandit_envs._jit as j; print(j.CACHE_ROOT)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "XDG_CACHE_HOME": xdg, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    home = os.path.expanduser("~/.cache")
    assert out == os.path.join(home, "bandit-envs", "numba"), out
