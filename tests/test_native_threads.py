"""Kernels on native threads (``native_threads``): the same sums and the same splits as
the one-thread kernels, bit for bit, so the same models with or without them."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from daskboost import histogram, native_threads, splitting
from daskboost.partition import no_splits

needs_native = pytest.mark.skipif(not native_threads.available(),
                                  reason="numba has no OpenMP/TBB threading layer here")


def _tree_level(rng, n_trees, n_rows, n_features, n_codes):
    """A level of ``n_trees`` trees: rows at nodes 1..2 of each tree, both split (one
    on a categorical-style or a bin -1 split when asked), slots for some children."""
    codes = rng.integers(0, n_codes, size=(n_rows, n_features)).astype(np.uint8)
    codes[rng.random((n_rows, n_features)) < 0.1] = n_codes - 1  # the missing code
    positions = rng.integers(1, 3, size=(n_trees, n_rows)).astype(np.uint8)
    f, b, dl, lc, rc = no_splits(n_trees, 7)
    f[:, 1:3] = rng.integers(0, n_features, size=(n_trees, 2))
    b[:, 1:3] = rng.integers(0, n_codes - 2, size=(n_trees, 2))
    dl[:, 1] = True
    lc[:, 1:3], rc[:, 1:3] = [3, 5], [4, 6]
    node_to_slot = np.full((n_trees, 7), -1, np.int32)
    for t in range(n_trees):  # slots numbered across the trees
        node_to_slot[t, [3, 6]] = [2 * t, 2 * t + 1]
    grad = rng.normal(size=(n_trees, n_rows)).astype(np.float32)
    hess = rng.uniform(0.1, 1.0, size=(n_trees, n_rows)).astype(np.float32)
    grad[:, ::5] = hess[:, ::5] = 0.0  # rows left out (sampled out, a cv fold's)
    return codes, positions, (f, b, dl, lc, rc), node_to_slot, grad, hess


def _pass(codes, positions, splits, node_to_slot, grad, hess, offsets, width, n_threads,
          cat_table=None, packed=None):
    hist = histogram.new_histograms(node_to_slot.max() + 1, offsets, packed is not None)
    new_positions = np.empty_like(positions)
    with native_threads.use(n_threads):
        histogram.add_block_histograms(hist, codes, grad, hess, positions, new_positions,
                                       splits, 255 if codes.max() > 40 else 39,
                                       node_to_slot, offsets, width, cat_table, packed)
    return new_positions, hist


@needs_native
@pytest.mark.parametrize("uniform", [True, False])
@pytest.mark.parametrize("kind", ["float", "packed", "categorical", "bin -1",
                                  "packed bin -1"])
def test_level_pass_on_native_threads_equals_the_one_thread_kernels(uniform, kind):
    rng = np.random.default_rng(3)
    n_codes = 40
    codes, positions, splits, node_to_slot, grad, hess = _tree_level(rng, 3, 5000, 7,
                                                                     n_codes)
    offsets = (np.arange(8, dtype=np.int64) * n_codes if uniform
               else np.array([0, 10, 30, 70, 110, 150, 190, 230], dtype=np.int64))
    if not uniform:
        codes[:, 0] = np.where(codes[:, 0] == 39, 39, np.minimum(codes[:, 0], 8))
        codes[:, 1] = np.where(codes[:, 1] == 39, 39, np.minimum(codes[:, 1], 18))
    width = histogram.uniform_width(offsets)
    cat_table = packed = None
    if kind == "categorical":  # node 2 of each tree splits on a category set
        splits[1][:, 2] = -1
        cat_table = rng.random((1, n_codes)) < 0.5
    if kind.endswith("bin -1"):  # a monotone split: missing rows left, every value right
        splits[1][:, 1] = -1
    if kind.startswith("packed"):
        packed = (rng.integers(0, 1000, size=grad.shape) << 32) + rng.integers(0, 9, grad.shape)
        packed[:, ::5] = 0
    one = _pass(codes, positions, splits, node_to_slot, grad, hess, offsets, width, 1,
                cat_table, packed)
    two = _pass(codes, positions, splits, node_to_slot, grad, hess, offsets, width, 2,
                cat_table, packed)
    np.testing.assert_array_equal(one[0], two[0])
    assert np.array_equal(one[1].view(np.int64), two[1].view(np.int64))
    assert np.abs(one[1]).sum() > 0
    if kind.endswith("bin -1"):  # every row with a value goes right at node 1
        at_1 = positions == 1
        present = np.stack([codes[:, f] != 39 for f in splits[0][:, 1]])
        assert (one[0][at_1 & present] == 4).all()
        assert (one[0][at_1 & ~present] == 3).all()


@pytest.mark.parametrize("packed_gradients", [False, True])
def test_a_categorical_level_on_one_thread_in_two_phases_equals_the_fused_kernel(
        packed_gradients):
    # on one thread a model with categorical features routes all rows, then adds them
    # (faster than the fused kernel's category test): the same positions and sums
    rng = np.random.default_rng(6)
    n_codes = 40
    codes, positions, splits, node_to_slot, grad, hess = _tree_level(rng, 2, 3000, 5,
                                                                     n_codes)
    splits[1][:, 2] = -1  # node 2 of each tree splits on a category set
    cat_table = rng.random((1, n_codes)) < 0.5
    offsets = np.arange(6, dtype=np.int64) * n_codes
    packed = None
    if packed_gradients:
        packed = (rng.integers(0, 1000, size=grad.shape) << 32) + rng.integers(0, 9, grad.shape)
        packed[:, ::5] = 0
    n_slots = node_to_slot.max() + 1
    expected = histogram.new_histograms(n_slots, offsets, packed_gradients)
    expected_positions = np.empty_like(positions)
    moves = (positions, *splits, 39, node_to_slot, expected_positions, expected, offsets,
             n_codes, cat_table)
    if packed_gradients:
        histogram.accumulate_packed_histograms(codes, packed, *moves)
    else:
        histogram.accumulate_histograms(codes, grad, hess, *moves)
    got_positions, got = _pass(codes, positions, splits, node_to_slot, grad, hess, offsets,
                               n_codes, 1, cat_table, packed)
    np.testing.assert_array_equal(got_positions, expected_positions)
    assert np.array_equal(got.view(np.int64), expected.view(np.int64))
    assert np.abs(expected).sum() > 0


@needs_native
@pytest.mark.parametrize("root_slots", [[1, 0], [-1, 0]], ids=["two-roots", "one-unbuilt"])
@pytest.mark.parametrize("layout", ["uniform", "cells"])
def test_root_histograms_on_native_threads_equal_the_one_thread_kernel(root_slots, layout):
    # every feature 40 cells wide, or each row's cells precomputed (``cells_of``, the
    # in-place fits' layout); a tree whose root has no slot adds nothing
    rng = np.random.default_rng(4)
    codes, _, _, _, grad, hess = _tree_level(rng, 2, 6000, 9, 40)
    offsets = np.arange(10, dtype=np.int64) * 40
    added, added_offsets, width = codes, offsets, 40
    if layout == "cells":
        added, added_offsets, width = histogram.cells_of(codes, offsets), None, 0
    root_slots = np.array(root_slots, np.int32)
    expected = histogram.new_histograms(2, offsets)
    histogram.accumulate_root_histograms(added, grad, hess, root_slots, expected,
                                         added_offsets, width)
    got = histogram.new_histograms(2, offsets)
    with native_threads.use(2):
        histogram.add_root_histograms(got, added, grad, hess, root_slots, added_offsets, width)
    assert np.array_equal(got.view(np.int64), expected.view(np.int64))
    assert np.abs(expected[root_slots[root_slots >= 0]]).sum() > 0
    assert not expected[[s for s in range(2) if s not in root_slots]].any()


@needs_native
@pytest.mark.parametrize("categorical", [False, True])
def test_leaf_values_added_on_native_threads_equal_the_one_thread_kernel(categorical):
    # a round's trees added to the margins (a round's first pass), rows spread over the
    # threads: every row's margin as the one-thread kernel makes it
    rng = np.random.default_rng(5)
    codes, positions, splits, _, _, _ = _tree_level(rng, 3, 6001, 7, 40)
    cat_table = None
    if categorical:  # node 2 of each tree splits on a category set
        splits[1][:, 2] = -1
        cat_table = rng.random((1, 40)) < 0.5
    leaf_values = rng.normal(size=(3, 7))
    margin = rng.normal(size=positions.shape)
    expected = np.empty_like(margin)
    histogram.add_leaf_values_kernel(codes, positions, *splits, 39, leaf_values, margin,
                                     expected, cat_table)
    got = margin.copy()  # in place, as a fit's first pass adds them
    with native_threads.use(2):
        histogram.add_leaf_values(codes, positions, *splits, 39, leaf_values, got, got,
                                  cat_table)
    assert np.array_equal(got, expected)
    assert not np.array_equal(got, margin)


@needs_native
@pytest.mark.parametrize("n_nodes", [1, 9])
@pytest.mark.parametrize("reg", [
    (1.0, 0.2, 0.0, 0.5, 0.0),  # lambda, alpha, max_delta_step, min weight, gamma
    (1.0, 0.0, 0.0, 0.5, 6.0),  # no L1 (the vectorised scan); gamma rejects some splits
], ids=["l1", "gamma"])
@pytest.mark.parametrize("kernel", ["numeric", "monotone", "categorical"])
def test_split_search_on_native_threads_finds_the_same_splits(kernel, reg, n_nodes):
    # one node and several; L1's scan and the vectorised one; splits that gamma turns
    # down keep their gain and sums, as the one-thread search leaves them
    rng = np.random.default_rng(6)
    offsets = np.array([0, 12, 30, 41, 60], dtype=np.int64)
    hists = rng.normal(size=(9, 60, 2))
    hists[..., 1] = np.abs(hists[..., 1])
    sums = hists[:, :12].sum(axis=1)
    masks = rng.random((9, 4)) < 0.8
    masks[0] = True
    hists, sums, masks = hists[:n_nodes], sums[:n_nodes], masks[:n_nodes]
    if kernel == "numeric":
        args = (hists, sums, offsets, masks, *reg)
        pair = splitting.find_splits, splitting.find_splits_parallel
    elif kernel == "monotone":
        bounds = np.tile([-0.4, 0.4], (9, 1))
        args = (hists, sums, bounds, offsets, masks, np.array([1, -1, 0, 1], np.int8), *reg)
        pair = splitting.find_splits_monotone, splitting.find_splits_monotone_parallel
    else:
        is_categorical = np.array([False, True, False, True])
        args = (hists, sums, offsets, 19, masks, is_categorical, *reg, 4, 64)
        pair = splitting.find_splits_categorical, splitting.find_splits_categorical_parallel
    one = pair[0](*args)
    with native_threads.use(2):
        two = pair[1](*args, *(() if kernel == "monotone" else (2,)))  # (its threads)
    assert (one[1] >= 0).sum() >= min(n_nodes, 3)  # some nodes split
    if reg[4] > 0 and n_nodes > 1:  # and gamma turned some candidates down
        assert ((one[1] < 0) & (one[0] > 0)).any()
    if kernel == "categorical" and n_nodes > 1:  # categorical splits among them
        assert is_categorical[one[1][one[1] >= 0]].any() and one[5].any()
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


FIT_SCRIPT = """
import json, sys
import numpy as np, pandas as pd
from daskboost import DaskBoostClassifier, DaskBoostRegressor
rng = np.random.default_rng(0)
X = rng.normal(size=(12000, 6)).astype(np.float32)
X[rng.random(X.shape) < 0.05] = np.nan
y = (np.nan_to_num(X[:, 0]) + X[:, 1] ** 2 + rng.normal(size=12000) > 1).astype(int)
frame = pd.DataFrame(X, columns=list("abcdef"))
frame["c"] = pd.Categorical(rng.choice(list("pqrstuvw"), 12000))
out = []
for model, data, target in [
        (DaskBoostClassifier(n_estimators=8, max_depth=5), X, y),
        (DaskBoostClassifier(n_estimators=8, quantized_grad=True), X, y),
        (DaskBoostClassifier(n_estimators=6, subsample=0.7, colsample_bynode=0.6), frame, y),
        (DaskBoostClassifier(n_estimators=4, max_depth=3), X, rng.integers(0, 4, 12000)),
        (DaskBoostRegressor(n_estimators=6, monotone_constraints=(1, -1, 0, 0, 0, 0)),
         X, np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]))]:
    out.append(json.dumps(model.fit(data, target).get_booster().to_dict(), sort_keys=True))
print(json.dumps(out))
"""


@needs_native
def test_models_are_the_same_with_and_without_native_threads():
    # (separate processes: whether kernels may take native threads is read from the
    # environment, and numba picks its threading layer once a process)
    def fit(native):
        env = dict(os.environ, DASKBOOST_NATIVE_THREADS=native)
        done = subprocess.run([sys.executable, "-c", FIT_SCRIPT], env=env, check=True,
                              capture_output=True, text=True)
        return json.loads(done.stdout)

    with_threads, without = fit("1"), fit("0")
    assert len(with_threads) == 5
    for a, b in zip(with_threads, without):
        assert a == b


def test_environment_and_fork_switch_native_threads_off(monkeypatch):
    script = "from daskboost import native_threads as n; print(n.available())"
    env = dict(os.environ, DASKBOOST_NATIVE_THREADS="0")
    done = subprocess.run([sys.executable, "-c", script], env=env, check=True,
                          capture_output=True, text=True)
    assert done.stdout.strip() == "False"
    monkeypatch.setattr(native_threads, "_switched_off", True)
    assert not native_threads.available()
    with native_threads.use(2) as n:
        assert n == 1 and native_threads.threads() == 1
    monkeypatch.setattr(native_threads, "_switched_off", False)
    monkeypatch.setattr(native_threads, "_forked", False)
    native_threads._after_fork_in_child()
    assert native_threads._forked and not native_threads.available()
