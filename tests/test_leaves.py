"""Leaf ids: the estimators' ``apply`` and ``Booster.predict(pred_leaf=True)``.

Each row's leaf in each tree, as the node id within the tree. Checked three ways: the
leaves' values add up to the margin; xgboost's ``pred_leaf`` on the exported model gives
the same ids; every input form (dask, sparse, pandas with categories) gives the same
ids as the in-memory numpy rows.
"""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from daskboost import DaskBoostClassifier, DaskBoostRegressor


def numeric_data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) + rng.normal(size=n) > 0)
    return X, y.astype(int)


def margin_from_leaves(booster, leaves, iteration_range=None):
    """(K, n) margins: the start plus the value of each row's leaf in each tree."""
    start, stop = booster.rounds(iteration_range)
    K = booster.n_outputs
    trees = booster.trees[start * K:stop * K]
    margin = np.repeat(booster.base_margin[:, None], leaves.shape[0], axis=1)
    for t, tree in enumerate(trees):
        assert (tree.feature[leaves[:, t]] < 0).all()  # every id is a leaf
        margin[t % K] += tree.value[leaves[:, t]]
    return margin


@pytest.mark.parametrize("n_classes", [2, 3])
def test_leaf_values_add_up_to_the_margin(n_classes):
    X, y = numeric_data()
    if n_classes == 3:
        y = y + (X[:, 2] > 0.5)
    model = DaskBoostClassifier(n_estimators=6, max_depth=4).fit(X, y)
    booster = model.get_booster()
    leaves = model.apply(X)
    K = booster.n_outputs
    assert leaves.shape == (len(X), 6 * K) and leaves.dtype == np.int32
    assert len(np.unique(leaves[:, 0])) > 4
    np.testing.assert_allclose(margin_from_leaves(booster, leaves),
                               booster.predict_margin(X), rtol=1e-12, atol=1e-12)


def test_iteration_range_and_best_iteration():
    X, y = numeric_data()
    model = DaskBoostClassifier(n_estimators=8, max_depth=3).fit(X, y)
    booster = model.get_booster()
    every = model.apply(X)
    np.testing.assert_array_equal(model.apply(X, iteration_range=(2, 5)), every[:, 2:5])
    assert model.apply(X, iteration_range=(3, 3)).shape == (len(X), 0)
    np.testing.assert_array_equal(booster.predict(X, pred_leaf=True), every)
    with pytest.raises(ValueError, match=r"iteration_range=\(0, 9\) must satisfy"):
        model.apply(X, iteration_range=(0, 9))
    # after early stopping, the best iteration's rounds (as predict)
    stopped = DaskBoostClassifier(n_estimators=200, learning_rate=1.0, max_depth=6,
                                  early_stopping_rounds=2).fit(
        X[:1000], y[:1000], eval_set=[(X[1000:], y[1000:])])
    best = stopped.best_iteration
    assert best + 1 < stopped.get_booster().n_rounds
    assert stopped.apply(X).shape == (len(X), best + 1)


def test_flags_that_exclude_each_other():
    X, y = numeric_data()
    booster = DaskBoostClassifier(n_estimators=2).fit(X, y).get_booster()
    for flag in ("output_margin", "pred_contribs", "pred_interactions", "approx_contribs"):
        with pytest.raises(ValueError, match="pred_leaf=True excludes"):
            booster.predict(X, pred_leaf=True, **{flag: True})


def test_matches_xgboost_pred_leaf(tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, y = numeric_data(seed=1)
    y3 = y + (X[:, 2] > 0.5)
    for model in (DaskBoostClassifier(n_estimators=5, max_depth=5).fit(X, y),
                  DaskBoostClassifier(n_estimators=3, max_depth=3).fit(X, y3),
                  DaskBoostRegressor(n_estimators=4, grow_policy="lossguide", max_depth=0,
                                     max_leaves=12).fit(X, np.nan_to_num(X[:, 3]))):
        path = tmp_path / "model.json"
        model.save_model(path, format="xgboost")
        theirs = xgb.Booster(model_file=str(path)).predict(xgb.DMatrix(X), pred_leaf=True)
        np.testing.assert_array_equal(model.apply(X), theirs)


def test_categorical_features():
    rng = np.random.default_rng(2)
    n = 3000
    frame = pd.DataFrame({"city": rng.choice(["paris", "rome", "oslo", "lima", "bern"], n),
                          "x": rng.normal(size=n)})
    frame.loc[rng.random(n) < 0.1, "city"] = None
    y = frame.city.isin(["rome", "lima"]) * 2.0 + frame.x
    model = DaskBoostRegressor(n_estimators=5, max_depth=3, max_cat_to_onehot=1).fit(frame, y)
    booster = model.get_booster()
    assert any(t.categories for t in booster.trees)
    leaves = model.apply(frame)
    np.testing.assert_allclose(margin_from_leaves(booster, leaves)[0],
                               model.predict(frame, output_margin=True), rtol=1e-12)
    dd = pytest.importorskip("dask.dataframe")
    lazy = model.apply(dd.from_pandas(frame, npartitions=3))
    np.testing.assert_array_equal(lazy.compute(), leaves)


def test_dask_and_sparse_inputs_give_the_same_leaves():
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    X, y = numeric_data()
    model = DaskBoostClassifier(n_estimators=4, max_depth=4).fit(X, y)
    leaves = model.apply(X)
    lazy = model.apply(da.from_array(X, chunks=(700, 3)))
    assert lazy.dtype == np.int32 and lazy.chunks[0] == (700, 700, 600)
    np.testing.assert_array_equal(lazy.compute(), leaves)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    named = DaskBoostClassifier(n_estimators=4, max_depth=4).fit(frame, y)
    np.testing.assert_array_equal(named.apply(dd.from_pandas(frame, npartitions=3)).compute(),
                                  named.apply(frame))
    # sparse: an entry not stored is missing
    stored = np.nan_to_num(X)
    csr = sp.csr_matrix(stored)
    as_missing = np.where(stored == 0, np.nan, stored)
    np.testing.assert_array_equal(model.apply(csr), model.apply(as_missing))
    np.testing.assert_array_equal(
        model.apply(da.from_array(csr, chunks=(500, 6), asarray=False)).compute(),
        model.apply(as_missing))


def test_unfitted_and_wrong_width():
    from sklearn.exceptions import NotFittedError
    X, y = numeric_data()
    with pytest.raises(NotFittedError):
        DaskBoostClassifier().apply(X)
    model = DaskBoostClassifier(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="X has 5 features"):
        model.apply(X[:, :5])


def test_the_general_walk_gives_the_packed_walks_leaves():
    # trees grown here number a right child left + 1 and take the packed walk; a model
    # file may number them otherwise, and categorical nodes take the general walk
    from daskboost.tree import PackedForest
    X, y = numeric_data(seed=4)
    booster = DaskBoostClassifier(n_estimators=5, max_depth=5).fit(X, y).get_booster()
    forest = PackedForest(booster.trees, booster.n_outputs)
    assert forest.node_info is not None
    packed = forest.leaves(X)
    forest.node_info = None
    np.testing.assert_array_equal(forest.leaves(X), packed)
