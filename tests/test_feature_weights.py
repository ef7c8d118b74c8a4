"""xgboost's ``fit(feature_weights=...)``: each feature's chance in column sampling in
proportion to its weight (drawn without replacement; a feature of weight 0 only once
every weighted one is taken)."""

import json

import dask.array as da
import numpy as np
import pytest

import daskboost
from daskboost import DaskBoostRegressor


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 6))
    return X, X @ np.array([1.0, 0.8, 0.6, 0.4, 0.2, 0.1]) + rng.normal(0, 0.1, 2000)


def used_features(model):
    """The features each tree splits on."""
    frame = model.get_booster().trees_to_dataframe()
    splits = frame[frame["Feature"] != "Leaf"]
    return [set(group["Feature"]) for _, group in splits.groupby("Tree")]


def model_json(model):
    return json.dumps(model.get_booster().to_dict(), sort_keys=True)


def test_zero_weights_keep_features_out_of_the_sample(xy):
    X, y = xy
    model = DaskBoostRegressor(n_estimators=20, max_depth=3, colsample_bytree=0.5,
                               random_state=1).fit(X, y, feature_weights=[0, 0, 0, 1, 1, 1])
    assert set().union(*used_features(model)) == {"f3", "f4", "f5"}
    plain = DaskBoostRegressor(n_estimators=20, max_depth=3, colsample_bytree=0.5,
                               random_state=1).fit(X, y)
    assert set().union(*used_features(plain)) & {"f0", "f1", "f2"}


def test_draws_follow_the_weights(xy):
    X, y = xy
    model = DaskBoostRegressor(n_estimators=60, max_depth=2, colsample_bynode=1 / 6,
                               random_state=2).fit(X, y, feature_weights=[1, 1, 1, 1, 1, 95])
    trees = used_features(model)
    share = np.mean(["f5" in t for t in trees])
    assert share > 0.9  # 3 nodes a tree, each a draw of f5 with chance 0.95
    # a weight of 0 is drawn only once every weighted feature is taken (5 of 6 here: never)
    full = DaskBoostRegressor(n_estimators=3, colsample_bytree=1.0, colsample_bynode=0.99,
                              random_state=2).fit(X, y, feature_weights=[0, 1, 1, 1, 1, 1])
    assert set().union(*used_features(full)) <= {"f1", "f2", "f3", "f4", "f5"}


def test_without_column_sampling_they_change_nothing(xy):
    X, y = xy
    params = dict(n_estimators=5, max_depth=3)
    assert model_json(DaskBoostRegressor(**params).fit(X, y, feature_weights=[5, 1, 1, 1, 1, 1])) \
        == model_json(DaskBoostRegressor(**params).fit(X, y))


def test_the_same_model_from_dask_chunks_and_through_train_and_cv(xy):
    X, y = xy
    weights = [3, 1, 2, 1, 1, 0.5]
    params = dict(n_estimators=6, max_depth=3, colsample_bylevel=0.5, random_state=4)
    in_memory = DaskBoostRegressor(**params).fit(X, y, feature_weights=weights)
    # dask chunks (another partitioning, so other float sums): the same draws
    chunked = DaskBoostRegressor(n_estimators=6, max_depth=3, colsample_bytree=0.5,
                                 random_state=4).fit(da.from_array(X, chunks=500),
                                                     da.from_array(y, chunks=500),
                                                     feature_weights=np.array([0, 0, 0, 1, 1, 1]))
    assert set().union(*used_features(chunked)) == {"f3", "f4", "f5"}
    booster = daskboost.train(params, X, y, feature_weights=weights)
    assert json.dumps(booster.to_dict(), sort_keys=True) == model_json(in_memory)
    one_feature = dict(params, colsample_bylevel=1.0, colsample_bytree=1 / 6)
    weighted = daskboost.cv(one_feature, X, y, nfold=3, feature_weights=[0, 0, 0, 0, 0, 1])
    plain = daskboost.cv(one_feature, X, y, nfold=3)
    # each tree on the weakest feature alone: far worse than trees on any one feature
    assert weighted["test-rmse-mean"].iloc[-1] > 1.3 * plain["test-rmse-mean"].iloc[-1]


@pytest.mark.parametrize("weights,error,match", [
    ([1, 1, 1], ValueError, r"feature_weights has shape \(3,\); X has 6 features"),
    ([1, 1, 1, 1, 1, -1], ValueError, r"feature_weights\[5\]=-1.0 must be"),
    ([1, 1, np.nan, 1, 1, 1], ValueError, r"feature_weights\[2\]=nan"),
    ([0] * 6, ValueError, "all 0"),
    (["a"] * 6, TypeError, "must be numbers"),
    ([[1] * 6], ValueError, "shape"),
])
def test_bad_weights_are_refused_before_any_work(xy, weights, error, match):
    X, y = xy
    with pytest.raises(error, match=match):
        DaskBoostRegressor(colsample_bytree=0.5).fit(X, y, feature_weights=weights)
    with pytest.raises(error, match=match):
        daskboost.cv({"colsample_bytree": 0.5}, X, y, feature_weights=weights)


def test_a_cluster_draws_as_the_threaded_scheduler(xy, cluster):
    import distributed
    X, y = xy
    Xd, yd = da.from_array(X, chunks=500), da.from_array(y, chunks=500)

    def fit():
        return DaskBoostRegressor(n_estimators=4, max_depth=3, colsample_bynode=0.5,
                                  random_state=3).fit(Xd, yd, feature_weights=[4, 1, 1, 1, 1, 1])

    local = fit()
    with distributed.Client(cluster):
        remote = fit()
    assert model_json(local) == model_json(remote)


def test_a_constructor_argument_as_in_xgboost_2_saved_with_the_model(xy, tmp_path):
    X, y = xy
    weights = [3, 1, 2, 1, 1, 0.5]
    params = dict(n_estimators=4, max_depth=3, colsample_bynode=0.5, random_state=4)
    given = DaskBoostRegressor(**params, feature_weights=weights).fit(X, y)
    assert model_json(given) == model_json(DaskBoostRegressor(**params).fit(
        X, y, feature_weights=weights))
    with pytest.raises(ValueError, match="feature_weights given both as a parameter and to fit"):
        given.fit(X, y, feature_weights=weights)
    native = daskboost.train({**{k: v for k, v in params.items() if k != "n_estimators"},
                              "feature_weights": weights}, X, y, num_boost_round=4)
    assert json.dumps(native.to_dict(), sort_keys=True) == model_json(given)
    given.save_model(tmp_path / "m.json")
    assert DaskBoostRegressor().load_model(tmp_path / "m.json").feature_weights == weights
    saved = json.loads((tmp_path / "m.json").read_text())
    saved["estimator"]["params"]["feature_weights"] = [1, -2, 1, 1, 1, 1]
    (tmp_path / "bad.json").write_text(json.dumps(saved))
    with pytest.raises(ValueError, match=r"bad.json: estimator.params: feature_weights\[1\]"):
        DaskBoostRegressor().load_model(tmp_path / "bad.json")
