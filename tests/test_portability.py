"""The portability pass of CI really runs on a generic CPU.

``.ci/run`` runs the tests that compare with recorded results a second time with numpy's optional
CPU features turned off (``NPY_DISABLE_CPU_FEATURES``, every SIMD target numpy dispatches to at
run time) and numba compiling for a generic x86-64 CPU (``NUMBA_CPU_NAME=generic``). These tests
check, in that pass, that both settings took effect, so the pass cannot succeed by running on the
host's code paths after all; in an ordinary run they are skipped.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

PORTABLE = bool(os.environ.get("NUMBA_CPU_NAME")) or bool(os.environ.get("NPY_DISABLE_CPU_FEATURES"))
pytestmark = pytest.mark.skipif(not PORTABLE, reason="runs in CI's portability pass (generic CPU settings)")


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
