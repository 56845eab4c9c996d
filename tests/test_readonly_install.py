"""A read-only install imports and runs: compiled kernels cache on disk only where they can.

The packages are copied to a folder that cannot be written and imported from there by a fresh
interpreter whose home cannot be written either (it lies under a regular file) and without
``NUMBA_CACHE_DIR``: numba then finds no location for its on-disk cache. Two layouts are tried:

* ``zip``: the packages in a zip archive on ``sys.path`` (zipimport). Nothing can be created
  under a regular file, by any user, so this runs everywhere.
* ``folder``: an ordinary folder made read-only: with ``chmod`` for a normal user; for root,
  whom permissions do not stop, by a read-only bind mount in a private mount namespace
  (``unshare``), and the test is skipped where neither is possible.

The child checks that the folder and home really cannot be written before it runs, so the
test cannot pass by accident on a machine where they can.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import agents
import bandit_envs

pytestmark = pytest.mark.integration  # installs the project read-only and runs it in subprocesses

#: Played in the child: GraphBandit-v0 and GAP for a few hundred steps, then a vector env step.
_CHILD = r"""
import os, sys, tempfile
root = sys.argv[1]
import bandit_envs, agents
for module in (bandit_envs, agents):
    assert module.__file__.startswith(root), f"{module.__name__} was imported from {module.__file__}"
for folder in (os.path.dirname(bandit_envs.__file__), os.path.expanduser("~")):
    try:
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        continue
    sys.exit(f"{folder} can be written: the test does not exercise a read-only install")
import gymnasium as gym
import numpy as np
env = gym.make("GraphBandit-v0", horizon=300)
obs, info = env.reset(seed=1)
agent = agents.GAP(10, 300, 1.0, info["feedback_graph"], seed=2)
total = 0.0
for _ in range(300):
    action = agent.act(obs)
    obs, reward, terminated, truncated, step_info = env.step(action)
    agent.update(action, reward, step_info)
    total += reward
vector = gym.make_vec("GraphBandit-v0", num_envs=3, horizon=5)
vector.reset(seed=0)
vector.step(np.zeros(3, dtype=np.int64))
print(f"ok {total:.6f}")
"""


def _copy_packages(dest: Path) -> None:
    for module in (bandit_envs, agents):
        source = Path(module.__file__).parent  # type: ignore[arg-type]
        shutil.copytree(source, dest / source.name, ignore=shutil.ignore_patterns("__pycache__"))


def _read_only(path: Path) -> None:
    for folder, _dirs, files in os.walk(path):
        for name in files:
            os.chmod(os.path.join(folder, name), stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    for folder, dirs, _ in os.walk(path, topdown=False):
        for name in dirs:
            os.chmod(os.path.join(folder, name), 0o555)
    os.chmod(path, 0o555)


def _writable_again(path: Path) -> None:
    for folder, _dirs, _ in os.walk(path):
        os.chmod(folder, 0o755)


def _child_env(tmp_path: Path) -> dict[str, str]:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a regular file: nothing can be created under it\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "XDG_", "PYTHON"))}
    env["HOME"] = str(blocker / "home")
    return env


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # Run from the home's parent folder: ``python -c`` puts the working folder on sys.path.
    cwd = Path(env["HOME"]).parent.parent
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def _check(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, f"exit {result.returncode}; stderr:\n{result.stderr[-3000:]}"
    assert result.stdout.startswith("ok "), result.stdout


def test_zip_install_without_writable_cache_runs(tmp_path: Path) -> None:
    packages = tmp_path / "packages"
    _copy_packages(packages)
    archive = tmp_path / "bandit-envs.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for file in sorted(packages.rglob("*")):
            if file.is_file():
                zipped.write(file, file.relative_to(packages).as_posix())
    env = _child_env(tmp_path)
    env["PYTHONPATH"] = str(archive)
    _check(_run([sys.executable, "-c", _CHILD, str(archive)], env))


def test_read_only_folder_install_runs(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _copy_packages(site)
    env = _child_env(tmp_path)
    env["PYTHONPATH"] = str(site)
    command = [sys.executable, "-c", _CHILD, str(site)]
    if os.geteuid() != 0:
        _read_only(site)
        try:
            _check(_run(command, env))
        finally:
            _writable_again(site)
        return
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("running as root without unshare: a folder cannot be made read-only for root")
    probe = _run([unshare, "-m", "sh", "-c", f'mount --bind -o ro "{site}" "{site}"'], env)
    if probe.returncode != 0:
        pytest.skip(f"running as root and a read-only bind mount is not allowed here ({probe.stderr.strip()})")
    script = f'mount --bind -o ro "{site}" "{site}" && exec "$@"'
    _check(_run([unshare, "-m", "sh", "-c", script, "sh", *command], env))


def test_numba_cache_dir_is_respected(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _copy_packages(site)
    cache = tmp_path / "numba-cache"
    env = _child_env(tmp_path)
    env["PYTHONPATH"] = str(site)
    env["NUMBA_CACHE_DIR"] = str(cache)
    child = "import numpy as np; from bandit_envs.rewards import rewards_from_uniforms as f; "
    child += "f(np.full((2, 3), 0.5), 0, np.full(3, 0.5), 0.1, np.zeros(3), np.ones(3)); print('ok cached')"
    _check(_run([sys.executable, "-c", child], env))
    assert any(cache.rglob("rewards.rewards_from_uniforms-*.nbi")), "nothing was cached in NUMBA_CACHE_DIR"


def test_an_unwritable_cache_folder_leaves_no_cache_file_in_a_writable_install(tmp_path: Path) -> None:
    # A user whose ~/.cache cannot be written (here: it lies under a regular file, so not even root
    # can create it) and an install they can write: numba's next choice would be the __pycache__
    # beside the source, a file pip did not install that a later ``pip uninstall`` leaves behind.
    site = tmp_path / "site"
    _copy_packages(site)
    env = _child_env(tmp_path)
    env["PYTHONPATH"] = str(site)
    child = "import numpy as np; from bandit_envs.rewards import rewards_from_uniforms as f; "
    child += "r = f(np.full((2, 3), 0.5), 0, np.full(3, 0.5), 0.1, np.zeros(3), np.ones(3)); "
    child += "import os, bandit_envs._jit as j; assert not os.access(os.path.dirname(j.CACHE_ROOT), os.F_OK); "
    child += "print('ok', r.shape)"
    _check(_run([sys.executable, "-c", child], env))
    left = sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.suffix in (".nbi", ".nbc"))
    assert not left, f"numba cache files written inside the installed packages: {left}"


def test_njit_refuses_cache_argument() -> None:
    from bandit_envs._jit import njit

    with pytest.raises(TypeError, match=r"njit decides cache itself .*got cache=True"):
        njit(cache=True)
