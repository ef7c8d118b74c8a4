"""Quantized gradients (``quantized_grad=True``): each row's (g, h) as two small
integers packed in one int64, so that a histogram cell is one int64 and adding a row to
it is one integer addition.

Shi et al., "Quantized Training of Gradient Boosting Decision Trees" (NeurIPS 2022),
and LightGBM's ``use_quantized_grad``: per tree, g is scaled into
[-n_bins / 2, n_bins / 2] and h into [-n_bins, n_bins] (their eq. 4) and rounded
stochastically, ``q = floor(x + u)`` with u uniform in [0, 1), so that E[q] = x and the
histogram sums stay unbiased.  The u of a row is keyed on (seed, round, tree, global
row index) (``keyed_random``), so the model does not depend on the scheduler.

Here the scales are each partition's own (its largest |g| and |h|), and a partition's
integer histogram is turned back into float64 (G, H) before the partitions' histograms
are added: no pass over all the data is needed before the first histogram, and the
reduction, the sibling subtraction and the split search stay as they are.  A node's
sums, and so the leaf values, come from the quantized histograms, as in LightGBM
without ``quant_train_renew_leaf``.

Packing: ``v = q_g * 2**32 + q_h``; the sum of such values is ``G * 2**32 + H`` as long
as |H| < 2**31 and |G| < 2**31, which ``check_partition_rows`` makes sure of before a
fit starts (a partition of at most 2**31 / n_bins rows).
"""

import numba
import numpy as np

from .keyed_random import GOLDEN, MIX1, MIX2, uniform

PACK_SHIFT = 32
_MAX_ABS_SUM = 2 ** 31 - 1


def check_partition_rows(partition_rows, n_bins):
    """ValueError before any pass if a partition has too many rows for packed sums."""
    limit = _MAX_ABS_SUM // n_bins
    largest = max(partition_rows, default=0)
    if largest > limit:
        raise ValueError(
            f"quantized_grad with num_grad_quant_bins={n_bins} sums at most {limit} rows "
            f"per partition in one int64 cell; a partition has {largest} rows: use smaller "
            f"partitions (repartition) or fewer num_grad_quant_bins")


def tree_key(seed, round_, tree):
    """The key of tree ``tree``'s draws in round ``round_`` (stochastic rounding)."""
    key = (int(seed) * int(GOLDEN) + int(round_) * int(MIX1) + (tree + 1) * int(MIX2))
    return np.uint64(key % 2 ** 64)


def quantize(grad, hess, n_bins, keys, row_offset):
    """``(packed, scales)``: (K, n_rows) int64 packed (g, h) and (K, 2) float64 scales
    (g = scale_g * q_g, h = scale_h * q_h in expectation); ``keys``: (K,) uint64 from
    ``tree_key``; ``row_offset``: the global index of the first row."""
    K, n = grad.shape
    packed = np.empty((K, n), dtype=np.int64)
    scales = np.ones((K, 2), dtype=np.float64)
    for t in range(K):
        g_max = float(np.abs(grad[t]).max()) if n else 0.0
        h_max = float(np.abs(hess[t]).max()) if n else 0.0
        if g_max > 0.0:
            scales[t, 0] = g_max / (n_bins / 2)
        if h_max > 0.0:
            scales[t, 1] = h_max / n_bins
        _quantize_tree(grad[t], hess[t], 1.0 / scales[t, 0], 1.0 / scales[t, 1],
                       np.uint64(keys[t]), row_offset, packed[t])
    return packed, scales


@numba.njit(nogil=True, cache=True)
def _quantize_tree(grad, hess, g_factor, h_factor, key, row_offset, out):
    """Stochastic rounding of one tree's (g, h), packed (see the module docstring).  g
    and h draw from two streams of ``key``; a row with g = h = 0 (left out) stays 0."""
    h_key = key ^ MIX1
    for i in range(grad.shape[0]):
        g = np.float64(grad[i])
        h = np.float64(hess[i])
        if g == 0.0 and h == 0.0:
            out[i] = 0
            continue
        row = row_offset + i
        q_g = np.int64(np.floor(g * g_factor + uniform(key, row)))
        q_h = np.int64(np.floor(h * h_factor + uniform(h_key, row)))
        out[i] = (q_g << PACK_SHIFT) + q_h


@numba.njit(nogil=True, cache=True)
def unpack_histograms(packed_hist, slot_scales):
    """float64 (n_slots, n_cells, 2) sums (G, H) of a partition's (n_slots, n_cells)
    packed histogram; ``slot_scales``: (n_slots, 2) the scales of each slot's tree."""
    n_slots, n_cells = packed_hist.shape
    out = np.empty((n_slots, n_cells, 2), dtype=np.float64)
    half = np.int64(1) << (PACK_SHIFT - 1)
    low = (np.int64(1) << PACK_SHIFT) - 1
    for s in range(n_slots):
        for c in range(n_cells):
            v = packed_hist[s, c]
            h = ((v + half) & low) - half  # the low 32 bits, signed
            g = (v - h) >> PACK_SHIFT
            out[s, c, 0] = g * slot_scales[s, 0]
            out[s, c, 1] = h * slot_scales[s, 1]
    return out


def slot_scales(scales, node_to_slot, n_slots):
    """(n_slots, 2): each histogram slot's tree's scales (slots number the K trees'
    requested nodes, ``level_loop.level_step``)."""
    out = np.ones((n_slots, 2), dtype=np.float64)
    for t in range(node_to_slot.shape[0]):
        slots = node_to_slot[t][node_to_slot[t] >= 0]
        out[slots] = scales[t]
    return out
