"""The documentation site (mkdocs.yml) documents every environment and agent, and builds strictly.

The fast tests read the page sources: every registered environment id has a page rendering its
single and vector env classes, every public agent of ``agents`` has a ``::: agents.Name`` block on
an agents page, and every page in the nav exists. A reader's first look is checked too: the home
page says what the project is and opens with the quickstart (install details after it), every
agents page opens with an example that runs, the env pages and the RL page say how to get
episode statistics from a training run, table code does not wrap and reproduction figures link
to their full size. The slow test runs ``mkdocs build --strict`` (CI's ``.ci/run`` builds the
site that way too).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import agents
import bandit_envs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CONFIG = ROOT / "mkdocs.yml"
CODE_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)


def _blocks(folder: Path) -> set[str]:
    """The objects rendered by ``::: path`` blocks in the pages under ``folder``."""
    return {
        match
        for page in folder.rglob("*.md")
        for match in re.findall(r"^::: *([\w.]+)", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    }


def _env_page(env_id: str) -> Path | None:
    """The page of docs/environments/ that renders ``env_id``'s single env class, if any."""
    module, name = bandit_envs._ENTRY_POINTS[env_id]
    for page in sorted((DOCS / "environments").glob("*.md")):
        if f"::: {module}.{name}Env" in page.read_text(encoding="utf-8"):
            return page
    return None


@pytest.mark.parametrize("env_id", bandit_envs.ENV_IDS)
def test_every_environment_has_a_page(env_id):
    module, name = bandit_envs._ENTRY_POINTS[env_id]
    path = _env_page(env_id)
    assert path, f"no '::: {module}.{name}Env' block in a page of docs/environments/ for {env_id}"
    page = path.read_text(encoding="utf-8")
    assert f"::: {module}.{name}VectorEnv" in page, f"{path.name} has no '::: {module}.{name}VectorEnv' block"
    # The nav lists every page of docs/environments/ by its first heading (mkdocs.yml's rest entry).
    assert page.startswith(f"# {env_id}\n"), f"{path.name} must open with '# {env_id}' (its title in the nav)"
    assert "- ... | flat | environments/*.md" in CONFIG.read_text(encoding="utf-8")


def test_every_public_agent_is_documented():
    blocks = _blocks(DOCS / "agents")
    missing = [name for name in agents.__all__ if f"agents.{name}" not in blocks]
    assert not missing, f"add '::: agents.Name' blocks for {missing} to their family's page in docs/agents/"


def test_every_nav_page_exists():
    pages = re.findall(r"^\s*- (?:[^:\n]+: )?(\S+\.md)\s*$", CONFIG.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert len(pages) > 20
    assert not [page for page in pages if not (DOCS / page).is_file()]


def _with_snippets(page: Path) -> str:
    """A page's source with its ``--8<-- "README.md:section"`` lines replaced by those sections."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")

    def section(match: re.Match[str]) -> str:
        name = re.escape(match.group(1))
        found = re.search(rf"\[start:{name}\] -->\n(.*?)<!-- --8<-- \[end:{name}\]", readme, flags=re.DOTALL)
        assert found, f"README.md has no section {match.group(1)!r}"
        return found.group(1)

    return re.sub(r'^--8<-- "README\.md:([\w-]+)"$', section, page.read_text(encoding="utf-8"), flags=re.MULTILINE)


def _run_python(code: str, cwd: Path) -> str:
    """Run ``code`` in a fresh interpreter that imports this checkout; return what it printed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-4000:]
    return out.stdout


@pytest.mark.integration  # runs the home page's commands in subprocesses
def test_home_page_says_what_the_project_is_then_the_quickstart_then_install(tmp_path):
    home = _with_snippets(DOCS / "index.md")
    first = CODE_BLOCK.search(home)
    assert first, "docs/index.md shows no code"
    assert "**bandit-envs** is" in home[: first.start()], "the home page says what the project is before any code"
    language, code = first.groups()
    lines = code.strip().splitlines()
    assert language == "bash" and len(lines) <= 5, "the home page's first code block is the five-line quickstart"
    assert lines[0].startswith("pip install .") and any(line.startswith("banditlab run ") for line in lines)
    install = home.index("\n## Install\n")
    assert first.start() < install < home.index("**First and later runs.**"), "numba cache timings belong to Install"
    # The quickstart's quick lines do what their comments say (the install and the run are
    # tests/test_readme_install.py's business).
    listed = subprocess.run(
        [sys.executable, "-m", "agents.experiments.cli", "list"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    run = next(line for line in lines if line.startswith("banditlab run "))
    assert run.split()[2] in listed.stdout.split()
    python = next(line for line in lines if line.startswith("python -c "))
    assert _run_python(python.split('"')[1], tmp_path).strip() == str(bandit_envs.ENV_IDS)


@pytest.mark.integration  # runs each page's example in a subprocess
@pytest.mark.parametrize("page", sorted(p.name for p in (DOCS / "agents").glob("*.md")))
def test_every_agents_page_opens_with_an_example_that_runs(page, tmp_path):
    text = (DOCS / "agents" / page).read_text(encoding="utf-8")
    first = CODE_BLOCK.search(text)
    assert first and first.group(1) == "python", f"docs/agents/{page} has no python example"
    internals = re.search(r"^::: ", text, flags=re.MULTILINE)
    assert internals and first.start() < internals.start(), f"docs/agents/{page}: the example comes before the API"
    code = first.group(2)
    assert len(code.strip().splitlines()) <= 12, f"docs/agents/{page}: keep the example short"
    if "stable_baselines3" in code:
        pytest.importorskip("stable_baselines3")
    _run_python(code, tmp_path)


@pytest.mark.parametrize("env_id", bandit_envs.ENV_IDS)
def test_every_environment_page_says_how_to_get_short_episodes_for_rl(env_id):
    import gymnasium as gym

    path = _env_page(env_id)
    assert path, f"{env_id} has no page in docs/environments/"
    text = path.read_text(encoding="utf-8")
    horizon = gym.make(env_id).get_wrapper_attr("horizon")
    assert f"default horizon is {horizon:,}" in text, f"environments/{path.name} does not state the default horizon"
    for advice in (f'gym.make("{env_id}", horizon=', "TimeLimit(env, max_episode_steps=", "rl.md#episode-statistics"):
        assert advice in text, f"environments/{path.name} does not show {advice!r}"


@pytest.mark.integration  # trains a stable-baselines3 model in a subprocess
def test_rl_page_fills_episode_statistics_with_a_short_episode(tmp_path):
    pytest.importorskip("stable_baselines3")
    text = (DOCS / "rl.md").read_text(encoding="utf-8")
    assert "{ #episode-statistics }" in text
    code = next(code for language, code in CODE_BLOCK.findall(text) if "ep_info_buffer" in code)
    assert "TimeLimit(" in code and "horizon=" in code
    episodes, last = _run_python(code, tmp_path).split(" ", 1)
    assert int(episodes) == 10 and "'l': 20" in last, "ten episodes of 20 steps, as the page says"
    assert "It prints `10 {'r': …, 'l': 20, 't': …}`" in text


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_table_code_does_not_wrap_and_figures_link_to_their_full_size():
    config = CONFIG.read_text(encoding="utf-8")
    assert re.search(r"^hooks:\n  - docs/hooks\.py$", config, flags=re.MULTILINE)
    sheets = re.search(r"^extra_css:\n((?:  - \S+\n)+)", config, flags=re.MULTILINE)
    assert sheets, "mkdocs.yml loads no extra_css"
    css = "".join((DOCS / sheet.strip()[2:]).read_text(encoding="utf-8") for sheet in sheets.group(1).splitlines())
    assert re.search(r"\.md-typeset td code[^{]*\{[^}]*white-space: nowrap", css)
    link_figures = _hooks().link_figures
    summaries = sorted((DOCS / "reproductions").glob("*/summary.md"))
    linked = 0
    for summary in summaries:
        text = summary.read_text(encoding="utf-8")
        images = re.findall(r"^!\[[^\]]*\]\(([^)]+)\)$", text, flags=re.MULTILINE)
        out = link_figures(text)
        for src in images:
            assert f"]({src})]({src}){{ .figure-link }}" in out
            linked += 1
    assert linked >= 10
    assert link_figures("see ![a](b.png) inline") == "see ![a](b.png) inline"


@pytest.mark.slow
def test_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(CONFIG), "--site-dir", str(tmp_path / "site")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "environments" / "graph.html").is_file()
    assert 'href="stylesheets/extra.css"' in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    figure = (tmp_path / "site" / "reproductions" / "gap-regret-eps" / "summary.html").read_text(encoding="utf-8")
    assert '<a class="figure-link" href="figure.png"><img alt="figure" src="figure.png"' in figure
