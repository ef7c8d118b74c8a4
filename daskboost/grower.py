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

import functools

import numpy as np

from .constraints import NodeConstraints
from .node_columns import (BIN, DEFAULT_LEFT, DEPTH, FEATURE, GAIN, LEFT, RIGHT, G, H,
                           NodeColumns, category_sets, decide_splits, split_arrays)
from .quantize import unpack_histograms
from . import native_threads
from .splitting import (find_splits_monotone, find_splits_monotone_parallel, find_splits_of,
                        leaf_values_of)
from .thread_passes import map_ranges, thread_ranges
from .tree import Tree

# histogram cells scanned for splits below which a range of nodes stays on one thread:
# ~220 us of scanning (3.4 ns a cell), a few times a hand-off's ~60 us (at 8,192 a 20k-row,
# 28-feature fit spent 8% more CPU time for the same wall time)
SPLIT_CELLS_PER_THREAD = 65536
# a categorical feature searched by partition, in numeric cells' worth: each category
# about one more cell, the feature ~300 more (its order's ends: on flights 6.9 ns a
# category against 3.1 ns a numeric cell, ~1 us a feature)
CATEGORY_EXTRA_CELLS, PARTITION_FEATURE_CELLS = 1, 300

_EMPTY = np.zeros(0, dtype=np.int64)
# node columns a tree starts with, at most ``max_nodes``: a tree of depth 7 or less never
# grows them (a diamonds tree grown from 64 nodes to 127 spent 12 us making its columns,
# against 5 us for 127 at once)
INITIAL_NODES = 256
# node columns' right-set cells up to which a tree may grow in place (its columns are
# made as large as the tree can get: 2 x 4 MiB of bools)
IN_PLACE_MAX_NODE_CELLS = 1 << 22


def split_search_cells(mapper, max_cat_to_onehot):
    """The work of one node's split search in numeric histogram cells' worth."""
    cells = int(mapper.cell_offsets[-1])
    if not mapper.has_categorical:
        return cells
    widths = np.diff(mapper.cell_offsets)[mapper.is_categorical]
    searched = widths[widths - 1 >= max_cat_to_onehot]  # (k categories and the missing cell)
    return (cells + CATEGORY_EXTRA_CELLS * int(searched.sum())
            + PARTITION_FEATURE_CELLS * len(searched))


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

    Nodes are rows of arrays indexed by node id (``node_columns``): a pass's decisions
    over its nodes are one compiled call.

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
        samples_by_node = rng is not None and min(params.colsample_bylevel,
                                                  params.colsample_bynode) < 1.0
        self._constraints = NodeConstraints.of(params, n_features)  # None: unconstrained
        # whether nodes may differ in the features they search (else every node searches
        # the tree's features: one mask, reused)
        self._masks_per_node = samples_by_node or self._constraints is not None
        self._refit = {}             # leaf -> output set by a leaf refit (quantile losses)
        self.n_leaves = 1
        self.n_nodes = 1
        self._n_candidates = 0
        self._nodes = NodeColumns(min(params.max_nodes, INITIAL_NODES), params.max_nodes,
                                  mapper.n_codes if mapper.has_categorical else 0)
        self._masks = None           # (nodes, features) all the tree's features, reused
        self._root_summed = False    # the root's sums come from its first histogram
        self._hists = {}             # node -> histogram, for nodes of the current level
        self._scale = None           # quantization steps of the histograms (``receive``)
        # the nodes whose histograms the next pass builds, and those it derives by
        # subtraction with their parents: derived node j's built sibling is built node j
        self._to_build = np.zeros(1, dtype=np.int64)
        self._to_derive = (_EMPTY, _EMPTY)
        self.finished = False

    @functools.cached_property
    def _nodes_per_thread(self):
        """The fewest nodes worth a thread of their own in the split search: a hand-off
        costs about as much as scanning ``SPLIT_CELLS_PER_THREAD`` histogram cells
        (worked out at the first search: a tree grown in place never needs it)."""
        return max(1, SPLIT_CELLS_PER_THREAD
                   // split_search_cells(self.mapper, self.params.max_cat_to_onehot))

    # the tree so far: views of the node columns
    depth = property(lambda self: self._nodes.ints[:self.n_nodes, DEPTH])
    feature = property(lambda self: self._nodes.ints[:self.n_nodes, FEATURE])
    bin = property(lambda self: self._nodes.ints[:self.n_nodes, BIN])
    default_left = property(lambda self: self._nodes.ints[:self.n_nodes, DEFAULT_LEFT] != 0)
    left = property(lambda self: self._nodes.ints[:self.n_nodes, LEFT])
    right = property(lambda self: self._nodes.ints[:self.n_nodes, RIGHT])
    gain = property(lambda self: self._nodes.floats[:self.n_nodes, GAIN])

    @property
    def sums(self):
        """(n_nodes, 2) gradient sums (G, H) of the nodes."""
        return np.ascontiguousarray(self._nodes.floats[:self.n_nodes, G:H + 1])

    @property
    def categories(self):
        """{categorical split node: the sorted codes going right}."""
        if not self.mapper.has_categorical:
            return {}
        nodes, codes, bounds = category_sets(self._nodes.ints, self._nodes.right_sets,
                                             self.mapper.is_categorical, self.n_nodes)
        bounds = bounds.tolist()
        return {node: codes[bounds[j]:bounds[j + 1]] for j, node in enumerate(nodes.tolist())}

    def build_request(self, out=None, first_slot=0):
        """``(node_to_slot, n_slots)`` for the next pass: the nodes to build get slots
        ``first_slot, first_slot + 1, ...``, every other node -1.  ``out``: a row at
        least ``n_nodes`` wide, filled with -1, to write them into (the level's
        (K, n_nodes) array, trees' slots numbered one after the other)."""
        if out is None:
            out = np.full(self.n_nodes, -1, dtype=np.int32)
        n = len(self._to_build)
        out[self._to_build] = np.arange(first_slot, first_slot + n, dtype=np.int32)
        return out, n

    def receive(self, hist, scale=None):
        """Take the reduced histograms of the requested nodes; choose this pass's splits.
        ``scale``: (g step, h step) when ``hist`` holds packed integer sums of quantized
        gradients (``quantize``): they are subtracted as integers and turned into float
        (G, H) on the thread that searches a node's splits.

        Then (``node_columns.decide_splits``): every new node's best split, if valid,
        makes it a candidate; candidates are split best gain first (depthwise: all of
        them, up to ``max_leaves``; lossguide: see the module docstring), children
        created in that order; of each pair of children the one with the smaller
        hessian sum is built next pass, its sibling derived.

        Returns the splits decided in this pass as arrays over node ids
        (``split_feature == -1`` where a node is not split), or None if nothing split.
        After this call ``finished`` tells whether the tree needs another pass.
        """
        self._scale = scale
        nodes = self._nodes
        built, (derived_nodes, parents) = self._to_build, self._to_derive
        if not self._root_summed:  # the root (built first): its sums from its histogram
            self._sum_root(hist)
        # the built nodes' histograms are used where they are (slot order); the derived
        # ones are subtracted into ``derived`` (parent - built sibling)
        hists = self._hists
        for slot, node in enumerate(built.tolist()):
            hists[node] = hist[slot]
        derived = np.empty((len(derived_nodes),) + hist.shape[1:], dtype=hist.dtype)
        for j, parent in enumerate(parents.tolist()):
            np.subtract(hists.pop(parent), hist[j], out=derived[j])
        for j, node in enumerate(derived_nodes.tolist()):
            hists[node] = derived[j]
        found_nodes, found = self._find_splits(((built, hist), (derived_nodes, derived)))
        nodes.reserve(self.n_nodes + 2 * (self._n_candidates + len(found_nodes)))
        p = self.params
        (self.n_nodes, self.n_leaves, self._n_candidates, chosen, build, derive, parents,
         drop) = decide_splits(
            nodes.ints, nodes.floats, nodes.candidate_ints, nodes.candidate_floats,
            nodes.right_sets, nodes.candidate_right_sets, found_nodes, *found,
            self.mapper.is_categorical, np.concatenate([built, derived_nodes]), self.n_nodes,
            self.n_leaves, p.max_depth, p.max_leaves, p.lossguide)
        for node in drop.tolist():
            hists.pop(node, None)
        if self._constraints is not None:
            for node in chosen.tolist():
                left, right = nodes.ints[node, LEFT], nodes.ints[node, RIGHT]
                self._constraints.split(node, int(nodes.ints[node, FEATURE]), int(left),
                                        int(right), tuple(nodes.floats[left, G:H + 1]),
                                        tuple(nodes.floats[right, G:H + 1]))
        self._to_build, self._to_derive = build, (derive, parents)
        self.finished = not len(build)
        return self._split_arrays(np.sort(chosen)) if len(chosen) else None

    def grows_in_place(self):
        """Whether the tree may grow in one compiled call from its root's histogram
        (``levels_in_place``): depthwise to a depth limit, every node searching the
        tree's features (no constraints, no column sampling by level or node), not
        finished, and room for the whole tree's node columns."""
        p = self.params
        return (not self.finished and not p.lossguide and p.max_depth > 0
                and not self._masks_per_node
                and p.max_nodes * max(1, self._nodes.n_codes) <= IN_PLACE_MAX_NODE_CELLS)

    def in_place_root(self, hist, scale=None):
        """Take the root's histogram (``hist[0]``; packed integer sums with ``scale``,
        as ``receive`` takes them) for a tree grown in place from there
        (``levels_in_place``): the root's sums, set as ``receive`` sets them.  Returns
        what ``levels_in_place.grow_in_place`` takes: the node columns (room made for
        the whole tree), the tree's features and the root's histogram."""
        self._scale = scale
        self._sum_root(hist)
        self._nodes.reserve(self.params.max_nodes)
        return self._nodes, self._tree_features, np.ascontiguousarray(hist[:1])

    def _sum_root(self, hist):
        """The root's (G, H) from its histogram ``hist[0]`` (feature 0's cells hold
        every row), unpacked with ``_scale`` if quantized."""
        first = self.mapper.cell_offsets[1]
        self._nodes.floats[0, G:H + 1] = self._unpacked(hist[0, :first].sum(axis=0))
        self._root_summed = True

    def grown_in_place(self, grown):
        """Take what ``levels_in_place`` grew (``LevelsGrown``): the tree is finished.
        Returns the splits of its last level, as ``receive`` returns them."""
        self.n_nodes, self.n_leaves = grown.n_nodes, grown.n_leaves
        self._n_candidates = grown.n_candidates
        self._to_build, self._to_derive = _EMPTY, (_EMPTY, _EMPTY)
        self._hists.clear()
        self.finished = True
        return self._split_arrays(grown.chosen) if len(grown.chosen) else None

    def drop_histograms(self):
        """Forget the histograms kept for deriving siblings (once the tree is grown:
        what is left of them would only travel with the grower)."""
        self._hists.clear()

    def _sample(self, allowed, fraction):
        """A random subset of ``fraction`` of the allowed features (at least one)."""
        if fraction >= 1.0 or self._rng is None:
            return allowed
        candidates = np.flatnonzero(allowed)
        keep = max(1, int(fraction * len(candidates)))
        mask = np.zeros_like(allowed)
        if isinstance(self._rng, (int, list, tuple)):  # a seed: made at the first draw
            self._rng = np.random.default_rng(self._rng)
        weights = self.params.feature_weights
        if weights is None:
            mask[self._rng.choice(candidates, size=keep, replace=False)] = True
            return mask
        # xgboost's feature_weights: drawn in proportion to them, without replacement;
        # a feature of weight 0 only when every weighted one is taken
        p = np.asarray(weights)[candidates]
        weighted = candidates[p > 0]
        if len(weighted) == 0:
            mask[self._rng.choice(candidates, size=keep, replace=False)] = True
            return mask
        take = min(keep, len(weighted))
        mask[self._rng.choice(weighted, size=take, replace=False,
                              p=p[p > 0] / p[p > 0].sum())] = True
        if take < keep:
            rest = candidates[p == 0]
            mask[self._rng.choice(rest, size=keep - take, replace=False)] = True
        return mask

    def _feature_masks(self, nodes):
        """Column sampling by level, then by node, within the tree's features (drawn in
        the order of ``nodes``); then the interaction constraints."""
        if not self._masks_per_node:
            if self._masks is None or len(self._masks) < len(nodes):
                self._masks = np.repeat(self._tree_features[None, :],
                                        max(len(nodes), 32), axis=0)
            return self._masks[:len(nodes)]
        masks = []
        for node in nodes.tolist():
            depth = int(self._nodes.ints[node, DEPTH])
            if depth not in self._level_features:
                self._level_features[depth] = self._sample(
                    self._tree_features, self.params.colsample_bylevel)
            masks.append(self._sample(self._level_features[depth],
                                      self.params.colsample_bynode))
        masks = np.array(masks, dtype=np.bool_).reshape(len(nodes), -1)
        if self._constraints is not None:  # interaction constraints, after sampling
            masks &= self._constraints.allowed(nodes.tolist())
        return masks

    def _find_splits(self, stacks):
        """Best split of each new node.  ``stacks``: ``(nodes, their histograms stacked
        in that order)`` pairs.  Every node given may split: ``decide_splits`` builds no
        child at ``max_depth``.  Returns the nodes searched and the split kernel's
        arrays for them (``decide_splits``'s ``found_*``)."""
        parts = []  # (first index in ``order``, nodes, their histograms) per stack
        n_order = 0
        for stack_nodes, hists in stacks:
            if len(stack_nodes):
                parts.append((n_order, stack_nodes, hists))
                n_order += len(stack_nodes)
        if not parts:
            return _EMPTY, self._no_splits
        order = np.concatenate([stack_nodes for _, stack_nodes, _ in parts])
        sums = self._nodes.floats[order, G:H + 1]
        if self._masks_per_node:
            sorted_nodes = np.sort(order)  # masks are drawn in node order
            masks = self._feature_masks(sorted_nodes)[np.searchsorted(sorted_nodes, order)]
        else:
            masks = self._feature_masks(order)

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
                        masks[lo:hi], order[lo:hi]))
            return _joined(results)

        found = _joined(map_ranges(kernel, thread_ranges(len(order), self._nodes_per_thread)))
        return order, found

    @property
    def _no_splits(self):
        """The split kernel's arrays for no node."""
        return (np.zeros(0), np.zeros(0, np.int32), np.zeros(0, np.int32),
                np.zeros(0, np.bool_), np.zeros((0, 2)),
                np.zeros((0, self._nodes.n_codes), np.bool_))

    def _unpacked(self, hist):
        """Float (G, H) sums of histograms (or of cells) as ``receive`` was given them."""
        return hist if self._scale is None else unpack_histograms(hist, *self._scale)

    def _split_kernel(self, hists, sums, masks, nodes):
        """The split-finding kernel for these nodes: (gain, feature, bin, default_left,
        left sums, right sets; the right sets (n, 0) without categorical features).
        With native threads (``native_threads``), the nodes are searched on them: the
        same results."""
        p = self.params
        if p.monotone_constraints is None:
            mapper = self.mapper
            return find_splits_of(
                hists, sums, masks, mapper.cell_offsets, mapper.n_codes,
                mapper.is_categorical, mapper.is_categorical if mapper.has_categorical
                else None, p.reg_lambda, p.reg_alpha, p.max_delta_step, p.min_child_weight,
                p.gamma, p.max_cat_to_onehot, p.max_cat_threshold, native_threads.threads())
        # (monotone constraints are refused with categorical features)
        on_threads = len(nodes) > 1 and native_threads.threads() > 1
        kernel = find_splits_monotone_parallel if on_threads else find_splits_monotone
        found = kernel(
            hists, sums, self._constraints.bounds(nodes.tolist()), self.mapper.cell_offsets,
            masks, self._constraints.monotone, p.reg_lambda, p.reg_alpha, p.max_delta_step,
            p.min_child_weight, p.gamma)
        return (*found, np.zeros((len(nodes), 0), dtype=np.bool_))

    def _split_arrays(self, split_nodes):
        """The splits of ``split_nodes`` (increasing) as arrays over node ids (other
        nodes not split); with categorical features also their table of right sets."""
        arrays = split_arrays(self._nodes.ints, self._nodes.right_sets,
                              self.mapper.is_categorical, split_nodes, self.n_nodes)
        return arrays if self.mapper.has_categorical else arrays[:5]

    def binned_arrays(self):
        """(feature, bin, default_left, left, right, value) with bin thresholds; with
        categorical features also the table of right sets (``_split_arrays``)."""
        arrays = self._split_arrays(np.flatnonzero(self.feature >= 0))
        return arrays[:5] + (self.leaf_values(),) + arrays[5:]

    def refit_leaves(self, values):
        """Replace leaves' outputs (learning rate included): {leaf node: value}."""
        self._refit.update(values)

    def leaf_values(self):
        """Output of every node (learning rate applied), indexed by node id."""
        p = self.params
        reg = (p.reg_lambda, p.reg_alpha, p.max_delta_step)
        eta = p.learning_rate
        if self._constraints is None:
            values = leaf_values_of(self.sums, eta, *reg)
        else:  # monotone bounds
            weights = [self._constraints.weight(n, g, h)
                       for n, (g, h) in enumerate(self.sums.tolist())]
            values = np.array([eta * w for w in weights], dtype=np.float64)
        for node, value in self._refit.items():
            if self._constraints is not None:  # refit leaves stay in their bounds too
                value = self._constraints.clip(node, value, eta)
            values[node] = value
        return values

    def to_tree(self):
        """The finished tree with raw-value thresholds."""
        mapper = self.mapper
        feature, _, default_left, left, right = self._split_arrays(
            np.flatnonzero(self.feature >= 0))[:5]
        threshold = mapper.thresholds(feature, self.bin)
        return Tree(
            feature=feature,
            threshold=threshold,
            default_left=default_left,
            left=left,
            right=right,
            value=self.leaf_values(),
            gain=self.gain.copy(),
            cover=self.sums[:, 1].copy(),
            categories=self.categories if mapper.has_categorical else None,
        )
