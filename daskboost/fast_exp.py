"""``exp`` of a non-positive float64 in plain arithmetic, for the gradient kernels (numba).

The sigmoid and the softmax of the gradient kernels take ``exp`` of ``-|m|`` and of
``m - max m``, never of a positive number.  numba calls the C library's ``exp`` for
``math.exp``: a function call per value that keeps a loop from being vectorised (4.3 ns
a value).  :func:`exp_nonpositive` is the textbook algorithm (Cody & Waite's argument
reduction, a Taylor polynomial, a power of two put into the exponent bits): inlined, a
loop of it is vectorised (1.0 ns a value).  It is within 1 ulp of the C library's
``exp`` and equal to it for ~90% of arguments; the kernels round gradients to float32,
where the two agree on every value tested (``tests/test_fast_exp.py``).  Plain IEEE
operations, no fused multiply-add: the same bits on every machine.

Method: ``x = k ln 2 + r``, ``k = rint(x / ln 2)``, ``|r| <= ln(2) / 2``, with ``ln 2``
split in a high part whose products with ``k`` are exact and a low part; ``exp(r)`` by
its Taylor polynomial of degree 13 (truncation error below 2^-58 on that interval) in
Horner form; ``exp(x) = exp(r) 2^k``, the scaling done as ``2^(k + 54)`` then ``2^-54``
so that a subnormal result is rounded once and a normal one is exact.
"""

import math

import numba
import numpy as np
from numba import types
from numba.extending import intrinsic

__all__ = ["exp_nonpositive"]

_LOG2_E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 to 32 bits: k * _LN2_HI is exact for |k| < 2^20
_LN2_LO = 1.90821492927058770002e-10  # ln 2 - _LN2_HI
_BELOW_SUBNORMALS = -746.0            # exp(x) rounds to +0.0 below -745.13
_TWO_TO_MINUS_54 = 2.0 ** -54
_TAYLOR = tuple(1.0 / math.factorial(n) for n in range(13, -1, -1))  # 1/13!, ..., 1/0!


@intrinsic
def _bits_as_float64(typingctx, bits):
    """The float64 whose IEEE bits are the int64 ``bits`` (a register move)."""
    if bits != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))
    return types.float64(types.int64), codegen


@numba.njit(nogil=True, cache=True, inline="always", error_model="numpy")
def exp_nonpositive(x):
    """``exp(x)`` for ``x <= 0`` (``-inf`` gives 0, NaN gives NaN), within 1 ulp of the
    C library's.  Not for positive ``x``."""
    clamped = x if x > _BELOW_SUBNORMALS else _BELOW_SUBNORMALS  # (NaN: clamped too)
    k = np.rint(clamped * _LOG2_E)                # -1076 <= k <= 0
    r = (clamped - k * _LN2_HI) - k * _LN2_LO
    p = _TAYLOR[0]
    for c in _TAYLOR[1:]:  # Horner, from the highest power (a constant tuple: unrolled)
        p = p * r + c
    # 2^(k + 54) is a normal number for every k here
    scale = _bits_as_float64((np.int64(k) + np.int64(1023 + 54)) << np.int64(52))
    out = (p * scale) * _TWO_TO_MINUS_54  # exp(-746) rounds to +0.0, as below it
    return out if x == x else x
