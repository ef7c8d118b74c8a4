"""Histogram kernel: against a naive reference, and the invariants the grower relies on."""

import numpy as np
import pytest

from daskboost import histogram
from daskboost.histogram import add_histograms, add_histograms_into, add_leaf_values_kernel
from daskboost.partition import no_splits


def build_histograms(codes, grad, hess, positions, f, b, dl, lc, rc, missing_code,
                     node_to_slot, n_slots, n_codes, **kw):
    """``histogram.build_histograms`` where every feature has the codes 0..n_codes-2 and
    the missing code n_codes-1, so its cells are (n_slots, n_features, n_codes, 2)."""
    assert missing_code == n_codes - 1
    offsets = np.arange(codes.shape[1] + 1, dtype=np.int64) * n_codes
    positions, hist = histogram.build_histograms(
        codes, grad, hess, positions, f, b, dl, lc, rc, missing_code, node_to_slot, n_slots,
        offsets, **kw)
    return positions, hist.reshape(n_slots, codes.shape[1], n_codes, 2)


def test_cells_are_feature_after_feature_each_as_wide_as_its_own_bins():
    # feature 0: 2 bins, feature 1: 5 bins (missing code 5 for both): 3 + 6 cells
    codes = np.array([[0, 4], [1, 0], [5, 5], [1, 2]], np.uint8)
    grad = np.array([[1.0, 2.0, 4.0, 8.0]], np.float32)
    offsets = np.array([0, 3, 9], np.int64)
    _, hist = histogram.build_histograms(
        codes, grad, grad, np.zeros((1, 4), np.int32), *no_splits(1, 1), 5,
        np.zeros((1, 1), np.int32), 1, offsets)
    assert hist.shape == (1, 9, 2)
    np.testing.assert_array_equal(hist[0, :, 0], [1, 10, 4, 2, 0, 8, 0, 1, 4])


def naive_histograms(codes, grad, hess, positions, node_to_slot, n_slots, n_codes):
    hist = np.zeros((n_slots, codes.shape[1], n_codes, 2))
    for i in range(codes.shape[0]):
        slot = node_to_slot[positions[i]]
        if slot < 0:
            continue
        for f in range(codes.shape[1]):
            hist[slot, f, codes[i, f], 0] += grad[i]
            hist[slot, f, codes[i, f], 1] += hess[i]
    return hist


def random_block(rng, n_rows=3000, n_features=5, n_codes=9, dtype=np.uint8):
    codes = rng.integers(0, n_codes, size=(n_rows, n_features)).astype(dtype)
    grad = rng.normal(size=n_rows).astype(np.float32)
    hess = rng.uniform(0.1, 1.0, size=n_rows).astype(np.float32)
    return codes, grad, hess


@pytest.mark.parametrize("dtype,n_codes", [(np.uint8, 9), (np.uint8, 256), (np.uint16, 300)])
def test_build_matches_naive_reference(dtype, n_codes):
    rng = np.random.default_rng(0)
    codes, grad, hess = random_block(rng, n_codes=n_codes, dtype=dtype)
    positions = rng.integers(0, 4, size=codes.shape[0]).astype(np.int32)
    node_to_slot = np.array([1, -1, 0, 2], dtype=np.int32)
    _, hist = build_histograms(codes, grad[None], hess[None], positions[None], *no_splits(1, 4),
                               n_codes - 1, node_to_slot[None], 3, n_codes)
    expected = naive_histograms(codes, grad, hess, positions, node_to_slot, 3, n_codes)
    np.testing.assert_allclose(hist, expected, rtol=1e-12, atol=1e-9)


def test_every_feature_sums_to_the_node_totals():
    rng = np.random.default_rng(1)
    codes, grad, hess = random_block(rng)
    positions = np.zeros(codes.shape[0], dtype=np.int32)
    _, hist = build_histograms(codes, grad[None], hess[None], positions[None], *no_splits(1, 3), 8,
                               np.zeros((1, 1), np.int32), 1, 9)
    totals = hist[0].sum(axis=1)  # (n_features, 2)
    np.testing.assert_allclose(totals[:, 0], grad.astype(np.float64).sum(), rtol=1e-12)
    np.testing.assert_allclose(totals[:, 1], hess.astype(np.float64).sum(), rtol=1e-12)


def test_subtraction_equals_building_the_sibling():
    rng = np.random.default_rng(2)
    codes, grad, hess = random_block(rng)
    parent = np.zeros(codes.shape[0], dtype=np.int32)
    g, h = grad[None], hess[None]
    _, parent_hist = build_histograms(codes, g, h, parent[None], *no_splits(1, 3), 8,
                                      np.zeros((1, 3), np.int32), 1, 9)
    # split node 0 on feature 3 at bin 4 into nodes 1 (left) and 2 (right)
    splits = tuple(a[None] for a in (
        np.array([3, -1, -1], np.int32), np.array([4, 0, 0], np.int32),
        np.array([True, False, False]), np.array([1, -1, -1], np.int32),
        np.array([2, -1, -1], np.int32)))
    positions, left = build_histograms(codes, g, h, parent[None], *splits, 8,
                                       np.array([[-1, 0, -1]], np.int32), 1, 9)
    _, right = build_histograms(codes, g, h, positions, *no_splits(1, 3), 8,
                                np.array([[-1, -1, 0]], np.int32), 1, 9)
    np.testing.assert_allclose(parent_hist - left, right, rtol=1e-9, atol=1e-9)


def test_apply_splits_partitions_the_parent():
    rng = np.random.default_rng(3)
    codes, _, _ = random_block(rng, n_codes=9)
    missing_code = 8
    positions = rng.integers(0, 2, size=codes.shape[0]).astype(np.int32)
    # node 0 splits on feature 1 at bin 3 (missing left) into 2/3; node 1 is a leaf
    splits = tuple(a[None] for a in (
        np.array([1, -1, -1, -1], np.int32), np.array([3, 0, 0, 0], np.int32),
        np.array([True, False, False, False]), np.array([2, -1, -1, -1], np.int32),
        np.array([3, -1, -1, -1], np.int32)))
    no_slots = np.full((1, 4), -1, np.int32)
    zeros = np.zeros((1, len(codes)), np.float32)
    new, hist = build_histograms(codes, zeros, zeros, positions[None], *splits, missing_code,
                                 no_slots, 0, 9)
    new = new[0]
    assert hist.shape[0] == 0
    in_parent = positions == 0
    assert set(np.unique(new[in_parent])) <= {2, 3}
    np.testing.assert_array_equal(new[~in_parent], positions[~in_parent])
    code = codes[in_parent, 1]
    expected_left = (code <= 3) | (code == missing_code)
    np.testing.assert_array_equal(new[in_parent] == 2, expected_left)
    assert np.count_nonzero(new == 2) + np.count_nonzero(new == 3) == np.count_nonzero(in_parent)


def test_empty_partition_gives_zero_histograms():
    codes = np.empty((0, 4), dtype=np.uint8)
    empty = np.empty((1, 0), np.float32)
    positions, hist = build_histograms(codes, empty, empty, np.empty((1, 0), np.int32),
                                       *no_splits(1, 3), 5, np.zeros((1, 1), np.int32), 1, 6)
    assert positions.shape == (1, 0)
    assert hist.shape == (1, 4, 6, 2) and not hist.any()


def test_add_leaf_values_moves_rows_to_leaves_then_adds():
    rng = np.random.default_rng(4)
    codes, _, _ = random_block(rng, n_codes=9)
    positions = rng.integers(0, 2, size=codes.shape[0]).astype(np.int32)
    # node 0 is split on feature 2 at bin 5 (missing right) into 2/3; node 1 is a leaf
    splits = tuple(a[None] for a in (
        np.array([2, -1, -1, -1], np.int32), np.array([5, 0, 0, 0], np.int32),
        np.array([False] * 4), np.array([2, -1, -1, -1], np.int32),
        np.array([3, -1, -1, -1], np.int32)))
    leaf_values = np.array([0.0, 0.5, -1.0, 2.0])
    margin = rng.normal(size=codes.shape[0])
    out = np.empty((1, codes.shape[0]))
    add_leaf_values_kernel(codes, positions[None], *splits, 8, leaf_values[None], margin[None],
                           out)
    out = out[0]
    code = codes[:, 2]
    leaf = np.where(positions == 1, 1, np.where((code <= 5) & (code != 8), 2, 3))
    np.testing.assert_array_equal(out, margin + leaf_values[leaf])


def test_in_place_reduction_equals_the_allocating_one():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(2, 3, 4, 5, 2))
    expected = add_histograms(a, b)
    result = add_histograms_into(a.copy(), b)
    np.testing.assert_array_equal(result, expected)


def test_trees_of_a_round_share_one_pass():
    # two trees in one call: histograms and positions equal building each tree alone
    rng = np.random.default_rng(6)
    codes, _, _ = random_block(rng)
    grad = rng.normal(size=(2, len(codes))).astype(np.float32)
    hess = rng.uniform(0.1, 1, size=(2, len(codes))).astype(np.float32)
    positions = rng.integers(0, 2, size=(2, len(codes))).astype(np.int32)
    splits = no_splits(2, 4)
    splits[0][0, 0], splits[1][0, 0], splits[3][0, 0], splits[4][0, 0] = 2, 4, 2, 3
    splits[0][1, 1], splits[1][1, 1], splits[3][1, 1], splits[4][1, 1] = 0, 1, 2, 3
    node_to_slot = np.array([[-1, 0, 1, -1], [2, -1, -1, 3]], np.int32)
    both_positions, both = build_histograms(codes, grad, hess, positions, *splits, 8,
                                            node_to_slot, 4, 9)
    for t, slots in ((0, [0, 1]), (1, [2, 3])):
        one = tuple(a[t:t + 1] for a in splits)
        local = np.where(node_to_slot[t] >= 0, node_to_slot[t] - slots[0], -1)[None]
        pos, alone = build_histograms(codes, grad[t:t + 1], hess[t:t + 1], positions[t:t + 1],
                                      *one, 8, local.astype(np.int32), 2, 9)
        np.testing.assert_array_equal(pos[0], both_positions[t])
        np.testing.assert_array_equal(alone, both[slots[0]:slots[1] + 1])


@pytest.mark.parametrize("categorical", [False, True])
def test_rows_with_zero_gradient_and_hessian_move_but_add_to_no_histogram(categorical):
    # cv's held-out rows and sampled-out rows: the histograms are those of the other
    # rows alone, bit for bit, and every row still moves to its child
    rng = np.random.default_rng(7)
    codes, grad, hess = random_block(rng, n_rows=2000)
    zero = rng.random(2000) < 0.3
    grad[zero], hess[zero] = 0.0, 0.0
    grad[~zero & (rng.random(2000) < 0.1)] = 0.0  # g = 0 alone still counts (h does)
    hess[~zero & (rng.random(2000) < 0.1)] = 0.0  # and h = 0 alone (g does)
    f, b, dl, lc, rc = no_splits(1, 3)
    f[0, 0], b[0, 0], lc[0, 0], rc[0, 0] = 2, 3, 1, 2  # the root splits on feature 2
    kw = {}
    if categorical:  # the same split as a category set: codes 4..8 go right
        b[0, 0] = -1
        kw["cat_table"] = np.array([[False] * 4 + [True] * 5 + [False]])
    node_to_slot = np.array([[-1, 0, 1]], np.int32)

    def build(rows):
        return build_histograms(codes[rows], grad[None, rows], hess[None, rows],
                                np.zeros((1, rows.sum()), np.int32), f, b, dl, lc, rc, 9,
                                node_to_slot, 2, 10, **kw)

    positions, hist = build(np.ones(2000, bool))
    _, without = build(~zero)
    assert np.array_equal(hist.view(np.int64), without.view(np.int64))
    children = np.where(codes[:, 2] <= 3, 1, 2)
    np.testing.assert_array_equal(positions[0], children)
    expected = naive_histograms(codes, grad, hess, children, node_to_slot[0], 2, 10)
    np.testing.assert_allclose(hist, expected, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("uniform", [True, False])
def test_root_kernel_equals_the_general_kernel_at_the_roots(uniform):
    # a round's first pass builds the roots' histograms with a kernel that skips the
    # routing: the same cells bit for bit, rows of zero gradient and hessian left out,
    # a tree whose root is not built (slot -1) untouched
    rng = np.random.default_rng(5)
    n_trees, n_rows = 3, 2500
    codes, _, _ = random_block(rng, n_rows=n_rows, n_features=4, n_codes=40)
    grad = rng.normal(size=(n_trees, n_rows)).astype(np.float32)
    hess = rng.uniform(0.1, 1.0, size=(n_trees, n_rows)).astype(np.float32)
    grad[:, ::7] = 0.0
    hess[:, ::7] = 0.0
    # features of widths 40 each (uniform), or of 10, 20, 40, 40 cells (the missing code
    # 39 is above every feature's bins)
    offsets = (np.arange(5, dtype=np.int64) * 40 if uniform
               else np.array([0, 10, 30, 70, 110], dtype=np.int64))
    width = histogram.uniform_width(offsets) if uniform else 0
    if not uniform:
        codes[:, 0] = np.minimum(codes[:, 0], 8)
        codes[:, 1] = np.minimum(codes[:, 1], 18)
    node_to_slot = np.array([[1], [-1], [0]], dtype=np.int32)
    expected = histogram.new_histograms(2, offsets)
    positions = np.zeros((n_trees, n_rows), np.uint8)
    histogram.accumulate_histograms(codes, grad, hess, positions, *no_splits(n_trees, 1), 39,
                                    node_to_slot, positions.copy(), expected, offsets, width)
    got = histogram.new_histograms(2, offsets)
    histogram.accumulate_root_histograms(codes, grad, hess, node_to_slot[:, 0].copy(), got,
                                         offsets, width)
    assert np.array_equal(got, expected) and np.abs(got).sum() > 0
    assert got[1, :, 0].sum() == pytest.approx(grad[0].sum(dtype=np.float64) * 4)


@pytest.mark.parametrize("threads", [1, 2])
def test_rows_cells_give_the_codes_sums(threads):
    # features of 10, 20, 40 and 40 cells, the missing code 39 above the narrow ones'
    # bins: each row's cells (``cells_of``) added with ``cell_offsets=None`` give the
    # same sums, bit for bit, as the codes, float and packed, on one thread and two
    rng = np.random.default_rng(11)
    n_rows = 3000
    codes, _, _ = random_block(rng, n_rows=n_rows, n_features=4, n_codes=40)
    codes[:, 0] = np.where(codes[:, 0] == 39, 39, np.minimum(codes[:, 0], 8))
    codes[:, 1] = np.where(codes[:, 1] == 39, 39, np.minimum(codes[:, 1], 18))
    offsets = np.array([0, 10, 30, 70, 110], dtype=np.int64)
    cells = histogram.cells_of(codes, offsets)
    assert cells.dtype == np.uint16 and (codes == 39).any()
    assert (cells[codes[:, 0] == 39, 0] == 9).all()  # the missing code: the last cell
    grad = rng.normal(size=(1, n_rows)).astype(np.float32)
    hess = rng.uniform(0.1, 1.0, size=(1, n_rows)).astype(np.float32)
    packed = rng.integers(-2 ** 20, 2 ** 20, size=(1, n_rows)).astype(np.int64)
    slots = rng.integers(-1, 3, size=(1, n_rows)).astype(np.int32)
    for quantized in (False, True):
        args = (None, packed) if quantized else (None, None)
        g, h = (None, None) if quantized else (grad, hess)
        expected = histogram.new_histograms(3, offsets, quantized)
        histogram.add_rows(codes, g, h, args[1], slots, expected, offsets, 0, threads)
        got = histogram.new_histograms(3, offsets, quantized)
        histogram.add_rows(cells, g, h, args[1], slots, got, None, 0, threads)
        assert np.array_equal(got, expected) and np.abs(expected).sum() > 0


def test_cells_are_not_made_past_two_bytes():
    offsets = np.array([0, 2 ** 15, 2 ** 16 + 1], dtype=np.int64)
    assert histogram.cells_of(np.zeros((3, 2), np.uint16), offsets) is None
