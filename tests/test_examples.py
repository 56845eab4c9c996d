"""Every script in examples/ runs."""

from __future__ import annotations

import ast
import os
import runpy
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.integration  # runs every example script in a subprocess

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))
#: Exercise 8, run by its own test (it writes a GIF, checked there).
WATCH_IT_LEARN = Path(__file__).resolve().parents[1] / "examples" / "teach_08_watch_it_learn.py"

#: Lines (or parts of lines) each exercise prints whatever the random draws; an exercise not listed
#: here (a new one) is only required to run without error and print something. Checked for the scripts here
#: and for the notebooks in tests/test_notebooks.py (the notebook must print what the script prints).
KEY_LINES: dict[str, list[str]] = {
    "teach_01_first_bandit": ["regret after T", "figure: "],
    "teach_02_ucb_from_scratch": ["identical actions: True", "-> every arm once, then the index."],
    "teach_03_side_observations": ["cliques  edges  density  alpha(G)", "-> UCB-N's regret falls with alpha(G)"],
    "teach_04_price_of_privacy": ["epsilon   GAP regret  GAP L_1", "-> GAP has less regret than DPSE"],
    "teach_05_randomized_response": ["debiased mean", "-> local noise is"],
    "teach_06_choosing_a_budget": ["best budget: epsilon =", "-> a larger epsilon improves the recommendation"],
    "teach_07_rl_agent": ["PPO's greedy arm: 3 (mean 0.8); best arm: 3", "-> PPO finds the best arm"],
    "teach_08_watch_it_learn": ["GraphBandit-v0  round 3/500", "rgb_array frames: 32", "GIF: "],
    "teach_09_laplace_and_audit": ["alpha = ln(1/beta)/eps", "empirical lower bound", "figure: "],
}


@pytest.mark.parametrize(
    "path", [p for p in EXAMPLES if p != WATCH_IT_LEARN], ids=[p.stem for p in EXAMPLES if p != WATCH_IT_LEARN]
)
def test_example_runs(path, capsys, monkeypatch, tmp_path):
    # Into the test's own folder: the default one in the shared temporary folder would outlive the test.
    writes = "--out" in path.read_text(encoding="utf-8")
    monkeypatch.setattr(sys, "argv", [str(path), *(["--out", str(tmp_path)] if writes else [])])
    runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    assert out.strip()
    for line in KEY_LINES.get(path.stem, []):
        assert line in out, f"{path.name} did not print {line!r}:\n{out}"


def test_bring_your_own_agent_is_an_agent_target(capsys):
    """`--agent examples/bring_your_own_agent.py:make_agent` imports the file without running the experiment."""
    import gymnasium as gym

    import bandit_envs  # noqa: F401
    from agents.user_agents import UserAgent

    path = Path(__file__).resolve().parents[1] / "examples" / "bring_your_own_agent.py"
    user = UserAgent(name="mine", ref=f"{path}:make_agent")
    env = gym.make("GraphBandit-v0", horizon=200)
    agent = user.build(env, {"epsilon": 0.1}, seed=0)
    assert capsys.readouterr().out == ""
    obs, _ = env.reset(seed=0)
    for _ in range(200):
        action = agent.act(obs)
        obs, reward, _, _, info = env.step(action)
        agent.update(action, reward, info)
    assert agent.counts.sum() >= 200  # side observations counted beside the pulled arm


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="no user ids here: the temporary folder is the user's own")
def test_default_output_folders_in_the_shared_temp_folder_are_per_user(monkeypatch):
    """Two users get two default folders: one cannot write in a folder of the same name the other made."""
    from agents import teaching

    example = runpy.run_path(str(Path(__file__).resolve().parents[1] / "examples" / "bring_your_own_agent.py"))
    defaults = {"bandit-envs-teaching": teaching.DEFAULT_OUT, "bandit-envs-byoa": example["DEFAULT_OUT"]}
    mine = os.getuid()
    for name, default in defaults.items():
        assert default == teaching.temp_folder(name), (name, default)
        assert default.parent == Path(tempfile.gettempdir()), default
    monkeypatch.setattr(os, "getuid", lambda: mine + 1)
    for name, default in defaults.items():
        other = teaching.temp_folder(name)
        assert other != default and other.parent == default.parent, (default, other)


def test_watch_it_learn_prints_text_frames_and_writes_a_gif(tmp_path, capsys, monkeypatch):
    """Exercise 8: the ansi frames of rounds 0-3, then a GIF of (H, W, 3) frames at --out."""
    imageio = pytest.importorskip("imageio.v3")
    monkeypatch.setattr(sys, "argv", [str(WATCH_IT_LEARN), "--out", str(tmp_path)])
    runpy.run_path(str(WATCH_IT_LEARN), run_name="__main__")
    out = capsys.readouterr().out
    for t in range(4):
        assert f"GraphBandit-v0  round {t}/500" in out
    assert "round 500/500" in out
    for line in KEY_LINES[WATCH_IT_LEARN.stem]:
        assert line in out, f"{WATCH_IT_LEARN.name} did not print {line!r}"
    gif = tmp_path / "teach_08_watch_it_learn.gif"
    assert f"GIF: {gif}" in out
    frames = imageio.imread(gif, index=None)
    assert frames.shape == (32, 360, 640, 3) and frames.dtype == "uint8"


def _definitions(path: Path) -> dict:
    """The imports, constants and functions of an exercise, without running its experiment's cells."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    keep = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)
    tree.body = [node for node in tree.body if isinstance(node, keep)]
    namespace: dict = {"__name__": path.stem}
    exec(compile(tree, str(path), "exec"), namespace)
    return namespace


def test_watch_it_learn_without_imageio_writes_no_gif(tmp_path, monkeypatch):
    """Without imageio the exercise's save_gif says so (returns False) and writes nothing."""
    namespace = _definitions(WATCH_IT_LEARN)
    monkeypatch.setitem(sys.modules, "imageio", None)  # find_spec then reports it missing
    frames = [np.zeros((4, 6, 3), dtype=np.uint8)] * 2
    assert namespace["save_gif"](frames, tmp_path / "x.gif", 4) is False
    assert not (tmp_path / "x.gif").exists()


def test_laplace_and_audit_measures_beta_and_bounds_the_claim(tmp_path, monkeypatch, capsys):
    """Exercise 9: measured P(|error| > alpha) within binomial error of beta; the audit's bound below the claim."""
    from scipy import stats

    path = Path(__file__).resolve().parents[1] / "examples" / "teach_09_laplace_and_audit.py"
    monkeypatch.setattr(sys, "argv", [str(path), "--out", str(tmp_path)])
    namespace = runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line[:7].strip() in {"0.50", "1.00", "2.00"}]
    assert len(rows) == 9
    for eps, beta, alpha, rate in rows:
        assert float(alpha) == pytest.approx(namespace["alpha"](float(eps), float(beta)), abs=0.01)
        k = round(float(rate) * namespace["DRAWS"])  # failures are Binomial(DRAWS, beta) if the bound is exact
        assert stats.binomtest(k, namespace["DRAWS"], float(beta)).pvalue > 1e-3
    bound = next(line for line in out.splitlines() if line.startswith("claimed eps = 1; empirical lower bound"))
    assert float(bound.split("lower bound ")[1].split()[0]) <= 1.0 and bound.endswith("no violation found")
    assert (tmp_path / "teach_09_laplace_and_audit.png").stat().st_size > 0
    # "alpha" is the accuracy only: AdaP-UCB's exploration constant goes by another name.
    private_bandit = out[out.index("(b) ") :]
    assert "alpha" not in private_bandit, private_bandit
    # The three epsilons' points of the accuracy panel do not hide one another: their measured rates are all
    # close to beta, so no two series may share an x position, and each has its own marker.
    series = [line for line in namespace["left"].get_lines() if line.get_label().startswith("eps = ")]
    assert len(series) == 3
    xs = [set(line.get_xdata()) for line in series]
    assert all(not (a & b) for i, a in enumerate(xs) for b in xs[i + 1 :])
    assert len({line.get_marker() for line in series}) == 3
    # The printed reading of the audit line says the interval's upper end is not a violation.
    assert "upper end is above the claim is not evidence of a violation" in out
