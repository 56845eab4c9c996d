"""Limits and resources: inputs and faults beyond what the machine or the file system allows are one
sentence and a distinct exit status, never a traceback, and lose nothing.

* sizes: a scale whose tasks or results would not fit, a horizon or parameter that an agent or env
  refuses inside a task, an audit horizon whose reward tables would not fit: exit 2;
* files: an ``--out`` name longer than the file system allows, JSON nested too deep: exit 2.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_cli_outputs import EID, SMALL, _main, _sentence

from agents.experiments.cli import main


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of a small finished run (3 tasks)."""
    folder = tmp_path_factory.mktemp("small") / "out"
    assert main(["run", EID, *SMALL, "--out", str(folder)]) == 0
    return folder


# --- names and files the file system or the JSON reader cannot take ------------------------------


@pytest.mark.parametrize("nested", [False, True], ids=["folder", "parent"])
def test_an_out_name_longer_than_the_file_system_allows_is_one_sentence(nested, tmp_path, capsys):
    out = tmp_path / ("A" * 300)
    if nested:
        out = out / "results"
    assert _main(["run", EID, *SMALL, "--out", str(out)]) == 2
    line = _sentence(capsys)
    assert f"--out {out} cannot be a folder (File name too long)" in line
    assert not any(tmp_path.iterdir())  # nothing created


@pytest.mark.parametrize("name", ["meta.json", ".banditlab.json"])
def test_json_nested_100000_levels_deep_is_one_sentence(name, small_run, tmp_path, capsys):
    folder = tmp_path / "out"
    shutil.copytree(small_run, folder)
    deep = "[" * 100_000 + "]" * 100_000
    (folder / name).write_text(deep)
    code = _main(["report", EID, str(folder)] if name == "meta.json" else ["run", EID, *SMALL, "--out", str(folder)])
    assert code == 2
    line = _sentence(capsys)
    assert str(folder / name) in line or str(folder) in line
    assert (folder / name).read_text() == deep  # never overwritten
