"""Bin mapping: from merged quantile sketches to cut points, and the binning kernel.

Feature ``f`` has cut points ``cuts[f]`` (strictly increasing); a value ``v`` gets the
bin code ``#{c in cuts[f] : c < v}``, so bin ``b`` holds ``(cuts[b-1], cuts[b]]``.
Values below or above the training range fall into the first or last bin, ``-inf`` and
``+inf`` included.  Missing values (NaN) get ``missing_code``, one code past the largest
value bin of any feature, the same for every feature.

When a feature has at most ``max_bin`` distinct values every value has a bin of its own
(see ``sketch.cut_points``), and histogram split finding is the exact greedy algorithm.
Codes are uint8 when ``missing_code <= 255`` (``max_bin <= 255``, or fewer distinct
values), uint16 otherwise (up to ``max_bin=65535``).
"""

import numba
import numpy as np

from .sketch import cut_points

MAX_BIN_LIMIT = 65535


class BinMapper:
    """Cut points of every feature and the mapping of raw values to bin codes.

    Parameters
    ----------
    cuts : list of 1-D float64 arrays, one per feature.
    """

    def __init__(self, cuts):
        self.cuts = [np.asarray(c, dtype=np.float64) for c in cuts]
        self.n_bins = np.array([len(c) + 1 for c in self.cuts], dtype=np.int32)
        self.missing_code = int(self.n_bins.max()) if len(self.cuts) else 1
        self.n_codes = self.missing_code + 1
        self.dtype = np.uint8 if self.n_codes <= 256 else np.uint16
        self._cut_offsets = np.zeros(len(self.cuts) + 1, dtype=np.int64)
        self._cut_offsets[1:] = np.cumsum([len(c) for c in self.cuts])
        self._cut_values = (np.concatenate(self.cuts) if self.cuts
                            else np.empty(0, dtype=np.float64))

    @classmethod
    def from_summaries(cls, summaries, max_bin):
        """Choose each feature's cut points from its merged weighted quantile summary."""
        return cls([cut_points(summary, max_bin) for summary in summaries])

    @property
    def n_features(self):
        return len(self.cuts)

    def transform(self, X):
        """Bin a float64 (n_rows, n_features) block; NaN becomes ``missing_code``."""
        codes = np.empty(X.shape, dtype=self.dtype)
        _bin_kernel(X, self._cut_values, self._cut_offsets, self.missing_code, codes)
        return codes

    def threshold(self, feature, bin_):
        """Raw-value threshold of the split ``code <= bin_`` on ``feature``."""
        cuts = self.cuts[feature]
        return float(cuts[bin_]) if bin_ < len(cuts) else np.inf


@numba.njit(nogil=True, cache=True)
def _bin_kernel(X, cut_values, cut_offsets, missing_code, codes):
    n_rows, n_features = X.shape
    for f in range(n_features):
        lo0 = cut_offsets[f]
        hi0 = cut_offsets[f + 1]
        for i in range(n_rows):
            v = X[i, f]
            if np.isnan(v):
                codes[i, f] = missing_code
                continue
            # number of cuts strictly below v (binary search)
            lo = lo0
            hi = hi0
            while lo < hi:
                mid = (lo + hi) >> 1
                if cut_values[mid] < v:
                    lo = mid + 1
                else:
                    hi = mid
            codes[i, f] = lo - lo0
