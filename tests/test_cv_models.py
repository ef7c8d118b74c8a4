"""``cv(..., return_cvbooster=True)``: the folds' models, and each row predicted by the
model of the fold that held it out (``CVBooster.predict_out_of_fold``)."""

import pickle

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import daskboost.cross_validation as cross_validation
from daskboost import DaskBoostClassifier, DaskBoostRegressor, TrainingCallback, cv, cv_folds

PARAMS = {"max_depth": 3, "learning_rate": 0.3}


def regression(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[rng.random(X.shape) < 0.05] = np.nan
    Z = np.nan_to_num(X)
    y = 2.0 * Z[:, 0] - Z[:, 1] + Z[:, 2] * Z[:, 3] + rng.normal(scale=0.5, size=n)
    return X, y, rng


def per_fold(values, folds, score):
    """``score(rows)`` of each fold's rows, fold by fold."""
    return [score(np.flatnonzero(folds == f)) for f in range(int(folds.max()) + 1)]


def rmse_by_fold(pred, y, folds):
    return per_fold(pred, folds, lambda rows: np.sqrt(np.mean((pred[rows] - y[rows]) ** 2)))


def _in(kind, X, y, folds=None):
    """X, y (and a fold column) as ``kind``: numpy, a dask Array or a dask DataFrame."""
    if kind == "numpy":
        return X, y, folds
    if kind == "array":
        return (da.from_array(X, chunks=(250, 2)), da.from_array(y, chunks=250),
                None if folds is None else da.from_array(folds, chunks=250))
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["label"] = y
    if folds is not None:
        frame["fold"] = folds
    lake = dd.from_pandas(frame, npartitions=3)
    return lake[list("abcd")], lake["label"], None if folds is None else lake["fold"]


def computed(values):
    values = values.compute() if hasattr(values, "compute") else values
    return values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)


# ---- out-of-fold predictions ------------------------------------------------------------

@pytest.mark.parametrize("kind", ["numpy", "array", "frame"])
@pytest.mark.parametrize("given", [False, True])
def test_out_of_fold_predictions_give_back_the_frames_test_metric(kind, given):
    """Each fold's rows predicted by the model that held them out score what cv's frame
    says those models scored on them (any row predicted by another fold's model, which
    trained on it, changes the score)."""
    X, y, rng = regression()
    folds = rng.integers(0, 4, size=len(y)) if given else cv_folds(len(y), 4, seed=3)
    Xk, yk, fold_column = _in(kind, X, y, folds)
    frame, models = cv(PARAMS, Xk, yk, nfold=4, num_boost_round=6, seed=3,
                       folds=fold_column if given else None, return_cvbooster=True)
    lazy = models.predict_out_of_fold(Xk, yk)
    if kind != "numpy":  # lazy, one task per partition
        assert type(lazy).__name__ in ("Array", "Series")
    oof = computed(lazy)
    if kind == "frame":  # each row with its index
        pd.testing.assert_index_equal(lazy.compute().index, Xk.compute().index)
    assert oof.shape == (len(y),)
    # (predict's float32 output against cv's float64 margins)
    assert np.mean(rmse_by_fold(oof, y, folds)) == pytest.approx(
        frame["test-rmse-mean"].iloc[-1], abs=1e-5)
    assert np.std(rmse_by_fold(oof, y, folds)) == pytest.approx(
        frame["test-rmse-std"].iloc[-1], abs=1e-5)


@pytest.mark.parametrize("kind", ["numpy", "array", "frame"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_stratified_out_of_fold_probabilities_give_back_the_frames_log_loss(kind, n_classes):
    X, y, rng = regression(seed=1)
    labels = np.array(["low", "mid", "high"])[:n_classes]
    classes = labels[np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))]
    objective = "binary:logistic" if n_classes == 2 else "multi:softprob"
    metric = "logloss" if n_classes == 2 else "mlogloss"
    Xk, yk, _ = _in(kind, X, classes)
    frame, models = cv({**PARAMS, "objective": objective}, Xk, yk, nfold=3,
                       num_boost_round=5, seed=4, stratified=True, return_cvbooster=True)
    folds = cv_folds(len(y), 3, seed=4, stratify=classes)
    proba = computed(models.predict_out_of_fold(Xk, yk, method="predict_proba"))
    order = models.estimators[0].classes_
    assert proba.shape == (len(y), n_classes) and sorted(order) == sorted(labels)
    truth = np.searchsorted(order, classes)
    losses = per_fold(proba, folds, lambda rows: -np.mean(
        np.log(np.clip(proba[rows, truth[rows]], 1e-15, 1))))
    assert np.mean(losses) == pytest.approx(frame[f"test-{metric}-mean"].iloc[-1], abs=1e-5)
    predicted = computed(models.predict_out_of_fold(Xk, yk))
    np.testing.assert_array_equal(predicted, order[np.argmax(proba, axis=1)])
    if kind == "numpy":  # kept with pickle, as a model is
        again = pickle.loads(pickle.dumps(models))
        np.testing.assert_array_equal(
            again.predict_out_of_fold(Xk, yk, method="predict_proba"), proba)
        assert repr(again) == "CVBooster(3 folds of DaskBoostClassifier, best_iteration=None)"


def test_after_early_stopping_the_models_predict_at_the_best_round():
    X, y, rng = regression(n=600, seed=2)
    y = y + rng.normal(scale=4.0, size=len(y))  # noise: deep trees soon overfit
    params = {"max_depth": 6, "learning_rate": 0.8, "min_child_weight": 0.0, "reg_lambda": 0}
    frame, models = cv(params, X, y, nfold=3, num_boost_round=40, seed=1,
                       early_stopping_rounds=3, return_cvbooster=True)
    assert models.best_iteration == len(frame) - 1 < 39
    assert all(b.n_rounds == len(frame) + 3 for b in models.boosters)
    oof = models.predict_out_of_fold(X)
    folds = cv_folds(len(y), 3, seed=1)
    assert np.mean(rmse_by_fold(oof, y, folds)) == pytest.approx(
        frame["test-rmse-mean"].iloc[-1], abs=1e-5)


# ---- the folds' models --------------------------------------------------------------------

class KeepModels(TrainingCallback):
    def after_training(self, model):
        self.models = [pack.bst for pack in model.cvfolds]
        return model


def test_the_folds_models_are_the_models_callbacks_see_as_fitted_estimators():
    X, y, _ = regression()
    keep = KeepModels()
    params = {**PARAMS, "reg_lambda": 2.0}
    _, models = cv(params, X, y, nfold=4, num_boost_round=5, callbacks=[keep],
                   return_cvbooster=True)
    assert len(models) == 4
    assert [b.to_dict() for b in models.boosters] == [m.to_dict() for m in keep.models]
    for estimator, booster in zip(models.estimators, models.boosters):
        assert isinstance(estimator, DaskBoostRegressor)
        assert estimator.get_params()["reg_lambda"] == 2.0
        assert estimator.get_params()["n_estimators"] == 5
    for values, booster in zip(models.predict(X[:50]), models.boosters):
        np.testing.assert_array_equal(values, booster.predict(X[:50]))
    # a dask frame in, dask out
    lake = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), npartitions=2)
    _, on_lake = cv(params, lake, dd.from_pandas(pd.Series(y), npartitions=2), nfold=4,
                    num_boost_round=5, return_cvbooster=True)
    assert all(isinstance(p, dd.Series) for p in on_lake.predict(lake))


def test_a_classifiers_folds_are_classifiers_with_its_classes():
    X, y, _ = regression()
    labels = np.where(y > 0, "yes", "no")
    _, models = cv({**PARAMS, "objective": "binary:logistic"}, X, labels, nfold=3,
                   num_boost_round=4, return_cvbooster=True)
    for estimator, proba in zip(models.estimators, models.predict_proba(X[:20])):
        assert isinstance(estimator, DaskBoostClassifier)
        assert estimator.classes_.tolist() == ["no", "yes"]
        assert proba.shape == (20, 2)
    assert set(np.concatenate(models.predict(X[:20]))) <= {"no", "yes"}


# ---- bad input ----------------------------------------------------------------------------

def test_return_cvbooster_must_be_a_bool_before_any_pass(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a pass over the data ran")
    monkeypatch.setattr(cross_validation, "make_runtime", refuse)
    X, y, _ = regression(n=30)
    with pytest.raises(TypeError, match=r"return_cvbooster='yes' must be True or False"):
        cv(PARAMS, X, y, return_cvbooster="yes")


def test_out_of_fold_input_that_is_not_cvs_is_refused():
    X, y, _ = regression(n=600)
    _, models = cv(PARAMS, X, y, nfold=3, num_boost_round=2, return_cvbooster=True)
    with pytest.raises(ValueError, match=r"X has 599 rows; cv was given 600"):
        models.predict_out_of_fold(X[:-1])
    with pytest.raises(ValueError, match=r"method='decision_function' must be one of"):
        models.predict_out_of_fold(X, method="decision_function")
    with pytest.raises(ValueError, match=r"predict_proba: cv's models are regressions"):
        models.predict_out_of_fold(X, method="predict_proba")

    lake = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), npartitions=3)
    labels = dd.from_pandas(pd.Series(y), npartitions=3)
    _, on_lake = cv(PARAMS, lake, labels, nfold=3, num_boost_round=2, return_cvbooster=True)
    with pytest.raises(ValueError, match=r"y is needed with dask X"):
        on_lake.predict_out_of_fold(lake)
    with pytest.raises(TypeError, match=r"X is a dask collection but y is not"):
        on_lake.predict_out_of_fold(lake, y)
    with pytest.raises(ValueError, match=r"X has 2 partitions; cv's had 3"):
        on_lake.predict_out_of_fold(lake.repartition(npartitions=2),
                                    labels.repartition(npartitions=2))
    shifted = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), chunksize=150)
    shifted = shifted.repartition(npartitions=3) if shifted.npartitions != 3 else shifted
    assert shifted.npartitions == 3
    lengths = shifted.map_partitions(len).compute().tolist()
    assert lengths != lake.map_partitions(len).compute().tolist()
    with pytest.raises(ValueError, match=r"X's partition \d has \d+ rows; cv's had 200"):
        on_lake.predict_out_of_fold(shifted, shifted["a"]).compute()


def test_stratified_out_of_fold_needs_the_labels():
    X, y, _ = regression(n=300)
    labels = (y > 0).astype(int)
    _, models = cv({**PARAMS, "objective": "binary:logistic"}, X, labels, nfold=3,
                   num_boost_round=2, stratified=True, return_cvbooster=True)
    with pytest.raises(ValueError, match=r"y is needed: cv's folds were stratified"):
        models.predict_out_of_fold(X)
    with pytest.raises(ValueError, match=r"y has shape \(299,\); expected \(300,\)"):
        models.predict_out_of_fold(X, labels[:-1])
    with pytest.raises(ValueError, match=r"y has label 7 that is not one of \[0, 1\]"):
        models.predict_out_of_fold(X, np.where(labels == 0, 7, 1))
    flipped = labels.copy()
    flipped[np.flatnonzero(labels == 0)[0]] = 1
    with pytest.raises(ValueError, match=r"y holds the classes \[0, 1\] \[\d+, \d+\] times; "
                                         r"cv's labels there held them"):
        models.predict_out_of_fold(X, flipped)
    dy = da.from_array(flipped, chunks=100)
    _, on_array = cv({**PARAMS, "objective": "binary:logistic"}, da.from_array(X, chunks=100),
                     da.from_array(labels, chunks=100), nfold=3, num_boost_round=2,
                     stratified=True, return_cvbooster=True)
    with pytest.raises(ValueError, match=r"y's partition 0 holds the classes"):
        on_array.predict_out_of_fold(da.from_array(X, chunks=100), dy).compute()


def test_on_a_cluster_the_models_and_out_of_fold_predictions_are_the_threaded_ones(cluster):
    """A persisted dask frame on a 2-worker cluster: the same folds' models as on the
    threaded scheduler, and the out-of-fold predictions computed on the workers."""
    import distributed
    X, y, _ = regression(n=900, seed=5)
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["label"] = y
    threaded, models = cv(PARAMS, dd.from_pandas(frame, npartitions=3)[list("abcd")],
                          dd.from_pandas(frame, npartitions=3)["label"], nfold=3,
                          num_boost_round=4, return_cvbooster=True)
    with distributed.Client(cluster):
        lake = dd.from_pandas(frame, npartitions=3).persist()
        on_cluster, cluster_models = cv(PARAMS, lake[list("abcd")], lake["label"], nfold=3,
                                        num_boost_round=4, return_cvbooster=True)
        oof = cluster_models.predict_out_of_fold(lake[list("abcd")], lake["label"]).compute()
    pd.testing.assert_frame_equal(on_cluster, threaded)
    assert [b.to_dict() for b in cluster_models.boosters] == \
        [b.to_dict() for b in models.boosters]
    np.testing.assert_array_equal(oof.to_numpy(), models.predict_out_of_fold(X))


@pytest.mark.parametrize("with_strings, weighted, typed", [
    (False, False, False), (True, False, False), (False, True, False), (False, False, True)])
def test_out_of_fold_predictions_of_a_parquet_lake_read_as_cv_read_it(tmp_path, with_strings,
                                                                       weighted, typed):
    """A lake is read by its own plan (files or pieces grouped, partitions as arrays
    or frames, the columns read deciding it): the out-of-fold predictions follow it,
    reading X, y and the weights as cv did, its columns typed as cv typed them (``typed``:
    a numeric column made categorical by ``feature_types``)."""
    X, y, rng = regression(n=1500, seed=6)
    frame = pd.DataFrame(X.astype(np.float32), columns=list("abcd"))
    params = PARAMS
    if typed:
        frame["d"] = rng.integers(0, 4, len(y)).astype(np.float32)
        y = y + np.array([0.0, 3.0, -2.0, 1.0])[frame["d"].astype(int)]
        params = {**PARAMS, "feature_types": ["q", "q", "q", "c"]}
    if with_strings:
        frame["d"] = np.array(["p", "q", "r"])[rng.integers(0, 3, len(y))]
        y = y + (frame["d"] == "q").to_numpy() * 3.0
    frame["label"] = y
    weight = rng.uniform(0.5, 2.0, len(y)) if weighted else np.ones(len(y))
    frame["w"] = weight
    for i, start in enumerate(range(0, len(y), 200)):
        frame.iloc[start:start + 200].to_parquet(tmp_path / f"part-{i:02d}.parquet")
    lake = dd.read_parquet(str(tmp_path))
    features, w = lake[list("abcd")], lake["w"] if weighted else None
    results, models = cv(params, features, lake["label"], nfold=3, num_boost_round=5,
                         seed=2, sample_weight=w, return_cvbooster=True)
    oof = computed(models.predict_out_of_fold(features, lake["label"], sample_weight=w))
    folds = cv_folds(len(y), 3, seed=2)
    rmse = per_fold(oof, folds, lambda rows: np.sqrt(
        np.average((oof[rows] - y[rows]) ** 2, weights=weight[rows])))
    assert np.mean(rmse) == pytest.approx(results["test-rmse-mean"].iloc[-1], abs=1e-5)
