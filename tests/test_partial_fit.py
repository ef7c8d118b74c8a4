"""``partial_fit``: incremental training block by block, as scikit-learn's protocol has
it and dask-ml's ``Incremental`` calls it.  Each call grows ``n_estimators`` more rounds on the block given, from the model so
far."""

import json

import dask.array as da
import numpy as np
import pytest

from daskboost import DaskBoostClassifier, DaskBoostRegressor


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(12)
    X = rng.integers(0, 8, size=(1200, 4)).astype(np.float64)
    y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(0, 0.5, len(X))
    return X, y


def model_json(estimator):
    return json.dumps(estimator.get_booster().to_dict(), sort_keys=True)


def test_each_call_continues_the_model_with_n_estimators_rounds(data):
    X, y = data
    incremental = DaskBoostRegressor(n_estimators=4, max_depth=3)
    for block in (slice(0, 400), slice(400, 800), slice(800, 1200)):
        assert incremental.partial_fit(X[block], y[block]) is incremental
    assert incremental.get_booster().n_rounds == 12
    # the same as fits that continue from the model so far (xgb_model)
    step = DaskBoostRegressor(n_estimators=4, max_depth=3).fit(X[:400], y[:400])
    for block in (slice(400, 800), slice(800, 1200)):
        step = DaskBoostRegressor(n_estimators=4, max_depth=3).fit(X[block], y[block],
                                                                   xgb_model=step)
    assert model_json(incremental) == model_json(step)
    assert incremental.get_params()["n_estimators"] == 4      # a parameter is not changed
    # later blocks improve on the first block's model
    first = DaskBoostRegressor(n_estimators=4, max_depth=3).fit(X[:400], y[:400])
    assert incremental.score(X, y) > first.score(X, y) + 0.02
    # fit starts again from nothing
    assert incremental.fit(X, y).get_booster().n_rounds == 4


def test_a_classifier_learns_its_classes_from_the_first_call(data):
    X, _ = data
    y = (X[:, 0] // 3).astype(int)                       # classes 0, 1, 2
    first = y < 2                                        # a block without class 2
    model = DaskBoostClassifier(n_estimators=3, max_depth=2)
    model.partial_fit(X[first], y[first], classes=[2, 0, 1])
    assert model.classes_.tolist() == [0, 1, 2]
    assert model.predict_proba(X).shape == (len(X), 3)
    # the class the block lacks starts from equal probabilities (from the labels'
    # frequencies it would start at the probability floor, and the huge Newton steps on
    # its rows later would swing the model for rounds)
    assert model.get_booster().base_margin.tolist() == [0.0, 0.0, 0.0]
    model.partial_fit(X, y)                              # later calls keep them
    assert model.get_booster().n_rounds == 6 and model.score(X, y) > 0.95
    # string labels, a block holding one of them
    words = np.array(["high", "low"])[(X[:, 1] > 3).astype(int)]
    named = DaskBoostClassifier(n_estimators=2).partial_fit(X[words == "low"],
                                                            words[words == "low"],
                                                            classes=["low", "high"])
    named.partial_fit(X, words)
    assert named.classes_.tolist() == ["high", "low"] and named.score(X, words) > 0.9


@pytest.mark.parametrize("calls, match", [
    ([dict(rows=slice(0, 100), classes=None)], "only one class"),
    ([dict(rows=slice(0, 1200), classes=[0, 1])], r"the label 2, which is not one of classes=\[0, 1\]"),
    ([dict(rows=slice(0, 1200), classes=None), dict(rows=slice(0, 600), classes=[0, 1, 2, 3])],
     r"differs from the classes of the first partial_fit call, \[0, 1, 2\]"),
    ([dict(rows=slice(0, 1200), classes=[1])], "has one label"),
], ids=["one class", "label outside", "other classes later", "one class given"])
def test_bad_classes_are_named(data, calls, match):
    X, _ = data
    y = (X[:, 0] // 3).astype(int)
    y[:100] = 0
    model = DaskBoostClassifier(n_estimators=2, max_depth=2)
    with pytest.raises(ValueError, match=match):
        for call in calls:
            model.partial_fit(X[call["rows"]], y[call["rows"]], classes=call["classes"])


def test_another_feature_count_is_refused_in_scikit_learns_words(data):
    X, y = data
    model = DaskBoostRegressor(n_estimators=2).partial_fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but DaskBoostRegressor is "
                                         "expecting 4 features as input"):
        model.partial_fit(X[:, :3], y)


def test_dask_ml_incremental_calls_it_block_by_block(data):
    dask_ml = pytest.importorskip("dask_ml.wrappers")
    X, y = data
    dX, dy = da.from_array(X, chunks=400), da.from_array(y, chunks=400)
    wrapped = dask_ml.Incremental(DaskBoostRegressor(n_estimators=3, max_depth=3),
                                  shuffle_blocks=False).fit(dX, dy)
    by_hand = DaskBoostRegressor(n_estimators=3, max_depth=3)
    for block in (slice(0, 400), slice(400, 800), slice(800, 1200)):
        by_hand.partial_fit(X[block], y[block])
    assert model_json(wrapped.estimator_) == model_json(by_hand)


def test_dask_ml_incremental_passes_a_classifiers_classes(data):
    # (dask-ml's IncrementalSearchCV and HyperbandSearchCV call partial_fit the same
    # way; with dask 2026.8 they fail before any fit, for scikit-learn's SGDClassifier
    # too: "Attempting to use an asynchronous Client in a synchronous context")
    dask_ml = pytest.importorskip("dask_ml.wrappers")
    X, _ = data
    y = ((X[:, 0] > 3) != (X[:, 1] > 3)).astype(int)
    y[:300] = 0                                          # a first block of one class
    dX, dy = da.from_array(X, chunks=300), da.from_array(y, chunks=300)
    wrapped = dask_ml.Incremental(DaskBoostClassifier(n_estimators=4, max_depth=3),
                                  shuffle_blocks=False).fit(dX, dy, classes=[0, 1])
    assert wrapped.estimator_.classes_.tolist() == [0, 1]
    assert wrapped.estimator_.get_booster().n_rounds == 16
    assert wrapped.score(dX[300:], dy[300:]) > 0.9
