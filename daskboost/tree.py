"""A fitted tree as flat arrays, the prediction kernel, and (de)serialisation.

Node ``i`` of a tree is described by ``feature[i]`` (-1 for a leaf), ``threshold[i]``
(rows with ``x[feature] <= threshold`` go left), ``default_left[i]`` (where missing
values go), ``left[i]``/``right[i]`` (child ids) and ``value[i]`` (the leaf's output,
learning rate included).  ``gain[i]`` and ``cover[i]`` (hessian sum) are kept for
inspection.  Thresholds are raw feature values, so prediction never needs the bins:
training sends a row left when its bin code is ``<= bin``, and the threshold is the
upper edge of that bin (``+inf`` when the left side is every present value).

Categorical splits (issue 13): ``categories`` maps such a node to the sorted dictionary
indices of the categories that go RIGHT (xgboost's convention: a category in the node's
set goes right, every other category left; missing values, and categories unseen in
training, which predict as missing, follow ``default_left``).  Their threshold is 0 and
unused.  Prediction reads categorical features as dictionary indices
(``data.feature_block`` with the model's encoders).
"""

from dataclasses import dataclass

import numba
import numpy as np

from . import native_threads
from .histogram import goes_left, part_range, row_blocks
from .sparse import add_margin as add_sparse_margin, is_sparse

NODE_FIELDS = ("feature", "threshold", "default_left", "left", "right", "value", "gain", "cover")
NODE_DTYPES = {
    "feature": np.int32,
    "threshold": np.float64,
    "default_left": np.bool_,
    "left": np.int32,
    "right": np.int32,
    "value": np.float64,
    "gain": np.float64,
    "cover": np.float64,
}


@dataclass
class Tree:
    feature: np.ndarray
    threshold: np.ndarray
    default_left: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    gain: np.ndarray
    cover: np.ndarray
    categories: dict = None  # categorical split node -> sorted category indices going right

    @property
    def n_nodes(self):
        return self.feature.shape[0]

    @property
    def n_leaves(self):
        return int(np.count_nonzero(self.feature < 0))

    def depth(self):
        """Length of the longest root-to-leaf path."""
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for i in range(self.n_nodes):  # children always have larger ids than parents
            if self.feature[i] >= 0:
                depth[self.left[i]] = depth[self.right[i]] = depth[i] + 1
        return int(depth.max())

    def recoded(self, index_maps):
        """This tree with its category sets in another dictionary: ``index_maps``
        {categorical feature: int array, old dictionary index -> new index}."""
        if not self.categories:
            return self
        categories = {node: np.sort(index_maps[int(self.feature[node])][cats]).astype(np.int32)
                      for node, cats in self.categories.items()}
        return Tree(*(getattr(self, name) for name in NODE_FIELDS), categories=categories)

    def to_dict(self):
        """The tree in a model file (read back, with checks, by ``model_file.parse_tree``)."""
        out = {name: getattr(self, name).tolist() for name in NODE_FIELDS}
        out["default_left"] = [int(v) for v in self.default_left]
        out["threshold"] = [_encode_float(v) for v in self.threshold]
        if self.categories:  # xgboost's layout of the category sets (format version 2)
            nodes = sorted(self.categories)
            sizes = [len(self.categories[n]) for n in nodes]
            out["categories_nodes"] = nodes
            out["categories_segments"] = [int(s) for s in np.cumsum([0] + sizes[:-1])]
            out["categories_sizes"] = sizes
            out["categories"] = [int(c) for n in nodes for c in self.categories[n]]
        return out


def _encode_float(v):
    # JSON has no infinity: write it as a string so the file stays standard JSON.
    return float(v) if np.isfinite(v) else str(float(v))


class PackedForest:
    """All trees' node arrays concatenated, with per-tree offsets, for the kernel.

    Tree ``t`` adds to output ``t % n_outputs``.
    """

    def __init__(self, trees, n_outputs=1):
        self.offsets = offsets = pack_node_arrays(
            self, trees, ("feature", "threshold", "default_left", "left", "right", "value"))
        self.n_outputs = n_outputs
        self.category_sets = pack_category_sets(trees, offsets)
        self.depths = np.array([tree.depth() for tree in trees], dtype=np.int64)
        self.node_info = _pack_node_info(self.feature, self.default_left, self.left,
                                         self.right)

    def add_block_margin(self, X, margin):
        """``add_margin`` for a feature block of either kind: dense (as contiguous
        float32 or float64) or sparse (CSR, densified a few rows at a time:
        ``sparse.add_margin``)."""
        if is_sparse(X):
            add_sparse_margin(self, X, margin)
        else:
            self.add_margin(dense_floats(X), margin)

    def leaves(self, X):
        """(n_rows, n_trees) int32: the node id (within its tree) of the leaf each row of
        ``X`` (a dense float block, NaN = missing) reaches in each tree."""
        X = dense_floats(X)
        leaves = np.empty((X.shape[0], len(self.offsets) - 1), dtype=np.int32)
        if self.category_sets is None and self.node_info is not None:
            _leaf_kernel_packed(X, self.node_info, self.threshold, self.offsets, self.depths,
                                leaves)
            return leaves
        sets = self.category_sets
        if sets is None:  # no categorical node: every node numeric
            n_nodes = int(self.offsets[-1])
            sets = (np.full(n_nodes, -1, np.int64), np.zeros(n_nodes, np.int64),
                    np.zeros(0, np.bool_))
        _leaf_kernel(X, self.feature, self.threshold, self.default_left, self.left,
                     self.right, self.offsets, *sets, leaves)
        return leaves

    def add_margin(self, X, margin):
        """``margin[k] += outputs of the trees of output k`` for the rows of ``X``.

        ``X``: (n_rows, n_features) float32 or float64 (a float32 value compares with
        a threshold as the float64 it exactly is), NaN = missing (categorical features:
        dictionary indices); ``margin``: (K, n_rows).
        """
        args = (X, self.feature, self.threshold, self.default_left, self.left, self.right,
                self.value, self.offsets)
        if self.category_sets is None and self.node_info is not None:
            _predict_kernel_packed(X, self.node_info, self.threshold, self.value, self.offsets,
                                   self.depths, self.n_outputs, margin)
        elif self.category_sets is None:
            _predict_kernel(*args, self.depths, self.n_outputs, margin)
        else:
            _predict_kernel_categorical(*args, self.n_outputs, margin, *self.category_sets)


def pack_node_arrays(packed, trees, names):
    """Set ``packed.<name>`` to the trees' node arrays ``name`` concatenated, for each of
    ``names``; returns the offsets: tree ``t``'s nodes from ``offsets[t]``."""
    offsets = np.zeros(len(trees) + 1, dtype=np.int64)
    for t, tree in enumerate(trees):
        offsets[t + 1] = offsets[t] + tree.n_nodes
    for name in names:
        parts = [getattr(tree, name) for tree in trees]
        setattr(packed, name, np.concatenate(parts) if parts else np.empty(0, NODE_DTYPES[name]))
    return offsets


def _pack_node_info(feature, default_left, left, right):
    """Each node's split in one int64 for ``_predict_kernel_packed``: ``left << 32 |
    feature << 1 | default_left``, -1 for a leaf; None unless every split node's right
    child is ``left + 1`` (trees grown here; a model file may number them otherwise)."""
    split = feature >= 0
    if not np.array_equal(right[split], left[split] + 1):
        return None
    info = ((left.astype(np.int64) << 32) | (feature.astype(np.int64) << 1)
            | default_left.astype(np.int64))
    return np.where(split, info, -1)


def dense_floats(X):
    """A dense block as a C-contiguous float32 (kept) or float64 array."""
    X = np.asarray(X)
    return np.ascontiguousarray(X, dtype=X.dtype if X.dtype == np.float32 else np.float64)


def pack_category_sets(trees, offsets):
    """(set_start, set_size, members) over all nodes for the categorical kernel: node k's
    set is ``members[set_start[k]:set_start[k] + set_size[k]]`` as a bool table over
    category indices (``set_start[k] = -1``: numeric node); None without any set."""
    if not any(tree.categories for tree in trees):
        return None
    start = np.full(int(offsets[-1]), -1, dtype=np.int64)
    size = np.zeros(int(offsets[-1]), dtype=np.int64)
    tables = []
    used = 0
    for tree, base in zip(trees, offsets[:-1]):
        for node, cats in sorted((tree.categories or {}).items()):
            table = np.zeros(int(max(cats)) + 1 if len(cats) else 0, dtype=np.bool_)
            table[np.asarray(cats, dtype=np.int64)] = True
            start[base + node], size[base + node] = used, len(table)
            tables.append(table)
            used += len(table)
    return start, size, np.concatenate(tables) if tables else np.zeros(0, np.bool_)


PREDICT_BLOCK_ROWS = 64


@numba.njit(nogil=True, cache=True)
def _predict_kernel(X, feature, threshold, default_left, left, right, value, offsets,
                    depths, n_outputs, margin):
    # Rows in blocks, trees outermost within a block: a tree's nodes stay in cache for
    # the block's rows.  Within a tree the block's rows move down together, one level
    # at a time (``depths[t]`` steps; a row at a leaf stays), so that the rows' steps,
    # independent of each other, can overlap (xgboost's blocked prediction does the
    # same): ~10% faster than walking each row to its leaf (100 trees of depth 6, 200k
    # rows: 51 against 55 ns a tree and row); still ~2x xgboost's time per tree-row.
    n_trees = offsets.shape[0] - 1
    n_rows = X.shape[0]
    # (unsigned node and feature indices: numba skips its negative-index fix-up, -16%)
    nodes = np.empty(PREDICT_BLOCK_ROWS, dtype=np.uint64)
    for start in range(0, n_rows, PREDICT_BLOCK_ROWS):
        n_block = min(PREDICT_BLOCK_ROWS, n_rows - start)
        for t in range(n_trees):
            base = np.uint64(offsets[t])
            output = t % n_outputs
            nodes[:n_block] = base
            for _ in range(depths[t]):
                for j in range(n_block):
                    k = nodes[j]
                    f = feature[k]
                    if f >= 0:
                        v = X[start + j, np.uint64(f)]
                        go_left = default_left[k] if np.isnan(v) else v <= threshold[k]
                        nodes[j] = base + np.uint64(left[k] if go_left else right[k])
            for j in range(n_block):
                margin[output, start + j] += value[nodes[j]]


@numba.njit(nogil=True, cache=True)
def _predict_kernel_packed(X, node_info, threshold, value, offsets, depths, n_outputs,
                           margin):
    """``_predict_kernel`` for forests whose right children are ``left + 1``, with each
    node's feature, default direction and left child in one int64 (``_pack_node_info``):
    a step is two loads from the node instead of five, and the child is ``left +
    go_right``, arithmetic instead of a branch that a row going either way at random
    mispredicts half the time.  Measured 15 against 40 ns a tree and row (100 trees of
    depth 6, 200k rows), the same margins."""
    n_trees = offsets.shape[0] - 1
    n_rows = X.shape[0]
    nodes = np.empty(PREDICT_BLOCK_ROWS, dtype=np.uint64)
    for start in range(0, n_rows, PREDICT_BLOCK_ROWS):
        n_block = min(PREDICT_BLOCK_ROWS, n_rows - start)
        for t in range(n_trees):
            output = t % n_outputs
            _walk_block_packed(X, start, n_block, np.uint64(offsets[t]), depths[t], node_info,
                               threshold, nodes)
            for j in range(n_block):
                margin[output, start + j] += value[nodes[j]]


@numba.njit(nogil=True, cache=True, inline="always")
def _walk_block_packed(X, start, n_block, base, depth, node_info, threshold, nodes):
    """``nodes[j]``: the leaf (a global node index) that row ``start + j`` of the block
    reaches in the tree whose nodes start at ``base``: the block's rows step down
    together, ``depth`` levels (a row at a leaf stays), ``_predict_kernel_packed``'s
    walk."""
    nodes[:n_block] = base
    for _ in range(depth):
        for j in range(n_block):
            k = nodes[j]
            info = node_info[k]
            if info >= 0:
                v = X[start + j, np.uint64((info & 0xFFFFFFFF) >> 1)]
                if np.isnan(v):
                    go_right = (info & 1) == 0  # not default_left
                else:
                    go_right = not (v <= threshold[k])
                nodes[j] = base + np.uint64(info >> 32) + np.uint64(go_right)


@numba.njit(nogil=True, cache=True)
def _leaf_kernel_packed(X, node_info, threshold, offsets, depths, leaves):
    """``_leaf_kernel`` for packed forests (``_predict_kernel_packed``'s walk)."""
    n_trees = offsets.shape[0] - 1
    nodes = np.empty(PREDICT_BLOCK_ROWS, dtype=np.uint64)
    for start in range(0, X.shape[0], PREDICT_BLOCK_ROWS):
        n_block = min(PREDICT_BLOCK_ROWS, X.shape[0] - start)
        for t in range(n_trees):
            base = np.uint64(offsets[t])
            _walk_block_packed(X, start, n_block, base, depths[t], node_info, threshold, nodes)
            for j in range(n_block):
                leaves[start + j, t] = nodes[j] - base


@numba.njit(nogil=True, cache=True, inline="always")
def _leaf_of_row(X, i, base, feature, threshold, default_left, left, right, set_start,
                 set_size, members):
    """The leaf (node id within its tree) that row ``i`` of ``X`` reaches in the tree whose
    nodes start at ``base``: numeric nodes send ``x <= threshold`` left; categorical
    nodes (``set_start[k] >= 0``, ``pack_category_sets``) send a category index in the
    node's set right, any other left; NaN (missing, unseen) follows ``default_left``."""
    node = 0
    while feature[base + node] >= 0:
        k = base + node
        v = X[i, feature[k]]
        if np.isnan(v):
            go_left = default_left[k]
        elif set_start[k] >= 0:
            c = np.int64(v)
            go_left = not (0 <= c < set_size[k] and members[set_start[k] + c])
        else:
            go_left = v <= threshold[k]
        node = left[k] if go_left else right[k]
    return node


@numba.njit(nogil=True, cache=True)
def _predict_kernel_categorical(X, feature, threshold, default_left, left, right, value,
                                offsets, n_outputs, margin, set_start, set_size, members):
    """``_predict_kernel`` with categorical nodes: each row walked to its leaf
    (``_leaf_of_row``)."""
    n_trees = offsets.shape[0] - 1
    n_rows = X.shape[0]
    for start in range(0, n_rows, PREDICT_BLOCK_ROWS):
        stop = min(start + PREDICT_BLOCK_ROWS, n_rows)
        for t in range(n_trees):
            base = offsets[t]
            output = t % n_outputs
            for i in range(start, stop):
                node = _leaf_of_row(X, i, base, feature, threshold, default_left, left,
                                    right, set_start, set_size, members)
                margin[output, i] += value[base + node]


@numba.njit(nogil=True, cache=True)
def _leaf_kernel(X, feature, threshold, default_left, left, right, offsets, set_start,
                 set_size, members, leaves):
    """``leaves[i, t]`` = the leaf row ``i`` reaches in tree ``t`` (``_leaf_of_row``)."""
    n_trees = offsets.shape[0] - 1
    for start in range(0, X.shape[0], PREDICT_BLOCK_ROWS):
        stop = min(start + PREDICT_BLOCK_ROWS, X.shape[0])
        for t in range(n_trees):
            for i in range(start, stop):
                leaves[i, t] = _leaf_of_row(X, i, offsets[t], feature, threshold,
                                            default_left, left, right, set_start, set_size,
                                            members)


def add_binned_tree_outputs(codes, feature, split_bin, default_left, left, right, value,
                            missing_code, margin, in_place=False, cat_table=None):
    """``margin[t] += output of tree t`` for rows given as bin codes (new array).

    The K trees of a round as (K, n_nodes) arrays with bin thresholds (rows with
    ``code <= split_bin`` go left): the same decisions as the raw-value thresholds,
    since binning is monotone.  Used for eval sets binned with the training cut points.
    ``cat_table``: the right sets of categorical splits (``split_bin = -1 - row``; see
    ``histogram.build_histograms``), or None.  The rows are spread over native threads
    when a kernel may use them (``native_threads``; each row's sum is the same).
    """
    out = margin if in_place else margin.copy()
    n_parts = native_threads.threads()
    for start, stop, block in row_blocks(codes):
        trees = (feature, split_bin, default_left, left, right, value, missing_code,
                 out[:, start:stop], cat_table)
        if n_parts > 1 and stop - start >= PARALLEL_WALK_MIN_ROWS:
            _add_binned_tree_outputs_parallel(block, *trees, n_parts)
        else:
            _add_binned_tree_outputs(block, *trees, 0, stop - start)
    return out


# rows walked down the trees together (``_add_binned_tree_outputs``), and the fewest rows
# of a block whose walk goes to native threads
WALK_GROUP_ROWS = 8
PARALLEL_WALK_MIN_ROWS = 4096


@numba.njit(nogil=True, cache=True, parallel=True)
def _add_binned_tree_outputs_parallel(codes, feature, split_bin, default_left, left, right,
                                      value, missing_code, out, cat_table, n_parts):
    """``_add_binned_tree_outputs`` with the rows in ``n_parts`` ranges, one a thread."""
    for part in numba.prange(n_parts):
        first, stop = part_range(part, n_parts, codes.shape[0])
        _add_binned_tree_outputs(codes, feature, split_bin, default_left, left, right,
                                 value, missing_code, out, cat_table, first, stop)


@numba.njit(nogil=True, cache=True)
def _add_binned_tree_outputs(codes, feature, split_bin, default_left, left, right, value,
                             missing_code, out, cat_table, first, stop):
    """The kernel of ``add_binned_tree_outputs`` on rows ``first..stop-1`` of one block
    (adds into ``out``); a ``cat_table`` of None compiles the numeric version.

    ``WALK_GROUP_ROWS`` rows go down a tree together, a level at a time, with the split
    test and the child chosen without a branch on the outcome
    (``histogram.goes_left``): one row's walk is a chain of dependent loads, which
    several rows' walks overlap, and an outcome that is a coin toss is never
    mispredicted.  (One row at a time, the branch-free test measured 3-11% slower than
    branches; eight rows together, ~24% faster than that: 38 against 50 ns a row and a
    depth-6 tree.)"""
    nodes = np.zeros(WALK_GROUP_ROWS, dtype=np.int64)
    for t in range(feature.shape[0]):
        for group in range(first, stop, WALK_GROUP_ROWS):
            m = min(WALK_GROUP_ROWS, stop - group)
            nodes[:m] = 0
            moving = True
            while moving:
                moving = False
                for g in range(m):
                    node = nodes[g]
                    f = feature[t, node]
                    if f >= 0:
                        go_left = goes_left(codes[group + g, f], split_bin[t, node],
                                            missing_code, default_left[t, node], cat_table)
                        right_child = right[t, node]
                        nodes[g] = right_child + (left[t, node] - right_child) * go_left
                        moving = True
            for g in range(m):
                out[t, group + g] += value[t, nodes[g]]
