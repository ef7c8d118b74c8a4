"""Quantized gradients (``quantized_grad=True``): each row's (g, h) as two small
integers packed in one narrow integer, and a histogram cell as one int64 holding both
sums, so that adding a row to a cell is one integer addition.

Shi et al., "Quantized Training of Gradient Boosting Decision Trees" (NeurIPS 2022),
and LightGBM's ``use_quantized_grad``: per tree and round, g is scaled into
[-n_bins / 2, n_bins / 2] and h into [-n_bins, n_bins] by the largest |g| and |h| of
all rows, and rounded stochastically, ``q = floor(x + u)`` with u uniform in [0, 1), so
that E[q] = x and the histogram sums stay unbiased.  The u of a row is keyed on (seed,
round, tree, global row index) (``keyed_random``), so the model does not depend on the
scheduler or the partitioning.

A round's first pass computes the gradients and returns only each partition's largest
|g| and |h| (``GradientMaxima``, reduced by max); the next pass quantizes with the
scales of all rows (``LevelStep.quant_scales``) and builds the roots' histograms.  So
every histogram of a tree is of the same rounded values: the partitions' integer
histograms add exactly, in any order (and half as many bytes travel between workers),
and a sibling derived by subtraction (in integers, in the grower) holds exactly its own
rows' sums.  (With the roots'
histograms of the float gradients instead, a derived node carried the rounding errors
of its built sibling's rows, and those of every built node above it: 0.011 less test AUC
at 4 bins on 100,000 rows.)  The grower turns each node's histogram into float64 (G, H)
(``unpack_histograms``) on the thread that searches its splits.  Node sums, and so the leaf values,
come from these histograms, as in LightGBM without ``quant_train_renew_leaf``.

Packing.  A histogram cell is ``G * 2**32 + H``, exact as long as |H| < 2**31 and
|G| < 2**31, which ``check_rows`` makes sure of before a fit starts (at most
2**31 / n_bins rows in all).  A row is stored narrower, ``q_g * 2**b + q_h`` in an
integer of 4b bits (``row_dtype``: int16, b = 8, up to 64 bins; else int32, b = 16),
and widened to the cell's form as it is added (``histogram.wide_packed``).  The per-row array is
what every level pass reads besides the codes, and what a ``memory_budget`` must hold
(issue 17): 2 bytes a row instead of 8 leave 120 MB more of a 20M-row fit's budget to
the codes.
"""

from dataclasses import dataclass

import numba
import numpy as np
from numba.core import types
from numba.extending import overload

from .keyed_random import GOLDEN, MIX1, MIX2, global_row, uniform

PACK_SHIFT = 32
# bins up to which a row's (q_g, q_h) is stored in an int16: |q_h| <= n_bins + 1 (the
# largest |h| scales to n_bins, and floor(x + u) may round up once more in float
# arithmetic) must fit in its low byte, signed
INT16_ROW_BINS = 64
_MAX_ABS_SUM = 2 ** 31 - 1


def max_rows(n_bins):
    """The most rows whose packed sums of ``n_bins``-bin gradients a cell holds."""
    return _MAX_ABS_SUM // n_bins


def check_rows(n_rows, n_bins):
    """ValueError before any pass if the data has too many rows for packed sums."""
    limit = max_rows(n_bins)
    if n_rows > limit:
        raise ValueError(
            f"quantized_grad with num_grad_quant_bins={n_bins} sums at most {limit} rows "
            f"in one int64 histogram cell; the data has {n_rows} rows: use fewer "
            f"num_grad_quant_bins, or quantized_grad=False")


@dataclass
class GradientMaxima:
    """A round's first pass with quantized gradients: (K, 2) the largest |g| and |h| of
    each tree's rows.  Partial results combine with ``+`` (the larger of each), as
    histograms add in the reduction."""

    maxima: np.ndarray

    def __add__(self, other):
        return GradientMaxima(np.maximum(self.maxima, other.maxima))


def gradient_maxima(grad, hess):
    """(K, 2) the largest |g| and |h| of each tree's rows (0 without rows)."""
    maxima = np.zeros((grad.shape[0], 2), dtype=np.float64)
    if grad.shape[1]:
        maxima[:, 0] = np.abs(grad).max(axis=1)
        maxima[:, 1] = np.abs(hess).max(axis=1)
    return maxima


def scales_from_maxima(maxima, n_bins):
    """(K, 2) quantization steps: the largest |g| maps to n_bins / 2, the largest |h| to
    n_bins (1 where every value is 0)."""
    scales = maxima / np.array([n_bins / 2, n_bins], dtype=np.float64)
    scales[scales == 0.0] = 1.0
    return scales


def tree_key(seed, round_, tree):
    """The key of tree ``tree``'s draws in round ``round_`` (stochastic rounding)."""
    key = (int(seed) * int(GOLDEN) + int(round_) * int(MIX1) + (tree + 1) * int(MIX2))
    return np.uint64(key % 2 ** 64)


def row_dtype(n_bins):
    """The integer type a row's packed (q_g, q_h) is stored in at ``n_bins`` bins."""
    return np.dtype(np.int16 if n_bins <= INT16_ROW_BINS else np.int32)


def quantize(grad, hess, scales, keys, row_offset, n_bins, row_order=None):
    """(K, n_rows) packed (q_g, q_h) of ``row_dtype(n_bins)``: g ~ scale_g * q_g,
    h ~ scale_h * q_h; ``scales``: (K, 2) of ``scales_from_maxima`` at ``n_bins``;
    ``keys``: the K trees' ``tree_key``; ``row_offset``: the global index of the first
    row (``row_order``: of rows reordered, ``keyed_random.global_row``)."""
    packed = np.empty(grad.shape, dtype=row_dtype(n_bins))
    _quantize(grad, hess, 1.0 / scales, np.array(keys, dtype=np.uint64), row_offset,
              row_order, packed)
    return packed


@numba.njit(nogil=True, cache=True)
def _quantize(grad, hess, factors, keys, row_offset, row_order, packed):
    """Each row's stochastic rounding, packed (see the module docstring).  g and h draw
    from two streams of the tree's key; a row with g = h = 0 (left out) stays 0."""
    row_bits = packed.itemsize * 4
    for t in range(grad.shape[0]):
        key = keys[t]
        h_key = key ^ MIX1
        for i in range(grad.shape[1]):
            g = np.float64(grad[t, i])
            h = np.float64(hess[t, i])
            if g == 0.0 and h == 0.0:
                packed[t, i] = 0
                continue
            row = global_row(row_offset, row_order, i)
            q_g = np.int64(np.floor(g * factors[t, 0] + uniform(key, row)))
            q_h = np.int64(np.floor(h * factors[t, 1] + uniform(h_key, row)))
            packed[t, i] = (q_g << row_bits) + q_h


def unpack_histograms(packed, g_scale, h_scale):
    """float64 (..., 2) sums (G, H) of one tree's packed integer sums (histograms, or a
    sum of cells); ``g_scale``, ``h_scale``: the steps ``quantize`` used."""
    packed = np.asarray(packed, dtype=np.int64)  # (a 0-d sum of cells stays 0-d)
    flat = np.ascontiguousarray(packed).reshape(-1)
    return _unpacked(flat, g_scale, h_scale).reshape(packed.shape + (2,))


def float_sums(hists, g_scale, h_scale):
    """For compiled callers: float (G, H) sums of histograms, float ones as they are,
    packed integer sums unpacked as ``unpack_histograms`` does (chosen by the
    histograms' dtype where numba compiles the caller: ``_float_sums_for``)."""
    raise NotImplementedError("for compiled callers")


@overload(float_sums, jit_options={"nogil": True, "cache": True})
def _float_sums_for(hists, g_scale, h_scale):
    if isinstance(hists.dtype, types.Float):
        return lambda hists, g_scale, h_scale: hists

    return lambda hists, g_scale, h_scale: _unpacked(hists, g_scale, h_scale)


@numba.njit(nogil=True, cache=True)
def _unpacked(packed, g_scale, h_scale):
    """float64 (..., 2) (G, H) of C-contiguous packed sums (``unpack_histograms``)."""
    out = np.empty(packed.shape + (2,), dtype=np.float64)
    _unpack(packed.reshape(-1), g_scale, h_scale, out.reshape((-1, 2)))
    return out


@numba.njit(nogil=True, cache=True)
def _unpack(packed, g_scale, h_scale, out):
    half = np.int64(1) << (PACK_SHIFT - 1)
    low = (np.int64(1) << PACK_SHIFT) - 1
    for i in range(packed.shape[0]):
        v = packed[i]
        h = ((v + half) & low) - half  # the low 32 bits, signed
        g = (v - h) >> PACK_SHIFT
        out[i, 0] = g * g_scale
        out[i, 1] = h * h_scale
