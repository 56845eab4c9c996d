"""The README's promises: its Python snippet runs and prints its one-line summary; the id forms it shows work."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _first_python_block() -> str:
    match = re.search(r"```python\n(.*?)```", README, flags=re.DOTALL)
    assert match, "the README has no python snippet"
    return match.group(1)


@pytest.mark.integration  # runs the README's snippet in a subprocess
def test_the_readme_snippet_prints_its_summary_line():
    code = _first_python_block()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert re.fullmatch(r"GAP \(ε = 0\.1\) over 10,000 rounds: regret [\d,]+", line), line
    assert "GAP (ε = 0.1) over 10,000 rounds: regret" in README  # the README says what it prints


@pytest.mark.integration  # a fresh Python process
def test_module_prefixed_id_imports_the_package_in_a_fresh_process():
    code = 'import gymnasium as gym; env = gym.make("bandit_envs:GraphBandit-v0"); print(env.spec.id)'
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "GraphBandit-v0"
    assert '"bandit_envs:GraphBandit-v0"' in README


def test_register_envs_registers_every_id():
    import bandit_envs

    gym.register_envs(bandit_envs)
    for env_id in ("GraphBandit-v0", "PrivacyBudgetMovieLens-v0", "MovieLensRecommendation-v0"):
        assert env_id in gym.registry
    assert "gym.register_envs(bandit_envs)" in README


def test_native_vector_env_refuses_wrappers_and_the_readme_alternative_works():
    import bandit_envs  # noqa: F401
    from bandit_envs.graph import GraphBanditVectorEnv

    assert isinstance(gym.make_vec("GraphBandit-v0", num_envs=3).unwrapped, GraphBanditVectorEnv)
    with pytest.raises(gym.error.Error):
        gym.make_vec("GraphBandit-v0", num_envs=3, wrappers=[gym.wrappers.RecordEpisodeStatistics])
    env = gym.make_vec(
        "GraphBandit-v0", num_envs=3, vectorization_mode="sync", wrappers=[gym.wrappers.RecordEpisodeStatistics]
    )
    env.reset(seed=0)
    env.step(env.action_space.sample())
    assert 'vectorization_mode="sync"' in README


def test_the_readme_and_docs_home_count_the_exercises_there_are():
    count = len(list((ROOT / "examples").glob("teach_[0-9][0-9]_*.py")))
    words = {7: "seven", 8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}
    assert f"{words[count].capitalize()} short exercises" in README
    assert f"{words[count]} exercises for a course" in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
