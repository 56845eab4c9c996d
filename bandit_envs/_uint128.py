"""128-bit products of 64-bit words in compiled code, for the generators written out in numba.

numba has no 128-bit integer type; LLVM has. :func:`multiply_high` is one LLVM ``i128``
multiply of two ``uint64`` values, of which it keeps the high word (the low word is the plain
``uint64`` product, which wraps). Used by numpy's PCG64 written out for the recommendation vector
envs' streams (:mod:`bandit_envs.recommendation._pcg64`) and by Philox4x64-10
(:mod:`agents.common.philox`, Random123's ``mulhilo64``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


def _multiply_high(typingctx: Any, a: Any, b: Any) -> Any:  # pragma: no cover - compiled
    """``multiply_high(a, b)``: the high 64-bit word of the 128-bit product of two uint64 (compiled code only)."""
    signature = types.uint64(types.uint64, types.uint64)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))

    return signature, codegen


#: ``multiply_high(a, b)`` of two uint64, compiled code only (see :func:`_multiply_high`).
multiply_high = cast(Callable[[Any, Any], Any], intrinsic(_multiply_high))
