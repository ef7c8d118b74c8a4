"""Quantile losses re-estimate each leaf as a weighted quantile of its rows' residuals.

Friedman's LAD regression (and quantile regression likewise): after a tree is grown,
each leaf's value is the weighted median (alpha-quantile) of ``y - margin`` over the
leaf's rows, computed from per-partition quantile sketches merged per leaf.  With fewer
distinct residuals per leaf than the sketch holds, the sketch is exact, and the leaf
value v must satisfy W(r < v) <= q W <= W(r <= v) over the leaf's rows.
"""

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost import DaskBoostRegressor


def data(seed=0, n=3000):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 8, size=(n, 4)).astype(np.float64)
    y = np.sin(X[:, 0]) + 0.4 * X[:, 1] + rng.standard_t(2, n)
    X[rng.random(X.shape) < 0.1] = np.nan
    # labels are kept as float32 in training (as in xgboost): use float32-exact labels
    return X, y.astype(np.float32).astype(np.float64), rng.uniform(0.2, 3.0, n)


def leaf_of_each_row(tree, X):
    out = np.empty(len(X), dtype=np.int64)
    for i, row in enumerate(X):
        node = 0
        while tree.feature[node] >= 0:
            v = row[tree.feature[node]]
            left = tree.default_left[node] if np.isnan(v) else v <= tree.threshold[node]
            node = tree.left[node] if left else tree.right[node]
        out[i] = node
    return out


@pytest.mark.parametrize("objective,q", [("reg:absoluteerror", 0.5), ("reg:quantileerror", 0.2),
                                         ("reg:quantileerror", 0.9)])
@pytest.mark.parametrize("weighted", [False, True])
def test_each_leaf_is_a_weighted_quantile_of_its_residuals(objective, q, weighted):
    X, y, w = data()
    w = w if weighted else np.ones(len(y))
    model = DaskBoostRegressor(objective=objective, quantile_alpha=q, n_estimators=1,
                               max_depth=3, learning_rate=1.0)
    model.fit(X, y, sample_weight=w if weighted else None)
    booster = model.get_booster()
    tree = booster.trees[0]
    residual = y - booster.base_margin[0]
    leaves = leaf_of_each_row(tree, X)
    assert len(np.unique(leaves)) > 2
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        r, wr = residual[rows], w[rows]
        v = tree.value[leaf]
        total = wr.sum()
        assert wr[r < v].sum() <= q * total + 1e-9
        assert wr[r <= v].sum() >= q * total - 1e-9


def test_the_start_is_the_weighted_quantile():
    X, y, w = data(1)
    model = DaskBoostRegressor(objective="reg:quantileerror", quantile_alpha=0.3,
                               n_estimators=1).fit(X, y, sample_weight=w)
    v = model.get_booster().base_margin[0]
    assert w[y < v].sum() <= 0.3 * w.sum() + 1e-9 <= w[y <= v].sum() + 2e-9


def test_partitioning_does_not_change_the_leaves():
    # with exact sketches (fewer distinct labels and residuals per leaf than the sketch
    # holds), the leaves do not depend on the partitioning
    X, y, _ = data(2)
    y = np.round(y, 1)
    assert len(np.unique(y)) < 2048
    frame = pd.DataFrame(X, columns=list("abcd"))
    fits = []
    for parts in (1, 5):
        model = DaskBoostRegressor(objective="reg:absoluteerror", n_estimators=5, max_depth=3)
        model.fit(dd.from_pandas(frame, npartitions=parts),
                  dd.from_pandas(pd.Series(y), npartitions=parts))
        fits.append(model.get_booster().trees)
    for a, b in zip(*fits):
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_allclose(a.value, b.value, rtol=1e-12)


def test_absolute_error_beats_squared_error_on_heavy_tails():
    X, y, _ = data(3, n=6000)
    test_X, test_y, _ = data(4, n=3000)
    mae = lambda m: np.mean(np.abs(m.predict(test_X) - test_y))
    lad = DaskBoostRegressor(objective="reg:absoluteerror", n_estimators=30, max_depth=3).fit(X, y)
    l2 = DaskBoostRegressor(n_estimators=30, max_depth=3).fit(X, y)
    assert mae(lad) < mae(l2)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32])
def test_rows_grouped_by_leaf_are_a_stable_sort(dtype):
    from daskboost.leaf_sketches import rows_by_leaf
    rng = np.random.default_rng(7)
    leaves = rng.choice([3, 4, 9, 10, 11], size=5000).astype(dtype)
    order, starts = rows_by_leaf(leaves, 12)
    np.testing.assert_array_equal(order, np.argsort(leaves, kind="stable"))
    np.testing.assert_array_equal(np.diff(starts), np.bincount(leaves, minlength=12))


@pytest.mark.parametrize("weighted", [False, True])
def test_packed_leaf_sketches_are_the_sketch_modules_summaries_and_merges(weighted):
    """``leaf_sketches`` builds and merges each leaf's sketch in compiled loops; the
    entries, totals and eps are ``sketch.summarize_column``'s and ``sketch.merge``'s to
    the bit, pruned (a small ``size``) or not, with ties, zero weights and a leaf that
    one side lacks."""
    from daskboost.leaf_sketches import LeafSketches, merge_leaf_sketches, sketch_leaves
    from daskboost.sketch import merge, summarize_column
    rng = np.random.default_rng(11)
    n, size = 6000, 64
    leaves = rng.choice([3, 4, 7, 8], size=n).astype(np.int16)
    leaves[:3000][leaves[:3000] == 8] = 7          # leaf 8 only in the second half
    residuals = np.round(rng.standard_t(3, n), 1)   # ties
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    if weighted:
        w[rng.random(n) < 0.1] = 0.0
    halves = [slice(0, 3000), slice(3000, n)]
    packed = [LeafSketches.joined([sketch_leaves(t, leaves[h], residuals[h] + t,
                                                 None if w is None else w[h], size)
                                   for t in (0, 1)]) for h in halves]
    merged = merge_leaf_sketches(packed[0], packed[1], size).summaries()
    for t in (0, 1):
        for leaf in (3, 4, 7, 8):
            parts = []
            for h in halves:
                rows = np.flatnonzero(leaves[h] == leaf) + h.start
                if len(rows):
                    parts.append(summarize_column(residuals[rows] + t,
                                                  None if w is None else w[rows], size))
            expected = parts[0] if len(parts) == 1 else merge(parts[0], parts[1], size)
            got = merged[(t, leaf)]
            for field in ("values", "rmin", "rmax", "wmin"):
                np.testing.assert_array_equal(getattr(got, field), getattr(expected, field))
            assert (got.eps, got.total_weight) == (expected.eps, expected.total_weight)
    assert sorted(merged) == [(t, v) for t in (0, 1) for v in (3, 4, 7, 8)]
