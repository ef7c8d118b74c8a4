"""TreeGrower and the level loop driven with synthetic histograms: no Dask, no partitions.

Like scikit-learn's and pygbm's ``test_grower.py``: the grower only ever sees the
(gradient, hessian) histograms of the nodes it asks for, so the tests hand it
histograms built here, either written out by hand or summed from a few hand-made rows
(``Rows``), and compare what it decides with hand-computed numbers or with a naive
exact-greedy reference written below (``reference_tree``), which recomputes every
node's sums from the rows and never subtracts histograms.

Gradients and hessians of the row data are small multiples of 1/8 (dyadic), so every
sum is exact in float64 in any order: a sibling derived by subtraction is then equal,
bit for bit, to the histogram built directly, and the reference's gains are the
grower's to the last bit (ties are broken the same way).
"""

import numpy as np
import pytest

from daskboost import DaskBoostRegressor
from daskboost.binning import BinMapper
from daskboost.grower import TreeGrower
from daskboost.level_loop import drive, grow_levels, grow_rounds, round_leaf_values, run_sync
from daskboost.objectives import regressor_objectives
from daskboost.params import validate_params
from daskboost.splitting import MIN_SPLIT_GAIN, find_splits
from histograms import as_cells


def make_params(**overrides):
    """The ``TrainingParams`` training hands TreeGrower, built as a fit builds them
    (``validate_params`` of the estimator's parameters), here with ``min_child_weight=0``
    and ``learning_rate=0.5`` unless overridden."""
    raw = {**DaskBoostRegressor().get_params(), "min_child_weight": 0.0, "max_depth": 3,
           "learning_rate": 0.5, **overrides}
    return validate_params(raw, regressor_objectives())


def make_mapper(n_bins):
    """Feature f has ``n_bins[f]`` value bins: cuts 0.5, 1.5, ..., so a value v in
    0..n_bins-1 gets code v and the threshold of bin b is b + 0.5."""
    return BinMapper([np.arange(k - 1, dtype=np.float64) + 0.5 for k in n_bins])


def hist_of(codes, grad, hess, mapper):
    """The histogram of rows as the grower takes it (cells, see ``histograms``): sums of
    (g, h) per feature and code."""
    out = np.zeros((codes.shape[1], mapper.n_codes, 2))
    for f in range(codes.shape[1]):
        np.add.at(out[f, :, 0], codes[:, f], grad)
        np.add.at(out[f, :, 1], codes[:, f], hess)
    return cells(mapper, out)


def cells(mapper, hist):
    """Per-feature histograms (..., n_features, n_codes, 2) in the grower's cell layout."""
    return as_cells(hist, mapper.n_bins, mapper.missing_code)[0]


def apply_splits(codes, positions, splits, missing_code):
    """Move rows (one tree's positions) to the children under ``splits``
    = (feature, bin, default_left, left, right) over node ids."""
    feature, bin_, default_left, left, right = splits
    f = feature[positions]
    split = f >= 0
    c = codes[np.arange(len(positions)), np.where(split, f, 0)]
    go_left = np.where(c == missing_code, default_left[positions], c <= bin_[positions])
    return np.where(split, np.where(go_left, left[positions], right[positions]), positions)


class Rows:
    """Hand-made rows: bin codes (``missing_code`` = NaN), and K gradient/hessian rows."""

    def __init__(self, mapper, codes, grad, hess):
        self.mapper = mapper
        self.codes = np.asarray(codes, dtype=np.int64)
        self.grad = np.atleast_2d(np.asarray(grad, dtype=np.float64))
        self.hess = np.atleast_2d(np.asarray(hess, dtype=np.float64))

    def hist(self, mask, k=0):
        return hist_of(self.codes[mask], self.grad[k, mask], self.hess[k, mask], self.mapper)


def random_rows(seed, n=240, n_features=4, n_bins=4, K=1, missing=0.1):
    """Rows whose gradients depend on the features (so trees have structure), dyadic."""
    rng = np.random.default_rng(seed)
    mapper = make_mapper([n_bins] * n_features)
    codes = rng.integers(0, n_bins, size=(n, n_features))
    codes[rng.random(codes.shape) < missing] = mapper.missing_code
    grads, hesses = [], []
    for k in range(K):
        weights = rng.integers(-4, 5, size=n_features)
        signal = (np.where(codes == mapper.missing_code, 1, codes) * weights).sum(axis=1)
        grads.append((signal + rng.integers(-8, 9, size=n)) / 8)
        hesses.append(rng.integers(1, 9, size=n) / 8)
    return Rows(mapper, codes, grads, hesses)


def score(g, h, lam):
    return g * g / (h + lam)


def reference_split(rows, mask, params, k=0, features=None):
    """Best split of the rows ``mask`` by exhaustive search (same order and tie rule as
    splitting.py: lower feature first, then missing-right scan up, missing-left scan
    down); returns (gain, feature, bin, default_left) with feature -1 if none is valid."""
    lam, mcw = params.reg_lambda, params.min_child_weight
    codes, g, h = rows.codes[mask], rows.grad[k, mask], rows.hess[k, mask]
    G, H = g.sum(), h.sum()
    parent = score(G, H, lam)
    best = (0.0, -1, -1, False)
    for f in range(codes.shape[1]):
        if features is not None and f not in features:
            continue
        c = codes[:, f]
        miss = c == rows.mapper.missing_code
        n_bins = int(rows.mapper.n_bins[f])
        candidates = [(b, False) for b in range(n_bins)]
        if h[miss].sum() > 0:
            candidates += [(b, True) for b in range(n_bins - 2, -1, -1)]
        for b, dl in candidates:
            left = ((c <= b) & ~miss) | (miss & dl)
            lg, lh = g[left].sum(), h[left].sum()
            rg, rh = G - lg, H - lh
            if lh < mcw or rh < mcw or lh <= 0 or rh <= 0:
                continue
            gain = score(lg, lh, lam) + score(rg, rh, lam) - parent
            if gain > best[0]:
                best = (gain, f, b, dl)
    if best[1] >= 0 and (best[0] <= MIN_SPLIT_GAIN or best[0] < params.gamma):
        return (0.0, -1, -1, False)
    return best


def leaf(rows, mask, params, k=0):
    G, H = rows.grad[k, mask].sum(), rows.hess[k, mask].sum()
    return {"cover": H, "value": params.learning_rate * (-G / (H + params.reg_lambda))}


def children_masks(rows, mask, f, b, dl):
    c = rows.codes[:, f]
    miss = c == rows.mapper.missing_code
    go_left = np.where(miss, dl, c <= b)
    return mask & go_left, mask & ~go_left


def reference_tree(rows, params, k=0, mask=None, depth=0, features=None):
    """Naive depthwise exact greedy on the rows, as a nested dict (see ``nested``)."""
    mask = np.ones(len(rows.codes), bool) if mask is None else mask
    node = leaf(rows, mask, params, k)
    if params.max_depth == 0 or depth < params.max_depth:
        gain, f, b, dl = reference_split(rows, mask, params, k, features)
        if f >= 0:
            lmask, rmask = children_masks(rows, mask, f, b, dl)
            node.update(feature=f, bin=b, default_left=dl, gain=gain,
                        left=reference_tree(rows, params, k, lmask, depth + 1, features),
                        right=reference_tree(rows, params, k, rmask, depth + 1, features))
    return node


def reference_best_first(rows, params, max_leaves, k=0):
    """Exact leaf-wise growth (one split at a time, largest gain first)."""
    root = leaf(rows, np.ones(len(rows.codes), bool), params, k)
    frontier = [(root, np.ones(len(rows.codes), bool))]
    n_leaves = 1
    while n_leaves < max_leaves:
        found = [(reference_split(rows, m, params, k), i) for i, (_, m) in enumerate(frontier)]
        found = [(s, i) for s, i in found if s[1] >= 0]
        if not found:
            break
        (gain, f, b, dl), i = max(found, key=lambda t: t[0][0])
        node, mask = frontier.pop(i)
        lmask, rmask = children_masks(rows, mask, f, b, dl)
        node.update(feature=f, bin=b, default_left=dl, gain=gain,
                    left=leaf(rows, lmask, params, k), right=leaf(rows, rmask, params, k))
        frontier += [(node["left"], lmask), (node["right"], rmask)]
        n_leaves += 1
    return root


def nested(grower):
    """The grower's tree as a nested dict (gain, cover and value from ``to_tree``),
    checking on the way that thresholds are the mapper's and children's ids are larger
    than their parent's."""
    feature, bin_, default_left, left, right, value = grower.binned_arrays()
    tree = grower.to_tree()
    np.testing.assert_array_equal(tree.feature, feature)
    np.testing.assert_array_equal(tree.value, value)

    def node(i):
        out = {"cover": tree.cover[i], "value": tree.value[i]}
        if feature[i] >= 0:
            assert left[i] > i and right[i] > i
            assert tree.threshold[i] == grower.mapper.thresholds([feature[i]], [bin_[i]])[0]
            out.update(feature=int(feature[i]), bin=int(bin_[i]),
                       default_left=bool(default_left[i]), gain=tree.gain[i],
                       left=node(left[i]), right=node(right[i]))
        return out
    return node(0)


def assert_same_tree(got, want, path="root", rel=1e-12):
    assert set(got) == set(want), path
    for key in ("feature", "bin", "default_left"):
        if key in want:
            assert got[key] == want[key], f"{path}.{key}"
    for key in ("cover", "value", "gain"):
        if key in want:
            assert got[key] == pytest.approx(want[key], rel=rel, abs=rel), f"{path}.{key}"
    for key in ("left", "right"):
        if key in want:
            assert_same_tree(got[key], want[key], f"{path}.{key}", rel)


def tree_depth(node):
    return 0 if "left" not in node else 1 + max(tree_depth(node["left"]), tree_depth(node["right"]))


def n_leaves(node):
    return 1 if "left" not in node else n_leaves(node["left"]) + n_leaves(node["right"])


def requested_nodes(node_to_slot, n_slots):
    """Node id of each slot, in slot order."""
    nodes = [int(np.flatnonzero(node_to_slot == s)[0]) for s in range(n_slots)]
    assert np.count_nonzero(node_to_slot >= 0) == n_slots
    return nodes


def route(rows, grower):
    """Each row's node in the grower's current tree (the leaf it reaches)."""
    feature, bin_, default_left, left, right = (np.array(a) for a in (
        grower.feature, grower.bin, grower.default_left, grower.left, grower.right))
    positions = np.zeros(len(rows.codes), dtype=np.int64)
    for _ in range(grower.n_nodes):
        moved = apply_splits(rows.codes, positions, (feature, bin_, default_left, left, right),
                             rows.mapper.missing_code)
        if (moved == positions).all():
            return positions
        positions = moved
    raise AssertionError("the tree has a cycle")


def grow_on_rows(grower, rows, k=0):
    """Grow one tree without the level loop: each pass, hand the grower the histograms
    (summed from the rows) of the nodes it asks for.  Returns, for each pass, (the
    nodes whose histograms were requested, in slot order, the nodes split)."""
    passes = []
    while not grower.finished:
        positions = route(rows, grower)
        before = np.array(grower.feature)
        node_to_slot, n_slots = grower.build_request()
        nodes = requested_nodes(node_to_slot, n_slots)
        hist = np.stack([rows.hist(positions == n, k) for n in nodes])
        splits = grower.receive(hist)
        # what receive returns: the splits of this pass, and only those
        newly_split = [n for n in range(len(before)) if before[n] < 0 <= grower.feature[n]]
        got = [] if splits is None else np.flatnonzero(splits[0] >= 0).tolist()
        assert got == newly_split
        if splits is not None:
            for n in got:
                assert (splits[0][n], splits[1][n], splits[3][n], splits[4][n]) == (
                    grower.feature[n], grower.bin[n], grower.left[n], grower.right[n])
        passes.append((nodes, got))
        assert len(passes) < 50
    return passes


# ---------------------------------------------------------------------------------------
# 1. Sibling histograms by subtraction


def two_feature_rows(smaller):
    """Rows whose root split is feature 0 at bin 1 (codes 0,1 | 2,3).  The left child
    has 6 rows and the right child 3; ``smaller`` says which child has the smaller
    hessian sum ("left", "right" or "tie").  Both children split again."""
    mapper = make_mapper([4, 3])
    m = mapper.missing_code  # 4
    codes = [[0, 0], [0, 1], [1, 0], [1, 2], [0, m], [1, 1],   # left: 6 rows
             [2, 0], [3, 2], [3, m]]                         # right: 3 rows
    grad = [-4, -3, -4, 2, 1.5, -3, 6, -2, -1]
    left_h = {"left": 0.25, "right": 1.0, "tie": 0.5}[smaller]   # right: 3 x 1.0
    hess = [left_h] * 6 + [1.0, 1.0, 1.0]
    return Rows(mapper, codes, grad, hess)


def test_a_level_step_numbers_the_trees_slots_one_after_the_other():
    # two trees grown together (K = 2): the second tree's slots follow the first's in
    # the level's node_to_slot; a finished tree asks for none
    from daskboost.level_loop import level_step
    rows = two_feature_rows("left")
    params = make_params(max_depth=3)
    growers = [TreeGrower(rows.mapper, params, np.random.default_rng(0)) for _ in range(3)]
    everything = np.ones(9, bool)
    for grower in growers[:2]:
        grower.receive(rows.hist(everything).copy()[None])
    growers[2].finished = True
    step, counts = level_step(growers, None, rows.mapper)
    assert counts == [1, 1, 0]
    assert step.n_slots == 2
    assert step.node_to_slot.tolist() == [[-1, 0, -1], [-1, 1, -1], [-1, -1, -1]]


@pytest.mark.parametrize("smaller", ["left", "right", "tie"])
def test_builds_the_smaller_hessian_child_and_derives_the_sibling(smaller):
    rows = two_feature_rows(smaller)
    params = make_params(max_depth=3)
    grower = TreeGrower(rows.mapper, params, np.random.default_rng(0))
    everything = np.ones(9, bool)
    node_to_slot, n_slots = grower.build_request()
    assert (node_to_slot.tolist(), n_slots) == ([0], 1)
    root_hist = rows.hist(everything)
    splits = grower.receive(root_hist.copy()[None])
    feature, bin_, default_left, left, right = splits
    assert (feature[0], bin_[0], left[0], right[0]) == (0, 1, 1, 2)
    assert grower.n_nodes == 3 and not grower.finished
    lmask, rmask = everything.copy(), everything.copy()
    lmask[6:], rmask[:6] = False, False
    H_left, H_right = rows.hess[0, lmask].sum(), rows.hess[0, rmask].sum()
    expected = {"left": (1.5, 3.0), "right": (6.0, 3.0), "tie": (3.0, 3.0)}[smaller]
    assert (H_left, H_right) == expected

    # only the child with the smaller hessian sum is built (the left one on a tie),
    # whatever the row counts (the left child has twice the rows)
    built, derived = (1, 2) if smaller in ("left", "tie") else (2, 1)
    node_to_slot, n_slots = grower.build_request()
    assert n_slots == 1
    assert node_to_slot.tolist() == ([-1, 0, -1] if built == 1 else [-1, -1, 0])
    masks = {1: lmask, 2: rmask}
    built_hist = rows.hist(masks[built])
    sent = built_hist.copy()[None]
    splits = grower.receive(sent)
    np.testing.assert_array_equal(sent[0], built_hist)  # the caller's array is left alone
    # the sibling is parent - built child, and (sums being exact) the direct histogram
    # (kept by the grower while the node's own children are to be derived from it)
    assert derived in grower._hists
    np.testing.assert_array_equal(grower._hists[derived], root_hist - built_hist)
    np.testing.assert_array_equal(grower._hists[derived], rows.hist(masks[derived]))

    # the splits equal those found from both children's histograms given directly
    direct = np.stack([rows.hist(lmask), rows.hist(rmask)])
    sums = np.array([[rows.grad[0, m].sum(), rows.hess[0, m].sum()] for m in (lmask, rmask)])
    gain, want_f, want_b, want_dl, _ = find_splits(
        direct, sums, rows.mapper.cell_offsets, np.ones((2, 2), bool),
        params.reg_lambda, 0.0, 0.0, params.min_child_weight, params.gamma)
    assert (want_f >= 0).all()  # both children split
    feature, bin_, default_left, left, right = splits
    np.testing.assert_array_equal(feature[1:3], want_f)
    np.testing.assert_array_equal(bin_[1:3], want_b)
    np.testing.assert_array_equal(default_left[1:3], want_dl)
    np.testing.assert_array_equal(grower.gain[1:3], gain)
    assert grower.n_nodes == 7
    # the rest of the tree, and the whole of it, as the reference finds it
    grow_on_rows(grower, rows)
    assert_same_tree(nested(grower), reference_tree(rows, params))


@pytest.mark.parametrize("seed", range(4))
def test_each_pass_builds_one_child_per_split_and_matches_the_reference(seed):
    rows = random_rows(seed)
    params = make_params(max_depth=4)
    grower = TreeGrower(rows.mapper, params, np.random.default_rng(0))
    passes = grow_on_rows(grower, rows)
    tree = grower.to_tree()
    depth = {0: 0}
    for n in range(tree.n_nodes):
        if tree.feature[n] >= 0:
            depth[tree.left[n]] = depth[tree.right[n]] = depth[n] + 1
    assert passes[0] == ([0], [0])
    for (_, split_before), (built, _) in zip(passes, passes[1:]):
        # each node split in the pass before, unless its children are at max_depth, has
        # exactly one child built: the one with the smaller hessian sum (left on a tie)
        expected = []
        for n in split_before:
            if depth[n] + 1 < params.max_depth:
                small_left = tree.cover[tree.left[n]] <= tree.cover[tree.right[n]]
                expected.append(int(tree.left[n] if small_left else tree.right[n]))
        assert built == sorted(expected)
    assert_same_tree(nested(grower), reference_tree(rows, params))
    assert tree_depth(nested(grower)) == params.max_depth
    assert len(passes) == params.max_depth


def test_a_tree_larger_than_the_first_node_columns_matches_the_reference():
    # the node columns start at 64 nodes and grow as the tree does (``node_columns``):
    # a depth-8 tree has more, and must still be the reference's, node for node
    rows = random_rows(5, n=4000, n_features=6, n_bins=8, missing=0.05)
    params = make_params(max_depth=8)
    grower = TreeGrower(rows.mapper, params, np.random.default_rng(0))
    grow_on_rows(grower, rows)
    assert grower.n_nodes > 64 and grower._nodes.capacity >= grower.n_nodes
    assert_same_tree(nested(grower), reference_tree(rows, params))


# ---------------------------------------------------------------------------------------
# 2. Depthwise growth


def hand_root_hist():
    """Two features of 4 value bins (missing code 4), node sums G = 2, H = 6.

    feature 0: g = [-6, -2, 3, 7], h = [2, 1, 1, 2], no missing rows
    feature 1: g = [-1, 1, 1, -1], h = [1, 1, 1, 1], missing (2, 2)
    """
    mapper = make_mapper([4, 4])
    hist = np.zeros((2, mapper.n_codes, 2))
    hist[0, :4] = [[-6, 2], [-2, 1], [3, 1], [7, 2]]
    hist[1, :5] = [[-1, 1], [1, 1], [1, 1], [-1, 1], [2, 2]]
    return mapper, hist


def xgb_gain(GL, HL, GR, HR, lam):
    return GL ** 2 / (HL + lam) + GR ** 2 / (HR + lam) - (GL + GR) ** 2 / (HL + HR + lam)


def test_root_split_gain_and_leaf_weights_by_hand():
    mapper, hist = hand_root_hist()
    lam, eta = 1.0, 0.3
    params = make_params(max_depth=1, reg_lambda=lam, learning_rate=eta)
    # every candidate by hand: (feature, bin, default_left) -> (GL, HL)
    candidates = {(0, 0, False): (-6, 2), (0, 1, False): (-8, 3), (0, 2, False): (-5, 4),
                  (1, 0, False): (-1, 1), (1, 1, False): (0, 2), (1, 2, False): (1, 3),
                  (1, 3, False): (0, 4),                    # every present value | missing
                  (1, 2, True): (3, 5), (1, 1, True): (2, 4), (1, 0, True): (1, 3)}
    gains = {c: xgb_gain(GL, HL, 2 - GL, 6 - HL, lam) for c, (GL, HL) in candidates.items()}
    best = max(gains, key=gains.get)
    assert best == (0, 1, False)
    assert gains[best] == 64 / 4 + 100 / 4 - 4 / 7
    grower = TreeGrower(mapper, params, np.random.default_rng(0))
    splits = grower.receive(cells(mapper, hist[None]))
    assert [int(a[0]) for a in splits] == [0, 1, 0, 1, 2]
    assert grower.finished  # max_depth=1: the children are leaves, nothing to build
    assert grower.build_request()[1] == 0
    tree = grower.to_tree()
    assert tree.n_nodes == 3
    assert tree.gain[0] == pytest.approx(gains[best], rel=1e-14)
    assert tree.threshold[0] == 1.5  # bin 1 of feature 0: values <= 1.5 go left
    np.testing.assert_array_equal(tree.cover, [6, 3, 3])
    # leaf weights -G / (H + lambda), learning rate included: G_L = -8, G_R = 10
    np.testing.assert_allclose(tree.value, [eta * -2 / 7, eta * 8 / 4, eta * -10 / 4], rtol=1e-14)
    np.testing.assert_array_equal(tree.feature, [0, -1, -1])


def test_root_split_learns_the_missing_direction_by_hand():
    # feature 0 useless (every row in bin 0); feature 1: g = [-2, 1, 2, 2], h = 1 each,
    # and missing rows (g = -3, h = 2) that look like bin 0: they should go left with it
    mapper = make_mapper([4, 4])
    hist = np.zeros((2, mapper.n_codes, 2))
    hist[0, 0] = [0, 6]
    hist[1, :5] = [[-2, 1], [1, 1], [2, 1], [2, 1], [-3, 2]]
    params = make_params(max_depth=1, learning_rate=1.0)
    grower = TreeGrower(mapper, params, np.random.default_rng(0))
    grower.receive(cells(mapper, hist[None]))
    left_sums = {(1, 0, False): (-2, 1), (1, 1, False): (-1, 2), (1, 2, False): (1, 3),
                 (1, 3, False): (3, 4),                   # every present value | missing
                 (1, 2, True): (-2, 5), (1, 1, True): (-4, 4), (1, 0, True): (-5, 3)}
    gains = {c: xgb_gain(GL, HL, 0 - GL, 6 - HL, 1.0) for c, (GL, HL) in left_sums.items()}
    best = max(gains, key=gains.get)
    assert best == (1, 0, True) and gains[best] == 12.5
    tree = grower.to_tree()
    assert (tree.feature[0], tree.threshold[0], tree.default_left[0]) == (1, 0.5, True)
    assert tree.gain[0] == pytest.approx(gains[best], rel=1e-14)
    np.testing.assert_allclose(tree.value, [0.0, 5 / 4, -5 / 4], atol=1e-15)
    np.testing.assert_array_equal(tree.cover, [6, 3, 3])


# reg_lambda=0: a node with H = 0 (a round whose row sample is empty) is a leaf of
# weight 0, as in xgboost (it divided by zero once)
@pytest.mark.parametrize("reg_lambda", [1.0, 0.0])
def test_a_root_without_hessian_is_a_zero_leaf(reg_lambda):
    mapper = make_mapper([3, 3])
    params = make_params(reg_lambda=reg_lambda)
    grower = TreeGrower(mapper, params, np.random.default_rng(0))
    assert grower.receive(np.zeros((1, mapper.cell_offsets[-1], 2))) is None
    assert grower.finished
    tree = grower.to_tree()
    np.testing.assert_array_equal(tree.feature, [-1])
    np.testing.assert_array_equal(tree.value, [0.0])


@pytest.mark.parametrize("max_depth", [1, 2, 3, 5])
def test_max_depth_stops_growth(max_depth):
    rows = random_rows(7, n=200)
    unlimited = reference_tree(rows, make_params(max_depth=12))
    assert tree_depth(unlimited) > 5
    params = make_params(max_depth=max_depth)
    grower = TreeGrower(rows.mapper, params, np.random.default_rng(0))
    passes = grow_on_rows(grower, rows)
    got = nested(grower)
    assert tree_depth(got) == max_depth
    assert len(passes) == max_depth  # the children at max_depth are never built
    assert_same_tree(got, reference_tree(rows, params))
    tree = grower.to_tree()
    # depthwise without a leaf budget: every node above max_depth with a valid split is
    # split (the reference says which have one)
    assert tree.n_leaves == n_leaves(reference_tree(rows, params))


# ---------------------------------------------------------------------------------------
# 3. Lossguide (leaf-wise) growth and the leaf budget


def binary_rows(gradient):
    """Rows over 3 binary features, two of each code combination, h = 1, with the
    gradient ``gradient(f0, f1, f2)``."""
    codes, grad = [], []
    for f0 in (0, 1):
        for f1 in (0, 1):
            for f2 in (0, 1):
                codes += [[f0, f1, f2]] * 2
                grad += [gradient(f0, f1, f2)] * 2
    return Rows(make_mapper([2, 2, 2]), codes, grad, np.ones(len(grad)))


def lossguide_rows():
    """16 rows, 3 binary features, h = 1: the root splits on feature 0; its left child
    (node 1) has a small valid split (gain 8/9), its right child (node 2) a large one
    on feature 2 (gain 248/9), whose left child again a larger one than node 1's."""
    return binary_rows(lambda f0, f1, f2: (6.0 if f2 == 0 else -2.5) if (f0, f1) == (1, 1)
                       else {(0, 0): -1.5, (0, 1): -0.5, (1, 0): 1.0}[f0, f1])


def test_lossguide_splits_the_best_leaf_first():
    rows = lossguide_rows()
    params = make_params(grow_policy="lossguide", max_leaves=4, max_depth=0)
    everything = np.ones(16, bool)
    # the gains, by hand (lambda = 1): root, its children, node 2's left child
    left, right = children_masks(rows, everything, 0, 0, False)
    right_left, _ = children_masks(rows, right, 2, 0, False)
    # root: G_L = -8, G_R = 11 (H 8 each), G = 3
    assert reference_split(rows, everything, params)[:3] == pytest.approx((185 / 9 - 9 / 17, 0, 0))
    # node 1: rows g = -1.5 x4 | -0.5 x4 on feature 1: 36/5 + 4/5 - 64/9
    assert reference_split(rows, left, params)[:3] == pytest.approx((8 - 64 / 9, 1, 0))
    # node 2: g = 1 x2, 6 x2 | 1 x2, -2.5 x2 on feature 2: 196/5 + 9/5 - 121/9
    assert reference_split(rows, right, params)[:3] == pytest.approx((41 - 121 / 9, 2, 0))
    # node 2's left child: 1, 1 | 6, 6 on feature 1: 4/3 + 144/3 - 196/5
    assert reference_split(rows, right_left, params)[:3] == pytest.approx((148 / 3 - 196 / 5, 1, 0))
    assert 148 / 3 - 196 / 5 > 8 - 64 / 9 > 0

    grower = TreeGrower(rows.mapper, params, np.random.default_rng(0))
    passes = grow_on_rows(grower, rows)
    tree = grower.to_tree()
    # root, then node 2 (not node 1, the lower id), then node 2's left child (node 3),
    # whose gain beats node 1's, which waited as a candidate and stays a leaf
    assert [split for _, split in passes if split] == [[0], [2], [3]]
    assert tree.n_leaves == 4
    np.testing.assert_array_equal(tree.feature, [0, -1, 2, 1, -1, -1, -1])
    np.testing.assert_array_equal(tree.left, [1, -1, 3, 5, -1, -1, -1])
    assert tree.depth() == 3
    assert_same_tree(nested(grower), reference_best_first(rows, params, 4))

    # depthwise with the same budget takes both level-1 splits instead
    depthwise = TreeGrower(rows.mapper, make_params(max_leaves=4, max_depth=3),
                           np.random.default_rng(0))
    grow_on_rows(depthwise, rows)
    dtree = depthwise.to_tree()
    assert dtree.n_leaves == 4 and dtree.depth() == 2
    np.testing.assert_array_equal(dtree.feature[:3], [0, 1, 2])


@pytest.mark.parametrize("max_depth", [0, 2])
def test_lossguide_a_waiting_leaf_is_split_later(max_depth):
    # as lossguide_rows, but node 2's children are pure (g = 1 | g = 6): no split there,
    # so node 1, left waiting when node 2 was split, gets the last leaf
    rows = binary_rows(lambda f0, f1, f2: {(0, 0): -1.5, (0, 1): -0.5, (1, 0): 1.0,
                                           (1, 1): 6.0}[f0, f1])
    params = make_params(grow_policy="lossguide", max_leaves=4, max_depth=max_depth)
    everything = np.ones(16, bool)
    left, right = children_masks(rows, everything, 0, 0, False)
    assert reference_split(rows, left, params)[:3] == pytest.approx((8 - 64 / 9, 1, 0))
    # node 2: 1 x4 | 6 x4 on feature 1: 16/5 + 576/5 - 784/9
    assert reference_split(rows, right, params)[:3] == pytest.approx((592 / 5 - 784 / 9, 1, 0))
    grower = TreeGrower(rows.mapper, params, np.random.default_rng(0))
    passes = grow_on_rows(grower, rows)
    tree = grower.to_tree()
    assert tree.n_leaves == 4
    np.testing.assert_array_equal(tree.feature, [0, 1, 1, -1, -1, -1, -1])
    np.testing.assert_array_equal(tree.left, [1, 5, 3, -1, -1, -1, -1])  # 2 split first
    assert_same_tree(nested(grower), reference_best_first(rows, params, 4))
    if max_depth == 2:
        # node 2's children are at max_depth: nothing to build, so the grower chooses
        # again in the same pass and splits node 1 too (one pass fewer)
        assert [split for _, split in passes] == [[0], [1, 2]]
    else:
        assert [split for _, split in passes if split] == [[0], [2], [1]]


@pytest.mark.parametrize("policy", ["lossguide", "depthwise"])
def test_equal_gains_split_the_lower_node_id_first(policy):
    # mirror-image children (g = -3, -1 | 3, 1 on feature 1): equal gains, one leaf left
    rows = binary_rows(lambda f0, f1, f2: (2 * f0 - 1) * (3 - 2 * f1))
    params = make_params(grow_policy=policy, max_leaves=3, max_depth=0 if policy == "lossguide"
                         else 3)
    everything = np.ones(16, bool)
    left, right = children_masks(rows, everything, 0, 0, False)
    assert reference_split(rows, left, params) == reference_split(rows, right, params)
    grower = TreeGrower(rows.mapper, params, np.random.default_rng(0))
    grow_on_rows(grower, rows)
    tree = grower.to_tree()
    np.testing.assert_array_equal(tree.feature, [0, 1, -1, -1, -1])


def reference_depthwise_budget(rows, params, max_leaves):
    """Depthwise growth with a leaf budget: level by level, the level's best splits
    (largest gain first) until the budget is used."""
    root = leaf(rows, np.ones(len(rows.codes), bool), params)
    level, count = [(root, np.ones(len(rows.codes), bool))], 1
    for _ in range(params.max_depth):
        found = [(reference_split(rows, m, params), node, m) for node, m in level]
        found = sorted([t for t in found if t[0][1] >= 0], key=lambda t: -t[0][0])
        level = []
        for (gain, f, b, dl), node, mask in found[:max(0, max_leaves - count)]:
            lmask, rmask = children_masks(rows, mask, f, b, dl)
            node.update(feature=f, bin=b, default_left=dl, gain=gain,
                        left=leaf(rows, lmask, params), right=leaf(rows, rmask, params))
            level += [(node["left"], lmask), (node["right"], rmask)]
            count += 1
    return root


@pytest.mark.parametrize("policy", ["lossguide", "depthwise"])
@pytest.mark.parametrize("max_leaves", [2, 3, 4, 5, 8, 13, 21])
def test_max_leaves_caps_the_leaves_exactly(policy, max_leaves):
    rows = random_rows(11, n=240)
    max_depth = 0 if policy == "lossguide" else 6
    assert n_leaves(reference_tree(rows, make_params(max_depth=8))) >= 2 * max_leaves
    params = make_params(grow_policy=policy, max_leaves=max_leaves, max_depth=max_depth)
    grower = TreeGrower(rows.mapper, params, np.random.default_rng(0))
    grow_on_rows(grower, rows)
    assert grower.to_tree().n_leaves == max_leaves == grower.n_leaves
    if policy == "depthwise":
        assert_same_tree(nested(grower), reference_depthwise_budget(rows, params, max_leaves))
    elif max_leaves <= 5:
        # up to 5 leaves a pass splits one leaf (at most half the remaining budget):
        # exactly leaf-wise order (beyond, a batch of splits per pass, by design)
        assert_same_tree(nested(grower), reference_best_first(rows, params, max_leaves))


def test_lossguide_without_a_budget_grows_the_depthwise_tree():
    rows = random_rows(5)
    params = make_params(grow_policy="lossguide", max_leaves=0, max_depth=3)
    grower = TreeGrower(rows.mapper, params, np.random.default_rng(0))
    grow_on_rows(grower, rows)
    assert_same_tree(nested(grower), reference_tree(rows, params))


# ---------------------------------------------------------------------------------------
# 4. Column sampling


class RecordingRng:
    """A seeded numpy Generator that records each ``choice`` draw: (candidates, drawn)."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.draws = []

    def choice(self, a, size=None, replace=True, **kwargs):
        out = self.rng.choice(a, size=size, replace=replace, **kwargs)
        self.draws.append((sorted(np.asarray(a).tolist()), sorted(np.asarray(out).tolist())))
        return out


def ordered_rows(seed=3, n=240):
    """4 features whose best root splits rank feature 0 > 1 > 2 > 3 (by design: the
    gradient steps by 8, 4, 2, 1 at code 2 of each)."""
    rng = np.random.default_rng(seed)
    mapper = make_mapper([4, 4, 4, 4])
    codes = rng.integers(0, 4, size=(n, 4))
    codes[rng.random(codes.shape) < 0.05] = mapper.missing_code
    present_high = (codes >= 2) & (codes != mapper.missing_code)
    grad = present_high @ np.array([8, 4, 2, 1]) - 7.5 + rng.integers(-8, 9, size=n) / 8
    hess = rng.integers(1, 9, size=n) / 8
    rows = Rows(mapper, codes, grad, hess)
    everything = np.ones(n, bool)
    gains = [reference_split(rows, everything, make_params(), features=[f])[0] for f in range(4)]
    assert gains[0] > gains[1] > gains[2] > gains[3] > 0
    return rows


def node_masks(rows, grower):
    """The rows of every node of the grower's tree."""
    masks = {0: np.ones(len(rows.codes), bool)}
    for n in range(grower.n_nodes):  # a parent's id is below its children's
        if grower.feature[n] >= 0:
            masks[grower.left[n]], masks[grower.right[n]] = children_masks(
                rows, masks[n], grower.feature[n], grower.bin[n], grower.default_left[n])
    return masks


def nodes_by_depth(grower):
    depth = {0: 0}
    for n in range(grower.n_nodes):
        if grower.feature[n] >= 0:
            depth[grower.left[n]] = depth[grower.right[n]] = depth[n] + 1
    return depth


def test_colsample_bytree_splits_only_on_the_tree_sample():
    rows = ordered_rows()
    params = make_params(colsample_bytree=0.5, max_depth=3)
    assert reference_split(rows, np.ones(240, bool), params)[1] == 0  # unsampled best
    excluded_best = 0
    for seed in range(10):
        rng = RecordingRng(seed)
        grower = TreeGrower(rows.mapper, params, rng)
        grow_on_rows(grower, rows)
        # one draw, of int(0.5 * 4) = 2 of the 4 features, when the tree starts
        assert len(rng.draws) == 1
        candidates, sample = rng.draws[0]
        assert candidates == [0, 1, 2, 3] and len(sample) == 2
        used = {f for f in grower.feature if f >= 0}
        assert used <= set(sample)
        assert grower.feature[0] == min(sample)  # the best of the sampled features
        assert_same_tree(nested(grower), reference_tree(rows, params, features=sample))
        if 0 not in sample:  # the best split's feature is excluded: it is not used
            excluded_best += 1
            assert 0 not in used and grower.feature[0] != 0
        # the same seed draws the same columns and grows the same tree
        again = TreeGrower(rows.mapper, params, np.random.default_rng(seed))
        grow_on_rows(again, rows)
        assert_same_tree(nested(again), nested(grower))
    assert excluded_best >= 2  # feature 0, the best split, excluded (and not used)


def test_colsample_bylevel_draws_once_per_depth():
    rows = ordered_rows()
    params = make_params(colsample_bylevel=0.5, max_depth=3)
    per_level_differs = 0
    for seed in range(8):
        rng = RecordingRng(seed)
        grower = TreeGrower(rows.mapper, params, rng)
        grow_on_rows(grower, rows)
        # one draw per depth 0, 1, 2, of 2 of the 4 features, in depth order
        assert len(rng.draws) == 3
        assert all(c == [0, 1, 2, 3] and len(s) == 2 for c, s in rng.draws)
        level_sample = [s for _, s in rng.draws]
        depth = nodes_by_depth(grower)
        masks = node_masks(rows, grower)
        for n in range(grower.n_nodes):
            if depth[n] < params.max_depth:
                want = reference_split(rows, masks[n], params, features=level_sample[depth[n]])
                assert (grower.feature[n], grower.bin[n]) == want[1:3]
        per_level_differs += len({tuple(s) for s in level_sample}) > 1
    assert per_level_differs > 0


def test_colsample_bynode_draws_for_every_node_within_the_level_and_tree_samples():
    rows = ordered_rows()
    # 3 of 4 features per tree, 2 of those per level, 1 of those per node
    params = make_params(colsample_bytree=0.75, colsample_bylevel=0.67,
                         colsample_bynode=0.5, max_depth=3)
    trees = []
    for seed in range(6):
        rng = RecordingRng(seed)
        grower = TreeGrower(rows.mapper, params, rng)
        passes = grow_on_rows(grower, rows)
        # the nodes whose splits are searched, pass by pass: the new nodes in id order
        searched = [[0]]
        for built, _ in passes[1:]:
            siblings = [grower.right[p] if grower.left[p] == n else grower.left[p]
                        for n in built for p in range(grower.n_nodes)
                        if n in (grower.left[p], grower.right[p])]
            searched.append(sorted(built + siblings))
        draws = iter(rng.draws)
        tree_candidates, tree_sample = next(draws)
        assert tree_candidates == [0, 1, 2, 3] and len(tree_sample) == 3
        level_sample = {}
        masks = node_masks(rows, grower)
        depth = nodes_by_depth(grower)
        for nodes in searched:
            for n in nodes:
                if depth[n] not in level_sample:  # the level's draw comes first
                    candidates, level_sample[depth[n]] = next(draws)
                    assert candidates == tree_sample and len(level_sample[depth[n]]) == 2
                candidates, node_sample = next(draws)
                assert candidates == level_sample[depth[n]] and len(node_sample) == 1
                want = reference_split(rows, masks[n], params, features=node_sample)
                assert (grower.feature[n], grower.bin[n]) == want[1:3]
        assert next(draws, None) is None
        trees.append(nested(grower))
    assert any(t != trees[0] for t in trees[1:])  # the seed matters


# ---------------------------------------------------------------------------------------
# 5. gamma (min_split_loss)


def test_gamma_at_the_root_by_hand():
    mapper, hist = hand_root_hist()
    gain = 64 / 4 + 100 / 4 - 4 / 7  # the root's best split (see above), same operations
    for gamma, splits in [(gain, True), (np.nextafter(gain, np.inf), False),
                          (np.nextafter(gain, -np.inf), True), (0.0, True), (1e6, False)]:
        params = make_params(gamma=gamma, max_depth=3, learning_rate=0.3)
        grower = TreeGrower(mapper, params, np.random.default_rng(0))
        result = grower.receive(cells(mapper, hist[None]))
        if splits:
            assert result[0][0] == 0 and grower.n_nodes == 3
            assert grower.to_tree().gain[0] == gain
        else:  # the root stays a leaf: weight -G / (H + lambda) = -2/7
            assert result is None and grower.finished and grower.n_nodes == 1
            tree = grower.to_tree()
            assert tree.n_leaves == 1
            assert tree.value[0] == pytest.approx(0.3 * -2 / 7, rel=1e-15)


def pruned(node, gamma):
    """The tree without the splits whose gain is below gamma (and what is under them)."""
    if "gain" not in node:
        return node
    if node["gain"] < gamma:
        return {"cover": node["cover"], "value": node["value"]}
    return dict(node, left=pruned(node["left"], gamma), right=pruned(node["right"], gamma))


def all_gains(node):
    if "gain" not in node:
        return []
    return [node["gain"]] + all_gains(node["left"]) + all_gains(node["right"])


def test_gamma_prunes_exactly_the_splits_below_it():
    rows = random_rows(21, n=200)
    full = reference_tree(rows, make_params(max_depth=3))
    gains = sorted(all_gains(full))
    assert len(gains) >= 5
    # a split is kept iff its gain >= gamma: try gamma at every other gain and just above
    for gain in gains[::2] + gains[-1:]:
        for gamma in (gain, np.nextafter(gain, np.inf)):
            params = make_params(max_depth=3, gamma=gamma)
            grower = TreeGrower(rows.mapper, params, np.random.default_rng(0))
            grow_on_rows(grower, rows)
            got = nested(grower)
            want = pruned(full, gamma)
            assert_same_tree(got, want)
            assert min(all_gains(got), default=np.inf) >= gamma
            assert n_leaves(got) < n_leaves(full) or gamma == gains[0]


# ---------------------------------------------------------------------------------------
# 6. The level loop (grow_levels, grow_rounds) with a fake reduce_pass


class FakePartitions:
    """Every row in one place, doing what ``partition_step`` does with the histograms
    reduced: at a round's first pass, apply the previous round's last splits, add its
    leaf values to the margins (squared error: new gradients ``margin - target``, h = 1)
    and put every row at the root; at the other passes, apply the step's splits; then
    sum the histograms of the slots the step asks for."""

    def __init__(self, rows, targets=None):
        self.rows = rows
        self.targets = targets
        K = rows.grad.shape[0]
        self.margin = np.zeros((K, len(rows.codes)))
        self.positions = None
        self.steps = []         # (new_tree, round or None, node_to_slot, n_slots) per pass
        self.first_steps = []   # the steps that started a round

    def move(self, positions, splits):
        missing = self.rows.mapper.missing_code
        return np.stack([apply_splits(self.rows.codes, positions[k], [a[k] for a in splits],
                                      missing) for k in range(len(positions))])

    async def reduce_pass(self, step):
        K, width = step.node_to_slot.shape
        splits = step.split_arrays()
        for a in splits:  # the kernels index these by node id unchecked
            assert a.shape == (K, width)
        np.testing.assert_array_equal(step.cell_offsets, self.rows.mapper.cell_offsets)
        assert step.missing_code == self.rows.mapper.missing_code
        if step.new_tree:
            self.first_steps.append(step)
            if step.leaf_values is not None:
                leaves = self.move(self.positions, splits)
                assert leaves.max() < step.leaf_values.shape[1]
                self.margin += np.take_along_axis(step.leaf_values, leaves, axis=1)
            if self.targets is not None:
                self.rows.grad = self.margin - self.targets
                self.rows.hess = np.ones_like(self.margin)
            self.positions = np.zeros(self.margin.shape, dtype=np.int64)
        else:
            self.positions = self.move(self.positions, splits)
        assert self.positions.max() < width
        self.steps.append((step.new_tree, step.round if step.new_tree else None,
                           step.node_to_slot.copy(), step.n_slots))
        hist = np.zeros((step.n_slots, step.cell_offsets[-1], 2))
        for k in range(K):
            slots = step.node_to_slot[k, self.positions[k]]
            for slot in np.unique(slots[slots >= 0]):
                hist[slot] = self.rows.hist(slots == slot, k)
        return hist


def first_fields(round_=0):
    return dict(new_tree=True, leaf_values=None, objective=None, subsample=1.0,
                sample_seed=0, round=round_, trim_threshold=None)


def slots_of_each_tree(node_to_slot, n_slots):
    """Per tree, the nodes of its slots (in slot order) and the slots themselves."""
    out = []
    for row in node_to_slot:
        slots = sorted(int(s) for s in row[row >= 0])
        out.append(([int(np.flatnonzero(row == s)[0]) for s in slots], slots))
    assert sorted(s for _, slots in out for s in slots) == list(range(n_slots))
    return out


def unapplied_splits(grower, positions):
    """The grower's split nodes that the rows at ``positions`` have not gone past."""
    reached = set(np.unique(positions).tolist())
    passed = set()
    for n in range(grower.n_nodes - 1, -1, -1):  # children before parents
        if grower.feature[n] >= 0 and {grower.left[n], grower.right[n]} & reached:
            reached.add(n)
            passed.add(n)
    return [n for n in range(grower.n_nodes) if grower.feature[n] >= 0 and n not in passed]


def pending_nodes(pending, k=0):
    return [] if pending is None else np.flatnonzero(pending[0][k] >= 0).tolist()


@pytest.mark.parametrize("max_leaves", [0, 3])
def test_level_loop_one_tree(max_leaves):
    rows = random_rows(4)
    params = make_params(max_depth=3, max_leaves=max_leaves)
    fake = FakePartitions(rows)
    growers = [TreeGrower(rows.mapper, params, np.random.default_rng(0))]
    growers, pending = run_sync(drive(grow_levels(growers, None, rows.mapper, first_fields()),
                                      fake.reduce_pass))
    # the same tree grown pass by pass without the loop: the same requests
    alone = TreeGrower(rows.mapper, params, np.random.default_rng(0))
    passes = grow_on_rows(alone, rows)
    assert len(fake.steps) == len(passes)
    assert [new for new, *_ in fake.steps] == [True] + [False] * (len(passes) - 1)
    for (_, _, node_to_slot, n_slots), (built, _) in zip(fake.steps, passes):
        [(nodes, slots)] = slots_of_each_tree(node_to_slot, n_slots)
        assert nodes == built and slots == list(range(len(built)))
    assert fake.steps[0][2].tolist() == [[0]] and fake.steps[0][3] == 1
    assert_same_tree(nested(growers[0]), nested(alone))
    if max_leaves:
        assert_same_tree(nested(growers[0]), reference_depthwise_budget(rows, params, 3))
    else:
        assert len(passes) == params.max_depth
        assert_same_tree(nested(growers[0]), reference_tree(rows, params))
    # pending: exactly the splits the passes have not applied to the rows yet (none
    # when the last pass split nothing); applied, they take every row to its leaf
    assert pending_nodes(pending) == unapplied_splits(growers[0], fake.positions[0])
    if max_leaves == 0:  # the last level's splits: nodes at depth 2
        depth = nodes_by_depth(growers[0])
        assert pending_nodes(pending) == [n for n in range(growers[0].n_nodes)
                                          if growers[0].feature[n] >= 0 and depth[n] == 2]
    if pending is not None:
        assert pending[0].shape == (1, growers[0].n_nodes)
    final = fake.positions if pending is None else fake.move(fake.positions, pending)
    np.testing.assert_array_equal(final[0], route(rows, growers[0]))
    assert growers[0]._hists == {}  # none kept once the tree is grown


def test_level_loop_two_trees_one_finishing_early():
    base = random_rows(6)
    codes = base.codes
    # tree 1: g = +1 where feature 0 is 2 or 3, -1 elsewhere (missing too), h = 1: the
    # root splits there and both children are pure (no split has a positive gain)
    high = (codes[:, 0] >= 2) & (codes[:, 0] != base.mapper.missing_code)
    rows = Rows(base.mapper, codes, [base.grad[0], np.where(high, 1.0, -1.0)],
                [base.hess[0], np.ones(len(codes))])
    params = make_params(max_depth=3)
    want = [reference_tree(rows, params, k) for k in range(2)]
    assert tree_depth(want[0]) == 3
    assert (want[1]["feature"], want[1]["bin"], want[1]["default_left"]) == (0, 1, True)
    assert tree_depth(want[1]) == 1
    alone = [TreeGrower(rows.mapper, params, np.random.default_rng(k)) for k in range(2)]
    alone_passes = [grow_on_rows(g, rows, k) for k, g in enumerate(alone)]
    assert [len(p) for p in alone_passes] == [3, 2]

    fake = FakePartitions(rows)
    growers = [TreeGrower(rows.mapper, params, np.random.default_rng(k)) for k in range(2)]
    growers, pending = run_sync(drive(grow_levels(growers, None, rows.mapper, first_fields()),
                                      fake.reduce_pass))
    assert len(fake.steps) == 3
    for p, (_, _, node_to_slot, n_slots) in enumerate(fake.steps):
        per_tree = slots_of_each_tree(node_to_slot, n_slots)
        start = 0
        for k in range(2):
            nodes, slots = per_tree[k]
            built = alone_passes[k][p][0] if p < len(alone_passes[k]) else []
            assert nodes == built  # what each grower asked for, nothing else
            # tree 0's slots first, then tree 1's
            assert slots == list(range(start, start + len(built)))
            start += len(built)
        assert n_slots == start
    assert (fake.steps[2][2][1] == -1).all()  # tree 1 is done after the second pass
    assert fake.steps[2][3] == len(alone_passes[0][2][0])
    for k in range(2):
        assert_same_tree(nested(growers[k]), want[k])
    assert (pending[0][1] == -1).all()  # tree 1's splits were applied in pass 2
    for k in range(2):
        assert pending_nodes(pending, k) == unapplied_splits(growers[k], fake.positions[k])
    np.testing.assert_array_equal(fake.move(fake.positions, pending),
                                  np.stack([route(rows, g) for g in growers]))


class SquaredErrorOutputs:
    """An objective stand-in: grow_rounds only asks it for the number of trees per round
    (the fake partitions compute the squared-error gradients themselves)."""

    def __init__(self, K):
        self.K = K

    def n_outputs(self):
        return self.K


def predict_nested(node, rows, mask=None):
    mask = np.ones(len(rows.codes), bool) if mask is None else mask
    if "feature" not in node:
        return np.where(mask, node["value"], 0.0)
    lmask, rmask = children_masks(rows, mask, node["feature"], node["bin"], node["default_left"])
    return predict_nested(node["left"], rows, lmask) + predict_nested(node["right"], rows, rmask)


@pytest.mark.parametrize("K", [1, 2])
def test_grow_rounds_two_rounds(K):
    base = random_rows(8, K=K)
    rng = np.random.default_rng(1)
    targets = rng.integers(-16, 17, size=(K, len(base.codes))) / 4
    rows = Rows(base.mapper, base.codes, np.zeros_like(targets), np.ones_like(targets))
    seed = 5
    params = make_params(max_depth=3, colsample_bytree=0.5, learning_rate=0.5,
                         random_state=seed)
    fake = FakePartitions(rows, targets)
    loop = grow_rounds(rows.mapper, params, SquaredErrorOutputs(K), range(2), None, None,
                       None)
    grown = run_sync(drive(loop, fake.reduce_pass))
    assert len(grown) == 2 and all(len(growers) == K for growers, _ in grown)

    # the reference: round by round, each tree on its own output's residuals, its
    # columns drawn from default_rng([seed, round, tree]) (2 of 4 features)
    ref_rows = Rows(base.mapper, base.codes, np.zeros_like(targets), np.ones_like(targets))
    margin = np.zeros_like(targets)
    margins = []
    for round_, (growers, pending) in enumerate(grown):
        ref_rows.grad = margin - targets
        for k in range(K):
            sample = np.random.default_rng([seed, round_, k]).choice(np.arange(4), size=2,
                                                                       replace=False)
            want = reference_tree(ref_rows, params, k, features=sample.tolist())
            assert {f for f in growers[k].feature if f >= 0} <= set(sample.tolist())
            assert_same_tree(nested(growers[k]), want, rel=1e-9)
            margin[k] += predict_nested(want, ref_rows)
        margins.append(margin.copy())
    # the partitions hold the first round's trees in their margins (the second round's
    # are added when a third round starts)
    np.testing.assert_allclose(fake.margin, margins[0], rtol=1e-12)

    # passes: each round's first pass starts its trees; a round takes max_depth passes
    # (the trees here all reach max_depth)
    assert [(new, r) for new, r, *_ in fake.steps] == [
        (True, 0), (False, None), (False, None), (True, 1), (False, None), (False, None)]
    first, second = fake.first_steps
    assert first.leaf_values is None
    assert (first.split_feature == -1).all()
    # the second round starts from the first round's trees: their node values, and the
    # first round's last splits (not applied to the rows yet), widened with "not split"
    np.testing.assert_array_equal(second.leaf_values, round_leaf_values(grown[0][0]))
    last = grown[0][1]
    m = last[0].shape[1]
    for got, want in zip(second.split_arrays(), last):
        np.testing.assert_array_equal(got[:, :m], want)
    assert (second.split_feature[:, m:] == -1).all()
    # what each pass built: at a round's first pass the K roots, one slot each, tree
    # by tree; then, for each pair of children of the last level's splits, the one
    # with the smaller hessian sum (the left one on a tie)
    for p, (new, _, node_to_slot, n_slots) in enumerate(fake.steps):
        growers = grown[p // 3][0]
        level = p % 3
        assert new == (level == 0)
        expected = []
        for g in growers:
            depth = nodes_by_depth(g)
            cover = [h for _, h in g.sums]
            expected.append(sorted(
                g.left[n] if cover[g.left[n]] <= cover[g.right[n]] else g.right[n]
                for n in range(g.n_nodes) if g.feature[n] >= 0 and depth[n] == level - 1)
                if level else [0])
        per_tree = slots_of_each_tree(node_to_slot, n_slots)
        assert [nodes for nodes, _ in per_tree] == expected
        assert [slots for _, slots in per_tree] == [
            list(range(sum(map(len, expected[:k])), sum(map(len, expected[:k + 1]))))
            for k in range(K)]


def test_split_search_work_counts_partition_searched_categories_more():
    # the split search's threads are given nodes by this estimate: numeric cells count
    # once, a feature searched by partition (k >= max_cat_to_onehot) more
    from daskboost.grower import (CATEGORY_EXTRA_CELLS, PARTITION_FEATURE_CELLS,
                                  split_search_cells)
    numeric = BinMapper([np.arange(9.0)], {})
    cells = int(numeric.cell_offsets[-1])
    assert split_search_cells(numeric, 4) == cells
    mapper = BinMapper([np.arange(9.0), np.empty(0), np.empty(0)],
                       {1: list("abc"), 2: [f"c{i}" for i in range(40)]})
    total = int(mapper.cell_offsets[-1])
    assert total == cells + 4 + 41  # each category and the missing rows' cell
    # "abc" (3 < 4) is one-vs-rest: counted as its cells; the 40 categories are searched
    assert split_search_cells(mapper, 4) == total + 41 * CATEGORY_EXTRA_CELLS + PARTITION_FEATURE_CELLS
    assert split_search_cells(mapper, 41) == total  # both one-vs-rest
    assert split_search_cells(mapper, 3) == (total + 45 * CATEGORY_EXTRA_CELLS
                                             + 2 * PARTITION_FEATURE_CELLS)
