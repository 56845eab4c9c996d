"""The pages a newcomer reads first: the files they name exist, their examples run quietly, their figures hold.

The pages checked are the README and every page of docs/ except the teaching path, the
reproductions and the leaderboard (those have checks of their own). The fast tests read the
pages: every repository file a page names in backticks or links to exists (a file that moved is a
dead pointer for the reader), and the README's wall times of the committed reproductions are those
their ``meta.json`` records. The integration test runs the Python examples of the pages in fresh
interpreters with warnings as errors (a warning printed by a copied example is a defect of the
example). The slow test runs the audits whose output and numbers docs/audit.md shows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CODE_BLOCK = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)


def _pages() -> list[Path]:
    """The README and the docs pages of this sweep (not the teaching path, reproductions or leaderboard)."""
    pages = [
        page
        for page in sorted(DOCS.rglob("*.md"))
        if page.name != "teaching.md"
        and "reproductions" not in page.relative_to(DOCS).parts
        and not page.relative_to(DOCS).parts[0].startswith("leaderboard")
    ]
    return [ROOT / "README.md", *pages]


PAGES = _pages()
IDS = [str(page.relative_to(ROOT)) for page in PAGES]

# A file of the repository named in backticks: a path with a folder and a known extension.
NAMED_FILE = re.compile(r"`([\w.-]+(?:/[\w.-]+)+\.(?:py|md|toml|json|ya?ml|txt|ipynb|css|cfg))(?:[:#][^`]*)?`")
# Placeholders a page asks the reader to replace, and files of a results folder, not of the repository.
PLACEHOLDER = re.compile(r"(^|/)(my\w*|path/to|DIR|results|parts)(/|\.|$)|^my")
# A file of another repository: `owner/name` on GitHub (`src/file.py`).
EXTERNAL = re.compile(r"(on GitHub|`[\w-]+/[\w.-]+`) \($")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _repository_files() -> set[str]:
    skip = {".git", "site", "node_modules", "__pycache__", ".venv", "venv", "results"}
    files = set()
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in skip and not d.endswith(".egg-info")]
        base = Path(dirpath).relative_to(ROOT).as_posix()
        files.update(name if base == "." else f"{base}/{name}" for name in filenames)
    return files


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_the_files_a_page_names_exist(page):
    text = page.read_text(encoding="utf-8")
    files = _repository_files()
    missing = []
    for match in NAMED_FILE.finditer(text):
        name = match.group(1)
        if PLACEHOLDER.search(name) or EXTERNAL.search(text[max(0, match.start() - 40) : match.start()]):
            continue
        here = (page.parent / name).resolve()
        # As written from the root or from the page; a shorthand such as `core/spec.py` (design.md,
        # inside agents/experiments/) must still be the end of one file's path.
        if name not in files and not here.is_file() and not any(f.endswith("/" + name) for f in files):
            missing.append(name)
    for target in LINK.findall(text):
        path = target.split("#")[0]
        if path and not re.match(r"[a-z]+:", path) and not (page.parent / path).exists():
            missing.append(target)
    assert not missing, f"{page.relative_to(ROOT)} names files the repository does not have: {missing}"


def test_the_readme_times_the_committed_reproductions_as_they_ran():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    summary = r"\[summary\]\(docs/reproductions/([\w-]+)/summary\.md\)"
    timed = re.findall(summary + r"[^|\n]*?(\d+(?:\.\d+)?) (s|min)(?: wall)? on (\d+) cores?\)", readme)
    assert len(timed) >= 3, "the README's reproduction table states wall times"
    for folder, amount, unit, cores in timed:
        meta = json.loads((DOCS / "reproductions" / folder / "meta.json").read_text(encoding="utf-8"))
        stated = float(amount) * (60 if unit == "min" else 1)
        # Rounded as written: to the last digit given, in its unit.
        digits = len(amount.split(".")[1]) if "." in amount else 0
        tolerance = 0.5 * 10**-digits * (60 if unit == "min" else 1) + 0.5
        assert abs(stated - meta["seconds"]) <= tolerance, (
            f"README: {folder} took {amount} {unit}, its meta.json says {meta['seconds']:.1f} s"
        )
        assert int(cores) == meta["jobs"], f"README: {folder} on {cores} cores, its meta.json says {meta['jobs']} jobs"


def _python_examples() -> list[tuple[str, str]]:
    """Per page, its Python blocks joined as one session would run them (the README's are tests/test_readme.py's).

    Left out: pages whose blocks are templates for the reader's own agent (``my_factory``,
    ``path/to/``, a factory's ``plays``), and stable-baselines3 training, slow here (docs/rl.md's
    episode statistics run in tests/test_docs_site.py, docs/agents/rl.md's example below).
    """
    examples = []
    for page, page_id in zip(PAGES[1:], IDS[1:], strict=True):
        code = "\n".join(
            block for language, block in CODE_BLOCK.findall(page.read_text(encoding="utf-8")) if language == "python"
        )
        if code and not any(mark in code for mark in ("my_factory", "path/to/", ".plays", "stable_baselines3")):
            examples.append((page_id, code))
    return examples


EXAMPLES = _python_examples()


@pytest.mark.integration  # runs each page's examples in a fresh interpreter
@pytest.mark.parametrize(("page", "code"), EXAMPLES, ids=[page for page, _ in EXAMPLES])
def test_the_python_examples_run_without_warnings(page, code, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-W", "error::RuntimeWarning", "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, f"{page}: {out.stderr[-3000:]}"


@pytest.mark.integration  # trains a stable-baselines3 model for 100 steps
def test_the_rl_agent_example_trains_without_a_warning(tmp_path):
    pytest.importorskip("stable_baselines3")
    code = CODE_BLOCK.search((DOCS / "agents" / "rl.md").read_text(encoding="utf-8"))
    assert code and code.group(1) == "python"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    # matplotlib before 3.10.7 warns on import with pyparsing 3.3 (a camelCase name it used): not this example's
    quiet = (
        "import warnings\ntry:\n    from pyparsing.warnings import PyparsingDeprecationWarning\n"
        "    warnings.filterwarnings('ignore', category=PyparsingDeprecationWarning)\nexcept ImportError:\n    pass\n"
    )
    out = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", quiet + code.group(2)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]


@pytest.mark.slow  # three audits, about 30 s of CPU
def test_the_audit_page_shows_what_the_audit_prints():
    from agents.audit import audit

    source = (DOCS / "audit.md").read_text(encoding="utf-8")
    shown = next(block for language, block in CODE_BLOCK.findall(source) if language == "text")
    page = " ".join(source.split())
    result = audit("GAP", epsilon=1.0, runs=10_000, seed=0)
    assert result.report().strip() == shown.strip()
    assert f"GAP's bound of {result.epsilon_lower:.3f} at ε = 1" in page
    broken = audit("NonPrivateUCB", runs=400, seed=0)
    assert broken.verdict == "violation"
    assert f"gives a lower bound of {broken.epsilon_lower:.1f} against a claim of 1" in page
    group = audit("GAP", epsilon=0.5, group=3, seed=0)
    assert f"shows it (lower bound {group.epsilon_lower:.3f} > 0.5)" in page
