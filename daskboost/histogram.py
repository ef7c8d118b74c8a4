"""Gradient histograms: the one heavy pass per tree level.

A histogram holds, for each node being built, each feature and each bin code, the sums
of the rows' gradients and hessians: ``hist[slot, feature, code] = (sum g, sum h)``
(XGBoost paper §3.3: split finding only needs these bucket sums).  Sums are float64 so
adding partitions in any fixed order loses nothing that matters.

Rows are visited once, row-major: each row's codes are contiguous and the row's node
decides which histogram slot it feeds (``node_to_slot[node] == -1``: not built this
level, e.g. the larger sibling that is derived by subtraction).
"""

import numba
import numpy as np


@numba.njit(nogil=True, cache=True)
def build_histograms(codes, grad, hess, positions, node_to_slot, n_slots, n_codes):
    """Sum (g, h) per (node slot, feature, bin code) over one partition's rows.

    Parameters
    ----------
    codes : (n_rows, n_features) uint8 or uint16 array of bin codes.
    grad, hess : (n_rows,) float32 arrays.
    positions : (n_rows,) int32 node id of every row.
    node_to_slot : (n_nodes,) int32, the histogram slot of each node, -1 to skip it.
    n_slots, n_codes : histogram shape.

    Returns
    -------
    hist : (n_slots, n_features, n_codes, 2) float64.
    """
    n_rows, n_features = codes.shape
    hist = np.zeros((n_slots, n_features, n_codes, 2), dtype=np.float64)
    for i in range(n_rows):
        slot = node_to_slot[positions[i]]
        if slot < 0:
            continue
        g = np.float64(grad[i])
        h = np.float64(hess[i])
        row_hist = hist[slot]
        for f in range(n_features):
            b = codes[i, f]
            row_hist[f, b, 0] += g
            row_hist[f, b, 1] += h
    return hist


def add_histograms(a, b):
    """Reduction step for the tree-reduce over partitions (fixed order: a then b)."""
    return a + b
