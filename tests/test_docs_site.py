"""The documentation site (mkdocs.yml) documents every environment and agent, and builds strictly.

The fast tests read the page sources: every registered environment id has a page rendering its
single and vector env classes, every public agent of ``agents`` has a ``::: agents.Name`` block on
an agents page, and every page in the nav exists. The slow test runs ``mkdocs build --strict``
(CI's ``.ci/run`` builds the site that way too).
"""

from __future__ import annotations

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


def _blocks(folder: Path) -> set[str]:
    """The objects rendered by ``::: path`` blocks in the pages under ``folder``."""
    return {
        match
        for page in folder.rglob("*.md")
        for match in re.findall(r"^::: *([\w.]+)", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    }


@pytest.mark.parametrize("env_id", bandit_envs.ENV_IDS)
def test_every_environment_has_a_page(env_id):
    module, name = bandit_envs._ENTRY_POINTS[env_id]
    blocks = _blocks(DOCS / "environments")
    for cls in (f"{module}.{name}Env", f"{module}.{name}VectorEnv"):
        assert cls in blocks, f"no '::: {cls}' block in docs/environments/ for {env_id}"
    nav_entry = rf"^\s*- {re.escape(env_id)}: environments/\S+\.md$"
    assert re.search(nav_entry, CONFIG.read_text(encoding="utf-8"), re.MULTILINE), f"{env_id} not in mkdocs.yml's nav"


def test_every_public_agent_is_documented():
    blocks = _blocks(DOCS / "agents")
    missing = [name for name in agents.__all__ if f"agents.{name}" not in blocks]
    assert not missing, f"add '::: agents.Name' blocks for {missing} to their family's page in docs/agents/"


def test_every_nav_page_exists():
    pages = re.findall(r"^\s*- (?:[^:\n]+: )?(\S+\.md)\s*$", CONFIG.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert len(pages) > 20
    assert not [page for page in pages if not (DOCS / page).is_file()]


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
