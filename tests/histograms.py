"""Tests write histograms per feature, ``(..., n_features, n_codes, 2)`` with every
feature's missing rows at the common ``missing_code``; the kernels take them in cells,
feature after feature (``daskboost.histogram``'s layout). These convert."""

import numpy as np


def cell_offsets(n_bins):
    """Where each feature's cells start: its ``n_bins`` value bins, then its missing bin."""
    offsets = np.zeros(len(n_bins) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(np.asarray(n_bins) + 1)
    return offsets


def as_cells(hist, n_bins, missing_code):
    """``(cells, offsets)``: ``hist`` (..., n_features, n_codes, 2) in the cell layout."""
    hist = np.asarray(hist, dtype=np.float64)
    parts = []
    for f, k in enumerate(n_bins):
        parts.append(hist[..., f, :k, :])
        parts.append(hist[..., f, missing_code:missing_code + 1, :])
    return np.ascontiguousarray(np.concatenate(parts, axis=-2)), cell_offsets(n_bins)


def per_feature(cells, n_bins, missing_code):
    """The inverse of ``as_cells``: (..., n_features, missing_code + 1, 2)."""
    offsets = cell_offsets(n_bins)
    out = np.zeros(cells.shape[:-2] + (len(n_bins), missing_code + 1, 2))
    for f, k in enumerate(n_bins):
        out[..., f, :k, :] = cells[..., offsets[f]:offsets[f] + k, :]
        out[..., f, missing_code, :] = cells[..., offsets[f + 1] - 1, :]
    return out
