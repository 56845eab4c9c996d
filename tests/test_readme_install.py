"""The README's two commands, in the README's order, leave a working install.

A new user runs ``pip install .`` and a first ``banditlab run`` (which compiles and caches numba
kernels), then ``pip install -e ".[test]"``. pip uninstalls the first install before the
editable one; a cache file written inside the installed package folders would survive that and
leave folders without an ``__init__.py``, which Python imports as empty namespace packages in
place of the editable install (``ImportError: cannot import name ... (unknown location)``).

This test replays the sequence in a fresh virtual environment outside the checkout, on a copy
of the checkout, with a home of its own (so the kernels compile and cache afresh): the same pip
commands as the README with ``--no-deps --no-build-isolation`` (the dependencies come from this
test's environment, so nothing is downloaded), and a small ``banditlab run`` in place of the
quick one (the same kernels compile). Then the CLI and the README snippet must work from
another folder, and the installed folders must hold nothing pip did not install.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # installs the project into a fresh virtual environment

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _readme_commands() -> list[str]:
    block = re.search(r"```bash\n(.*?)```", README, flags=re.DOTALL)
    assert block, "the README has no bash block"
    return [line.strip() for line in block.group(1).strip().splitlines()]


def test_the_readme_starts_with_the_two_commands_this_test_replays():
    first, second = _readme_commands()[:2]
    assert first.startswith("pip install . && banditlab run "), first
    assert '-e ".[test]"' in second and "python -m pytest" in second, second


def _copy_checkout(target: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip("the project is not a git checkout here (git ls-files failed), so it cannot be copied cleanly")
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def test_the_readme_sequence_leaves_a_working_editable_install(tmp_path: Path) -> None:
    source, venv, home, elsewhere = (tmp_path / n for n in ("src", "venv", "home", "elsewhere"))
    for folder in (source, home, elsewhere):
        folder.mkdir()
    _copy_checkout(source)
    # No pip or setuptools of its own (the bundled ones may be too old): the ones of this
    # environment run, through the .pth file below.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    # This environment's packages, but not its .pth files (the checkout's editable install): the
    # dependencies are importable, the project only through what the replayed commands install.
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(purelib) / "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "NUMBA_", "VIRTUAL_ENV"))}
    env |= {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "PATH": f"{venv / 'bin'}:{env['PATH']}"}
    pip = [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]

    def run(*command: str | Path, cwd: Path = elsewhere) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{command} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        return done

    run(*pip, ".", cwd=source)  # README, first command: pip install .
    installed = Path(purelib)
    assert (installed / "agents" / "__init__.py").is_file()
    run(
        venv / "bin" / "banditlab", "run", "gap/regret-eps", "--runs", "1", "--horizon", "200", "--out", tmp_path / "r1"
    )
    run(*pip, "-e", ".", cwd=source)  # README, second command: pip install -e ".[test]"
    for package in ("agents", "bandit_envs"):
        left = sorted(str(p.relative_to(installed)) for p in (installed / package).rglob("*") if p.is_file())
        assert not left, f"the uninstall left files in the installed {package} folder: {left[:5]}"
    done = run(python, "-c", "import agents, bandit_envs; from agents import DPSE; print(agents.__file__)")
    assert done.stdout.strip().startswith(str(source)), done.stdout
    # A script started in the cache folder itself (say XDG_CACHE_HOME=/tmp and a script in /tmp):
    # the kernels' cache folder there must not be imported in place of the editable install.
    assert (home / ".cache" / "bandit-envs" / "numba").is_dir()
    make = "import gymnasium as gym, bandit_envs; gym.make('GraphBandit-v0'); print(bandit_envs.__file__)"
    assert run(python, "-c", make, cwd=home / ".cache").stdout.strip().startswith(str(source))
    snippet = re.search(r"```python\n(.*?)```", README, flags=re.DOTALL)
    assert snippet
    assert "regret" in run(python, "-c", snippet.group(1)).stdout
    run(
        venv / "bin" / "banditlab", "run", "gap/regret-eps", "--runs", "1", "--horizon", "200", "--out", tmp_path / "r2"
    )
