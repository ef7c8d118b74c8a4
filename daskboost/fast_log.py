"""``log1p`` of a float64 in ``[0, 1]`` in plain arithmetic, for the log-loss kernels (numba).

The log loss of a sigmoid model is ``softplus(x) = max(x, 0) + log1p(exp(-|x|))`` of the
margin, so the ``log1p`` it takes is of a number in ``[0, 1]``.  numba calls the C
library's ``log1p`` (and ``exp``) for ``math.log1p``: a function call per value that keeps
the loop from being vectorised, ~22 ns a row for the two.  :func:`log1p_unit`, inlined
with ``fast_exp.exp_nonpositive``, lets the loop vectorise.  It is within 1 ulp of the C
library's ``log1p`` on that interval (``tests/test_fast_log.py``).  Plain IEEE operations,
no fused multiply-add: the same bits on every machine.

Method (the textbook one, as in fdlibm's ``log1p``):

- ``u = 1 + z`` rounded; ``c = (z - (u - 1)) / u`` is the rounding error's share of the
  logarithm (``log(1 + z) = log u + log(1 + (1 + z - u) / u)``, first order; ``u - 1`` is
  exact for ``u`` in ``[1, 2]``);
- ``u = 2^k (1 + f)`` with ``k = 1`` above ``sqrt 2`` (then ``f = u / 2 - 1``, exact), so
  ``|f| <= sqrt(2) - 1``;
- ``log(1 + f) = 2 atanh(s)``, ``s = f / (2 + f)``: ``2s + s R(s^2)`` with
  ``R(w) = sum_k 2 w^k / (2k + 1)``, ``k = 1..10`` (``w <= 0.0295``: the first term
  left out is below 2^-55 of the result).  Since ``2s = f - sf`` and ``sf = h - sh`` with
  ``h = f^2 / 2``, that is ``f - (h - s (h + R))``: the rounding of ``s`` weighs only on
  a correction of the order of ``f^3``;
- ``log1p(z) = k ln 2 + log(1 + f) + c``, ``ln 2`` split in a high and a low part.
"""

import numba

from .fast_exp import _LN2_HI, _LN2_LO  # ln 2 in a high part (32 bits) and the rest

__all__ = ["log1p_unit"]

_SQRT2 = 1.4142135623730951
_ATANH_SERIES = tuple(2.0 / (2 * k + 1) for k in range(10, 0, -1))  # w^10 .. w^1


@numba.njit(nogil=True, cache=True, inline="always", error_model="numpy")
def log1p_unit(z):
    """``log1p(z)`` for ``0 <= z <= 1`` (NaN gives NaN), within 1 ulp of the C library's.
    Not for other ``z``."""
    u = 1.0 + z
    correction = (z - (u - 1.0)) / u
    above = u > _SQRT2
    k = 1.0 if above else 0.0
    f = (u * 0.5 - 1.0) if above else (u - 1.0)
    s = f / (2.0 + f)
    w = s * s
    r = 0.0
    for c in _ATANH_SERIES:  # Horner in w (a constant tuple: unrolled)
        r = (r + c) * w
    half_square = 0.5 * f * f
    log_1pf = f - (half_square - s * (half_square + r))
    return k * _LN2_HI + (log_1pf + (k * _LN2_LO + correction))
