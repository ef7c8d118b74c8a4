"""Counter-based randomness: numbers that depend only on a key and an index.

Row sampling, cross-validation folds and the stochastic rounding of quantized gradients
draw for each row from a hash of (seed, round, ..., global row index) instead of a
random stream, so what a row draws does not depend on how the rows are partitioned, on
which worker they live or in which order they are visited.  The hash is SplitMix64's
(Steele, Lea & Flood, "Fast splittable pseudorandom number generators", 2014).
"""

import numba
import numpy as np
from numba.core import types
from numba.extending import overload

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)


@numba.njit(nogil=True, cache=True)
def mix(z):
    """SplitMix64's finaliser (uint64 -> uint64)."""
    z = (z ^ (z >> np.uint64(30))) * MIX1
    z = (z ^ (z >> np.uint64(27))) * MIX2
    return z ^ (z >> np.uint64(31))


@numba.njit(nogil=True, cache=True)
def uniform(key, index):
    """A float64 in [0, 1) drawn for ``index`` (a global row index) under ``key``."""
    z = mix(key + np.uint64(index) * GOLDEN)
    return np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


def global_row(row_offset, row_order, i):
    """The global index of a partition's ``i``-th row: ``row_offset + i``, or, where the
    partition's rows were reordered (cross-validation's rows in fold order,
    ``fold_states``), ``row_offset + row_order[i]`` (``row_order``: each row's place in
    the partition as read).  What a row draws then stays the same.  For compiled
    callers (chosen by ``row_order``'s type: None or an array)."""
    raise NotImplementedError("for compiled callers")


@overload(global_row, jit_options={"nogil": True, "cache": True}, inline="always")
def _global_row_for(row_offset, row_order, i):
    if isinstance(row_order, types.NoneType):
        return lambda row_offset, row_order, i: row_offset + i
    return lambda row_offset, row_order, i: row_offset + np.int64(row_order[i])
