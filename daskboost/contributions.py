"""Feature contributions: exact TreeSHAP, Saabas' approximation, SHAP interaction values.

Exact contributions are TreeSHAP (Lundberg, Erion & Lee, "Consistent Individualized
Feature Attribution for Tree Ensembles", 2018, Algorithm 2) with xgboost's conventions:
a node's cover is its hessian sum (``Tree.cover``); a row's contributions to one output
are ``F`` feature columns plus a bias column holding the trees' expected values (each
tree's root mean, ``node_means``) and the start (``base_score`` or the row's
``base_margin``), so that they sum to the row's margin.  The walk follows the row's
own path (its "hot" child) with fraction one and the other child ("cold") with the
fraction of cover that goes there; the path keeps, for each feature met so far, the
fractions of zero/one paths and the permutation weights (``_extend``, ``_unwind``,
``_unwound_sum``: the paper's EXTEND, UNWIND and the weight sum of Algorithm 2).
Numeric, missing (default direction) and categorical splits (a category in the node's
set goes right) decide the hot child as prediction does.

The recursion of the paper runs here as a loop over an explicit stack, depth-first
(the hot child first), with one copy of the path per tree level: a node's children both
extend their parent's path, which stays untouched until both are done.

Interactions are xgboost's definition: for each feature ``i``, TreeSHAP with ``i``
fixed present (``condition = 1``) and fixed absent (``-1``); the interaction of ``i``
with ``j`` is half the difference of ``j``'s contributions in the two; the diagonal is
``i``'s contribution minus its interactions with the others.  Saabas' approximation
("approx_contribs") credits each split's feature with the change of the node mean along
the row's path.
"""

import numba
import numpy as np

from .tree import pack_category_sets, pack_node_arrays


def wants_contributions(output_margin, pred_contribs, approx_contribs, pred_interactions):
    """Whether ``predict``'s flags ask for contributions (or interactions); ValueError for
    flags that contradict each other."""
    if pred_contribs and pred_interactions:
        raise ValueError("pred_contribs=True and pred_interactions=True exclude each other: "
                         "interaction values include the contributions (their row sums)")
    explain = bool(pred_contribs or pred_interactions)
    if explain and output_margin:
        raise ValueError("output_margin=True and pred_contribs/pred_interactions=True exclude "
                         "each other: contributions are in margin space already")
    if approx_contribs and not explain:
        raise ValueError("approx_contribs=True needs pred_contribs=True or "
                         "pred_interactions=True")
    return explain


class ContributionForest:
    """The trees of a model packed for the contribution kernels: node arrays
    concatenated (tree ``t`` from ``offsets[t]``, adding to output ``t % n_outputs``),
    with covers, node means and the category sets of ``tree.pack_category_sets``."""

    def __init__(self, trees, n_outputs):
        self.n_outputs = n_outputs
        self.offsets = offsets = pack_node_arrays(
            self, trees, ("feature", "threshold", "default_left", "left", "right", "value",
                          "cover"))
        self.means = (np.concatenate([node_means(tree) for tree in trees]) if trees
                      else np.zeros(0))
        sets = pack_category_sets(trees, offsets)
        self.sets = sets if sets is not None else (
            np.full(len(self.feature), -1, np.int64), np.zeros(len(self.feature), np.int64),
            np.zeros(0, np.bool_))
        self.max_depth = max((tree.depth() for tree in trees), default=0)

    def arrays(self):
        return (self.feature, self.threshold, self.default_left, self.left, self.right,
                self.value, self.cover, self.means, self.offsets, *self.sets)


def node_means(tree):
    """Each node's mean output over the training rows that reach it: a leaf's value;
    a split's, its children's weighted by cover (xgboost's node mean values)."""
    means = np.array(tree.value, dtype=np.float64)
    for node in range(tree.n_nodes - 1, -1, -1):  # children have larger ids
        if tree.feature[node] >= 0:
            left, right = tree.left[node], tree.right[node]
            means[node] = ((means[left] * tree.cover[left] + means[right] * tree.cover[right])
                           / tree.cover[node])
    return means


def contributions(forest, X, start, approx=False):
    """(n_rows, K, F + 1) contributions of the rows of ``X`` (float, NaN missing,
    categorical features as dictionary indices); ``start``: (K, n_rows) starting
    margins, added to the bias column."""
    n_rows, n_features = X.shape
    out = np.zeros((n_rows, forest.n_outputs, n_features + 1), dtype=np.float64)
    out[:, :, n_features] = start.T
    if approx:
        _saabas_kernel(X, *forest.arrays(), forest.n_outputs, out)
    else:
        _tree_shap_kernel(X, *forest.arrays(), forest.n_outputs, forest.max_depth, 0, 0,
                          True, out)
    return out


def interactions(forest, X, start, approx=False):
    """(n_rows, K, F + 1, F + 1) SHAP interaction values (module docstring); each row's
    matrix sums to its margin.  ``approx``: from Saabas' contributions (as xgboost)."""
    n_rows, n_features = X.shape
    K = forest.n_outputs
    diagonal = contributions(forest, X, start, approx)
    out = np.zeros((n_rows, K, n_features + 1, n_features + 1), dtype=np.float64)
    for i in range(n_features):
        fixed = []
        for condition in (1, -1):
            part = np.zeros((n_rows, K, n_features + 1), dtype=np.float64)
            if approx:
                _saabas_kernel(X, *forest.arrays(), K, part)  # (no condition: as xgboost)
            else:
                _tree_shap_kernel(X, *forest.arrays(), K, forest.max_depth, condition, i,
                                  False, part)
            fixed.append(part)
        on, off = fixed
        row = (on - off) / 2.0
        row[:, :, i] = 0.0
        row[:, :, n_features] = 0.0
        out[:, :, i, :] = row
        out[:, :, i, i] = diagonal[:, :, i] - row.sum(axis=2)
    out[:, :, n_features, n_features] = diagonal[:, :, n_features]
    return out


@numba.njit(nogil=True, cache=True, inline="always")
def _goes_left(x, k, threshold, default_left, set_start, set_size, members):
    """Whether a row with value ``x`` goes left at split node ``k``: the test of
    ``tree._predict_kernel_categorical``, written here again because numba's cache does
    not notice when a function inlined from another module changes."""
    if np.isnan(x):
        return default_left[k]
    if set_start[k] >= 0:
        c = np.int64(x)
        return not (0 <= c < set_size[k] and members[set_start[k] + c])
    return x <= threshold[k]


@numba.njit(nogil=True, cache=True)
def _saabas_kernel(X, feature, threshold, default_left, left, right, value, cover, means,
                   offsets, set_start, set_size, members, n_outputs, out):
    """Saabas: each split on the row's path credits its feature with the change of the
    node mean; the root's mean goes to the bias (adds into ``out``)."""
    n_features = X.shape[1]
    for i in range(X.shape[0]):
        for t in range(offsets.shape[0] - 1):
            base = offsets[t]
            k = t % n_outputs
            node = base
            out[i, k, n_features] += means[node]
            while feature[node] >= 0:
                f = feature[node]
                go_left = _goes_left(X[i, f], node, threshold, default_left, set_start,
                                     set_size, members)
                child = base + (left[node] if go_left else right[node])
                out[i, k, f] += means[child] - means[node]
                node = child


@numba.njit(nogil=True, cache=True, inline="always")
def _extend(pf, pz, po, pw, level, depth, zero_fraction, one_fraction, feature, inverse):
    """EXTEND: add ``feature`` with its zero/one fractions at index ``depth`` of the
    path of ``level``, reweighting the permutations of the elements before it.
    (``inverse[k] = 1 / k``: multiplications instead of divisions, here and below.)"""
    pf[level, depth] = feature
    pz[level, depth] = zero_fraction
    po[level, depth] = one_fraction
    pw[level, depth] = 1.0 if depth == 0 else 0.0
    scale = inverse[depth + 1]
    for j in range(depth - 1, -1, -1):
        pw[level, j + 1] += one_fraction * pw[level, j] * (j + 1) * scale
        pw[level, j] = zero_fraction * pw[level, j] * (depth - j) * scale


@numba.njit(nogil=True, cache=True, inline="always")
def _unwind(pf, pz, po, pw, level, depth, index, inverse):
    """UNWIND: remove element ``index`` from the path (last index ``depth``), undoing
    its reweighting."""
    one = po[level, index]
    zero = pz[level, index]
    next_one = pw[level, depth]
    if one != 0.0:
        up = (depth + 1) / one
        down = zero * inverse[depth + 1]
        for j in range(depth - 1, -1, -1):
            tmp = pw[level, j]
            pw[level, j] = next_one * up * inverse[j + 1]
            next_one = tmp - pw[level, j] * down * (depth - j)
    else:
        up = (depth + 1) / zero
        for j in range(depth - 1, -1, -1):
            pw[level, j] = pw[level, j] * up * inverse[depth - j]
    for j in range(index, depth):
        pf[level, j] = pf[level, j + 1]
        pz[level, j] = pz[level, j + 1]
        po[level, j] = po[level, j + 1]


@numba.njit(nogil=True, cache=True, inline="always")
def _unwound_sum(pz, po, pw, level, depth, index, inverse):
    """The total permutation weight of the path without element ``index``."""
    one = po[level, index]
    zero = pz[level, index]
    total = 0.0
    if one != 0.0:
        next_one = pw[level, depth]
        up = (depth + 1) / one
        down = zero * inverse[depth + 1]
        for j in range(depth - 1, -1, -1):
            tmp = next_one * up * inverse[j + 1]
            total += tmp
            next_one = pw[level, j] - tmp * down * (depth - j)
    elif zero != 0.0:
        up = (depth + 1) / zero
        for j in range(depth - 1, -1, -1):
            total += pw[level, j] * up * inverse[depth - j]
    return total


@numba.njit(nogil=True, cache=True)
def _tree_shap_kernel(X, feature, threshold, default_left, left, right, value, cover, means,
                      offsets, set_start, set_size, members, n_outputs, max_depth,
                      condition, condition_feature, add_bias, out):
    """TreeSHAP of every row and tree, added into ``out`` (n_rows, K, F + 1); with
    ``condition`` 1 / -1 the feature ``condition_feature`` is fixed present / absent
    (interactions; module docstring)."""
    n_features = X.shape[1]
    width = max_depth + 2
    pf = np.zeros((width, width), dtype=np.int64)    # the path of each level: features,
    pz = np.zeros((width, width), dtype=np.float64)  # zero fractions,
    po = np.zeros((width, width), dtype=np.float64)  # one fractions,
    pw = np.zeros((width, width), dtype=np.float64)  # permutation weights
    size = 2 * width + 2
    inverse = np.zeros(width + 1, dtype=np.float64)
    inverse[1:] = 1.0 / np.arange(1, width + 1)
    s_node = np.zeros(size, dtype=np.int64)  # the stack of nodes still to visit
    s_level = np.zeros(size, dtype=np.int64)
    s_depth = np.zeros(size, dtype=np.int64)
    s_zero = np.zeros(size, dtype=np.float64)
    s_one = np.zeros(size, dtype=np.float64)
    s_feature = np.zeros(size, dtype=np.int64)
    s_fraction = np.zeros(size, dtype=np.float64)
    for i in range(X.shape[0]):
        for t in range(offsets.shape[0] - 1):
            base = offsets[t]
            k = t % n_outputs
            if add_bias:
                out[i, k, n_features] += means[base]
            top = 0
            s_node[0], s_level[0], s_depth[0] = base, 0, 0
            s_zero[0], s_one[0], s_feature[0], s_fraction[0] = 1.0, 1.0, -1, 1.0
            top = 1
            while top > 0:
                top -= 1
                node, level, depth = s_node[top], s_level[top], s_depth[top]
                fraction = s_fraction[top]
                if fraction == 0.0:
                    continue
                if level > 0:  # the parent's path, as the parent left it
                    for j in range(depth + 1):
                        pf[level, j] = pf[level - 1, j]
                        pz[level, j] = pz[level - 1, j]
                        po[level, j] = po[level - 1, j]
                        pw[level, j] = pw[level - 1, j]
                if condition == 0 or condition_feature != s_feature[top]:
                    _extend(pf, pz, po, pw, level, depth, s_zero[top], s_one[top],
                            s_feature[top], inverse)
                f = feature[node]
                if f < 0:  # a leaf: each feature on the path gets its share
                    for j in range(1, depth + 1):
                        w = _unwound_sum(pz, po, pw, level, depth, j, inverse)
                        out[i, k, pf[level, j]] += (w * (po[level, j] - pz[level, j])
                                                    * value[node] * fraction)
                    continue
                go_left = _goes_left(X[i, f], node, threshold, default_left, set_start,
                                     set_size, members)
                hot = base + (left[node] if go_left else right[node])
                cold = base + (right[node] if go_left else left[node])
                hot_zero = cover[hot] / cover[node]
                cold_zero = cover[cold] / cover[node]
                incoming_zero = 1.0
                incoming_one = 1.0
                index = depth + 1
                for j in range(depth + 1):  # met this feature before: undo that split
                    if pf[level, j] == f:
                        index = j
                        break
                if index <= depth:
                    incoming_zero = pz[level, index]
                    incoming_one = po[level, index]
                    _unwind(pf, pz, po, pw, level, depth, index, inverse)
                    depth -= 1
                hot_fraction = fraction
                cold_fraction = fraction
                if condition > 0 and f == condition_feature:
                    cold_fraction = 0.0
                    depth -= 1
                elif condition < 0 and f == condition_feature:
                    hot_fraction *= hot_zero
                    cold_fraction *= cold_zero
                    depth -= 1
                # cold pushed first: the hot child is visited first
                s_node[top], s_level[top], s_depth[top] = cold, level + 1, depth + 1
                s_zero[top], s_one[top] = cold_zero * incoming_zero, 0.0
                s_feature[top], s_fraction[top] = f, cold_fraction
                top += 1
                s_node[top], s_level[top], s_depth[top] = hot, level + 1, depth + 1
                s_zero[top], s_one[top] = hot_zero * incoming_zero, incoming_one
                s_feature[top], s_fraction[top] = f, hot_fraction
                top += 1
