"""Rows grouped by node from level to level (``row_partition``): after each level's
splits every node's run holds exactly the rows a row-by-row move puts there, in row
order, on one thread or several; the histograms built from the runs equal the level
pass's, bit for bit; the node ids written at the end are the moves'."""

import numba
import numpy as np
import pytest

from daskboost import native_threads
from daskboost.histogram import level_pass, new_histograms
from daskboost.row_partition import node_histograms, split_rows, start_rows, write_positions

N_FEATURES, MISSING = 4, 15
CELL_OFFSETS = np.arange(0, 17 * (N_FEATURES + 1), 17, dtype=np.int64)  # 16 bins + missing


@numba.njit
def _node_histograms(codes, grad, hess, order, begin, count, node_to_slot, hist, n_threads):
    node_histograms(codes, grad, hess, None, order, begin, count, node_to_slot, hist,
                    CELL_OFFSETS, 0, n_threads)


def _level_splits(rng, nodes, n_nodes):
    """Random splits of the ``nodes`` (some left unsplit), children numbered from
    ``n_nodes``: the five (1, n_total) split arrays and the new node count."""
    split = [node for node in nodes if rng.random() < 0.8]
    total = n_nodes + 2 * len(split)
    feature = np.full((1, total), -1, np.int32)
    bins = np.zeros((1, total), np.int32)
    default_left = np.zeros((1, total), np.bool_)
    left = np.zeros((1, total), np.int32)
    right = np.zeros((1, total), np.int32)
    for k, node in enumerate(split):
        feature[0, node] = rng.integers(N_FEATURES)
        bins[0, node] = rng.integers(-1, 16)
        default_left[0, node] = rng.random() < 0.5
        left[0, node], right[0, node] = n_nodes + 2 * k, n_nodes + 2 * k + 1
    return (feature, bins, default_left, left, right), total


def _runs(n_rows, n_nodes, n_threads):
    order, spare_left, spare_right = (np.empty(n_rows, np.int32) for _ in range(3))
    begin, count = np.empty(n_nodes, np.int64), np.empty(n_nodes, np.int64)
    start_rows(order, begin, count)
    return order, spare_left, spare_right, begin, count, np.empty((n_nodes, n_threads), np.int64)


@pytest.mark.parametrize("n_rows", [1, 5, 3000])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_runs_hold_each_nodes_rows_in_row_order(n_rows, n_threads):
    """Five levels of random splits (missing values, bin -1, unsplit nodes, empty
    chunks): each run is the rows whose moved node id is that node, ascending; the
    histograms from the runs equal the level pass's; the ids written at the end equal
    the moves'."""
    rng = np.random.default_rng(n_rows + 7 * n_threads)
    codes = rng.integers(0, 16, (n_rows, N_FEATURES)).astype(np.uint8)
    codes[rng.random(codes.shape) < 0.1] = MISSING
    grad = rng.normal(size=(1, n_rows)).astype(np.float32)
    hess = rng.uniform(0.5, 1.5, (1, n_rows)).astype(np.float32)
    grad[0, rng.random(n_rows) < 0.1] = 0  # rows left out (both 0): in no histogram
    hess[0, grad[0] == 0] = 0
    max_nodes = 2 ** 6
    runs = _runs(n_rows, max_nodes, n_threads)
    positions = np.zeros((1, n_rows), np.int32)
    nodes, n_nodes = [0], 1
    for _ in range(5):
        splits, n_nodes = _level_splits(rng, nodes, n_nodes)
        children = [int(c) for node in nodes if splits[0][0, node] >= 0
                    for c in (splits[3][0, node], splits[4][0, node])]
        node_to_slot = np.full((1, n_nodes), -1, np.int32)
        for slot, node in enumerate(children[::2]):  # the left children built
            node_to_slot[0, node] = slot
        expected = new_histograms(len(children) // 2, CELL_OFFSETS)
        level_pass(codes, grad, hess, None, positions, positions, splits, MISSING,
                   node_to_slot, None, expected, CELL_OFFSETS, 0, 1)
        split_rows(codes, *runs, splits, MISSING, None, n_threads)
        order, _, _, begin, count, _ = runs
        for node in range(n_nodes):
            if splits[0][0, node] >= 0:
                assert count[node] == 0  # a split node keeps no rows
                continue
            run = order[begin[node]:begin[node] + count[node]]
            assert np.array_equal(run, np.flatnonzero(positions[0] == node)), node
        got = new_histograms(len(children) // 2, CELL_OFFSETS)
        with native_threads.use(n_threads):
            _node_histograms(codes, grad, hess, order, begin, count, node_to_slot, got,
                             n_threads)
        assert np.array_equal(got, expected)
        nodes = children
    written = np.full((1, n_rows), -1, np.int32)
    write_positions(runs[0], runs[3], runs[4], written)
    assert np.array_equal(written, positions)
