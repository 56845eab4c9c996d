"""numba cache files that cannot be read or written: the function compiles anyway.

A cache file cut short, garbled or empty (a crash or a full disk while it was written; bytes
zeroed in its middle, as a power loss can leave it, which numba's own reading misses until LLVM
fails on the machine code) is compiled over and replaced, so the next run loads the new entry;
a cache folder where nothing can be written (a file-size limit here) leaves the function
compiled in memory. Tested with real
processes sharing one ``NUMBA_CACHE_DIR`` and real files.
"""

from __future__ import annotations

import random
import resource
import subprocess
from pathlib import Path

import pytest
from jit_processes import run_cached

pytestmark = pytest.mark.integration  # compiles kernels in fresh Python processes over damaged cache files

KERNEL = """
from bandit_envs._jit import njit


@njit
def triple(x):
    return 3.0 * x
"""


def _run(tmp: Path, file_size: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if file_size is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

    return run_cached(tmp, "from cachepkg.kernel import triple; print(triple(2.0))", preexec_fn=limit)


def _cache_files(tmp: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((tmp / "cache").rglob("*")) if p.is_file()}


@pytest.fixture
def package(tmp_path: Path) -> Path:
    (tmp_path / "cachepkg").mkdir()
    (tmp_path / "cachepkg" / "__init__.py").write_text("")
    (tmp_path / "cachepkg" / "kernel.py").write_text(KERNEL)
    return tmp_path


def _spoil(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how in ("zeroed middle", "random middle"):  # the pickle's framing intact, the machine code garbled
        n = min(4096, len(data) // 4)
        start = len(data) // 2 - n // 2
        rng = random.Random(path.name)
        middle = bytes(n) if how == "zeroed middle" else bytes(rng.randrange(256) for _ in range(n))
        path.write_bytes(data[:start] + middle + data[start + n :])
    elif how == "random":
        rng = random.Random(path.name)
        path.write_bytes(bytes(rng.randrange(256) for _ in range(len(data))))
    else:
        path.write_bytes(b"")


@pytest.mark.parametrize(
    ("how", "suffix"),
    [  # one damage of each kind to each file in the default run; the others behind the slow marker
        ("truncated", ".nbi"),
        pytest.param("truncated", ".nbc", marks=pytest.mark.slow),
        pytest.param("random", ".nbi", marks=pytest.mark.slow),
        ("random", ".nbc"),
        ("empty", ".nbc"),
        ("zeroed middle", ".nbc"),
        pytest.param("random middle", ".nbc", marks=pytest.mark.slow),
    ],
)
def test_an_unreadable_cache_file_is_compiled_over_and_replaced(how, suffix, package):
    first = _run(package)
    assert first.returncode == 0 and first.stdout.strip() == "6.0", first.stderr
    spoilt = [p for p in (package / "cache").rglob(f"*{suffix}") if p.name.startswith("kernel.triple")]
    assert spoilt, _cache_files(package)
    for path in spoilt:
        _spoil(path, how)
    bad = _cache_files(package)

    second = _run(package)
    assert second.returncode == 0 and second.stdout.strip() == "6.0", second.stderr
    assert "Traceback" not in second.stderr
    repaired = _cache_files(package)
    assert all(repaired[p.name] != bad[p.name] for p in spoilt)  # the new entry replaced the bad file
    third = _run(package)  # loads the new entry: nothing is written again
    assert third.returncode == 0 and third.stdout.strip() == "6.0", third.stderr
    assert _cache_files(package) == repaired


def test_a_cache_folder_that_takes_no_file_leaves_the_function_compiled_in_memory(package):
    done = _run(package, file_size=16)  # far below any cache file: every write fails with EFBIG
    assert done.returncode == 0 and done.stdout.strip() == "6.0", done.stderr
    assert "Traceback" not in done.stderr
    assert not [name for name in _cache_files(package) if name.endswith((".nbi", ".nbc"))]
