"""xgboost's native API: ``daskboost.train(params, ...) -> Booster`` (the estimators' fit
behind it: the same model bytes) and the Booster's slicing by rounds."""

import json

import dask.array as da
import numpy as np
import pandas as pd
import pytest

import daskboost
from daskboost import Booster, DaskBoostClassifier, DaskBoostRegressor


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 5))
    return X, (X[:, 0] - X[:, 1] + rng.normal(0, 0.7, 2000) > 0).astype(np.int64)


def booster_json(booster):
    return json.dumps(booster.to_dict(), sort_keys=True)


def test_the_estimators_model_from_xgboosts_names(xy):
    X, y = xy
    params = {"objective": "binary:logistic", "eta": 0.2, "max_depth": 3, "lambda": 2.0,
              "alpha": 0.1, "min_split_loss": 0.01, "seed": 3, "nthread": 1}
    booster = daskboost.train(params, X, y, num_boost_round=8)
    assert isinstance(booster, Booster) and booster.num_boosted_rounds() == 8
    estimator = DaskBoostClassifier(objective="binary:logistic", learning_rate=0.2,
                                    max_depth=3, reg_lambda=2.0, reg_alpha=0.1, gamma=0.01,
                                    random_state=3, n_estimators=8).fit(X, y)
    assert booster_json(booster) == booster_json(estimator.get_booster())
    np.testing.assert_allclose(booster.predict(X), estimator.predict_proba(X)[:, 1],
                               rtol=1e-12, atol=0)
    regression = daskboost.train({"max_depth": 3}, X, y.astype(float))
    assert regression.num_boosted_rounds() == 10  # xgboost's default
    assert booster_json(regression) == booster_json(
        DaskBoostRegressor(max_depth=3, n_estimators=10).fit(X, y.astype(float)).get_booster())


def test_named_evals_fill_evals_result_and_stop_early(xy):
    X, y = xy
    train_rows, valid_rows = slice(0, 1500), slice(1500, None)
    result = {"stale": 1}
    booster = daskboost.train(
        {"objective": "binary:logistic", "eta": 0.5, "max_depth": 6}, X[train_rows],
        y[train_rows], num_boost_round=200,
        evals=[(X[train_rows], y[train_rows], "train"), (X[valid_rows], y[valid_rows], "valid")],
        early_stopping_rounds=3, evals_result=result)
    assert list(result) == ["train", "valid"]
    valid = result["valid"]["logloss"]
    assert booster.best_iteration == int(np.argmin(valid))
    assert len(valid) == booster.best_iteration + 4 < 200
    assert booster.num_boosted_rounds() == len(valid)
    # the same values as the estimator's eval sets, by their names
    estimator = DaskBoostClassifier(objective="binary:logistic", learning_rate=0.5,
                                    n_estimators=200, early_stopping_rounds=3).fit(
        X[train_rows], y[train_rows],
        eval_set=[(X[train_rows], y[train_rows]), (X[valid_rows], y[valid_rows])])
    assert estimator.evals_result()["validation_1"] == result["valid"]
    assert estimator.evals_result()["validation_0"] == result["train"]


def test_unnamed_evals_params_settings_and_continuing(xy):
    X, y = xy
    params = {"objective": "reg:squarederror", "n_estimators": 5, "max_depth": 2}
    first = daskboost.train(params, X, y.astype(float), evals=[(X, y.astype(float))],
                            evals_result=(result := {}))
    assert first.num_boosted_rounds() == 5 and list(result) == ["validation_0"]
    more = daskboost.train({**params, "n_estimators": 3}, X, y.astype(float), xgb_model=first)
    assert more.num_boosted_rounds() == 8
    assert np.array_equal(more.predict(X, iteration_range=(0, 5)), first.predict(X))
    assert not np.array_equal(more.predict(X), first.predict(X))


def test_dask_input_callbacks_and_progress(xy, capsys):
    X, y = xy
    seen = []

    class Counting(daskboost.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            seen.append((epoch, len(evals_log["valid"]["logloss"])))
            return epoch == 2  # stop after the third round

    Xd, yd = da.from_array(X, chunks=500), da.from_array(y, chunks=500)
    booster = daskboost.train({"objective": "binary:logistic"}, Xd, yd, num_boost_round=20,
                              evals=[(Xd, yd, "valid")], callbacks=[Counting()],
                              verbose_eval=1)
    assert seen == [(0, 1), (1, 2), (2, 3)] and booster.num_boosted_rounds() == 3
    assert capsys.readouterr().err.count("valid-logloss=") == 3
    in_memory = daskboost.train({"objective": "binary:logistic"}, X, y, num_boost_round=3)
    assert np.allclose(booster.predict(X), in_memory.predict(X), atol=1e-6)


@pytest.mark.parametrize("call,error,match", [
    (dict(params=["eta", 0.1]), TypeError, "params must be a dict"),
    (dict(params={"learning_rat": 0.1}), ValueError, "'learning_rat' is not a parameter"),
    (dict(params={"eta": 0.1, "learning_rate": 0.2}), ValueError, "same parameter"),
    (dict(num_boost_round=0), ValueError, "num_boost_round=0"),
    (dict(params={"n_estimators": 5}, num_boost_round=6), ValueError, "disagree"),
    (dict(evals=[(1, 2, 3, 4)]), TypeError, "evals must be a list"),
    (dict(evals="valid"), TypeError, "evals must be a list"),
    (dict(evals=[("X", "y", "")]), TypeError, "name must be a non-empty string"),
    (dict(evals=[("X", "y", "a"), ("X", "y", "a")]), ValueError, "names must differ"),
    (dict(evals_result=[]), TypeError, "evals_result must be a dict"),
    (dict(early_stopping_rounds=3), ValueError, "needs an eval_set"),
    (dict(params={"booster": "dart"}), ValueError, "booster='dart'"),
    (dict(params={"process_type": "update"}), ValueError, "refresh and prune updaters"),
    (dict(params={"disable_default_eval_metric": 2}), ValueError,
     "disable_default_eval_metric=2 must be True, False, 0 or 1"),
    (dict(params={"disable_default_eval_metric": True}, evals=[("X", "y", "a")]), ValueError,
     "leaves the eval sets no metric; give eval_metric or custom_metric"),
    (dict(params={"base_score": [[0.5]]}), ValueError, "a vector of one number per output"),
    (dict(params={"base_score": [0.2, 0.3]}), ValueError,
     r"base_score has 2 values; the model has 1 output \(give one value per output\)"),
])
def test_bad_arguments_are_refused_by_name(xy, call, error, match):
    X, y = xy
    arguments = {"params": {}, **call}
    if arguments.get("evals") and isinstance(arguments["evals"], list):
        arguments["evals"] = [tuple(X if v == "X" else y if v == "y" else v for v in e)
                              if len(e) == 3 else e for e in arguments["evals"]]
    params = arguments.pop("params")
    with pytest.raises(error, match=match):
        daskboost.train(params, X, y.astype(float), **arguments)


# ---- slicing a Booster by rounds (xgboost's ``booster[start:stop:step]``) -------------

def test_slices_are_the_models_of_those_rounds(xy, tmp_path):
    X, y = xy
    booster = daskboost.train({"objective": "multi:softprob", "max_depth": 2}, X,
                              y + (X[:, 2] > 1), num_boost_round=6)
    K = 3

    def margins(b):
        return b.predict(X, output_margin=True) - b.base_margin

    rounds = list(booster)
    assert len(rounds) == 6 and all(r.num_boosted_rounds() == 1 for r in rounds)
    assert all(len(r.trees) == K for r in rounds)
    assert np.array_equal(booster[1:4].predict(X), booster.predict(X, iteration_range=(1, 4)))
    np.testing.assert_allclose(margins(booster[::2]),
                               sum(margins(rounds[i]) for i in (0, 2, 4)), rtol=0, atol=1e-12)
    assert booster[-1].trees == booster.trees[-K:] and booster[5].trees == booster.trees[-K:]
    booster[2:].save_model(tmp_path / "tail.json")
    loaded = Booster.load(tmp_path / "tail.json")
    assert np.array_equal(loaded.predict(X), booster[2:].predict(X))


def test_a_slice_forgets_the_best_iteration(xy):
    X, y = xy
    booster = daskboost.train({"objective": "binary:logistic", "eta": 1.0}, X, y,
                              num_boost_round=30, evals=[(X[:300], y[:300])],
                              early_stopping_rounds=2)
    assert booster.best_iteration is not None
    head = booster[:booster.best_iteration + 1]
    assert head.best_iteration is None and head.num_boosted_rounds() == booster.best_iteration + 1
    assert np.array_equal(head.predict(X), booster.predict(X))  # (the best rounds either way)


@pytest.mark.parametrize("index,error,match", [
    (6, IndexError, "round 6 is out of range"), (-7, IndexError, "round -7"),
    (slice(0, 4, -1), ValueError, "step must be > 0"), (slice(0, 4, 0), ValueError, "step"),
    (slice(4, 2), ValueError, "holds no round"), ("0", TypeError, "indexed by a round"),
    (True, TypeError, "indexed by a round"),
])
def test_bad_indices(xy, index, error, match):
    X, y = xy
    booster = daskboost.train({"max_depth": 2}, X, y.astype(float), num_boost_round=6)
    with pytest.raises(error, match=match):
        booster[index]


def test_an_estimators_xgb_params_train_its_model(xy):
    X, y = xy
    estimator = DaskBoostClassifier(n_estimators=4, max_depth=3, learning_rate=0.2,
                                    early_stopping_rounds=None, verbose=False)
    assert estimator.get_num_boosting_rounds() == 4
    params = estimator.get_xgb_params()
    assert not {"n_estimators", "early_stopping_rounds", "verbose"} & set(params)
    assert params["objective"] == "binary:logistic"
    booster = daskboost.train(params, X, y, num_boost_round=estimator.get_num_boosting_rounds())
    assert booster_json(booster) == booster_json(estimator.fit(X, y).get_booster())
    three = DaskBoostClassifier(n_estimators=2).fit(X, y + (X[:, 2] > 1))
    assert three.get_xgb_params()["objective"] == "multi:softprob"
    assert DaskBoostRegressor().get_xgb_params()["objective"] is None  # reg:squarederror


# ---- Booster.inplace_predict (xgboost's) ---------------------------------------------

def test_inplace_predict_is_xgboosts_on_the_exported_model(tmp_path):
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(5)
    X = rng.normal(size=(900, 4)).astype(np.float32)  # (xgboost compares in float32)
    X[rng.random(X.shape) < 0.2] = np.nan
    y = (np.nan_to_num(X[:, 0]) > 0).astype(int) + (np.nan_to_num(X[:, 1]) > 1)
    marked = np.where(np.isnan(X), np.float32(7), X)  # (where no missing row goes)
    # (a multiclass export moves each class's start into its first tree, so only binary
    # models keep xgboost's margins for rounds that skip the first, or per-row starts)
    for objective, labels in (("multi:softprob", y), ("binary:logistic", y > 0)):
        ours = daskboost.train({"objective": objective}, X, labels, num_boost_round=6)
        ours.save_model(tmp_path / "x.json", format="xgboost")
        theirs = xgboost.Booster(model_file=str(tmp_path / "x.json"))
        cases = [{}, {"missing": 7.0}, {"predict_type": "margin", "iteration_range": (0, 4)}]
        if objective == "binary:logistic":
            cases += [{"predict_type": "margin", "iteration_range": (2, 5)},
                      {"predict_type": "margin", "base_margin": rng.normal(size=900)}]
        for kwargs in cases:
            data = marked if "missing" in kwargs else X
            np.testing.assert_allclose(ours.inplace_predict(data, **kwargs),
                                       theirs.inplace_predict(data, **kwargs), rtol=1e-5,
                                       atol=1e-6, err_msg=f"{objective} {kwargs}")
        assert np.array_equal(ours.inplace_predict(marked, missing=7.0), ours.predict(X))


def test_inplace_predict_bad_arguments(xy):
    X, y = xy
    booster = daskboost.train({"max_depth": 2}, pd.DataFrame(X, columns=list("abcde")),
                              y.astype(float), num_boost_round=2)
    renamed = pd.DataFrame(X, columns=list("vwxyz"))
    with pytest.raises(ValueError, match="not the training columns"):
        booster.inplace_predict(renamed)
    assert np.array_equal(booster.inplace_predict(renamed, validate_features=False),
                          booster.inplace_predict(pd.DataFrame(X, columns=list("abcde"))))
    with pytest.raises(ValueError, match="predict_type='leaf'"):
        booster.inplace_predict(X, predict_type="leaf")
    with pytest.raises(ValueError, match="base_margin has shape"):
        booster.inplace_predict(X, base_margin=np.zeros((len(X), 2)))


def test_predict_validate_features_false_takes_columns_by_position(xy):
    X, y = xy
    frame = pd.DataFrame(X, columns=list("abcde"))
    model = DaskBoostClassifier(n_estimators=3).fit(frame, y)
    renamed = frame.set_axis(list("vwxyz"), axis=1)
    with pytest.raises(ValueError, match="do not match the training columns"):
        model.predict(renamed)
    for method in ("predict", "predict_proba", "apply"):
        assert np.array_equal(getattr(model, method)(renamed, validate_features=False),
                              getattr(model, method)(frame))
    assert np.array_equal(model.predict(renamed, pred_contribs=True, validate_features=False),
                          model.predict(frame, pred_contribs=True))
    with pytest.raises(TypeError, match="validate_features='no'"):
        model.predict(frame, validate_features="no")


def test_save_raw_is_the_model_files_bytes(xy, tmp_path):
    X, y = xy
    estimator = DaskBoostClassifier(n_estimators=4, max_depth=3).fit(X, y)
    booster = estimator.get_booster()
    booster.set_attr(note="kept")
    raw = booster.save_raw()
    assert isinstance(raw, bytearray)
    booster.save_model(tmp_path / "model.json")
    assert bytes(raw) == (tmp_path / "model.json").read_bytes()
    loaded = Booster.load(raw)
    assert booster_json(loaded) == booster_json(booster) and loaded.attr("note") == "kept"
    # an estimator's file read from its bytes (a Booster's bytes hold no classes)
    estimator.save_model(tmp_path / "estimator.json")
    from_bytes = DaskBoostClassifier().load_model((tmp_path / "estimator.json").read_bytes())
    np.testing.assert_array_equal(from_bytes.predict_proba(X), estimator.predict_proba(X))
    booster.save_model(tmp_path / "xgb.json", format="xgboost")
    assert bytes(booster.save_raw(format="xgboost")) == (tmp_path / "xgb.json").read_bytes()
    # UBJSON (binary JSON), the same document: daskboost's float64 numbers exact
    for format in ("daskboost", "xgboost"):
        binary = bytes(booster.save_raw("ubj", format=format))
        assert binary[:2] == b"{L"
        assert Booster.load(binary).to_dict() == Booster.load(
            booster.save_raw(format=format)).to_dict()
    assert Booster.load(bytes(booster.save_raw("ubj"))).to_dict() == booster.to_dict()
    estimator.save_model(tmp_path / "estimator.ubj")   # (a .ubj name: UBJSON, as xgboost's)
    assert (tmp_path / "estimator.ubj").read_bytes()[:2] == b"{L"
    np.testing.assert_array_equal(
        DaskBoostClassifier().load_model(tmp_path / "estimator.ubj").predict_proba(X),
        estimator.predict_proba(X))
    with pytest.raises(ValueError, match="raw_format='deprecated' must be 'json' or 'ubj'"):
        booster.save_raw("deprecated")


# ---- xgboost's keywords and parameters of the native calls ------------------------------

def _accuracy_error(predt, dmatrix):
    return "err", float(np.mean((predt > 0.5) != dmatrix.get_label()))


def test_dtrain_keyword_and_disable_default_eval_metric_as_xgboosts():
    # xgboost's demos call train(params, dtrain=...) and keep only their custom metric
    # with disable_default_eval_metric: the same logs, on discrete data the same values
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(1)
    X = rng.integers(0, 5, size=(600, 4)).astype(float)
    y = (X[:, 0] + X[:, 1] + rng.normal(0, 1, 600) > 4).astype(float)
    params = {"objective": "binary:logistic", "max_depth": 3,
              "disable_default_eval_metric": 1}
    logs, frames = {}, {}
    for module in (xgboost, daskboost):
        dtrain = module.DMatrix(X, label=y)
        logs[module.__name__] = {}
        module.train(params, dtrain=dtrain, num_boost_round=4, evals=[(dtrain, "train")],
                     custom_metric=_accuracy_error, evals_result=logs[module.__name__])
        frames[module.__name__] = module.cv(params, dtrain=dtrain, num_boost_round=3, nfold=3,
                                            custom_metric=_accuracy_error)
    assert list(logs["daskboost"]["train"]) == list(logs["xgboost"]["train"]) == ["err"]
    np.testing.assert_allclose(logs["daskboost"]["train"]["err"],  # (xgboost's: "%f" text)
                               logs["xgboost"]["train"]["err"], rtol=0, atol=1e-6)
    assert list(frames["daskboost"].columns) == list(frames["xgboost"].columns)
    # the flag's text forms; off keeps the default metric first, as before
    off = {}
    daskboost.train({**params, "disable_default_eval_metric": "false"},
                    dtrain=daskboost.DMatrix(X, label=y), num_boost_round=2,
                    evals=[(daskboost.DMatrix(X, label=y), "t")],
                    custom_metric=_accuracy_error, evals_result=off)
    assert list(off["t"]) == ["logloss", "err"]
    with pytest.raises(TypeError, match="X and dtrain are the same argument; give one"):
        daskboost.train({}, X, dtrain=daskboost.DMatrix(X, label=y))
    with pytest.raises(TypeError, match=r"cv\(\) is missing its training data: X \(or dtrain"):
        daskboost.cv({}, num_boost_round=2)


def test_a_vector_base_score_is_each_outputs_start_as_xgboosts():
    # xgboost 3.1+: base_score, one per class of a multi-class model, each that class's
    # margin (its demo of a custom softmax passes one); and a custom objective's too
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(2)
    X = rng.integers(0, 4, size=(500, 3)).astype(float)
    y = (X[:, 0] + rng.integers(0, 2, 500)) % 3
    start = np.array([0.2, 0.3, 0.5])
    params = {"objective": "multi:softprob", "num_class": 3, "base_score": start,
              "max_depth": 2}
    for rounds in (1, 3):
        theirs = xgboost.train(params, xgboost.DMatrix(X, label=y), rounds)
        ours = daskboost.train(params, daskboost.DMatrix(X, label=y), rounds)
        np.testing.assert_allclose(ours.predict(daskboost.DMatrix(X), output_margin=True),
                                   theirs.predict(xgboost.DMatrix(X), output_margin=True),
                                   rtol=0, atol=1e-6)
    estimator = DaskBoostClassifier(base_score=start, n_estimators=2).fit(X, y)
    np.testing.assert_array_equal(estimator.get_booster().base_margin, start)
    with pytest.raises(ValueError, match="base_score has 3 values; the model has 1 output "):
        DaskBoostClassifier(base_score=start, n_estimators=2).fit(X, y % 2)


def test_xgboosts_other_names():
    from daskboost.callback import TrainingCallback
    assert daskboost.XGBModel is DaskBoostRegressor
    assert "float" in str(TrainingCallback.EvalsLog)
    assert daskboost.callback.EarlyStopping(3).rounds == 3  # (xgboost's demos pass it so)


def test_xgboosts_positional_evals_params_pairs_and_metric_sets():
    # xgboost's demos: train(param_pairs, dtrain, rounds, watchlist) with eval_metric given
    # twice in the pairs; cv(..., metrics={"error"})
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(3)
    X = rng.integers(0, 5, size=(400, 3)).astype(float)
    y = (X[:, 0] + rng.normal(0, 1, 400) > 2).astype(float)
    pairs = [("max_depth", 2), ("objective", "binary:logistic"), ("eval_metric", "logloss"),
             ("max_depth", 3), ("eval_metric", "error")]
    logs, frames = {}, {}
    for module in (xgboost, daskboost):
        dtrain = module.DMatrix(X, label=y)
        logs[module.__name__] = {}
        booster = module.train(pairs, dtrain, 3, [(dtrain, "train")],
                               evals_result=logs[module.__name__], verbose_eval=False)
        assert booster.num_boosted_rounds() == 3
        frames[module.__name__] = module.cv({"objective": "binary:logistic"}, dtrain, 2,
                                            nfold=3, metrics={"error"})
    assert list(logs["daskboost"]["train"]) == list(logs["xgboost"]["train"]) == [
        "logloss", "error"]
    np.testing.assert_allclose(logs["daskboost"]["train"]["error"],
                               logs["xgboost"]["train"]["error"], rtol=0, atol=1e-6)
    assert list(frames["daskboost"].columns) == list(frames["xgboost"].columns)
    # the later max_depth wins, as in xgboost
    assert booster_json(daskboost.train(pairs, daskboost.DMatrix(X, label=y), 3)) == \
        booster_json(daskboost.train({"max_depth": 3, "objective": "binary:logistic"},
                                     daskboost.DMatrix(X, label=y), 3))


@pytest.mark.parametrize("params", [
    {"objective": "binary:logistic"}, {"objective": "multi:softprob", "num_class": 3},
    {"objective": "multi:softmax", "num_class": 3}, {"objective": "reg:squarederror"}])
def test_strict_shapes_are_xgboosts(params):
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(4)
    X = rng.integers(0, 4, size=(60, 3)).astype(float)
    y = rng.integers(0, 3 if "num_class" in params else 2, 60).astype(float)
    kinds = [{}, {"output_margin": True}, {"pred_leaf": True}, {"pred_contribs": True},
             {"pred_interactions": True}]
    models = {module: module.train({**params, "max_depth": 2}, module.DMatrix(X, label=y), 2)
              for module in (xgboost, daskboost)}
    for kind in kinds:
        for strict in (False, True):
            shapes = [model.predict(module.DMatrix(X), strict_shape=strict, **kind).shape
                      for module, model in models.items()]
            assert shapes[0] == shapes[1], (kind, strict)
    for predict_type in ("value", "margin"):
        shapes = [model.inplace_predict(X, predict_type=predict_type, strict_shape=True).shape
                  for model in models.values()]
        assert shapes[0] == shapes[1]


def test_the_estimators_take_xgboosts_aliases_and_old_keywords():
    from sklearn.base import clone
    xgboost = pytest.importorskip("xgboost")
    model = daskboost.XGBClassifier(n_estimators=3, eta=1, alpha=0.5, seed=7)
    assert (model.learning_rate, model.reg_alpha, model.random_state) == (1, 0.5, 7)
    assert "eta" not in model.get_params() and clone(model).learning_rate == 1
    assert model.set_params(eta=0.2).learning_rate == 0.2
    with pytest.warns(UserWarning, match=r"use_label_encoder=False\) is not used"):
        daskboost.XGBClassifier(use_label_encoder=False)
    with pytest.raises(ValueError, match="eta=1 and learning_rate=0.5 are the same parameter"):
        daskboost.XGBRegressor(eta=1, learning_rate=0.5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'etaa'"):
        daskboost.XGBRegressor(etaa=1)
    # the same model as xgboost's estimator given the same aliases, on discrete data
    rng = np.random.default_rng(5)
    X = rng.integers(0, 4, size=(300, 3)).astype(float)
    y = X[:, 0] - X[:, 1] + rng.normal(0, 0.3, 300)
    ours = daskboost.XGBRegressor(n_estimators=3, max_depth=2, eta=0.5, alpha=1.0).fit(X, y)
    theirs = xgboost.XGBRegressor(n_estimators=3, max_depth=2, eta=0.5, alpha=1.0).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=0, atol=1e-5)


def test_cv_with_a_native_custom_objective_is_xgboosts():
    # xgboost's cross_validation demo: cv(..., obj=logregobj, custom_metric=evalerror)
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(6)
    X = rng.integers(0, 4, size=(600, 3)).astype(float)
    y = (X[:, 0] + rng.normal(0, 1, 600) > 1.5).astype(float)

    def logregobj(preds, dtrain):
        p = 1.0 / (1.0 + np.exp(-preds))
        return p - dtrain.get_label(), p * (1.0 - p)

    def evalerror(preds, dtrain):
        return "error", float(np.mean((preds > 0.0) != dtrain.get_label()))

    folds = [(np.flatnonzero(np.arange(600) % 3 != f), np.flatnonzero(np.arange(600) % 3 == f))
             for f in range(3)]
    frames = [module.cv({"max_depth": 2, "base_score": 0.0}, module.DMatrix(X, label=y), 4,
                        folds=folds, obj=logregobj, custom_metric=evalerror)
              for module in (xgboost, daskboost)]
    assert list(frames[0].columns) == list(frames[1].columns)
    np.testing.assert_allclose(frames[1]["test-error-mean"], frames[0]["test-error-mean"],
                               rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="fpreproc: cv grows the folds together"):
        daskboost.cv({}, daskboost.DMatrix(X, label=y), 2, fpreproc=lambda *a: a)


def test_split_value_histogram_and_reset(xy):
    """xgboost's ``get_split_value_histogram``: the thresholds of a feature's numeric
    splits binned (its algorithm on daskboost's thresholds); ``reset`` keeps the model."""
    X, y = xy
    booster = daskboost.train({"max_depth": 3}, X, y, num_boost_round=8)
    name = booster.feature_names[0] if booster.feature_names else "f0"
    thresholds = np.concatenate([t.threshold[t.feature == 0] for t in booster.trees])
    histogram = booster.get_split_value_histogram(name)
    assert list(histogram.columns) == ["SplitValue", "Count"]
    assert histogram.Count.sum() == len(thresholds) > 0
    assert len(histogram) <= len(np.unique(thresholds))
    two = booster.get_split_value_histogram(name, bins=2, as_pandas=False)
    assert two.shape[1] == 2 and len(two) <= 2 and two[:, 1].sum() == len(thresholds)
    assert two[-1, 0] == pytest.approx(thresholds.max())
    with pytest.raises(ValueError, match="is not one of the model's features"):
        booster.get_split_value_histogram("nope")
    before = booster.predict(X)
    assert booster.reset() is booster
    np.testing.assert_array_equal(booster.predict(X), before)
