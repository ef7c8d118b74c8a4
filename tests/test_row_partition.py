"""Rows grouped by node from level to level (``row_partition``): after each level's
splits every node's run holds exactly the rows a row-by-row move puts there, in row
order, on one thread or several; the histograms built from the runs equal the level
pass's, bit for bit; the node ids written at the end are the moves'."""

import dask.array as da
import dask.dataframe as dd
import numba
import numpy as np
import pandas as pd
import pytest

from daskboost import (DaskBoostClassifier, DaskBoostRegressor, TrainingCallback, cv,
                       native_threads, partition, runtime)
from daskboost.histogram import level_pass, new_histograms, part_range
from daskboost.row_partition import (PREFETCH_MIN_BYTES, node_histograms, split_rows, start_rows,
                                     write_positions)

N_FEATURES, MISSING = 4, 15
CELL_OFFSETS = np.arange(0, 17 * (N_FEATURES + 1), 17, dtype=np.int64)  # 16 bins + missing


@numba.njit
def _node_histograms(codes, grad, hess, packed, order, begin, count, node_to_slot, hist,
                     n_threads):
    node_histograms(codes, grad, hess, packed, order, begin, count, node_to_slot, hist,
                    CELL_OFFSETS, 0, n_threads)


def _level_splits(rng, nodes, n_nodes, categorical=False):
    """Random splits of the ``nodes`` (some left unsplit), children numbered from
    ``n_nodes``: the five (1, n_total) split arrays, the new node count and the table
    of right sets (``categorical``: about half the splits are category sets, the
    others numeric on bins 0..15; else None, and numeric splits on bins -1..15)."""
    split = [node for node in nodes if rng.random() < 0.8]
    total = n_nodes + 2 * len(split)
    feature = np.full((1, total), -1, np.int32)
    bins = np.zeros((1, total), np.int32)
    default_left = np.zeros((1, total), np.bool_)
    left = np.zeros((1, total), np.int32)
    right = np.zeros((1, total), np.int32)
    right_sets = []
    for k, node in enumerate(split):
        feature[0, node] = rng.integers(N_FEATURES)
        if categorical and rng.random() < 0.5:
            bins[0, node] = -1 - len(right_sets)
            right_sets.append(rng.random(16) < 0.5)
        else:
            bins[0, node] = rng.integers(0 if categorical else -1, 16)
        default_left[0, node] = rng.random() < 0.5
        left[0, node], right[0, node] = n_nodes + 2 * k, n_nodes + 2 * k + 1
    table = None
    if categorical:
        table = np.array(right_sets, np.bool_).reshape((len(right_sets), 16))
    return (feature, bins, default_left, left, right), total, table


def _runs(n_rows, n_nodes, n_shares):
    order, spare = np.empty(n_rows, np.int32), np.empty(n_rows, np.int32)
    begin, count = (np.empty((n_shares, n_nodes), np.int64) for _ in range(2))
    start_rows(order, begin, count)
    return order, spare, begin, count


def _node_rows(order, begin, count, node):
    """A node's rows: its runs, share after share."""
    return np.concatenate([order[begin[s, node]:begin[s, node] + count[s, node]]
                           for s in range(begin.shape[0])])


@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("n_rows", [1, 5, 3000])
@pytest.mark.parametrize("n_threads,n_shares", [(1, 1), (2, 2), (3, 3), (1, 3), (2, 3)])
def test_runs_hold_each_nodes_rows_in_row_order(n_rows, n_threads, n_shares, categorical):
    """Five levels of random splits (missing values, bin -1, unsplit nodes, empty
    shares; category sets, whose moves read side tables): each node's runs, share after
    share, are the rows whose moved node id is that node, ascending, each share's within
    its own rows; the histograms from the runs equal the level pass's; the ids written
    at the end equal the moves'.  Shares moved on as many threads, or on fewer."""
    _check_runs(n_rows, n_threads, n_shares, categorical)


@pytest.mark.parametrize("quantized", [False, True])
@pytest.mark.parametrize("n_threads,n_shares", [(1, 1), (2, 2)])
def test_runs_of_codes_beyond_a_cores_cache(n_threads, n_shares, quantized):
    """The same with codes of ``PREFETCH_MIN_BYTES``, whose sparse runs the kernels
    prefetch: the same runs, histograms (float and packed) and node ids."""
    _check_runs(PREFETCH_MIN_BYTES // N_FEATURES, n_threads, n_shares, False, quantized)


def _check_runs(n_rows, n_threads, n_shares, categorical, quantized=False):
    rng = np.random.default_rng(n_rows + 7 * n_threads + 100 * categorical)
    codes = rng.integers(0, 16, (n_rows, N_FEATURES)).astype(np.uint8)
    codes[rng.random(codes.shape) < 0.1] = MISSING
    # float64 (a weighted fit's): sums of them in another order differ in their bits
    grad = rng.normal(size=(1, n_rows))
    hess = rng.uniform(0.5, 1.5, (1, n_rows))
    grad[0, rng.random(n_rows) < 0.1] = 0  # rows left out (both 0): in no histogram
    hess[0, grad[0] == 0] = 0
    # packed quantized (g, h) of 16-bit halves (``quantize``), 0 where left out
    packed = None
    if quantized:
        packed = (rng.integers(-2000, 2000, (1, n_rows)) * 65536
                  + rng.integers(1, 100, (1, n_rows))).astype(np.int32)
        packed[grad == 0] = 0
    max_nodes = 2 ** 6
    runs = _runs(n_rows, max_nodes, n_shares)
    shares = [range(*part_range(share, n_shares, n_rows)) for share in range(n_shares)]
    positions = np.zeros((1, n_rows), np.int32)
    nodes, n_nodes = [0], 1
    for _ in range(5):
        splits, n_nodes, table = _level_splits(rng, nodes, n_nodes, categorical)
        children = [int(c) for node in nodes if splits[0][0, node] >= 0
                    for c in (splits[3][0, node], splits[4][0, node])]
        node_to_slot = np.full((1, n_nodes), -1, np.int32)
        for slot, node in enumerate(children[::2]):  # the left children built
            node_to_slot[0, node] = slot
        expected = new_histograms(len(children) // 2, CELL_OFFSETS, quantized)
        level_pass(codes, grad, hess, packed, positions, positions, splits, MISSING,
                   node_to_slot, table, expected, CELL_OFFSETS, 0, 1)
        with native_threads.use(n_threads):
            split_rows(codes, *runs, splits, MISSING, table, n_threads)
        order, _, begin, count = runs
        for node in range(n_nodes):
            if splits[0][0, node] >= 0:
                assert (count[:, node] == 0).all()  # a split node keeps no rows
                continue
            assert np.array_equal(_node_rows(order, begin, count, node),
                                  np.flatnonzero(positions[0] == node)), node
            for share, rows in enumerate(shares):  # each share's run: its own rows,
                first, n = begin[share, node], count[share, node]  # in its own place
                if n:
                    assert rows.start <= first and first + n <= rows.stop
                    assert ((order[first:first + n] >= rows.start)
                            & (order[first:first + n] < rows.stop)).all()
        got = new_histograms(len(children) // 2, CELL_OFFSETS, quantized)
        with native_threads.use(n_threads):
            _node_histograms(codes, grad, hess, packed, order, begin, count, node_to_slot,
                             got, n_threads)
        assert np.array_equal(got, expected)
        nodes = children
    written = np.full((1, n_rows), -1, np.int32)
    write_positions(runs[0], runs[2], runs[3], written)
    assert np.array_equal(written, positions)


def _fit_bytes(tmp_path, name, cls, params, X, y, **fit):
    path = tmp_path / f"{name}.json"
    cls(**params).fit(X, y, **fit).save_model(path)
    return path.read_bytes()


def _frame(n, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "x": rng.normal(size=n),
        "z": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
        "few": pd.Categorical(rng.choice(list("abc"), n)),
        "many": pd.Categorical(rng.choice([f"c{i}" for i in range(30)], n)),
    })
    y = (frame["x"] + (frame["few"] == "b") * 2.0 + frame["many"].cat.codes % 5
         + rng.normal(0, 0.3, n))
    return frame, y.to_numpy()


RUN_CASES = {
    "float": (dict(quantized_grad=False), False),
    "quantized": (dict(quantized_grad=True), False),
    "categorical": (dict(), True),
    "lossguide": (dict(grow_policy="lossguide", max_leaves=12, quantized_grad=False), False),
    "sampled": (dict(subsample=0.7, colsample_bynode=0.7), False),
    "adaptive leaves": (dict(objective="reg:absoluteerror"), False),
}


@pytest.mark.parametrize("case", list(RUN_CASES))
@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize("evaluated", [True, False])
def test_level_passes_with_row_runs_grow_the_same_model(case, partitions, evaluated, tmp_path,
                                                         monkeypatch):
    """The level loop's passes over partitions held whole in memory, one tree a round,
    keep each partition's rows grouped by node (``RowRuns``): the same model, byte
    for byte, as the passes that visit every row; with an eval set on the training
    rows (their margins added from the runs, ahead of the next round), and without
    (the next round's first pass adds the leaf values from the runs)."""
    params, categorical = RUN_CASES[case]
    n = 6000
    if categorical:
        frame, y = _frame(n)
        X = dd.from_pandas(frame, npartitions=partitions)
        y_in = dd.from_pandas(pd.Series(y), npartitions=partitions)
    else:
        rng = np.random.default_rng(1)
        data = rng.normal(size=(n, 5))
        data[rng.random(data.shape) < 0.05] = np.nan
        y = np.nansum(data[:, :2], axis=1) + np.sin(3 * np.nan_to_num(data[:, 2]))
        X = da.from_array(data, chunks=(n // partitions, 5))
        y_in = da.from_array(y, chunks=n // partitions)
    model = dict(n_estimators=8, max_depth=4, learning_rate=0.3, **params)
    monkeypatch.setattr(runtime.Runtime, "grows_in_place", lambda self, states: False)
    used = []
    runs_of = partition.row_runs_of

    def counted(state):
        runs = runs_of(state)
        used.append(runs is not None)
        return runs
    monkeypatch.setattr(partition, "row_runs_of", counted)
    fit = dict(eval_set=[(X, y_in)]) if evaluated else {}
    with_runs = _fit_bytes(tmp_path, "runs", DaskBoostRegressor, model, X, y_in, **fit)
    assert used and all(used)
    monkeypatch.setattr(partition, "row_runs_of", lambda state: None)
    without = _fit_bytes(tmp_path, "rows", DaskBoostRegressor, model, X, y_in, **fit)
    assert with_runs == without


class _KeepFoldModels(TrainingCallback):
    """Keeps ``cv``'s folds' final models."""

    def after_training(self, model):
        self.models = [pack.bst.to_dict() for pack in model.cvfolds]
        return model


@pytest.mark.parametrize("quantized", [True, False])
@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize("task", ["multiclass", "multiclass evaluated", "cv"])
def test_rounds_of_several_trees_keep_each_trees_rows_grouped_by_node(task, partitions,
                                                                     quantized, tmp_path,
                                                                     monkeypatch):
    """A round of K trees (a multiclass fit's 3, a 4-fold ``cv``'s 4) keeps each tree's
    rows grouped by node (``RowRuns`` with one set of runs per tree): the same models,
    byte for byte, and the same ``cv`` frame, as the passes that visit every row of
    every tree; with an eval set on the training rows (their margins added from the
    runs, ahead of the next round) and without (the next round's first pass adds the leaf
    values from the runs)."""
    rng = np.random.default_rng(2)
    n = 4800
    data = rng.normal(size=(n, 5))
    data[rng.random(data.shape) < 0.05] = np.nan
    signal = np.nansum(data[:, :2], axis=1) + np.sin(3 * np.nan_to_num(data[:, 2]))
    X = da.from_array(data, chunks=(n // partitions, 5))
    params = dict(max_depth=4, learning_rate=0.3, quantized_grad=quantized)
    n_trees = []
    runs_of = partition.row_runs_of

    def counted(state):
        runs = runs_of(state)
        n_trees.append(None if runs is None else runs.n_trees)
        return runs

    if task.startswith("multiclass"):
        y = da.from_array(np.digitize(signal, [-0.5, 0.5]), chunks=n // partitions)
        fit = dict(eval_set=[(X, y)]) if task == "multiclass evaluated" else {}

        def models():
            path = tmp_path / "model.json"
            DaskBoostClassifier(n_estimators=6, **params).fit(X, y, **fit).save_model(path)
            return path.read_bytes()
    else:
        y = da.from_array(signal + rng.normal(0, 0.3, n), chunks=n // partitions)

        def models():
            keep = _KeepFoldModels()
            frame = cv(params, X, y, nfold=4, num_boost_round=6, seed=1, callbacks=[keep])
            return frame, keep.models
    monkeypatch.setattr(partition, "row_runs_of", counted)
    with_runs = models()
    assert n_trees and set(n_trees) == {4 if task == "cv" else 3}
    monkeypatch.setattr(partition, "row_runs_of", lambda state: None)
    without = models()
    if task != "cv":
        assert with_runs == without
    else:
        pd.testing.assert_frame_equal(with_runs[0], without[0], rtol=0, atol=0)
        assert with_runs[1] == without[1]
