"""Split finding from a reduced histogram, and leaf weights.

For a node with gradient sums G, H and a candidate split into (G_L, H_L), (G_R, H_R)
the gain is XGBoost's eq. 7 without the constant factor (as xgboost computes it):

    gain = score(G_L, H_L) + score(G_R, H_R) - score(G, H),  score(G, H) = G^2 / (H + lambda)

and the optimal leaf weight is eq. 5, ``w* = -G / (H + lambda)``.  With L1
regularisation (``reg_alpha``) G is soft-thresholded by alpha first; with
``max_delta_step`` the weight is clipped to [-max_delta_step, max_delta_step] and the
score is the loss reduction at the clipped weight, ``score = -(2 G w + (H + lambda) w^2)``
(twice the second-order objective reduction, the same scale as the unclipped score;
like xgboost, this branch leaves the L1 term out of the score).  A split is kept only
when its gain exceeds a tiny epsilon and is at least ``gamma`` (xgboost's
``min_split_loss``), and both children carry at least ``min_child_weight`` hessian.

Missing values (Algorithm 3, sparsity-aware split finding): each feature's histogram
has a bin of its own for rows whose value is missing, after its value bins (a node's
histogram is a run of cells, feature after feature: ``histogram``'s layout, feature
``f`` at ``hist[cell_offsets[f]:cell_offsets[f + 1]]``).  Bins are scanned left to right
with the missing rows on the right, then right to left with them on the left; the
better direction becomes the node's default.  The second scan is skipped when the node
has no missing rows for that feature (the default then stays "right").  A split whose
left side is every present value and whose right side is the missing rows is allowed
(bin = last value bin); its mirror image (missing left, every present value right) is
the same partition and is not enumerated again.

Ties are broken like xgboost: lower feature index first, then the first candidate met
in the scan order above.
"""

import numba
import numpy as np
from numba.core import types
from numba.extending import overload

from .histogram import part_range

# Minimum gain for a split to count (xgboost's kRtEps).
MIN_SPLIT_GAIN = 1e-6


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _soft_threshold(g, reg_alpha):
    if g > reg_alpha:
        return g - reg_alpha
    if g < -reg_alpha:
        return g + reg_alpha
    return 0.0


@numba.njit(nogil=True, cache=True, error_model="numpy")
def leaf_weight(g, h, reg_lambda, reg_alpha=0.0, max_delta_step=0.0):
    """XGBoost eq. 5, w* = -G / (H + lambda), with L1 soft-thresholding and clipping;
    0 for a node whose hessian sum is not positive (xgboost's ``CalcWeight``: an empty
    row sample, or a custom objective's negative hessians)."""
    if h <= 0.0 or h + reg_lambda <= 0.0:
        return 0.0
    w = -_soft_threshold(g, reg_alpha) / (h + reg_lambda)
    if max_delta_step > 0.0 and abs(w) > max_delta_step:
        w = max_delta_step if w > 0 else -max_delta_step
    return w


@numba.njit(nogil=True, cache=True, error_model="numpy")
def leaf_values_of(sums, learning_rate, reg_lambda, reg_alpha, max_delta_step):
    """``learning_rate * leaf_weight(G, H)`` of every ``(G, H)`` row of ``sums``: a tree's
    node values in one call (one call per node cost ~1 us of dispatch each)."""
    out = np.empty(sums.shape[0])
    for i in range(sums.shape[0]):
        out[i] = learning_rate * leaf_weight(sums[i, 0], sums[i, 1], reg_lambda, reg_alpha,
                                             max_delta_step)
    return out


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _score(g, h, reg_lambda, reg_alpha, max_delta_step):
    if h <= 0.0 or h + reg_lambda <= 0.0:  # no (positive) hessian: no weight, no score
        return 0.0
    if max_delta_step == 0.0 and reg_alpha == 0.0:  # the common case, first
        return g * g / (h + reg_lambda)
    if max_delta_step == 0.0:
        t = _soft_threshold(g, reg_alpha)
        return t * t / (h + reg_lambda)
    w = leaf_weight(g, h, reg_lambda, reg_alpha, max_delta_step)
    return -(2.0 * g * w + (h + reg_lambda) * w * w)


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _valid_gain(lg, lh, rg, rh, parent, reg_lambda, reg_alpha, max_delta_step,
                min_child_weight):
    """Gain of a candidate (eq. 7), or -1 when a child is too light to exist."""
    if lh < min_child_weight or rh < min_child_weight or lh <= 0.0 or rh <= 0.0:
        return -1.0
    return (_score(lg, lh, reg_lambda, reg_alpha, max_delta_step)
            + _score(rg, rh, reg_lambda, reg_alpha, max_delta_step) - parent)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _numeric_feature(hist_f, k, node_g, node_h, parent, reg_lambda, reg_alpha,
                     max_delta_step, min_child_weight, best_gain, scratch):
    """The two scans of one numeric feature (``hist_f``: its k value bins, then its
    missing rows' bin; sparsity-aware, XGBoost Alg. 3): scan 1
    sends missing rows right, left = bins 0..b; scan 2 (when the node has missing rows)
    sends them left, right = bins b+1..k-1 from the top. Returns (gain, bin,
    default_left, lg, lh) of its best candidate beating ``best_gain`` (gain -1 if none
    does).  ``scratch``: a (3, >= 2k) float64 work array (``_scan_gains``)."""
    if reg_alpha == 0.0 and max_delta_step == 0.0 and reg_lambda >= 0.0:
        return _numeric_feature_l2(hist_f, k, node_g, node_h, parent, reg_lambda,
                                   min_child_weight, best_gain, scratch)
    out_gain, out_bin, out_dl, out_lg, out_lh = -1.0, -1, False, 0.0, 0.0
    lg = 0.0
    lh = 0.0
    for b in range(k):
        lg += hist_f[b, 0]
        lh += hist_f[b, 1]
        gain = _valid_gain(lg, lh, node_g - lg, node_h - lh, parent, reg_lambda, reg_alpha,
                           max_delta_step, min_child_weight)
        if gain > best_gain:
            best_gain = out_gain = gain
            out_bin, out_dl, out_lg, out_lh = b, False, lg, lh
    if hist_f[k, 1] == 0.0:  # no missing rows (a custom objective's hessian may be < 0)
        return out_gain, out_bin, out_dl, out_lg, out_lh
    rg = 0.0
    rh = 0.0
    for b in range(k - 2, -1, -1):
        rg += hist_f[b + 1, 0]
        rh += hist_f[b + 1, 1]
        lg = node_g - rg
        lh = node_h - rh
        gain = _valid_gain(lg, lh, rg, rh, parent, reg_lambda, reg_alpha, max_delta_step,
                           min_child_weight)
        if gain > best_gain:
            best_gain = out_gain = gain
            out_bin, out_dl, out_lg, out_lh = b, True, lg, lh
    return out_gain, out_bin, out_dl, out_lg, out_lh


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _numeric_feature_l2(hist_f, k, node_g, node_h, parent, reg_lambda, min_child_weight,
                        best_gain, scratch):
    """``_numeric_feature`` without L1 and ``max_delta_step`` (the default), the same
    candidates in the same order with the same gains, bit for bit: first the prefix
    sums of both scans (each a serial chain of additions; the two scans' chains run
    interleaved in one loop, so the adds of one wait less on the last), then all gains
    at once (``_scan_gains``, a loop without branches that the compiler vectorises),
    then the first best, scan 1's candidates before scan 2's."""
    sums_g, sums_h, gains = scratch[0], scratch[1], scratch[2]
    # scan 1: sums of bins 0..b go left, at b; scan 2 (only when the node has missing
    # rows): sums of bins k-1-j..k-1 go right, at k + j.  (Unsigned indices: numba
    # then skips its negative-index fix-up.)
    scan_2 = hist_f[k, 1] != 0.0
    uk = np.uint64(k)
    lg = 0.0
    lh = 0.0
    rg = 0.0
    rh = 0.0
    first = np.uint64(0)
    if scan_2:
        for j in range(uk - np.uint64(1)):
            lg += hist_f[j, 0]
            lh += hist_f[j, 1]
            sums_g[j] = lg
            sums_h[j] = lh
            top = uk - np.uint64(1) - j
            rg += hist_f[top, 0]
            rh += hist_f[top, 1]
            sums_g[uk + j] = rg
            sums_h[uk + j] = rh
        first = uk - np.uint64(1)
    for b in range(first, uk):
        lg += hist_f[b, 0]
        lh += hist_f[b, 1]
        sums_g[b] = lg
        sums_h[b] = lh
    n = 2 * k - 1 if scan_2 else k
    _scan_gains(sums_g, sums_h, n, node_g, node_h, parent, reg_lambda, min_child_weight,
                gains)
    # scan 1's candidates come before scan 2's: the first best of both scans in one
    b = _first_best(gains, n, best_gain)
    if b < 0:
        return -1.0, -1, False, 0.0, 0.0
    if b < k:
        return gains[b], b, False, sums_g[b], sums_h[b]
    return gains[b], 2 * k - 2 - b, True, node_g - sums_g[b], node_h - sums_h[b]


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _first_best(gains, n, best_gain):
    """The first ``b`` in ``0..n-1`` with the largest ``gains[b]``, if that beats
    ``best_gain >= 0``; else -1: what a scan keeping the first strictly better candidate
    finds, without its chain of dependent compares.  The maximum is taken over the
    gains' bits as int64: for doubles >= +0.0 (the only ones that can beat
    ``best_gain``) their order, and every negative double is a negative int64, so the
    integer maximum finds the largest gain exactly, in a loop the compiler vectorises
    (a float maximum it does not: 8 us against 0.9 us a node of 28 x 257 cells).
    ``_scan_gains`` writes no NaN."""
    keys = gains[:n].view(np.int64)
    top = np.int64(0)
    for b in range(n):
        key = keys[b]
        top = key if key > top else top
    if top == 0:  # no gain above +0.0
        return -1
    b = 0
    while b + 8 <= n:  # eight compares a step, one branch
        if ((keys[b] == top) | (keys[b + 1] == top) | (keys[b + 2] == top)
                | (keys[b + 3] == top) | (keys[b + 4] == top) | (keys[b + 5] == top)
                | (keys[b + 6] == top) | (keys[b + 7] == top)):
            break
        b += 8
    while keys[b] != top:
        b += 1
    return b if gains[b] > best_gain else -1


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _scan_gains(sums_g, sums_h, n, node_g, node_h, parent, reg_lambda, min_child_weight,
                gains):
    """``gains[b]``: eq. 7 for one child holding ``sums[b]`` and the other the rest of
    the node, -1 when a child is too light (``_valid_gain`` with alpha = 0 and no
    ``max_delta_step``: the same operations, so the same values; the sum of the two
    scores does not depend on which child is which, float addition commutes)."""
    for b in range(n):
        ag = sums_g[b]
        ah = sums_h[b]
        bg = node_g - ag
        bh = node_h - ah
        gain = ag * ag / (ah + reg_lambda) + bg * bg / (bh + reg_lambda) - parent
        valid = ((ah >= min_child_weight) & (bh >= min_child_weight) & (ah > 0.0)
                 & (bh > 0.0) & (gain == gain))  # (a NaN gain is never a candidate)
        gains[b] = gain if valid else -1.0


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _scan_scratch(cell_offsets):
    """The work array of ``_numeric_feature`` for any feature of this layout."""
    widest = 1
    for f in range(len(cell_offsets) - 1):
        widest = max(widest, cell_offsets[f + 1] - cell_offsets[f])
    return np.empty((3, 2 * widest), dtype=np.float64)  # both scans' candidates


def _scratch_of(scratch, cell_offsets):
    """``scratch`` itself, or for None a new ``_scan_scratch``: a node's search takes
    its caller's work array, which a loop over nodes makes once (one made per node cost
    ~0.5 us of diamonds' ~3.5 us a node: fresh memory each time)."""
    raise NotImplementedError("for compiled callers")


@overload(_scratch_of, jit_options={"nogil": True, "cache": True}, inline="always")
def _scratch_of_for(scratch, cell_offsets):
    if isinstance(scratch, types.NoneType):
        return lambda scratch, cell_offsets: _scan_scratch(cell_offsets)
    return lambda scratch, cell_offsets: scratch


@numba.njit(nogil=True, cache=True, error_model="numpy")
def find_node_split(hist, cell_offsets, node_g, node_h, feature_mask,
                    reg_lambda, reg_alpha, max_delta_step, min_child_weight, gamma,
                    scratch=None):
    """Best split of one node.

    Parameters
    ----------
    hist : (n_cells, 2) float64 histogram of the node.
    cell_offsets : (n_features + 1,) int64, feature ``f``'s cells are
        ``cell_offsets[f]:cell_offsets[f + 1]``: its value bins (codes 0..n_bins-1), then
        its missing rows.
    node_g, node_h : float, the node's gradient and hessian sums.
    feature_mask : (n_features,) bool, the features this node may split on (column
        sampling).
    scratch : the work array (``_scan_scratch``) or None (one is made).

    Returns
    -------
    (gain, feature, bin, default_left, left_g, left_h); feature == -1 when no split
    satisfies the constraints.  Rows with code <= bin go left; missing rows go left
    iff default_left.
    """
    parent = _score(node_g, node_h, reg_lambda, reg_alpha, max_delta_step)
    best_gain = 0.0
    best_feature = -1
    best_bin = -1
    best_default_left = False
    best_lg = 0.0
    best_lh = 0.0
    work = _scratch_of(scratch, cell_offsets)
    for f in range(len(cell_offsets) - 1):
        if not feature_mask[f]:
            continue
        lo, hi = cell_offsets[f], cell_offsets[f + 1]
        gain, b, dl, lg, lh = _numeric_feature(
            hist[lo:hi], hi - lo - 1, node_g, node_h, parent, reg_lambda, reg_alpha,
            max_delta_step, min_child_weight, best_gain, work)
        if gain > best_gain:
            best_gain, best_feature, best_bin = gain, f, b
            best_default_left, best_lg, best_lh = dl, lg, lh
    if best_feature >= 0 and (best_gain <= MIN_SPLIT_GAIN or best_gain < gamma):
        best_feature = -1
    return best_gain, best_feature, best_bin, best_default_left, best_lg, best_lh


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _new_results(n_nodes):
    """The split kernels' arrays for ``n_nodes`` nodes, before any is searched: gain,
    feature (-1), bin (-1), default_left, left (G, H)."""
    return (np.zeros(n_nodes, dtype=np.float64), np.full(n_nodes, -1, dtype=np.int32),
            np.full(n_nodes, -1, dtype=np.int32), np.zeros(n_nodes, dtype=np.bool_),
            np.zeros((n_nodes, 2), dtype=np.float64))


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _store_result(gain, feature, bin_, default_left, left_sums, i, found):
    """Node ``i``'s ``(gain, feature, bin, default_left, left_g, left_h)`` into the
    arrays of ``_new_results`` (passed one by one: numba's parallel loops lost the
    stores into arrays unpacked from a tuple inside the loop)."""
    gain[i] = found[0]
    feature[i] = found[1]
    bin_[i] = found[2]
    default_left[i] = found[3]
    left_sums[i, 0] = found[4]
    left_sums[i, 1] = found[5]


@numba.njit(nogil=True, cache=True, error_model="numpy")
def find_splits(hists, node_sums, cell_offsets, feature_masks, reg_lambda, reg_alpha,
                max_delta_step, min_child_weight, gamma):
    """Best split of each node: ``find_node_split`` over ``hists[i]``.

    Parameters
    ----------
    hists : (n_nodes, n_cells, 2) float64.
    node_sums : (n_nodes, 2) float64 gradient and hessian sums of each node.
    feature_masks : (n_nodes, n_features) bool, the features each node may split on.

    Returns
    -------
    gain (float64), feature (int32), bin (int32), default_left (bool),
    left_sums ((n_nodes, 2) float64), one entry per node.
    """
    gain, feature, bin_, default_left, left_sums = _new_results(hists.shape[0])
    _search_nodes(hists, node_sums, cell_offsets, feature_masks, reg_lambda, reg_alpha,
                  max_delta_step, min_child_weight, gamma, gain, feature, bin_,
                  default_left, left_sums, 0, hists.shape[0])
    return gain, feature, bin_, default_left, left_sums


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _search_nodes(hists, node_sums, cell_offsets, feature_masks, reg_lambda, reg_alpha,
                  max_delta_step, min_child_weight, gamma, gain, feature, bin_,
                  default_left, left_sums, first, stop):
    """Nodes ``first..stop-1`` of ``find_splits`` (or of a thread of
    ``find_splits_parallel``), with one work array for them all."""
    scratch = _scan_scratch(cell_offsets)
    for i in range(first, stop):
        _store_result(gain, feature, bin_, default_left, left_sums, i, find_node_split(
            hists[i], cell_offsets, node_sums[i, 0], node_sums[i, 1], feature_masks[i],
            reg_lambda, reg_alpha, max_delta_step, min_child_weight, gamma, scratch))


@numba.njit(nogil=True, cache=True, error_model="numpy", parallel=True)
def find_splits_parallel(hists, node_sums, cell_offsets, feature_masks, reg_lambda,
                         reg_alpha, max_delta_step, min_child_weight, gamma, n_parts):
    """``find_splits`` with the nodes spread over native threads (``native_threads``):
    each node searched as there, so the same results (``n_parts`` ranges of nodes, one
    a thread, each with its work array)."""
    n_nodes = hists.shape[0]
    gain, feature, bin_, default_left, left_sums = _new_results(n_nodes)
    n_parts = min(n_parts, n_nodes)
    for part in numba.prange(n_parts):
        first, stop = part_range(part, n_parts, n_nodes)
        _search_nodes(hists, node_sums, cell_offsets, feature_masks, reg_lambda, reg_alpha,
                      max_delta_step, min_child_weight, gamma, gain, feature, bin_,
                      default_left, left_sums, first, stop)
    return gain, feature, bin_, default_left, left_sums


# ---- monotone constraints (xgboost's TreeEvaluator with monotone_constraints) ----------
# A separate kernel, used only when a constraint is set, so the unconstrained scan above
# stays as it is.  As in xgboost, with a constraint set every weight is clipped into its
# node's [lower, upper] bounds and every score is the loss reduction at that weight,
# -(2 G w + (H + lambda) w^2); a split on a feature constrained increasing (+1) whose
# left weight exceeds its right weight (or the reverse for -1) is no candidate.


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def bounded_weight(g, h, lower, upper, reg_lambda, reg_alpha, max_delta_step):
    """``leaf_weight`` clipped into a node's monotone bounds [lower, upper]."""
    w = leaf_weight(g, h, reg_lambda, reg_alpha, max_delta_step)
    if w < lower:
        return lower
    if w > upper:
        return upper
    return w


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _score_given_weight(g, h, w, reg_lambda):
    if h + reg_lambda <= 0.0:
        return 0.0
    return -(2.0 * g * w + (h + reg_lambda) * w * w)


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _monotone_gain(lg, lh, rg, rh, parent, lower, upper, direction, reg_lambda, reg_alpha,
                   max_delta_step, min_child_weight):
    """Gain of a candidate under the node's bounds, or -1 when a child is too light or
    the children's weights break the feature's direction."""
    if lh < min_child_weight or rh < min_child_weight or lh <= 0.0 or rh <= 0.0:
        return -1.0
    wl = bounded_weight(lg, lh, lower, upper, reg_lambda, reg_alpha, max_delta_step)
    wr = bounded_weight(rg, rh, lower, upper, reg_lambda, reg_alpha, max_delta_step)
    if (direction > 0 and wl > wr) or (direction < 0 and wl < wr):
        return -1.0
    return (_score_given_weight(lg, lh, wl, reg_lambda)
            + _score_given_weight(rg, rh, wr, reg_lambda) - parent)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def find_node_split_monotone(hist, cell_offsets, node_g, node_h, feature_mask, lower,
                             upper, monotone, reg_lambda, reg_alpha, max_delta_step,
                             min_child_weight, gamma):
    """``find_node_split`` under monotone constraints: the same two scans per feature,
    gains from ``_monotone_gain``.  ``lower``, ``upper``: the node's weight bounds;
    ``monotone``: (n_features,) int8 direction of each feature (-1, 0, 1).  A split may
    have bin -1 here: missing rows left, every present value right."""
    parent = _score_given_weight(
        node_g, node_h,
        bounded_weight(node_g, node_h, lower, upper, reg_lambda, reg_alpha, max_delta_step),
        reg_lambda)
    best_gain = 0.0
    best_feature = -1
    best_bin = -1
    best_default_left = False
    best_lg = 0.0
    best_lh = 0.0
    for f in range(len(cell_offsets) - 1):
        if not feature_mask[f]:
            continue
        hist_f = hist[cell_offsets[f]:cell_offsets[f + 1]]
        k = len(hist_f) - 1
        c = monotone[f]
        miss_h = hist_f[k, 1]
        lg = 0.0
        lh = 0.0
        for b in range(k):  # scan 1: missing rows go right
            lg += hist_f[b, 0]
            lh += hist_f[b, 1]
            gain = _monotone_gain(lg, lh, node_g - lg, node_h - lh, parent, lower, upper, c,
                                  reg_lambda, reg_alpha, max_delta_step, min_child_weight)
            if gain > best_gain:
                best_gain, best_feature, best_bin = gain, f, b
                best_default_left, best_lg, best_lh = False, lg, lh
        if miss_h <= 0.0:
            continue
        rg = 0.0
        rh = 0.0
        # scan 2: missing rows go left. On a constrained feature, down to bin -1 (only
        # the missing rows left): the mirror of scan 1's last split is another candidate
        # when the direction matters (xgboost's backward scan reaches it too)
        last = -1 if c != 0 else 0
        for b in range(k - 2, last - 1, -1):
            rg += hist_f[b + 1, 0]
            rh += hist_f[b + 1, 1]
            lg = node_g - rg
            lh = node_h - rh
            gain = _monotone_gain(lg, lh, rg, rh, parent, lower, upper, c, reg_lambda,
                                  reg_alpha, max_delta_step, min_child_weight)
            if gain > best_gain:
                best_gain, best_feature, best_bin = gain, f, b
                best_default_left, best_lg, best_lh = True, lg, lh
    if best_feature >= 0 and (best_gain <= MIN_SPLIT_GAIN or best_gain < gamma):
        best_feature = -1
    return best_gain, best_feature, best_bin, best_default_left, best_lg, best_lh


@numba.njit(nogil=True, cache=True, error_model="numpy")
def find_splits_monotone(hists, node_sums, bounds, cell_offsets, feature_masks, monotone,
                         reg_lambda, reg_alpha, max_delta_step, min_child_weight, gamma):
    """``find_splits`` under monotone constraints; ``bounds``: (n_nodes, 2) float64
    lower and upper weight bound of each node; ``monotone``: (n_features,) int8."""
    gain, feature, bin_, default_left, left_sums = _new_results(hists.shape[0])
    for i in range(hists.shape[0]):
        _store_result(gain, feature, bin_, default_left, left_sums, i, find_node_split_monotone(
            hists[i], cell_offsets, node_sums[i, 0], node_sums[i, 1], feature_masks[i],
            bounds[i, 0], bounds[i, 1], monotone, reg_lambda, reg_alpha, max_delta_step,
            min_child_weight, gamma))
    return gain, feature, bin_, default_left, left_sums


@numba.njit(nogil=True, cache=True, error_model="numpy", parallel=True)
def find_splits_monotone_parallel(hists, node_sums, bounds, cell_offsets, feature_masks,
                                  monotone, reg_lambda, reg_alpha, max_delta_step,
                                  min_child_weight, gamma):
    """``find_splits_monotone`` with the nodes spread over native threads."""
    gain, feature, bin_, default_left, left_sums = _new_results(hists.shape[0])
    for i in numba.prange(hists.shape[0]):
        _store_result(gain, feature, bin_, default_left, left_sums, i, find_node_split_monotone(
            hists[i], cell_offsets, node_sums[i, 0], node_sums[i, 1], feature_masks[i],
            bounds[i, 0], bounds[i, 1], monotone, reg_lambda, reg_alpha, max_delta_step,
            min_child_weight, gamma))
    return gain, feature, bin_, default_left, left_sums


# ---- categorical features (issue 13) -------------------------------------------------
#
# A categorical split sends a set of categories (bin codes = dictionary indices) to the
# right child and the other present categories to the left; missing rows go where the
# learned default says.  Following xgboost (``max_cat_to_onehot``, ``max_cat_threshold``):
#
# - one-vs-rest when the feature has fewer than ``max_cat_to_onehot`` categories: each
#   present category alone on the right;
# - otherwise the partition search of Fisher (1958) as LightGBM and xgboost use it: sort
#   the feature's categories by their optimal weight -G/(H + lambda) at the node and
#   try each prefix of that order, from both ends, of fewer than ``max_cat_threshold``
#   categories (xgboost's bound), as the right set (for a convex loss the best binary
#   partition is such a prefix).  A category lighter than ``min_child_weight`` at the
#   node (hessian sum below it; absent ones have 0) sorts with weight 0, among the
#   others, as in xgboost 3.2 (its ``CalcWeight``): a category seen in a handful of rows
#   cannot take an extreme place in the order on the strength of those rows alone,
#   which on high-cardinality columns (aircraft tail numbers) is what generalises.
#
# One-vs-rest tries the missing rows on both sides (when the node has some); partition
# splits keep them with the categories not in the set (left, default_left), as xgboost
# does (its parity tests pin both).  Models without categorical features never call
# these functions.

# categories up to which a feature whose order's two ends meet is sorted whole
WHOLE_ORDER_CATEGORIES = 32


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _push_smallest(buffer, kept, n, w, c):
    """Offer category ``c`` of weight ``w`` to ``buffer``, the ``n`` smallest categories
    so far by (weight, index) in that order (``kept``: their weights), at most
    ``len(buffer)`` (the largest drops out when full); returns the new count.
    Categories come in increasing index order, so a later one is larger than an
    earlier one of equal weight: ties keep index order.  (The weights are kept beside
    the indices: comparing through ``weights[buffer[j]]`` made each step of the
    insertion wait on two loads, a third of a 4,000-category feature's search.)"""
    r = len(buffer)
    if r == 0 or (n == r and w >= kept[r - 1]):
        return n
    j = n if n < r else r - 1
    while j > 0 and kept[j - 1] > w:
        buffer[j] = buffer[j - 1]
        kept[j] = kept[j - 1]
        j -= 1
    buffer[j] = c
    kept[j] = w
    return min(n + 1, r)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _push_largest(buffer, kept, n, w, c):
    """``_push_smallest`` for the largest categories, kept in increasing order (the
    smallest drops out when full)."""
    r = len(buffer)
    if r == 0:
        return n
    if n < r:
        j = n
        while j > 0 and kept[j - 1] > w:
            buffer[j] = buffer[j - 1]
            kept[j] = kept[j - 1]
            j -= 1
        buffer[j] = c
        kept[j] = w
        return n + 1
    if w < kept[0]:
        return n
    j = 0
    while j + 1 < r and kept[j + 1] <= w:
        buffer[j] = buffer[j + 1]
        kept[j] = kept[j + 1]
        j += 1
    buffer[j] = c
    kept[j] = w
    return n


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _category_weights(hist_f, k, reg_lambda, reg_alpha, max_delta_step, min_child_weight):
    """The optimal weight at the node (``leaf_weight``) of each of the feature's ``k``
    categories, 0 for one lighter than ``min_child_weight``.  Without L1 and clipping
    (the defaults) -G / (H + lambda) in a loop without branches, which the compiler
    vectorises: the same values (a NaN weight, from a callable objective's NaN
    gradients, is 0 as ``leaf_weight`` makes it: the order's ends count on every
    weight comparing as negative, zero or positive)."""
    weights = np.empty(k, dtype=np.float64)
    if reg_alpha == 0.0 and max_delta_step == 0.0:
        for c in range(k):
            h = hist_f[c, 1]
            w = -hist_f[c, 0] / (h + reg_lambda)
            weights[c] = w if (h >= min_child_weight) & (h > 0.0) & (w == w) else 0.0
        return weights
    for c in range(k):
        w = 0.0
        if hist_f[c, 1] >= min_child_weight and hist_f[c, 1] > 0.0:
            w = leaf_weight(hist_f[c, 0], hist_f[c, 1], reg_lambda, reg_alpha, max_delta_step)
        weights[c] = w if w == w else 0.0
    return weights


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _order_ends(hist_f, k, m, reg_lambda, reg_alpha, max_delta_step, min_child_weight):
    """``(head, tail)``: the first ``m`` and the last ``m`` of the feature's categories
    in xgboost's order, each in that order: ``head = order[:m]``,
    ``tail = order[k - m:]``.

    The order is the stable sort of the categories by their optimal weight at this
    node, weight 0 for categories lighter than ``min_child_weight`` (absent ones
    included), as xgboost 3.2 sorts them.  The partition search tries only prefixes of
    fewer than ``max_cat_threshold`` categories from each end, so only the ends are
    computed, in one pass: the m smallest negative and the m largest positive weights
    in small sorted buffers (``_push_smallest``, ``_push_largest``); where those are too
    few, the zero-weight categories (most of them at a deep node), in index order, and
    then the other sign's come next.  A node of flights sees ~2,000 weighted tail
    numbers out of 4,000: sorting them all cost 86 us a node."""
    m = max(min(m, k), 0)
    if m == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    weights = _category_weights(hist_f, k, reg_lambda, reg_alpha, max_delta_step,
                                min_child_weight)
    if 2 * m >= k and k <= WHOLE_ORDER_CATEGORIES:  # the ends cover the whole order
        order = _stable_order(weights)
        return order[:m], order[k - m:]
    smallest = np.empty(m, dtype=np.int64)  # of the negative weights
    largest = np.empty(m, dtype=np.int64)   # of the positive weights
    kept = np.empty((2, m), dtype=np.float64)  # their weights
    n_neg = n_pos = 0
    for c in range(k):
        n_neg += weights[c] < 0.0
        n_pos += weights[c] > 0.0
    # one loop per end, offering a category only if it enters the buffer: negative
    # weights until ``m`` are kept, then those below the largest kept (a branch
    # mostly not taken, where one on each weight's sign went either way)
    n_small = 0
    bound = 0.0
    for c in range(k):
        if weights[c] < bound:
            n_small = _push_smallest(smallest, kept[0], n_small, weights[c], c)
            if n_small == m:
                bound = kept[0, m - 1]
    n_large = 0
    bound = 0.0  # positive weights until ``m`` are kept, then those >= the smallest kept
    for c in range(k):
        if weights[c] > 0.0 and weights[c] >= bound:
            n_large = _push_largest(largest, kept[1], n_large, weights[c], c)
            if n_large == m:
                bound = kept[1, 0]
    n_zero = k - n_neg - n_pos
    head = np.empty(m, dtype=np.int64)
    r = min(m, n_neg)
    head[:r] = smallest[:r]
    z = min(m - r, n_zero)
    _zeros_from_start(weights, head[r:r + z])
    if r + z < m:  # the smallest positive weights follow (``kept[0]`` is free again)
        rest = np.empty(m - r - z, dtype=np.int64)
        n = 0
        for c in range(k):
            if weights[c] > 0.0:
                n = _push_smallest(rest, kept[0], n, weights[c], c)
        head[r + z:] = rest
    tail = np.empty(m, dtype=np.int64)
    r = min(m, n_pos)
    tail[m - r:] = largest[:r]
    z = min(m - r, n_zero)
    _zeros_from_end(weights, tail[m - r - z:m - r])
    if r + z < m:  # the largest negative weights come before (``kept[1]`` is free)
        rest = np.empty(m - r - z, dtype=np.int64)
        n = 0
        for c in range(k):
            if weights[c] < 0.0:
                n = _push_largest(rest, kept[1], n, weights[c], c)
        tail[:m - r - z] = rest
    return head, tail


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _stable_order(weights):
    """The categories sorted by weight, ties in index order: every one offered to a
    buffer as long as the order (``_push_smallest``); for the few categories of
    ``WHOLE_ORDER_CATEGORIES`` two arrays, where ``_order_ends``' two ends took six."""
    order = np.empty(len(weights), dtype=np.int64)
    kept = np.empty(len(weights), dtype=np.float64)
    n = 0
    for c in range(len(weights)):
        n = _push_smallest(order, kept, n, weights[c], c)
    return order


@numba.njit(nogil=True, cache=True)
def _zeros_from_start(weights, out):
    """Fill ``out`` with the first ``len(out)`` zero-weight categories, in index order."""
    n = 0
    c = 0
    while n < len(out):
        if weights[c] == 0.0:
            out[n] = c
            n += 1
        c += 1


@numba.njit(nogil=True, cache=True)
def _zeros_from_end(weights, out):
    """Fill ``out`` with the last ``len(out)`` zero-weight categories, in index order."""
    n = len(out)
    c = len(weights) - 1
    while n > 0:
        if weights[c] == 0.0:
            n -= 1
            out[n] = c
        c -= 1


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _categorical_feature(hist_f, k, node_g, node_h, parent, reg_lambda,
                         reg_alpha, max_delta_step, min_child_weight, onehot, max_cat_threshold,
                         best_gain):
    """Best candidate of one categorical feature beating ``best_gain``: ((gain, mode,
    index, default_left, lg, lh), head, tail); mode 0: category ``index`` alone on the
    right; mode 1/2: the first/last ``index + 1`` categories of the order by weight
    (``head``, ``tail``: ``_order_ends``, kept for the right set) on the right."""
    out = (-1.0, 0, -1, False, 0.0, 0.0)
    miss_g = hist_f[k, 0]  # the missing rows' bin follows the k categories
    miss_h = hist_f[k, 1]
    n_missing_sides = 2 if miss_h != 0.0 and onehot else 1  # see the comment above
    if onehot:
        head = tail = np.arange(k)
        n_candidates = k
    else:
        # prefixes of 1 .. min(max_cat_threshold, k) - 1 categories (xgboost's bound)
        n_candidates = min(max_cat_threshold, k) - 1
        head, tail = _order_ends(hist_f, k, n_candidates, reg_lambda, reg_alpha,
                                 max_delta_step, min_child_weight)
    for mode in range(1, 2 if onehot else 3):  # partitions: forward (1), backward (2)
        rg = 0.0
        rh = 0.0
        for i in range(n_candidates):
            if onehot:
                c = head[i]
                if hist_f[c, 1] <= 0.0:
                    continue
                rg, rh = hist_f[c, 0], hist_f[c, 1]
            else:
                c = head[i] if mode == 1 else tail[n_candidates - 1 - i]
                rg += hist_f[c, 0]
                rh += hist_f[c, 1]
            for side in range(n_missing_sides):  # 0: missing left, 1: missing right
                g_r = rg + miss_g * side
                h_r = rh + miss_h * side
                gain = _valid_gain(node_g - g_r, node_h - h_r, g_r, h_r, parent, reg_lambda,
                                   reg_alpha, max_delta_step, min_child_weight)
                if gain > best_gain:
                    best_gain = gain
                    out = (gain, 0 if onehot else mode, c if onehot else i, side == 0,
                           node_g - g_r, node_h - h_r)
    return out, head, tail


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _right_set(mode, index, head, tail, right):
    """Mark in ``right`` the categories that a candidate of ``_categorical_feature`` (its
    mode and index, and the ends of the order it searched) sends to the right child.
    (The ends are kept from the search, not computed again: for a 4,000-category
    feature that was a quarter of a node's split search.)"""
    if mode == 0:
        right[index] = True
        return
    for i in range(index + 1):
        right[head[i] if mode == 1 else tail[len(tail) - 1 - i]] = True


@numba.njit(nogil=True, cache=True, error_model="numpy")
def find_node_split_categorical(hist, cell_offsets, node_g, node_h, feature_mask,
                                is_categorical, reg_lambda, reg_alpha, max_delta_step,
                                min_child_weight, gamma, max_cat_to_onehot, max_cat_threshold,
                                right, scratch=None):
    """``find_node_split`` for models with categorical features: numeric features are
    scanned as there; a categorical split's right set is written into ``right`` ((n_codes,)
    bool, cleared here); ``scratch`` as there.  Returns (gain, feature, bin,
    default_left, left_g, left_h); bin is -1 for a categorical split."""
    parent = _score(node_g, node_h, reg_lambda, reg_alpha, max_delta_step)
    best = (0.0, -1, -1, False, 0.0, 0.0)
    best_mode, best_index = -1, -1
    best_head = best_tail = np.empty(0, dtype=np.int64)
    work = _scratch_of(scratch, cell_offsets)
    for f in range(len(cell_offsets) - 1):
        if not feature_mask[f]:
            continue
        hist_f = hist[cell_offsets[f]:cell_offsets[f + 1]]
        k = len(hist_f) - 1
        if is_categorical[f]:
            (gain, mode, index, dl, lg, lh), head, tail = _categorical_feature(
                hist_f, k, node_g, node_h, parent, reg_lambda, reg_alpha,
                max_delta_step, min_child_weight, k < max_cat_to_onehot, max_cat_threshold,
                best[0])
            if gain > best[0]:
                best = (gain, f, -1, dl, lg, lh)
                best_mode, best_index, best_head, best_tail = mode, index, head, tail
        else:
            gain, b, dl, lg, lh = _numeric_feature(
                hist_f, k, node_g, node_h, parent, reg_lambda, reg_alpha,
                max_delta_step, min_child_weight, best[0], work)
            if gain > best[0]:
                best = (gain, f, b, dl, lg, lh)
    right[:] = False
    gain, f = best[0], best[1]
    if f >= 0 and (gain <= MIN_SPLIT_GAIN or gain < gamma):
        return (gain, -1, -1, False, best[4], best[5])
    if f >= 0 and is_categorical[f]:
        _right_set(best_mode, best_index, best_head, best_tail, right)
    return best


@numba.njit(nogil=True, cache=True, error_model="numpy")
def find_splits_categorical(hists, node_sums, cell_offsets, n_codes, feature_masks,
                            is_categorical, reg_lambda, reg_alpha, max_delta_step,
                            min_child_weight, gamma, max_cat_to_onehot, max_cat_threshold):
    """``find_splits`` with categorical features; also returns the right sets
    ((n_nodes, n_codes) bool; rows of numeric or no splits all False)."""
    gain, feature, bin_, default_left, left_sums = _new_results(hists.shape[0])
    right = np.zeros((hists.shape[0], n_codes), dtype=np.bool_)
    _search_nodes_categorical(hists, node_sums, cell_offsets, feature_masks, is_categorical,
                              reg_lambda, reg_alpha, max_delta_step, min_child_weight, gamma,
                              max_cat_to_onehot, max_cat_threshold, gain, feature, bin_,
                              default_left, left_sums, right, 0, hists.shape[0])
    return gain, feature, bin_, default_left, left_sums, right


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _search_nodes_categorical(hists, node_sums, cell_offsets, feature_masks, is_categorical,
                              reg_lambda, reg_alpha, max_delta_step, min_child_weight, gamma,
                              max_cat_to_onehot, max_cat_threshold, gain, feature, bin_,
                              default_left, left_sums, right, first, stop):
    """Nodes ``first..stop-1`` of ``find_splits_categorical`` (or of a thread of
    ``find_splits_categorical_parallel``), with one work array for them all."""
    scratch = _scan_scratch(cell_offsets)
    for i in range(first, stop):
        _store_result(gain, feature, bin_, default_left, left_sums, i,
                      find_node_split_categorical(
                          hists[i], cell_offsets, node_sums[i, 0], node_sums[i, 1],
                          feature_masks[i], is_categorical, reg_lambda, reg_alpha,
                          max_delta_step, min_child_weight, gamma, max_cat_to_onehot,
                          max_cat_threshold, right[i], scratch))


@numba.njit(nogil=True, cache=True, error_model="numpy", parallel=True)
def find_splits_categorical_parallel(hists, node_sums, cell_offsets, n_codes, feature_masks,
                                     is_categorical, reg_lambda, reg_alpha, max_delta_step,
                                     min_child_weight, gamma, max_cat_to_onehot,
                                     max_cat_threshold, n_parts):
    """``find_splits_categorical`` with the nodes spread over native threads (as
    ``find_splits_parallel``)."""
    n_nodes = hists.shape[0]
    gain, feature, bin_, default_left, left_sums = _new_results(n_nodes)
    right = np.zeros((n_nodes, n_codes), dtype=np.bool_)
    n_parts = min(n_parts, n_nodes)
    for part in numba.prange(n_parts):
        first, stop = part_range(part, n_parts, n_nodes)
        _search_nodes_categorical(hists, node_sums, cell_offsets, feature_masks,
                                  is_categorical, reg_lambda, reg_alpha, max_delta_step,
                                  min_child_weight, gamma, max_cat_to_onehot,
                                  max_cat_threshold, gain, feature, bin_, default_left,
                                  left_sums, right, first, stop)
    return gain, feature, bin_, default_left, left_sums, right


# histogram cells (all the nodes') below which a search stays on one thread: a parallel
# region cost ~8 us more than it saved on diamonds' levels of 2 and 4 nodes (1,560 cells a
# node: 2 threads 14.6 / 17.9 us, one 9.3 / 15.4 us), and saved 11-24 us from 8 nodes up
NATIVE_MIN_SEARCH_CELLS = 8192


@numba.njit(nogil=True, cache=True)
def find_splits_of(hists, node_sums, feature_masks, cell_offsets, n_codes, is_categorical,
                   categorical, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                   gamma, max_cat_to_onehot, max_cat_threshold, threads):
    """The split search of an unconstrained model's nodes: ``find_splits_categorical``
    when ``categorical`` is not None (a model with categorical features; any array),
    else ``find_splits`` with (n_nodes, 0) right sets; the nodes on native threads when
    ``threads`` > 1 and there are several, with ``NATIVE_MIN_SEARCH_CELLS`` cells in all
    (the same results either way)."""
    on_threads = (threads > 1 and hists.shape[0] > 1
                  and hists.shape[0] * hists.shape[1] >= NATIVE_MIN_SEARCH_CELLS)
    return _split_search(hists, node_sums, feature_masks, cell_offsets, n_codes,
                         is_categorical, categorical, reg_lambda, reg_alpha, max_delta_step,
                         min_child_weight, gamma, max_cat_to_onehot, max_cat_threshold,
                         threads if on_threads else 1)


def _split_search(hists, node_sums, feature_masks, cell_offsets, n_codes, is_categorical,
                  categorical, reg_lambda, reg_alpha, max_delta_step, min_child_weight, gamma,
                  max_cat_to_onehot, max_cat_threshold, n_parts):
    """``find_splits_of``'s kernels (on ``n_parts`` native threads when more than one),
    the numeric or the categorical ones chosen by the type of ``categorical`` when numba
    compiles the caller (a branch on it would compile both: ~6 s more for a first
    categorical fit)."""
    raise NotImplementedError("for compiled callers")


@overload(_split_search, jit_options={"nogil": True, "cache": True})
def _split_search_for(hists, node_sums, feature_masks, cell_offsets, n_codes, is_categorical,
                      categorical, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                      gamma, max_cat_to_onehot, max_cat_threshold, n_parts):
    if isinstance(categorical, types.NoneType):
        def numeric(hists, node_sums, feature_masks, cell_offsets, n_codes, is_categorical,
                    categorical, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                    gamma, max_cat_to_onehot, max_cat_threshold, n_parts):
            if n_parts > 1:
                found = find_splits_parallel(hists, node_sums, cell_offsets, feature_masks,
                                             reg_lambda, reg_alpha, max_delta_step,
                                             min_child_weight, gamma, n_parts)
            else:
                found = find_splits(hists, node_sums, cell_offsets, feature_masks,
                                    reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                                    gamma)
            return (found[0], found[1], found[2], found[3], found[4],
                    np.zeros((hists.shape[0], 0), dtype=np.bool_))
        return numeric

    def with_categories(hists, node_sums, feature_masks, cell_offsets, n_codes,
                        is_categorical, categorical, reg_lambda, reg_alpha, max_delta_step,
                        min_child_weight, gamma, max_cat_to_onehot, max_cat_threshold,
                        n_parts):
        if n_parts > 1:
            return find_splits_categorical_parallel(
                hists, node_sums, cell_offsets, n_codes, feature_masks, is_categorical,
                reg_lambda, reg_alpha, max_delta_step, min_child_weight, gamma,
                max_cat_to_onehot, max_cat_threshold, n_parts)
        return find_splits_categorical(
            hists, node_sums, cell_offsets, n_codes, feature_masks, is_categorical,
            reg_lambda, reg_alpha, max_delta_step, min_child_weight, gamma,
            max_cat_to_onehot, max_cat_threshold)
    return with_categories
