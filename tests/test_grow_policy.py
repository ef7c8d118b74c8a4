"""Growth policies: depthwise (with an optional leaf budget) and lossguide (leaf-wise)."""

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost import DaskBoostRegressor


def data(seed=0, n=8000):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 20, size=(n, 5)).astype(np.float64)
    y = np.sin(X[:, 0] / 3) * X[:, 1] / 5 + (X[:, 2] > 15) * 2 + rng.normal(0, 0.3, n)
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, y


def tree_shapes(model):
    return [(t.n_leaves, t.depth()) for t in model.get_booster().trees]


@pytest.mark.parametrize("max_leaves", [2, 7, 16])
def test_lossguide_respects_the_leaf_budget(max_leaves):
    X, y = data()
    model = DaskBoostRegressor(grow_policy="lossguide", max_leaves=max_leaves, max_depth=0,
                               n_estimators=5).fit(X, y)
    leaves = [n for n, _ in tree_shapes(model)]
    assert max(leaves) == max_leaves   # the budget is used (this data has many splits)


def test_lossguide_grows_deeper_than_depthwise_for_the_same_leaves():
    X, y = data(1)
    lossguide = DaskBoostRegressor(grow_policy="lossguide", max_leaves=16, max_depth=0,
                                   n_estimators=3).fit(X, y)
    depthwise = DaskBoostRegressor(max_depth=4, n_estimators=3).fit(X, y)
    assert max(d for _, d in tree_shapes(lossguide)) > 4
    assert all(n <= 16 for n, _ in tree_shapes(depthwise))


def test_lossguide_without_a_leaf_budget_equals_depthwise():
    X, y = data(2)
    a = DaskBoostRegressor(grow_policy="lossguide", max_depth=4, n_estimators=5).fit(X, y)
    b = DaskBoostRegressor(grow_policy="depthwise", max_depth=4, n_estimators=5).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_depthwise_leaf_budget_takes_the_best_splits_of_a_level():
    X, y = data(3)
    limited = DaskBoostRegressor(max_depth=3, max_leaves=5, n_estimators=1).fit(X, y)
    full = DaskBoostRegressor(max_depth=3, n_estimators=1).fit(X, y)
    small, big = limited.get_booster().trees[0], full.get_booster().trees[0]
    assert small.n_leaves == 5
    # the level-2 splits kept are the ones with the largest gains in the full tree
    kept = sorted(small.gain[small.feature >= 0])[::-1]
    all_gains = sorted(big.gain[big.feature >= 0])[::-1]
    assert kept[0] == pytest.approx(all_gains[0])


def test_lossguide_does_not_depend_on_partitioning():
    X, y = data(4)
    frame = pd.DataFrame(X, columns=list("abcde"))
    fits = [DaskBoostRegressor(grow_policy="lossguide", max_leaves=12, max_depth=0,
                               n_estimators=4).fit(dd.from_pandas(frame, npartitions=p),
                                                   dd.from_pandas(pd.Series(y), npartitions=p))
            for p in (1, 6)]
    for a, b in zip(*(f.get_booster().trees for f in fits)):
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_allclose(a.value, b.value, rtol=1e-9)


def test_lossguide_metric_is_close_to_lightgbm_leafwise():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(5)
    X = rng.normal(size=(18000, 6))
    y = X[:, 0] * X[:, 1] + np.sin(3 * X[:, 2]) + rng.normal(0, 0.3, 18000)
    X_train, X_test, y_train, y_test = X[:12000], X[12000:], y[:12000], y[12000:]
    ours = DaskBoostRegressor(grow_policy="lossguide", max_leaves=31, max_depth=0,
                              n_estimators=60, learning_rate=0.15, max_bin=255).fit(X_train, y_train)
    theirs = lgb.LGBMRegressor(num_leaves=31, n_estimators=60, learning_rate=0.15, max_bin=255,
                               min_child_samples=1, min_child_weight=1.0, reg_lambda=1.0,
                               verbose=-1).fit(X_train, y_train)
    rmse = lambda p: float(np.sqrt(np.mean((p - y_test) ** 2)))
    assert rmse(ours.predict(X_test)) <= rmse(theirs.predict(X_test)) * 1.02


@pytest.mark.parametrize("params,match", [
    (dict(grow_policy="breadth"), r"grow_policy='breadth' is not supported"),
    (dict(max_leaves=1), r"max_leaves=1 must be 0 \(no limit\) or >= 2"),
    (dict(max_leaves=-3), r"max_leaves=-3 must be >= 0"),
    (dict(grow_policy="lossguide", max_depth=0), r"max_depth=0 and max_leaves=0"),
])
def test_bad_policy_parameters(params, match):
    X, y = data()
    with pytest.raises(ValueError, match=match):
        DaskBoostRegressor(**params).fit(X, y)


@pytest.mark.parametrize("params", [
    {"max_depth": 7},                                  # 255 nodes: uint8 node ids
    {"max_depth": 8},                                  # 511 nodes: uint16
    {"grow_policy": "lossguide", "max_depth": 0, "max_leaves": 200},  # 399 nodes: uint16
])
def test_small_node_id_dtypes_give_the_int32_model(params, monkeypatch):
    """Rows' node ids are kept in the smallest dtype the tree size allows
    (``partition.position_dtype``); the model is the one int32 ids give."""
    import daskboost.level_loop
    import daskboost.training
    from daskboost import DaskBoostRegressor
    from daskboost.partition import position_dtype
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 6))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + rng.normal(scale=0.1, size=3000)
    model = DaskBoostRegressor(n_estimators=3, min_child_weight=0.0, **params).fit(X, y)
    assert model.get_booster().trees[0].n_nodes > 128  # ids that need the top bit
    for module in (daskboost.level_loop, daskboost.training):
        monkeypatch.setattr(module, "position_dtype", lambda max_nodes: np.int32)
    wide = DaskBoostRegressor(n_estimators=3, min_child_weight=0.0, **params).fit(X, y)
    assert model.get_booster().to_dict() == wide.get_booster().to_dict()
    assert position_dtype(255) == np.uint8 and position_dtype(511) == np.uint16
