"""The node columns of a tree being grown, and the kernels that take a pass's decisions
over them (``grower.TreeGrower``).

A tree's nodes are rows of a few arrays indexed by node id, so that what a pass decides
for its nodes (record the best splits found, choose the candidates to split, create
their children, say which histograms to build and which to derive) is one compiled
call, not Python per node (a few microseconds of Python per node, over the ~6,000
nodes of a 100-tree fit, were about a tenth of a 20,000-row fit: ``benchmarks/RESULTS.md``).

Columns (``NodeColumns``):

- ``ints`` (capacity, 6) int32: ``DEPTH``, ``FEATURE`` (-1: not split), ``BIN``,
  ``DEFAULT_LEFT`` (0/1), ``LEFT``, ``RIGHT`` (-1: none);
- ``floats`` (capacity, 3) float64: ``G``, ``H`` (the node's gradient sums), ``GAIN``;
- ``candidate_ints`` (capacity, 4) int32: ``IS_CANDIDATE`` (0/1) and the best split found
  for the node while it waits to be split: ``FEATURE``, ``BIN``, ``DEFAULT_LEFT``;
- ``candidate_floats`` (capacity, 3) float64: its ``CANDIDATE_GAIN`` and left child's sums
  ``LEFT_G``, ``LEFT_H``;
- ``right_sets`` and ``candidate_right_sets`` (capacity, n_codes) bool: the categories a
  categorical split sends right (width 0 without categorical features).
"""

import numba
import numpy as np

# ``ints`` columns
DEPTH, FEATURE, BIN, DEFAULT_LEFT, LEFT, RIGHT = range(6)
# ``floats`` columns
G, H, GAIN = range(3)
# ``candidate_ints`` columns (FEATURE, BIN, DEFAULT_LEFT as in ``ints``)
IS_CANDIDATE = 0
# ``candidate_floats`` columns
CANDIDATE_GAIN, LEFT_G, LEFT_H = range(3)

_INT_FILLS = (0, -1, -1, 0, -1, -1)


class NodeColumns:
    """The node columns of one tree (see the module docstring), grown on demand."""

    def __init__(self, capacity, max_nodes, n_codes):
        self.max_nodes = max_nodes
        self.n_codes = n_codes
        self.capacity = 0
        self.reserve(capacity)

    def reserve(self, n_nodes):
        """Hold at least ``n_nodes`` nodes (at least doubling, up to ``max_nodes``); new
        rows are nodes neither split nor candidates."""
        if n_nodes <= self.capacity:
            return
        old, self.capacity = self.capacity, max(n_nodes, min(2 * self.capacity,
                                                              self.max_nodes))
        ints = np.empty((self.capacity, 6), dtype=np.int32)
        ints[:] = _INT_FILLS
        for name, new in (("ints", ints),
                          ("floats", np.zeros((self.capacity, 3))),
                          ("candidate_ints", np.zeros((self.capacity, 4), dtype=np.int32)),
                          ("candidate_floats", np.zeros((self.capacity, 3))),
                          ("right_sets", np.zeros((self.capacity, self.n_codes), np.bool_)),
                          ("candidate_right_sets",
                           np.zeros((self.capacity, self.n_codes), np.bool_))):
            if old:
                new[:old] = getattr(self, name)
            setattr(self, name, new)


@numba.njit(nogil=True, cache=True, inline="always")
def _copy_row(dst, dst_row, src, src_row):
    """``dst[dst_row, :] = src[src_row, :]`` as a loop: numba's slice assignment of bool
    rows copied element by element without vectorizing (3x slower for 4,000 columns)."""
    for c in range(src.shape[1]):
        dst[dst_row, c] = src[src_row, c]


@numba.njit(nogil=True, cache=True)
def decide_splits(ints, floats, candidate_ints, candidate_floats, right_sets,
                  candidate_right_sets, found_nodes, found_gain, found_feature, found_bin,
                  found_default_left, found_left_sums, found_right_sets, is_categorical,
                  new_nodes, n_nodes, n_leaves, max_depth, max_leaves, lossguide):
    """One pass's decisions for a tree (``TreeGrower.receive``'s policy, see there).

    ``found_*``: the split kernel's results for ``found_nodes`` (feature -1: no valid
    split); a right set is copied only for a split on a feature that ``is_categorical``
    says is one (the others' rows stay all False: ~4 us a node for 4,000 categories);
    ``new_nodes``: the nodes whose histograms the pass produced.  The columns
    must hold ``n_nodes + 2 *`` (candidates, old and found) nodes.

    Records the valid splits as candidates, then chooses candidates (best gain first,
    ties to the lower node id) and splits them, creating their children in that order,
    until the pass has histograms to build or nothing to choose.  Returns ``(n_nodes,
    n_leaves, n_candidates, chosen, build, derive, parents, drop)``: the nodes split in
    order, the children whose histograms the next pass builds (of each pair whose
    children may split, the one with the smaller hessian sum), their siblings derived by
    subtraction and the parents, and the nodes whose histograms are no longer needed.
    """
    for i in range(found_nodes.shape[0]):
        if found_feature[i] >= 0:
            node = found_nodes[i]
            candidate_ints[node, IS_CANDIDATE] = 1
            candidate_ints[node, FEATURE] = found_feature[i]
            candidate_ints[node, BIN] = found_bin[i]
            candidate_ints[node, DEFAULT_LEFT] = found_default_left[i]
            candidate_floats[node, CANDIDATE_GAIN] = found_gain[i]
            candidate_floats[node, LEFT_G] = found_left_sums[i, 0]
            candidate_floats[node, LEFT_H] = found_left_sums[i, 1]
            if is_categorical[found_feature[i]]:
                _copy_row(candidate_right_sets, node, found_right_sets, i)
    drop = np.empty(new_nodes.shape[0] + n_nodes, dtype=np.int64)
    n_drop = 0
    for node in new_nodes:
        if candidate_ints[node, IS_CANDIDATE] == 0:
            drop[n_drop] = node
            n_drop += 1
    chosen = np.empty(n_nodes, dtype=np.int64)
    build = np.empty(n_nodes, dtype=np.int64)
    derive = np.empty(n_nodes, dtype=np.int64)
    parents = np.empty(n_nodes, dtype=np.int64)
    n_chosen = n_build = 0
    while True:
        candidates = np.flatnonzero(candidate_ints[:n_nodes, IS_CANDIDATE])
        gains = np.empty(candidates.shape[0])
        for j in range(candidates.shape[0]):
            gains[j] = -candidate_floats[candidates[j], CANDIDATE_GAIN]
        order = candidates[np.argsort(gains, kind="mergesort")]
        remaining = max_leaves - n_leaves if max_leaves > 0 else order.shape[0]
        take = remaining
        if lossguide and max_leaves > 0 and remaining > 0:
            take = max(1, remaining // 2)  # leave room for this pass's children
        k = max(0, min(take, order.shape[0]))
        # the rest: leaves now (depthwise, or no budget left), or later candidates
        if not (lossguide and (max_leaves == 0 or n_leaves + k < max_leaves)):
            for node in order[k:]:
                candidate_ints[node, IS_CANDIDATE] = 0
                drop[n_drop] = node
                n_drop += 1
        for node in order[:k]:
            candidate_ints[node, IS_CANDIDATE] = 0
            for column in (FEATURE, BIN, DEFAULT_LEFT):
                ints[node, column] = candidate_ints[node, column]
            floats[node, GAIN] = candidate_floats[node, CANDIDATE_GAIN]
            if is_categorical[ints[node, FEATURE]]:
                _copy_row(right_sets, node, candidate_right_sets, node)
            left, right = n_nodes, n_nodes + 1
            n_nodes += 2
            ints[node, LEFT], ints[node, RIGHT] = left, right
            depth = ints[node, DEPTH] + 1
            ints[left, DEPTH] = ints[right, DEPTH] = depth
            left_h = candidate_floats[node, LEFT_H]
            right_h = floats[node, H] - left_h
            floats[left, G] = candidate_floats[node, LEFT_G]
            floats[left, H] = left_h
            floats[right, G] = floats[node, G] - candidate_floats[node, LEFT_G]
            floats[right, H] = right_h
            chosen[n_chosen] = node
            n_chosen += 1
            if max_depth == 0 or depth < max_depth:
                small, large = (left, right) if left_h <= right_h else (right, left)
                build[n_build], derive[n_build], parents[n_build] = small, large, node
                n_build += 1
            else:  # children too deep to split: no siblings to derive from this one
                drop[n_drop] = node
                n_drop += 1
        n_leaves += k
        # candidates waiting and nothing to build: choose again without a data pass
        if n_build or k == 0 or not candidate_ints[:n_nodes, IS_CANDIDATE].any():
            break
    n_candidates = int(candidate_ints[:n_nodes, IS_CANDIDATE].sum())
    return (n_nodes, n_leaves, n_candidates, chosen[:n_chosen], build[:n_build],
            derive[:n_build], parents[:n_build], drop[:n_drop])


@numba.njit(nogil=True, cache=True)
def category_sets(ints, right_sets, is_categorical, n_nodes):
    """The categorical splits of the first ``n_nodes`` nodes: ``(nodes, codes,
    bounds)``, node ``nodes[j]`` sending right the codes ``codes[bounds[j]:bounds[j +
    1]]`` (increasing); one pass over the right sets (numpy's ``nonzero`` over them and
    a dict built around it took ~20 us of a diamonds tree's ~50 us of ``to_tree``)."""
    n_sets = 0
    n_codes = 0
    for node in range(n_nodes):
        f = ints[node, FEATURE]
        if f >= 0 and is_categorical[f]:
            n_sets += 1
            for c in range(right_sets.shape[1]):
                n_codes += right_sets[node, c]
    nodes = np.empty(n_sets, dtype=np.int64)
    codes = np.empty(n_codes, dtype=np.int32)
    bounds = np.zeros(n_sets + 1, dtype=np.int64)
    j = 0
    k = 0
    for node in range(n_nodes):
        f = ints[node, FEATURE]
        if f >= 0 and is_categorical[f]:
            nodes[j] = node
            for c in range(right_sets.shape[1]):
                if right_sets[node, c]:
                    codes[k] = c
                    k += 1
            j += 1
            bounds[j] = k
    return nodes, codes, bounds


@numba.njit(nogil=True, cache=True)
def split_arrays(ints, right_sets, is_categorical, nodes, n_nodes):
    """The splits of ``nodes`` (split nodes, in increasing order) as arrays over the
    ``n_nodes`` node ids, every other node not split: ``(feature, bin, default_left,
    left, right, table)``.  ``table``: the right sets of the categorical splits among
    them, one row each in node order, whose ``bin`` becomes ``-1 - row`` (``histogram``
    kernels)."""
    feature = np.full(n_nodes, -1, dtype=np.int32)
    bin_ = np.full(n_nodes, -1, dtype=np.int32)
    default_left = np.zeros(n_nodes, dtype=np.bool_)
    left = np.full(n_nodes, -1, dtype=np.int32)
    right = np.full(n_nodes, -1, dtype=np.int32)
    categorical = right_sets.shape[1] > 0
    n_sets = 0
    if categorical:
        for node in nodes:
            n_sets += is_categorical[ints[node, FEATURE]]
    table = np.zeros((n_sets, right_sets.shape[1]), dtype=np.bool_)
    row = 0
    for node in nodes:
        f = ints[node, FEATURE]
        feature[node] = f
        bin_[node] = ints[node, BIN]
        default_left[node] = ints[node, DEFAULT_LEFT] != 0
        left[node] = ints[node, LEFT]
        right[node] = ints[node, RIGHT]
        if categorical and is_categorical[f]:
            _copy_row(table, row, right_sets, node)
            bin_[node] = -1 - row
            row += 1
    return feature, bin_, default_left, left, right, table
