"""The portability pass of CI really runs on a generic CPU.

``.ci/run`` runs the tests that compare with recorded results a second time with numpy's optional
CPU features turned off (``NPY_DISABLE_CPU_FEATURES``, every SIMD target numpy dispatches to at
run time), numba compiling for a generic x86-64 CPU (``NUMBA_CPU_NAME=generic``) and OpenBLAS on
its oldest x86-64 kernel (``OPENBLAS_CORETYPE=Prescott``; OpenBLAS picks its kernels for the CPU at
run time, and an SVD's last bits, or the singular vectors of a near-null space, change with them)
and glibc running its plain x86-64 builds of exp, log, pow and sin (``GLIBC_TUNABLES``), not the
FMA builds it picks on CPUs with FMA. These tests check, in that pass, that the settings took
effect, so the pass cannot succeed by running on the host's code paths after all. The pass sets
``BANDIT_ENVS_PORTABILITY=1``; in any other run they are skipped, whatever numba or numpy CPU
settings a user has made.
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


#: Prints the bits of libm's exp, pow and sin over a fixed sample (each call is glibc's, chosen for the CPU).
_LIBM_BITS = """
import math, random
rng = random.Random(1)
xs = [rng.uniform(-700.0, 700.0) for _ in range(30000)]
print(" ".join(f"{math.exp(x).hex()},{math.pow(abs(x), 0.37).hex()},{math.sin(x).hex()}" for x in xs))
"""


def test_libm_runs_another_variant_than_the_hosts():
    """glibc picks its exp, log, pow and sin for the CPU (its FMA builds on CPUs with FMA), and numba's
    kernels call them: with ``GLIBC_TUNABLES=glibc.cpu.hwcaps=-FMA,...`` the pass runs the plain
    x86-64 builds, which differ from the FMA builds in the last bit of about one result in a thousand."""
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if "-FMA" not in tunables:
        pytest.skip("GLIBC_TUNABLES does not mask FMA in this pass")
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            has_fma = any(line.startswith("flags") and " fma" in line for line in info)
    except OSError:
        has_fma = False
    if not has_fma:
        pytest.skip("this CPU has no FMA: glibc runs its plain x86-64 builds either way")
    ours = subprocess.run([sys.executable, "-c", _LIBM_BITS], capture_output=True, text=True, check=True).stdout
    host_env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    host = subprocess.run([sys.executable, "-c", _LIBM_BITS], capture_output=True, text=True, check=True, env=host_env)
    assert ours != host.stdout, "libm gave the host's results bit for bit: the FMA builds still run in this pass"
