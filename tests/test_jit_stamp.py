"""The on-disk cache of a compiled function goes stale when a module it depends on changes.

numba alone checks only the function's own source file, so a kernel cached before an edit of a
module it calls into would go on running the old code. ``bandit_envs._jit.njit`` adds the
fingerprint of the sources the function's module depends on to numba's stamp. Tested with real
processes sharing one ``NUMBA_CACHE_DIR``: a package whose kernel calls an inlined kernel of
another module, which is then edited alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from jit_processes import run_cached

from bandit_envs._jit import module_fingerprint

pytestmark = pytest.mark.integration  # compiles kernels in fresh Python processes

DEP = """
from bandit_envs._jit import njit

SCALE = {scale}


@njit(inline="always")
def scale(x):
    return x * SCALE
"""

MAIN = """
from bandit_envs._jit import njit
from stalepkg import dep


@njit
def run(x):
    return dep.scale(x)
"""


def _run(tmp: Path) -> float:
    done = run_cached(tmp, "from stalepkg.main import run; print(run(2.0))", check=True)
    return float(done.stdout.strip())


def _indexes(tmp: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (tmp / "cache").rglob("*.nbi")}


def test_an_edit_of_a_dependency_alone_recompiles_and_an_unchanged_tree_does_not(tmp_path: Path) -> None:
    package = tmp_path / "stalepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "main.py").write_text(MAIN)
    (package / "dep.py").write_text(DEP.format(scale=1.0))
    assert _run(tmp_path) == 2.0
    (package / "dep.py").write_text(DEP.format(scale=3.0))  # main.py is not touched
    assert _run(tmp_path) == 6.0
    cached = _indexes(tmp_path)
    assert any(name.startswith("main.run") for name in cached)
    # a third process with nothing changed loads the cache: the index is not written again
    assert _run(tmp_path) == 6.0
    assert _indexes(tmp_path) == cached


def test_the_fingerprint_follows_the_modules_a_kernel_module_uses() -> None:
    import agents.central_dp.kernels  # noqa: F401 - imported for sys.modules
    import agents.common.sampling

    before = module_fingerprint("agents.central_dp.kernels")
    assert module_fingerprint("agents.central_dp.kernels") == before
    # the sampler's source is part of it: pretend it changed
    from bandit_envs import _jit

    path = agents.common.sampling.__file__
    saved = _jit._DIGESTS[path]
    try:
        _jit._DIGESTS[path] = "changed"
        assert module_fingerprint("agents.central_dp.kernels") != before
    finally:
        _jit._DIGESTS[path] = saved
