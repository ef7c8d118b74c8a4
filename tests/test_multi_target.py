"""Multi-target models: a y of several columns trains one output per column, each with
its own trees from its own column's gradients and its own start (xgboost's
``multi_strategy="one_output_per_tree"``); a classifier's y of several 0/1 columns is
a multi-label model."""

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import daskboost as dxb
from daskboost import (DMatrix, DaskBoostClassifier, DaskBoostRegressor, TrainingCallback, cv,
                       cv_folds)
from row_batches import RowBatches

FAST = {"max_depth": 3, "learning_rate": 0.3}


def discrete(n=900, seed=3):
    """Features with few distinct values (every value a bin: xgboost's cuts and ours
    are the same) and three targets of different scales."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 7, size=(n, 4)).astype(np.float64)
    Y = np.column_stack([2.0 * X[:, 0] - X[:, 1] + rng.normal(scale=0.5, size=n),
                         X[:, 2] * X[:, 3] / 5.0 - 3.0 + rng.normal(scale=0.3, size=n),
                         10.0 + X[:, 1] + rng.normal(size=n)])
    return X, Y, rng


def labels_of(Y):
    """0/1 labels, one column per target (a multi-label y)."""
    return (Y > np.median(Y, axis=0)).astype(np.float64)


# ---- each output is the fit of its own column ------------------------------------------

@pytest.mark.parametrize("objective", ["reg:squarederror", "reg:absoluteerror",
                                       "count:poisson", "reg:pseudohubererror",
                                       "binary:logistic"])
def test_each_output_is_the_model_of_its_own_column(objective):
    X, Y, rng = discrete()
    weight = rng.uniform(0.5, 2.0, len(X))
    Y = {"count:poisson": np.abs(np.round(Y)), "binary:logistic": labels_of(Y)}.get(
        objective, Y)
    params = {**FAST, "objective": objective, "scale_pos_weight": 1.5
              if objective == "binary:logistic" else 1.0}
    both = dxb.train(params, DMatrix(X, Y, weight=weight), 5)
    assert both.n_outputs == both.n_targets == 3 and len(both.trees) == 15
    margins = both.predict(DMatrix(X), output_margin=True)
    for t in range(3):
        alone = dxb.train(params, DMatrix(X, Y[:, t], weight=weight), 5)
        # the same trees, to the last bit: output t sees only column t; the same start
        # up to the order BLAS adds the weighted labels in (it depends on their layout)
        assert [tree.to_dict() for tree in both.trees[t::3]] == \
            [tree.to_dict() for tree in alone.trees], f"target {t}"
        assert both.base_margin[t] == pytest.approx(alone.base_margin[0], rel=1e-14)
        np.testing.assert_allclose(margins[:, t], alone.predict(DMatrix(X), output_margin=True),
                                   rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic",
                                       "reg:gamma"])
def test_the_model_and_metric_of_xgboost(objective):
    xgb = pytest.importorskip("xgboost")
    X, Y, rng = discrete(seed=4)
    Y = {"binary:logistic": labels_of(Y), "reg:gamma": np.abs(Y) + 0.5}.get(objective, Y)
    weight = rng.uniform(0.5, 2.0, len(X))
    params = {**FAST, "objective": objective, "tree_method": "hist", "min_child_weight": 2}
    ours, theirs = {}, {}
    model = dxb.train(params, DMatrix(X, Y, weight=weight), 6,
                      evals=[(DMatrix(X, Y, weight=weight), "train")], evals_result=ours,
                      verbose_eval=False)
    reference = xgb.train(params, xgb.DMatrix(X, Y, weight=weight), 6,
                          evals=[(xgb.DMatrix(X, Y, weight=weight), "train")],
                          evals_result=theirs, verbose_eval=False)
    predicted = model.predict(DMatrix(X))
    assert predicted.shape == (len(X), 3)
    np.testing.assert_allclose(predicted, reference.predict(xgb.DMatrix(X)), rtol=1e-5,
                               atol=1e-5)
    # the metric over every (row, target), each with its row's weight, as xgboost's
    name = model.get_objective().default_metric
    np.testing.assert_allclose(ours["train"][name], theirs["train"][name], rtol=1e-5)


def test_the_metric_is_the_mean_over_rows_and_targets():
    X, Y, rng = discrete(seed=5)
    weight = rng.uniform(0.5, 2.0, len(X))
    result = {}
    model = dxb.train({**FAST, "eval_metric": ["rmse", "mae"]}, DMatrix(X, Y, weight=weight), 4,
                      evals=[(DMatrix(X[:300], Y[:300], weight=weight[:300]), "held")],
                      evals_result=result, verbose_eval=False)
    P = model.predict(DMatrix(X[:300]))
    w = weight[:300, None]
    rmse = np.sqrt(np.sum(w * (Y[:300] - P) ** 2) / (3 * w.sum()))
    mae = np.sum(w * np.abs(Y[:300] - P)) / (3 * w.sum())
    # (predictions in float32, as xgboost's)
    assert result["held"]["rmse"][-1] == pytest.approx(rmse, rel=1e-6)
    assert result["held"]["mae"][-1] == pytest.approx(mae, rel=1e-6)


def test_early_stopping_on_the_pooled_metric():
    X, Y, _ = discrete(n=1200, seed=6)
    model = DaskBoostRegressor(n_estimators=200, learning_rate=0.5, max_depth=6,
                               early_stopping_rounds=3)
    model.fit(X[:800], Y[:800], eval_set=[(X[800:], Y[800:])])
    scores = model.evals_result()["validation_0"]["rmse"]
    assert model.best_iteration < 199 and len(scores) == model.best_iteration + 4
    assert model.best_score == min(scores)
    assert model.predict(X[800:]).shape == (400, 3)


# ---- the same model from every input and scheduler -----------------------------------------

def test_the_same_model_from_every_input_form():
    X, Y, _ = discrete(n=1000, seed=7)
    frame = pd.DataFrame(X, columns=list("abcd"))
    targets = pd.DataFrame(Y, columns=["u", "v", "w"])
    lake = dd.from_pandas(pd.concat([frame, targets], axis=1), npartitions=4)
    fits = {
        "numpy": (X, Y),
        "pandas": (frame, targets),
        "list": (X, Y.tolist()),
        "dask array": (da.from_array(X, chunks=250), da.from_array(Y, chunks=(250, 2))),
        "dask frame": (lake[list("abcd")], lake[["u", "v", "w"]]),
    }
    expected = None
    for name, (Xf, Yf) in fits.items():
        model = DaskBoostRegressor(n_estimators=4, **FAST).fit(Xf, Yf)
        predicted = np.asarray(model.predict(X))
        if expected is None:
            expected = predicted
        np.testing.assert_array_equal(predicted, expected, err_msg=name)
    lazy = DaskBoostRegressor(n_estimators=4, **FAST).fit(lake[list("abcd")],
                                                         lake[["u", "v", "w"]])
    out = lazy.predict(lake[list("abcd")])
    assert isinstance(out, dd.DataFrame) and out.compute().shape == (1000, 3)


def test_the_same_bytes_on_every_scheduler_and_memory_budget(cluster):
    distributed = pytest.importorskip("distributed")
    X, Y, _ = discrete(n=1500, seed=8)
    dX, dY = da.from_array(X, chunks=500), da.from_array(Y, chunks=500)

    def fit(**extra):
        model = DaskBoostRegressor(n_estimators=4, objective="reg:absoluteerror", **FAST,
                                   **extra)
        return model.fit(dX, dY, eval_set=[(dX, dY)])
    threaded = fit()
    with dask.config.set(scheduler="sync"):
        inline = fit()
    spilled = fit(memory_budget="40KB")
    with distributed.Client(cluster):
        on_cluster = fit()
    for other in (inline, spilled, on_cluster):
        assert other.get_booster().save_raw() == threaded.get_booster().save_raw()
        assert other.evals_result() == threaded.evals_result()


def test_xgboost_dask_api_and_batches_of_an_iterator(cluster, tmp_path):
    distributed = pytest.importorskip("distributed")
    X, Y, _ = discrete(n=1200, seed=16)
    params = {**FAST, "objective": "reg:squarederror"}
    dX, dY = da.from_array(X, chunks=400), da.from_array(Y, chunks=400)
    # (the same partitioning, the same bytes: a start's label sums add per partition)
    expected = dxb.train(params, DMatrix(dX, dY), 4)
    with distributed.Client(cluster) as client:
        result = dxb.dask.train(client, params, dxb.dask.DaskDMatrix(client, dX, dY), 4)
        predicted = dxb.dask.predict(client, result["booster"], dX).compute()
    assert result["booster"].save_raw() == expected.save_raw()
    assert predicted.shape == (1200, 3)

    def batches():
        return RowBatches(400, str(tmp_path / "cache"), data=X, label=Y)
    whole = dxb.train(params, DMatrix(X, Y), 4)
    assert dxb.train(params, DMatrix(batches()), 4).save_raw() == whole.save_raw()
    assert dxb.train(params, dxb.ExtMemQuantileDMatrix(batches()), 4).save_raw() == \
        expected.save_raw()


# ---- estimators ---------------------------------------------------------------------------

def test_regressor_predicts_a_column_per_target_and_scores_the_mean_r2():
    from sklearn.metrics import r2_score
    X, Y, rng = discrete(seed=9)
    weight = rng.uniform(0.5, 2.0, len(X))
    model = DaskBoostRegressor(n_estimators=8, **FAST).fit(X, Y)
    assert model.predict(X).shape == (len(X), 3)
    assert model.score(X, Y, sample_weight=weight) == pytest.approx(
        r2_score(Y, model.predict(X), sample_weight=weight), rel=1e-12)
    assert model.intercept_.shape == (3,)


def test_multi_label_classifier_is_xgboosts():
    xgb = pytest.importorskip("xgboost")
    X, Y, _ = discrete(seed=10)
    labels = labels_of(Y).astype(int)
    ours = DaskBoostClassifier(n_estimators=6, tree_method="hist", **FAST).fit(X, labels)
    theirs = xgb.XGBClassifier(n_estimators=6, tree_method="hist", **FAST).fit(X, labels)
    assert ours.classes_.tolist() == [0, 1]
    proba = ours.predict_proba(X)
    assert proba.shape == (len(X), 3)
    np.testing.assert_allclose(proba, theirs.predict_proba(X), rtol=1e-5, atol=1e-6)
    predicted = ours.predict(X)
    assert predicted.dtype.kind == "i"
    np.testing.assert_array_equal(predicted, (proba > 0.5).astype(int))
    assert ours.score(X, labels) == pytest.approx(np.mean((predicted == labels).all(axis=1)))
    dX = da.from_array(X, chunks=300)
    np.testing.assert_array_equal(ours.predict(dX).compute(), predicted)
    np.testing.assert_array_equal(ours.predict_proba(dX).compute(), proba)


def test_contributions_and_scikit_learn_tools():
    from sklearn.model_selection import cross_val_score
    X, Y, _ = discrete(seed=18)
    booster = dxb.train(FAST, DMatrix(X, Y), 4)
    margins = booster.predict(DMatrix(X), output_margin=True)
    contributions = booster.predict(DMatrix(X), pred_contribs=True)
    assert contributions.shape == (len(X), 3, 5)           # (rows, targets, features + bias)
    np.testing.assert_allclose(contributions.sum(axis=-1), margins, rtol=1e-9, atol=1e-9)
    # scikit-learn's cross-validation takes both estimators on a y of several columns
    r2 = cross_val_score(DaskBoostRegressor(n_estimators=4, **FAST), X, Y, cv=3)
    subset = cross_val_score(DaskBoostClassifier(n_estimators=4, **FAST), X,
                             labels_of(Y).astype(int), cv=3)
    assert r2.shape == subset.shape == (3,)
    assert np.all(r2 > 0.5) and np.all((subset > 0.2) & (subset <= 1.0))


def test_partial_fit_of_several_targets_and_labels():
    X, Y, _ = discrete(seed=17)
    for model, y in ((DaskBoostRegressor(n_estimators=2, **FAST), Y),
                     (DaskBoostClassifier(n_estimators=2, **FAST), labels_of(Y).astype(int))):
        model.partial_fit(X[:450], y[:450]).partial_fit(X[450:], y[450:])
        whole = type(model)(n_estimators=2, **FAST).fit(X[:450], y[:450])
        assert model.get_booster().n_rounds == 4 and model.get_booster().n_targets == 3
        assert [t.to_dict() for t in model.get_booster().trees[:6]] == \
            [t.to_dict() for t in whole.get_booster().trees]
        assert model.predict(X).shape == (len(X), 3)


def test_saved_and_loaded_both_formats(tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, Y, _ = discrete(seed=11)
    for model in (DaskBoostRegressor(n_estimators=4, **FAST).fit(X, Y),
                  DaskBoostClassifier(n_estimators=4, **FAST).fit(X, labels_of(Y))):
        path = str(tmp_path / "model.json")
        model.save_model(path)
        again = type(model)()
        again.load_model(path)
        np.testing.assert_array_equal(again.predict(X), model.predict(X))
        booster = model.get_booster()
        booster.save_model(str(tmp_path / "x.json"), format="xgboost")
        theirs = xgb.Booster(model_file=str(tmp_path / "x.json"))
        np.testing.assert_allclose(theirs.predict(xgb.DMatrix(X), output_margin=True),
                                   booster.predict(DMatrix(X), output_margin=True),
                                   rtol=1e-5, atol=1e-5)
        # and xgboost's own multi-target model, read here
        theirs = xgb.train({**FAST, "objective": booster.objective}, xgb.DMatrix(
            X, Y if booster.objective == "reg:squarederror" else labels_of(Y)), 4)
        theirs.save_model(str(tmp_path / "theirs.json"))
        read = dxb.Booster.load(str(tmp_path / "theirs.json"))
        assert read.n_targets == 3
        np.testing.assert_allclose(read.predict(DMatrix(X)), theirs.predict(xgb.DMatrix(X)),
                                   rtol=1e-5, atol=1e-5)


def test_training_continues_from_a_multi_target_model():
    X, Y, _ = discrete(seed=12)
    whole = DaskBoostRegressor(n_estimators=6, **FAST).fit(X, Y)
    first = DaskBoostRegressor(n_estimators=3, **FAST).fit(X, Y)
    more = DaskBoostRegressor(n_estimators=3, **FAST).fit(X, Y, xgb_model=first)
    np.testing.assert_allclose(more.predict(X), whole.predict(X), rtol=1e-12)
    with pytest.raises(ValueError, match="output"):
        DaskBoostRegressor(n_estimators=2).fit(X, Y[:, 0], xgb_model=first)


def test_a_custom_objective_gets_every_target():
    X, Y, _ = discrete(seed=13)
    shapes = []

    def squared(y_true, y_pred):
        shapes.append((y_true.shape, y_pred.shape))
        return y_pred - y_true, np.ones_like(y_pred)
    custom = DaskBoostRegressor(n_estimators=3, objective=squared, base_score=0.5,
                                **FAST).fit(X, Y)
    builtin = DaskBoostRegressor(n_estimators=3, base_score=0.5, **FAST).fit(X, Y)
    assert set(shapes) == {((len(X), 3), (len(X), 3))}
    np.testing.assert_allclose(custom.predict(X), builtin.predict(X), rtol=1e-6)


# ---- cross-validation -----------------------------------------------------------------------

class KeepModels(TrainingCallback):
    def after_training(self, model):
        self.models = [pack.bst for pack in model.cvfolds]
        return model


@pytest.mark.parametrize("objective", ["reg:squarederror", "reg:absoluteerror",
                                       "binary:logistic"])
def test_each_cv_fold_is_the_fit_on_its_training_rows(objective):
    X, Y, _ = discrete(n=800, seed=14)
    Y = labels_of(Y) if objective == "binary:logistic" else Y
    keep = KeepModels()
    frame = cv({**FAST, "objective": objective}, X, Y, nfold=3, num_boost_round=4, seed=2,
               callbacks=[keep])
    folds = cv_folds(len(X), 3, seed=2)
    for f, model in enumerate(keep.models):
        alone = DaskBoostRegressor(n_estimators=4, objective=objective, **FAST).fit(
            X[folds != f], Y[folds != f])
        assert model.to_dict() == alone.get_booster().to_dict(), f"fold {f}"
    assert frame.shape == (4, 4) and frame.columns[0].startswith("train-")


# ---- refusals --------------------------------------------------------------------------------

def test_what_takes_one_label_per_row_is_refused_by_name():
    X, Y, _ = discrete(n=300, seed=15)
    for objective in ("reg:quantileerror", "multi:softprob", "rank:ndcg"):
        with pytest.raises(ValueError, match=f"objective='{objective}' takes one label per "
                                             "row; y has 3 columns"):
            dxb.train({"objective": objective, "num_class": 3}, DMatrix(X, Y), 2)
    for metric in ("auc", "aucpr"):
        with pytest.raises(ValueError, match=f"eval_metric='{metric}' scores one label per "
                                             "row; y has 3 targets"):
            DaskBoostRegressor(n_estimators=2, eval_metric=metric, objective="binary:logistic"
                               ).fit(X, labels_of(Y), eval_set=[(X, labels_of(Y))])
    with pytest.raises(ValueError, match="class_weight"):
        DaskBoostClassifier(n_estimators=2, class_weight="balanced").fit(X, labels_of(Y))
    with pytest.raises(ValueError, match="stratified=True with a y of several columns"):
        cv({"objective": "binary:logistic"}, X, labels_of(Y), stratified=True)
    bad = Y.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match="y contains missing values"):
        DaskBoostRegressor(n_estimators=2).fit(X, bad)
    with pytest.raises(ValueError, match=r"y's column 2: objective='binary:logistic' needs "
                                         r"labels in \[0, 1\]"):
        DaskBoostRegressor(n_estimators=2, objective="binary:logistic").fit(
            X, np.column_stack([labels_of(Y)[:, :2], Y[:, 2]]))
    with pytest.raises(ValueError, match="X has 300 rows but y has 299"):
        DaskBoostRegressor(n_estimators=2).fit(X, Y[:299])
    with pytest.raises(TypeError, match="y with 2 columns .* must be numeric"):
        DaskBoostRegressor(n_estimators=2).fit(X, np.array([["a", "b"]] * 300, dtype=object))
    with pytest.raises(ValueError, match=r"y has shape \(300, 2\); the predictions have"):
        DaskBoostRegressor(n_estimators=2).fit(X, Y).score(X, Y[:, :2])
