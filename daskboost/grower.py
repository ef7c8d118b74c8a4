"""Growing one tree from reduced histograms, one pass over the data per batch of splits.

A ``TreeGrower`` runs wherever the level loop runs (``level_loop``): in process on the
local schedulers, on every worker at once on a cluster, each taking the same decisions
from the same sums.

The grower never sees rows.  Each pass it receives the reduced histograms of the nodes
it asked for, derives the sibling histograms by subtraction (parent - built child),
finds the best split of every new node, and answers with

- the splits to apply (the partitions move their rows to the children next pass), and
- the nodes whose histograms to build next: of each pair of children, the one with the
  smaller hessian sum (the other is derived by subtraction, LightGBM's trick).

Policies (xgboost's ``grow_policy``):

- ``depthwise``: every splittable node of a level is split (level by level); with
  ``max_leaves`` the level's best splits are taken until the leaf budget is used.
- ``lossguide``: LightGBM's leaf-wise growth: the candidate leaves with the largest
  gains are split first, and a candidate not split in one pass stays a candidate.  To
  keep one pass over the data per batch, a pass splits the best candidates but at most
  half of the remaining leaf budget, so the children it creates can still compete for
  the rest: about log2(max_leaves) + depth passes instead of max_leaves - 1.  Exactly
  leaf-wise order would need one pass per split.

Node ids grow in creation order, so a child's id is always larger than its parent's.
"""

import numpy as np

from .constraints import NodeConstraints
from .quantize import unpack_histograms
from .splitting import (find_splits, find_splits_categorical, find_splits_monotone,
                        leaf_values_of)
from .thread_passes import map_ranges, thread_ranges
from .tree import Tree

# histogram cells scanned for splits below which a range of nodes stays on one thread:
# ~220 us of scanning (3.4 ns a cell), a few times a hand-off's ~60 us (at 8,192 a 20k-row,
# 28-feature fit spent 8% more CPU time for the same wall time)
SPLIT_CELLS_PER_THREAD = 65536


def stack_node_arrays(rows, fill, dtype, n_nodes=None):
    """Stack per-tree node arrays into one (K, n_nodes) array, padding with ``fill``
    (one tree's array of the full width and dtype: a (1, n_nodes) view of it)."""
    n_nodes = max(len(r) for r in rows) if n_nodes is None else n_nodes
    if len(rows) == 1 and len(rows[0]) == n_nodes and rows[0].dtype == dtype:
        return rows[0].reshape(1, n_nodes)
    out = np.full((len(rows), n_nodes), fill, dtype=dtype)
    for t, row in enumerate(rows):
        out[t, :len(row)] = row
    return out


def _joined(parts):
    """The split kernel's arrays of consecutive node ranges, joined in order."""
    if len(parts) == 1:
        return parts[0]
    return [np.concatenate([part[j] for part in parts]) for j in range(len(parts[0]))]


class TreeGrower:
    """The state of one tree being grown (its nodes, their sums and the histograms kept
    for deriving siblings).

    Parameters
    ----------
    mapper : binning.BinMapper of the training data.
    params : params.TrainingParams (reg_lambda, reg_alpha, max_delta_step, gamma,
        min_child_weight, max_depth, max_leaves, grow_policy, learning_rate,
        colsample_bytree/bylevel/bynode, monotone_constraints and
        interaction_constraints as ``params.resolve_constraints`` settles them).
    rng : numpy Generator for column sampling (drawn from in a fixed order), or a seed
        for one, made when column sampling first draws (most fits never do).
    """

    def __init__(self, mapper, params, rng=None):
        self.mapper = mapper
        self.params = params
        self._rng = rng
        n_features = mapper.n_features
        self._tree_features = self._sample(np.ones(n_features, dtype=np.bool_),
                                           params.colsample_bytree)
        self._level_features = {}
        self._constraints = NodeConstraints.of(params, n_features)  # None: unconstrained
        # fewest nodes worth a thread of their own in the split search: a hand-off costs
        # about as much as scanning ``SPLIT_CELLS_PER_THREAD`` histogram cells
        self._nodes_per_thread = max(1, SPLIT_CELLS_PER_THREAD // int(mapper.cell_offsets[-1]))
        self._refit = {}             # leaf -> output set by a leaf refit (quantile losses)
        self._candidates = {}        # node -> (gain, feature, bin, default_left, left sums,
        #                                    categorical right set or None)
        self.categories = {}         # categorical split node -> sorted codes going right
        self.n_leaves = 1
        self.depth = [0]
        self.sums = [None]           # (G, H) of each node
        self.feature = [-1]
        self.bin = [-1]
        self.default_left = [False]
        self.left = [-1]
        self.right = [-1]
        self.gain = [0.0]
        self._hists = {}             # node -> histogram, for nodes of the current level
        self._scale = None           # quantization steps of the histograms (``receive``)
        self._to_build = [0]         # nodes whose histograms the next pass builds
        self._to_derive = []         # (node, parent, built sibling)
        self.finished = False

    @property
    def n_nodes(self):
        return len(self.depth)

    def build_request(self):
        """``(node_to_slot, n_slots)`` for the next pass."""
        node_to_slot = np.full(self.n_nodes, -1, dtype=np.int32)
        for slot, node in enumerate(self._to_build):
            node_to_slot[node] = slot
        return node_to_slot, len(self._to_build)

    def receive(self, hist, scale=None):
        """Take the reduced histograms of the requested nodes; choose this pass's splits.
        ``scale``: (g step, h step) when ``hist`` holds packed integer sums of quantized
        gradients (``quantize``): they are subtracted as integers and turned into float
        (G, H) on the thread that searches a node's splits.

        Returns the splits decided in this pass as arrays over node ids
        (``split_feature == -1`` where a node is not split), or None if nothing split.
        After this call ``finished`` tells whether the tree needs another pass.
        """
        self._scale = scale
        built = self._to_build
        derived = np.empty((len(self._to_derive),) + hist.shape[1:], dtype=hist.dtype)
        # the built nodes' histograms are used where they are (slot order); the derived
        # ones are subtracted into ``derived`` (parent - built sibling)
        slot_of = {node: slot for slot, node in enumerate(built)}
        for slot, node in enumerate(built):
            self._hists[node] = hist[slot]
            if self.sums[node] is None:  # the root: its sums come from its histogram
                first = self.mapper.cell_offsets[1]  # feature 0's cells: every row
                totals = self._unpacked(hist[slot, :first].sum(axis=0))
                self.sums[node] = (float(totals[0]), float(totals[1]))
        for j, (node, parent, sibling) in enumerate(self._to_derive):
            np.subtract(self._hists[parent], hist[slot_of[sibling]], out=derived[j])
            self._hists[node] = derived[j]
        for _, parent, _ in self._to_derive:
            self._hists.pop(parent, None)
        derived_nodes = [node for node, _, _ in self._to_derive]
        new_nodes = sorted(built + derived_nodes)
        self._to_build, self._to_derive = [], []
        self._find_candidates([n for n in new_nodes if self._may_split(n)],
                              ((built, hist), (derived_nodes, derived)))
        for node in new_nodes:
            if node not in self._candidates:
                self._hists.pop(node, None)
        split_nodes = []
        while True:
            chosen = self._choose()
            split_nodes += self._expand(chosen)
            # candidates waiting and nothing to build: choose again without a data pass
            if self._to_build or not chosen or not self._candidates:
                break
        split_nodes.sort()
        self.finished = not self._to_build
        if not split_nodes:
            return None
        return self._split_arrays(split_nodes)

    def drop_histograms(self):
        """Forget the histograms kept for deriving siblings (once the tree is grown:
        what is left of them would only travel with the grower)."""
        self._hists.clear()

    def _may_split(self, node):
        max_depth = self.params.max_depth
        return max_depth == 0 or self.depth[node] < max_depth

    def _choose(self):
        """The candidates to split now, best gain first (ties: lower node id)."""
        order = sorted(self._candidates, key=lambda n: (-self._candidates[n][0], n))
        max_leaves = self.params.max_leaves
        lossguide = self.params.lossguide
        remaining = max_leaves - self.n_leaves if max_leaves else len(order)
        take = remaining
        if lossguide and max_leaves and remaining > 0:
            take = max(1, remaining // 2)  # leave room for this pass's children
        chosen = order[:max(0, min(take, len(order)))]
        # the rest: leaves now (depthwise, or no budget left), or later candidates
        if not (lossguide and self.n_leaves + len(chosen) < (max_leaves or np.inf)):
            for node in order[len(chosen):]:
                del self._candidates[node]
                self._hists.pop(node, None)
        return chosen

    def _sample(self, allowed, fraction):
        """A random subset of ``fraction`` of the allowed features (at least one)."""
        if fraction >= 1.0 or self._rng is None:
            return allowed
        candidates = np.flatnonzero(allowed)
        keep = max(1, int(fraction * len(candidates)))
        mask = np.zeros_like(allowed)
        if isinstance(self._rng, (int, list, tuple)):  # a seed: made at the first draw
            self._rng = np.random.default_rng(self._rng)
        mask[self._rng.choice(candidates, size=keep, replace=False)] = True
        return mask

    def _feature_masks(self, nodes):
        """Column sampling by level, then by node, within the tree's features."""
        p = self.params
        masks = []
        for node in nodes:
            depth = self.depth[node]
            if depth not in self._level_features:
                self._level_features[depth] = self._sample(
                    self._tree_features, p.colsample_bylevel)
            masks.append(self._sample(self._level_features[depth], p.colsample_bynode))
        masks = np.array(masks, dtype=np.bool_)
        if self._constraints is not None:  # interaction constraints, after sampling
            masks &= self._constraints.allowed(nodes)
        return masks

    def _find_candidates(self, nodes, stacks):
        """Best split of each node; those with a valid split become candidates.
        ``stacks``: ``(nodes, histograms stacked in that order)`` pairs that hold the
        nodes' histograms (and may hold others')."""
        if not nodes:
            return
        masks = dict(zip(nodes, self._feature_masks(nodes)))  # drawn in node order
        parts = []  # (first index in ``order``, nodes, their histograms) per stack
        order = []
        for stack_nodes, hists in stacks:
            wanted = [j for j, n in enumerate(stack_nodes) if n in masks]
            if len(wanted) < len(stack_nodes):  # some are too deep to split (lossguide)
                hists = hists[wanted]
                stack_nodes = [stack_nodes[j] for j in wanted]
            if stack_nodes:
                parts.append((len(order), stack_nodes, hists))
                order += stack_nodes
        sums = np.array([self.sums[n] for n in order], dtype=np.float64)
        node_masks = np.array([masks[n] for n in order])

        # the nodes are independent: their kernels run on the loop's threads, a range of
        # ``order`` each (``thread_passes.map_ranges``: one hand-off for the stacks of
        # built and derived histograms together), the results joined in that order
        def kernel(r):
            results = []
            for first, stack_nodes, hists in parts:
                lo, hi = max(r.start, first), min(r.stop, first + len(stack_nodes))
                if lo < hi:
                    results.append(self._split_kernel(
                        self._unpacked(hists[lo - first:hi - first]), sums[lo:hi],
                        node_masks[lo:hi], order[lo:hi]))
            return _joined(results)

        results = map_ranges(kernel, thread_ranges(len(order), self._nodes_per_thread))
        self._add_candidates(order, _joined(results))

    def _unpacked(self, hist):
        """Float (G, H) sums of histograms (or of cells) as ``receive`` was given them."""
        return hist if self._scale is None else unpack_histograms(hist, *self._scale)

    def _add_candidates(self, nodes, found):
        """Record the nodes' valid splits (``found``: the split kernel's arrays)."""
        gain, feature, bin_, default_left, left_sums = found[:5]
        right = found[5] if self.mapper.has_categorical else None
        for i, node in enumerate(nodes):
            if feature[i] >= 0:
                cats = None
                if right is not None and self.mapper.is_categorical[feature[i]]:
                    cats = np.flatnonzero(right[i]).astype(np.int32)
                self._candidates[node] = (float(gain[i]), int(feature[i]), int(bin_[i]),
                                          bool(default_left[i]),
                                          (float(left_sums[i, 0]), float(left_sums[i, 1])),
                                          cats)

    def _split_kernel(self, hists, sums, masks, nodes):
        """The split-finding kernel for these nodes: (gain, feature, bin, default_left,
        left sums) and, with categorical features, the right sets."""
        p = self.params
        if self.mapper.has_categorical:  # monotone constraints are refused with these
            return find_splits_categorical(
                hists, sums, self.mapper.cell_offsets, self.mapper.n_codes, masks,
                self.mapper.is_categorical, p.reg_lambda, p.reg_alpha, p.max_delta_step,
                p.min_child_weight, p.gamma, p.max_cat_to_onehot, p.max_cat_threshold)
        if p.monotone_constraints is None:
            return find_splits(hists, sums, self.mapper.cell_offsets, masks, p.reg_lambda,
                               p.reg_alpha, p.max_delta_step, p.min_child_weight, p.gamma)
        return find_splits_monotone(
            hists, sums, self._constraints.bounds(nodes), self.mapper.cell_offsets, masks,
            self._constraints.monotone, p.reg_lambda, p.reg_alpha, p.max_delta_step,
            p.min_child_weight, p.gamma)

    def _expand(self, nodes):
        """Split the chosen candidates: record the splits, create and schedule children."""
        for node in nodes:
            gain, feature, bin_, default_left, left_sum, cats = self._candidates.pop(node)
            if cats is not None:
                self.categories[node] = cats
            self.feature[node], self.bin[node] = feature, bin_
            self.default_left[node], self.gain[node] = default_left, gain
            g, h = self.sums[node]
            right_sum = (g - left_sum[0], h - left_sum[1])
            left = self._add_node(node, left_sum)
            right = self._add_node(node, right_sum)
            self.left[node], self.right[node] = left, right
            if self._constraints is not None:
                self._constraints.split(node, feature, left, right, left_sum, right_sum)
            self.n_leaves += 1
            if self._may_split(left):
                small, large = (left, right) if left_sum[1] <= right_sum[1] else (right, left)
                self._to_build.append(small)
                self._to_derive.append((large, node, small))
            else:
                self._hists.pop(node, None)
        return sorted(nodes)

    def _add_node(self, parent, sums):
        self.depth.append(self.depth[parent] + 1)
        self.sums.append((float(sums[0]), float(sums[1])))
        for lst, v in ((self.feature, -1), (self.bin, -1), (self.default_left, False),
                       (self.left, -1), (self.right, -1), (self.gain, 0.0)):
            lst.append(v)
        return len(self.depth) - 1

    def _split_arrays(self, split_nodes):
        n = self.n_nodes
        feature = np.full(n, -1, dtype=np.int32)
        bin_ = np.full(n, -1, dtype=np.int32)
        default_left = np.zeros(n, dtype=np.bool_)
        left = np.full(n, -1, dtype=np.int32)
        right = np.full(n, -1, dtype=np.int32)
        for node in split_nodes:
            feature[node] = self.feature[node]
            bin_[node] = self.bin[node]
            default_left[node] = self.default_left[node]
            left[node] = self.left[node]
            right[node] = self.right[node]
        if not self.mapper.has_categorical:
            return feature, bin_, default_left, left, right
        table = self._category_table(split_nodes, bin_)
        return feature, bin_, default_left, left, right, table

    def _category_table(self, nodes, bin_):
        """The right sets of the categorical splits among ``nodes`` as a (n_sets, n_codes)
        bool table; their ``bin_`` entries become ``-1 - row`` (``histogram`` kernels)."""
        cat_nodes = [n for n in nodes if n in self.categories]
        table = np.zeros((len(cat_nodes), self.mapper.n_codes), dtype=np.bool_)
        for row, node in enumerate(cat_nodes):
            table[row, self.categories[node]] = True
            bin_[node] = -1 - row
        return table

    def binned_arrays(self):
        """(feature, bin, default_left, left, right, value) with bin thresholds; with
        categorical features also the table of right sets (see ``_category_table``)."""
        bin_ = np.array(self.bin, dtype=np.int32)
        arrays = (np.array(self.feature, dtype=np.int32), bin_,
                  np.array(self.default_left, dtype=np.bool_), np.array(self.left, dtype=np.int32),
                  np.array(self.right, dtype=np.int32), self.leaf_values())
        if not self.mapper.has_categorical:
            return arrays
        return arrays + (self._category_table(range(self.n_nodes), bin_),)

    def refit_leaves(self, values):
        """Replace leaves' outputs (learning rate included): {leaf node: value}."""
        self._refit.update(values)

    def leaf_values(self):
        """Output of every node (learning rate applied), indexed by node id."""
        p = self.params
        reg = (p.reg_lambda, p.reg_alpha, p.max_delta_step)
        eta = p.learning_rate
        if self._constraints is None:
            values = leaf_values_of(np.array(self.sums, dtype=np.float64), eta, *reg)
        else:  # monotone bounds
            weights = [self._constraints.weight(n, g, h) for n, (g, h) in enumerate(self.sums)]
            values = np.array([eta * w for w in weights], dtype=np.float64)
        for node, value in self._refit.items():
            if self._constraints is not None:  # refit leaves stay in their bounds too
                value = self._constraints.clip(node, value, eta)
            values[node] = value
        return values

    def to_tree(self):
        """The finished tree with raw-value thresholds."""
        feature = np.array(self.feature, dtype=np.int32)
        threshold = np.array(
            [self.mapper.threshold(f, b) if f >= 0 and not self.mapper.is_categorical[f]
             else 0.0 for f, b in zip(self.feature, self.bin)], dtype=np.float64)
        return Tree(
            feature=feature,
            threshold=threshold,
            default_left=np.array(self.default_left, dtype=np.bool_),
            left=np.array(self.left, dtype=np.int32),
            right=np.array(self.right, dtype=np.int32),
            value=self.leaf_values(),
            gain=np.array(self.gain, dtype=np.float64),
            cover=np.array([h for _, h in self.sums], dtype=np.float64),
            categories=dict(self.categories) if self.mapper.has_categorical else None,
        )
