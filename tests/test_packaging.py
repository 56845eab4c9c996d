"""The package's metadata agrees with the checks that hold its code to a Python version."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_oldest_python_declared_is_the_one_mypy_and_ruff_check_against():
    """``requires-python`` names the version the type checker and the linter assume, no older one.

    The code uses what that version's standard library has (``typing.Self`` is 3.11's): a lower
    bound older than the checks' would let pip install the package where it cannot be imported.
    """
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    required = config["project"]["requires-python"]
    checked = config["tool"]["mypy"]["python_version"]
    assert required == f">={checked}", (required, checked)
    assert config["tool"]["ruff"]["target-version"] == "py" + checked.replace(".", "")
    major, minor = (int(part) for part in checked.split("."))
    assert sys.version_info >= (major, minor)
