"""Tree arrays: the prediction kernel against a plain traversal; serialisation."""

import json

import numpy as np
import pytest

from daskboost.model_file import parse_trees
from daskboost.tree import PackedForest, Tree


def small_tree():
    # node 0: x0 <= 0.5 (missing left) -> 1 else 2; node 2: x1 <= inf (missing right) -> 3/4
    return Tree(
        feature=np.array([0, -1, 1, -1, -1], np.int32),
        threshold=np.array([0.5, 0.0, np.inf, 0.0, 0.0]),
        default_left=np.array([True, False, False, False, False]),
        left=np.array([1, -1, 3, -1, -1], np.int32),
        right=np.array([2, -1, 4, -1, -1], np.int32),
        value=np.array([0.0, -1.0, 0.0, 2.0, 3.0]),
        gain=np.array([5.0, 0, 1.0, 0, 0]),
        cover=np.array([10.0, 4, 6, 5, 1]),
    )


def traverse(tree, row):
    node = 0
    while tree.feature[node] >= 0:
        v = row[tree.feature[node]]
        left = tree.default_left[node] if np.isnan(v) else v <= tree.threshold[node]
        node = tree.left[node] if left else tree.right[node]
    return tree.value[node]


def test_kernel_matches_plain_traversal():
    tree = small_tree()
    X = np.array([[0.0, 1.0], [0.5, np.nan], [np.nan, 0.0], [1.0, np.inf], [1.0, np.nan],
                  [-np.inf, 0.0], [np.inf, -np.inf]])
    margin = np.zeros((1, len(X)))
    PackedForest([tree, tree]).add_margin(X, margin)
    expected = [2 * traverse(tree, row) for row in X]
    np.testing.assert_array_equal(margin[0], expected)
    np.testing.assert_array_equal(margin[0], [-2, -2, -2, 4, 6, -2, 4])


def test_kernel_over_blocks_of_rows_and_trees_of_any_depth_in_float32_and_float64():
    # 200 rows (blocks of 64 and a partial one), a stump, a depth-2 tree and a single
    # leaf moving down together level by level; float32 rows give the float64 answer
    rng = np.random.default_rng(0)
    stump = Tree(feature=np.array([1, -1, -1], np.int32), threshold=np.array([0.25, 0, 0]),
                 default_left=np.array([False, False, False]),
                 left=np.array([1, -1, -1], np.int32), right=np.array([2, -1, -1], np.int32),
                 value=np.array([0.0, 0.5, -0.5]), gain=np.zeros(3), cover=np.ones(3))
    leaf = Tree(feature=np.array([-1], np.int32), threshold=np.zeros(1),
                default_left=np.zeros(1, bool), left=np.array([-1], np.int32),
                right=np.array([-1], np.int32), value=np.array([7.0]), gain=np.zeros(1),
                cover=np.ones(1))
    trees = [small_tree(), stump, leaf, small_tree()]
    X = rng.standard_normal((200, 2)).astype(np.float32)
    X[rng.random(X.shape) < 0.2] = np.nan
    expected = [sum(traverse(t, row.astype(np.float64)) for t in trees) for row in X]
    for dtype in (np.float32, np.float64):
        margin = np.zeros((1, len(X)))
        PackedForest(trees).add_margin(X.astype(dtype), margin)
        np.testing.assert_array_equal(margin[0], expected)


def test_children_numbered_any_way_predict_the_same():
    # right = left + 1 (trees grown here) takes the packed kernel; a model file may number
    # children otherwise (here node 0's children swapped in the arrays): the general one
    tree = small_tree()
    swapped = Tree(feature=np.array([0, 1, -1, -1, -1], np.int32),
                   threshold=np.array([0.5, np.inf, 0.0, 0.0, 0.0]),
                   default_left=np.array([True, False, False, False, False]),
                   left=np.array([2, 3, -1, -1, -1], np.int32),
                   right=np.array([1, 4, -1, -1, -1], np.int32),
                   value=np.array([0.0, 0.0, -1.0, 2.0, 3.0]), gain=np.zeros(5),
                   cover=np.ones(5))
    assert PackedForest([tree]).node_info is not None
    assert PackedForest([swapped]).node_info is None
    X = np.array([[0.0, 1.0], [0.5, np.nan], [np.nan, 0.0], [1.0, np.inf], [1.0, np.nan],
                  [-np.inf, 0.0], [np.inf, -np.inf]])
    for forest_tree in (tree, swapped):
        margin = np.zeros((1, len(X)))
        PackedForest([forest_tree]).add_margin(X, margin)
        np.testing.assert_array_equal(margin[0], [traverse(tree, row) for row in X])


def test_trees_add_to_their_output():
    # with 2 outputs, trees 0, 2, ... add to output 0 and trees 1, 3, ... to output 1
    tree = small_tree()
    X = np.array([[0.0, 1.0], [1.0, np.nan]])
    margin = np.zeros((2, len(X)))
    PackedForest([tree, tree, tree], n_outputs=2).add_margin(X, margin)
    single = np.array([traverse(tree, row) for row in X])
    np.testing.assert_array_equal(margin, [2 * single, single])


def test_binned_traversal_equals_raw_thresholds():
    from daskboost.binning import BinMapper
    from daskboost.tree import add_binned_tree_outputs
    rng = np.random.default_rng(0)
    mapper = BinMapper([np.array([-0.5, 0.5, 1.0]), np.array([0.0, 2.0])])
    X = rng.normal(size=(200, 2))
    X[rng.random(X.shape) < 0.2] = np.nan
    # node 0: feature 0, bin 1 (x <= 0.5), missing left; node 2: feature 1, last bin (+inf)
    feature = np.array([[0, -1, 1, -1, -1]], np.int32)
    bins = np.array([[1, -1, 2, -1, -1]], np.int32)
    default_left = np.array([[True, False, False, False, False]])
    left = np.array([[1, -1, 3, -1, -1]], np.int32)
    right = np.array([[2, -1, 4, -1, -1]], np.int32)
    value = np.array([[0.0, -1.0, 0.0, 2.0, 3.0]])
    binned = add_binned_tree_outputs(mapper.transform(X), feature, bins, default_left, left,
                                     right, value, mapper.missing_code, np.zeros((1, 200)))
    tree = small_tree()
    raw = np.zeros((1, 200))
    PackedForest([tree]).add_margin(X, raw)
    np.testing.assert_array_equal(binned, raw)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_binned_walk_in_row_groups_and_on_threads_equals_the_row_by_row_walk(n_threads):
    # rows walk the trees eight at a time, spread over native threads from 4,096 rows:
    # the outputs are those of each row walked alone (the raw-value predictor), for a
    # row count that is not a multiple of the group, leaves at several depths, missing
    # values and two trees adding to two outputs
    from daskboost import native_threads
    from daskboost.binning import BinMapper
    from daskboost.tree import PARALLEL_WALK_MIN_ROWS, WALK_GROUP_ROWS, add_binned_tree_outputs
    rng = np.random.default_rng(1)
    n = PARALLEL_WALK_MIN_ROWS + 3 * WALK_GROUP_ROWS + 5
    mapper = BinMapper([np.array([-0.5, 0.5, 1.0]), np.array([0.0, 2.0])])
    X = rng.normal(size=(n, 2))
    X[rng.random(X.shape) < 0.2] = np.nan
    feature = np.array([[0, -1, 1, -1, -1]] * 2, np.int32)
    bins = np.array([[1, -1, 2, -1, -1], [0, -1, 0, -1, -1]], np.int32)
    default_left = np.array([[True, False, False, False, False],
                             [False, False, True, False, False]])
    left = np.array([[1, -1, 3, -1, -1]] * 2, np.int32)
    right = np.array([[2, -1, 4, -1, -1]] * 2, np.int32)
    value = np.array([[0.0, -1.0, 0.0, 2.0, 3.0], [0.0, 5.0, 0.0, 7.0, 11.0]])
    start = rng.normal(size=(2, n))
    with native_threads.use(n_threads):
        binned = add_binned_tree_outputs(mapper.transform(X), feature, bins, default_left,
                                         left, right, value, mapper.missing_code, start)
    codes = mapper.transform(X)
    expected = start.copy()
    for t in range(2):
        for i in range(n):
            node = 0
            while feature[t, node] >= 0:
                code = codes[i, feature[t, node]]
                go_left = (default_left[t, node] if code == mapper.missing_code
                           else code <= bins[t, node])
                node = left[t, node] if go_left else right[t, node]
            expected[t, i] += value[t, node]
    np.testing.assert_array_equal(binned, expected)


def test_empty_forest_adds_nothing():
    margin = np.ones((1, 3))
    PackedForest([]).add_margin(np.zeros((3, 2)), margin)
    np.testing.assert_array_equal(margin, 1.0)


def test_round_trip_through_standard_json():
    tree = small_tree()
    text = json.dumps(tree.to_dict(), allow_nan=False)
    back, = parse_trees([json.loads(text)], "model")
    for name in ("feature", "threshold", "default_left", "left", "right", "value", "gain", "cover"):
        np.testing.assert_array_equal(getattr(back, name), getattr(tree, name))
        assert getattr(back, name).dtype == getattr(tree, name).dtype
    assert tree.depth() == 2 and tree.n_leaves == 3
