"""The portability pass of CI really runs on a generic CPU.

``.ci/run`` runs the tests that compare with recorded results a second time with numpy's optional
CPU features turned off (``NPY_DISABLE_CPU_FEATURES``, every SIMD target numpy dispatches to at
run time), numba compiling for a generic x86-64 CPU (``NUMBA_CPU_NAME=generic``) and OpenBLAS on
its oldest x86-64 kernel (``OPENBLAS_CORETYPE=Prescott``; OpenBLAS picks its kernels for the CPU at
run time, and an SVD's last bits, or the singular vectors of a near-null space, change with them).
These tests check, in that pass, that the settings took effect, so the pass cannot succeed by
running on the host's code paths after all. The pass sets ``BANDIT_ENVS_PORTABILITY=1``; in any
other run they are skipped, whatever numba or numpy CPU settings a user has made.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

PORTABLE = os.environ.get("BANDIT_ENVS_PORTABILITY") == "1"
pytestmark = pytest.mark.skipif(
    not PORTABLE, reason="runs in CI's portability pass (generic CPU settings, BANDIT_ENVS_PORTABILITY=1)"
)


def test_numba_compiles_for_the_generic_cpu():
    from numba.core.registry import cpu_target

    triple, cpu, features = cpu_target.target_context.codegen().magic_tuple()
    assert (cpu, features) == ("generic", ""), (triple, cpu, features)


def test_numpy_dispatches_to_none_of_its_optional_targets():
    multiarray = np._core._multiarray_umath
    disabled = os.environ.get("NPY_DISABLE_CPU_FEATURES", "").split()
    assert set(disabled) == set(multiarray.__cpu_dispatch__), disabled
    enabled = [name for name in multiarray.__cpu_dispatch__ if multiarray.__cpu_features__.get(name)]
    assert not enabled, f"numpy still dispatches to {enabled}"


#: Asks numpy's bundled OpenBLAS which kernel it runs (prints nothing where that cannot be asked).
_CORENAME = """
import ctypes, glob, os, numpy as np
for path in glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs", "*openblas*")):
    lib = ctypes.CDLL(path)
    for name in ("scipy_openblas_get_corename64_", "openblas_get_corename64_", "openblas_get_corename"):
        if hasattr(lib, name):
            getattr(lib, name).restype = ctypes.c_char_p
            print(getattr(lib, name)().decode())
            raise SystemExit
"""


def test_openblas_runs_another_kernel_than_the_hosts():
    if not os.environ.get("OPENBLAS_CORETYPE"):
        pytest.skip("OPENBLAS_CORETYPE is not set in this pass")
    ours = subprocess.run([sys.executable, "-c", _CORENAME], capture_output=True, text=True, check=True).stdout
    host_env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    host = subprocess.run([sys.executable, "-c", _CORENAME], capture_output=True, text=True, check=True, env=host_env)
    if not ours.strip():
        pytest.skip("numpy's OpenBLAS does not say which kernel it runs")
    assert ours.strip() != host.stdout.strip(), f"OpenBLAS runs the host's kernel {ours.strip()} in this pass"
