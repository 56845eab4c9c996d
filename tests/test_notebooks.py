"""Every teaching exercise also runs as a Jupyter notebook.

Each ``examples/teach_*.py`` is a jupytext "percent" script (``# %%`` code cells, ``# %% [markdown]``
cells): jupytext turns it into a notebook and nbclient executes that notebook in a fresh
``python3`` kernel, as Jupyter would, with the kernel's working directory in a temporary folder. The
exercise's text is markdown and its experiment a series of cells; the kernel's own command line
(``-f connection-file``) must not break the scripts' argparse; the notebook must print what the script
prints, and show its figures inline instead of saving them and printing their paths.
"""

from __future__ import annotations

import ast
import importlib.util
import os
from pathlib import Path

import pytest
from conftest import lazy_module
from test_examples import KEY_LINES

pytestmark = pytest.mark.integration  # executes a notebook in a Jupyter kernel

for _needed in ("jupytext", "nbclient", "ipykernel"):
    if importlib.util.find_spec(_needed) is None:
        pytest.skip(f"could not import {_needed!r}", allow_module_level=True)
# Imported by the first test that uses them (a large part of a second of imports at collection otherwise).
jupytext = lazy_module("jupytext")
nbclient = lazy_module("nbclient")

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = sorted((ROOT / "examples").glob("teach_*.py"))

#: The one exercise executed as a notebook by default (the fastest): the notebook machinery (jupytext's cells,
#: the kernel's ``-f connection-file`` argument, which every exercise's argparse skips the same way, the
#: kernel's temp folder) is one code path; every exercise runs as a script, its key lines checked, in
#: tests/test_examples.py. The other exercises run as notebooks with ``-m slow``.
DEFAULT_NOTEBOOK = "teach_02_ucb_from_scratch"
SLOW: set[str] = {path.stem for path in EXERCISES} - {DEFAULT_NOTEBOOK}


def _params() -> list:
    return [
        pytest.param(path, id=path.stem, marks=[pytest.mark.slow] if path.stem in SLOW else []) for path in EXERCISES
    ]


def test_every_exercise_is_found():
    assert {path.stem for path in EXERCISES} >= set(KEY_LINES)


@pytest.mark.parametrize("path", EXERCISES, ids=[path.stem for path in EXERCISES])  # fast: reads the files only
def test_exercise_has_cells(path):
    """The exercise's text is markdown, and its experiment is split into cells a student runs one at a time."""
    notebook = jupytext.read(path, fmt="py:percent")
    assert "# %%" in path.read_text(encoding="utf-8")
    assert notebook.cells[0].cell_type == "markdown", f"{path.name}: the first cell is not the exercise's text"
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    for source in code:
        body = ast.parse(source).body
        only_text = all(isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) for node in body)
        assert not (body and only_text), f"{path.name}: a code cell holds only text:\n{source}"
    # Several top-level cells that do the work (not one main() call): at least four cells with statements
    # other than imports and definitions.
    steps = [
        source
        for source in code
        if any(
            not isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef))
            for node in ast.parse(source).body
        )
    ]
    assert len(steps) >= 4, f"{path.name} runs its experiment in {len(steps)} cell(s)"
    assert "def main(" not in path.read_text(encoding="utf-8"), f"{path.name} still wraps the experiment in main()"


@pytest.mark.parametrize("path", _params())
def test_exercise_runs_as_notebook(path, tmp_path, monkeypatch):
    if path.stem == "teach_07_rl_agent":
        pytest.importorskip("stable_baselines3")
    work, temp = tmp_path / "cwd", tmp_path / "tmp"
    work.mkdir()
    temp.mkdir()
    # The kernel inherits this environment: this checkout's packages first, the default --out folder
    # (under the temp folder) and Jupyter's and IPython's own files in tmp_path.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))

    notebook = jupytext.read(path, fmt="py:percent")
    client = nbclient.NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=300,
        startup_timeout=120,
        resources={"metadata": {"path": str(work)}},
    )
    client.execute()  # raises CellExecutionError, with the cell and traceback, if a cell fails

    stdout = "".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "stream" and output.get("name") == "stdout"
    )
    assert stdout.strip(), f"{path.name} printed nothing as a notebook"
    for line in KEY_LINES.get(path.stem, []):
        if line != "figure: ":  # a script prints where it saved its figure; a notebook shows the figure
            assert line in stdout, f"{path.name} as a notebook did not print {line!r}:\n{stdout}"
    # Figures show inline, under the cell that draws them, and no file path stands in for them.
    assert "figure: " not in stdout, f"{path.name} as a notebook printed a figure's path:\n{stdout}"
    assert not list(temp.rglob("*.png")), f"{path.name} as a notebook wrote a figure file"
    images = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {}) or "image/gif" in output.get("data", {})
    ]
    assert images, f"{path.name} as a notebook showed no figure inline"


def test_laplace_and_audit_says_how_to_read_the_audit_line():
    """Exercise 9 explains, in a markdown cell, that the lower bound is what the audit shows."""
    notebook = jupytext.read(ROOT / "examples" / "teach_09_laplace_and_audit.py", fmt="py:percent")
    text = " ".join(" ".join(cell.source.split()) for cell in notebook.cells if cell.cell_type == "markdown")
    assert "How to read the audit line" in text
    assert "L is what the audit shows" in text
    assert "upper end above the claim is not evidence of a violation" in text
