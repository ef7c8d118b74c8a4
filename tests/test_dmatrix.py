"""xgboost's ``DMatrix`` (``daskboost.dmatrix``): a native-API script runs as it is, with
``import daskboost as xgb``: ``train(params, dtrain, rounds, evals=[(dvalid, name)])``,
``cv(params, dtrain, rounds, nfold)`` and ``Booster.predict(dmatrix)``."""

import json

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import daskboost

PARAMS = {"objective": "binary:logistic", "max_depth": 3, "eta": 0.3, "tree_method": "hist"}


@pytest.fixture(scope="module")
def data():
    """Discrete features (xgboost's cuts and ours agree), labels, weights."""
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.integers(0, 8, size=(1500, 5)).astype(np.float64),
                     columns=list("abcde"))
    y = (X["a"] + X["b"] + rng.normal(size=len(X)) > 8).astype(np.float64).to_numpy()
    return X, y, rng.uniform(0.5, 2.0, size=len(X))


def booster_json(booster):
    return json.dumps(booster.to_dict(), sort_keys=True)


def test_train_on_matrices_is_train_on_arrays(data):
    X, y, w = data
    dtrain = daskboost.DMatrix(X[:1000], label=y[:1000], weight=w[:1000])
    dvalid = daskboost.DMatrix(X[1000:], label=y[1000:])
    log = {}
    booster = daskboost.train(PARAMS, dtrain, 30, evals=[(dtrain, "train"), (dvalid, "valid")],
                              early_stopping_rounds=3, evals_result=log)
    arrays_log = {}
    from_arrays = daskboost.train(PARAMS, X[:1000], y[:1000], num_boost_round=30,
                                  sample_weight=w[:1000], early_stopping_rounds=3,
                                  evals=[(X[:1000], y[:1000], "train"),
                                         (X[1000:], y[1000:], "valid")],
                                  evals_result=arrays_log)
    assert booster_json(booster) == booster_json(from_arrays)
    assert log["valid"] == arrays_log["valid"]
    # each matrix's own weights weigh its metric (xgboost's eval DMatrix): the training
    # matrix's, as the estimator's sample_weight_eval_set
    estimator = daskboost.DaskBoostClassifier(max_depth=3, learning_rate=0.3, n_estimators=30,
                                              early_stopping_rounds=3).fit(
        X[:1000], y[:1000], sample_weight=w[:1000],
        eval_set=[(X[:1000], y[:1000]), (X[1000:], y[1000:])],
        sample_weight_eval_set=[w[:1000], None])
    assert log["train"] == estimator.evals_result_["validation_0"] != arrays_log["train"]


def test_the_same_script_on_xgboost_gives_the_same_model(data):
    xgboost = pytest.importorskip("xgboost")
    X, y, w = data
    results = {}
    for module in (xgboost, daskboost):
        dtrain = module.DMatrix(X[:1000], label=y[:1000], weight=w[:1000])
        dvalid = module.DMatrix(X[1000:], label=y[1000:], base_margin=np.full(500, 0.25))
        log = {}
        booster = module.train(PARAMS, dtrain, 10, evals=[(dvalid, "valid")],
                               evals_result=log, verbose_eval=False)
        results[module.__name__] = (log["valid"]["logloss"], booster.predict(dvalid),
                                    booster.predict(dvalid, output_margin=True))
    ours, theirs = results["daskboost"], results["xgboost"]
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=0, atol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=0, atol=1e-5)
    # the matrix's base margins are the start: 0.25 more than without them
    booster = daskboost.train(PARAMS, daskboost.DMatrix(X, label=y), 3)
    plain = booster.predict(daskboost.DMatrix(X[:5]), output_margin=True)
    shifted = booster.predict(daskboost.DMatrix(X[:5], base_margin=np.full(5, 0.25)),
                              output_margin=True)
    np.testing.assert_allclose(shifted - plain, 0.25 - booster.base_margin[0], atol=1e-12)


def test_cv_on_a_matrix_is_cv_on_arrays(data):
    X, y, w = data
    on_matrix = daskboost.cv(PARAMS, daskboost.DMatrix(X, label=y, weight=w), 4, 3)
    on_arrays = daskboost.cv(PARAMS, X, y, nfold=3, num_boost_round=4, sample_weight=w)
    assert on_matrix.shape == (4, 4) and on_matrix.equals(on_arrays)


def test_a_matrix_applies_missing_names_types_and_max_bin(data):
    X, y, _ = data
    marked = X.where(X["c"] != 3, -1.0)
    with_nan = X.where(X["c"] != 3, np.nan)
    named = daskboost.DMatrix(marked.to_numpy(), label=y, missing=-1.0,
                              feature_names=list("vwxyz"))
    assert named.feature_names == list("vwxyz")
    assert (named.num_row(), named.num_col()) == (1500, 5)
    reference = daskboost.train(PARAMS, with_nan.set_axis(list("vwxyz"), axis=1), y,
                                num_boost_round=3)
    assert booster_json(daskboost.train(PARAMS, named, 3)) == booster_json(reference)
    coarse = daskboost.QuantileDMatrix(X, label=y, max_bin=4, feature_types=["c"] + ["q"] * 4)
    by_params = daskboost.train({**PARAMS, "max_bin": 4, "feature_types": ["c"] + ["q"] * 4},
                                X, y, num_boost_round=3)
    assert booster_json(daskboost.train(PARAMS, coarse, 3)) == booster_json(by_params)
    # the dict's own values win over the matrix's
    assert booster_json(daskboost.train({**PARAMS, "max_bin": 256, "feature_types": None},
                                        coarse, 3)) == booster_json(
        daskboost.train(PARAMS, X, y, num_boost_round=3))


def test_a_matrix_of_dask_collections(data):
    X, y, w = data
    dX, dy, dw = (da.from_array(np.asarray(a), chunks=500) for a in (X, y, w))
    matrix = daskboost.DMatrix(dX, label=dy, weight=dw)
    assert matrix.num_row() == 1500
    booster = daskboost.train(PARAMS, matrix, 3)
    assert booster_json(booster) == booster_json(daskboost.train(
        PARAMS, dX, dy, sample_weight=dw, num_boost_round=3))
    with pytest.raises(TypeError, match="daskboost.dask.predict"):
        booster.predict(matrix)
    unknown = daskboost.DMatrix(dX.to_dask_dataframe().to_dask_array(), label=y)
    assert unknown.num_row() == 1500  # (chunk sizes unknown: counted)


@pytest.mark.parametrize("call, error, match", [
    (lambda m, X, y: daskboost.train(PARAMS, m, "ten"), TypeError,
     "the third argument is num_boost_round, got str"),
    (lambda m, X, y: daskboost.train(PARAMS, m, 3, num_boost_round=3), TypeError,
     "num_boost_round given twice"),
    (lambda m, X, y: daskboost.train(PARAMS, m, 3, sample_weight=y), TypeError,
     "sample_weight is held by the DMatrix"),
    (lambda m, X, y: daskboost.train(PARAMS, m, 3, evals=[(X, y)]), TypeError,
     r"\(DMatrix, name\) pairs"),
    (lambda m, X, y: daskboost.train(PARAMS, X), TypeError, "y is missing"),
    (lambda m, X, y: daskboost.train([("eta", 1, 2)], m, 3), TypeError,
     r"params must be a dict of parameters or xgboost's list of \(name, value\) pairs"),
    (lambda m, X, y: daskboost.cv(PARAMS, daskboost.DMatrix(X, label=y,
                                                            base_margin=y), 3),
     ValueError, "cv: the DMatrix has a base_margin"),
    (lambda m, X, y: daskboost.train(PARAMS, daskboost.DMatrix(X, label=y, feature_weights=[1] * 5),
                                     3, feature_weights=[1] * 5),
     ValueError, "feature_weights given both to train and to the DMatrix"),
    (lambda m, X, y: daskboost.DMatrix(X, label=y, qid=y, group=[len(y)]), ValueError,
     "DMatrix: give qid or group, not both"),
    (lambda m, X, y: daskboost.DMatrix(X, label=y, feature_names=["a"]), ValueError,
     "feature_names has 1 names; the data has 5 features"),
    (lambda m, X, y: m.set_group([len(y) - 1]), ValueError,
     "group sizes add up to 1499 rows; X has 1500"),
    (lambda m, X, y: m.get_uint_info("root_index"), ValueError, "the field is 'group_ptr'"),
    (lambda m, X, y: daskboost.train(PARAMS, m, 1).boost(m, 1, y, y), TypeError,
     "Booster.boost is not supported: .*obj=f, xgb_model=booster"),
])
def test_bad_calls_name_what_is_wrong(data, call, error, match):
    X, y, _ = data
    with pytest.raises(error, match=match):
        call(daskboost.DMatrix(X, label=y), X, y)


def test_accessors_as_xgboosts(data):
    X, y, w = data
    matrix = daskboost.DMatrix(X, label=y)
    assert matrix.get_label() is y and matrix.get_weight() is None
    matrix.set_weight(w)
    matrix.set_base_margin(np.zeros(len(y)))
    assert matrix.get_weight() is w and matrix.get_base_margin().shape == (1500,)
    matrix.set_label(1 - y)
    assert np.array_equal(matrix.get_label(), 1 - y)


def test_slice_info_and_counts_as_xgboosts(data):
    # a script's hand-made folds (dtrain.slice(rows)), get/set_float_info, set_info and
    # num_nonmissing give what xgboost's give; a model trained on a slice is xgboost's
    xgboost = pytest.importorskip("xgboost")
    X, y, w = data
    X = X.mask(X == 0)                                  # some missing values
    rows = np.array([9, 3, 700, 5, 1400, 3])            # any order, repeats allowed
    got = {}
    for module in (xgboost, daskboost):
        matrix = module.DMatrix(X, label=y, weight=w, base_margin=np.full(len(y), 0.25))
        part = matrix.slice(rows)
        info = [part.num_row(), matrix.num_nonmissing()] + [
            part.get_float_info(f).tolist() for f in ("label", "weight", "base_margin")]
        matrix.set_float_info("label", 1 - y)
        matrix.set_info(weight=np.ones(len(y)))
        info += [matrix.get_float_info("label")[:4].tolist(),
                 matrix.get_float_info("weight")[:2].tolist(),
                 module.DMatrix(X).get_float_info("weight").shape]
        booster = module.train(PARAMS, matrix.slice(np.arange(0, 1500, 2)), 5)
        got[module.__name__] = info, booster.predict(module.DMatrix(X[:50]))
    assert got["daskboost"][0] == got["xgboost"][0]
    np.testing.assert_allclose(got["daskboost"][1], got["xgboost"][1], atol=1e-6)
    # a dask array slices by position, lazily
    dmatrix = daskboost.DMatrix(da.from_array(X.to_numpy(), chunks=400), label=da.from_array(y))
    part = dmatrix.slice(rows)
    assert part.num_row() == 6 and np.array_equal(part.get_float_info("label"), y[rows])
    assert dmatrix.num_nonmissing() == int(X.notna().to_numpy().sum())
    # a sparse matrix: its stored entries; its rows as a sparse matrix
    import scipy.sparse
    sparse = daskboost.DMatrix(scipy.sparse.csc_matrix(X.fillna(0).to_numpy()), label=y)
    assert sparse.num_nonmissing() == int(X.notna().to_numpy().sum())
    assert scipy.sparse.issparse(sparse.slice(rows).data)
    np.testing.assert_array_equal(sparse.slice(rows).data.toarray(),
                                  X.fillna(0).to_numpy()[rows])


@pytest.mark.parametrize("call, error, match", [
    (lambda m: m.slice([0.5, 2]), TypeError, "rindex must be a 1-D array of row positions"),
    (lambda m: m.slice([0, 1500]), IndexError, r"outside \[-1500, 1500\)"),
    (lambda m: m.set_info(label_lower_bound=np.zeros(1500), label_upper_bound=np.ones(9)),
     ValueError, "label_lower_bound has 1500 rows, label_upper_bound 9"),
    (lambda m: m.get_float_info("weights"), ValueError, "the fields are label, weight"),
    (lambda m: m.set_float_info("upper_bound", np.zeros(1500)), ValueError,
     "the fields are label, weight"),
    (lambda m: m.set_info(nthreads=2), TypeError, "'nthreads' is not a field"),
    (lambda m: daskboost.DMatrix(dd.from_pandas(m.data, npartitions=2)).slice([0]),
     TypeError, "a dask DataFrame or Series, which has no row positions"),
], ids=["float rows", "out of range", "bounds", "unknown field", "qid", "unknown info",
        "dask frame"])
def test_bad_slices_and_fields_are_named(data, call, error, match):
    X, y, _ = data
    with pytest.raises(error, match=match):
        call(daskboost.DMatrix(X, label=y))


def test_a_booster_made_from_a_model_file_as_xgboosts(data, tmp_path):
    X, y, _ = data
    trained = daskboost.train(PARAMS, daskboost.DMatrix(X, label=y), 4)
    trained.save_model(tmp_path / "model.json")
    expected = trained.predict(daskboost.DMatrix(X))
    from_file = daskboost.Booster(model_file=tmp_path / "model.json")
    np.testing.assert_array_equal(from_file.predict(daskboost.DMatrix(X)), expected)
    shell = daskboost.Booster({"nthread": 2})  # xgboost's docs: Booster(params), then load
    with pytest.raises(ValueError, match="holds no model"):
        shell.predict(X)
    (tmp_path / "bad.json").write_text('{"format": "daskboost", "version": 99}')
    with pytest.raises(ValueError, match="bad.json"):
        shell.load_model(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="holds no model"):  # unchanged by the bad file
        shell.save_model(tmp_path / "empty.json")
    shell.load_model((tmp_path / "model.json").read_bytes())
    np.testing.assert_array_equal(shell.predict(X), expected)
    xgboost = pytest.importorskip("xgboost")
    theirs = xgboost.train(PARAMS, xgboost.DMatrix(X, label=y), 4)
    theirs.save_model(tmp_path / "theirs.json")
    np.testing.assert_allclose(daskboost.Booster(model_file=tmp_path / "theirs.json").predict(X),
                               theirs.predict(xgboost.DMatrix(X)), atol=1e-6)
    with pytest.raises(TypeError, match="trees is missing"):
        daskboost.Booster(None, [0.0], "reg:squarederror", 5)


def test_a_trained_boosters_settings_and_feval_as_xgboosts(data):
    # outside a fit, set_param (or Booster(params)) takes what acts on a trained model:
    # eval_metric (each one added, as xgboost adds them), nthread, device="cpu"; eval_set's
    # feval(predt, dmatrix) gets raw margins unless output_margin=False, as xgboost's
    xgboost = pytest.importorskip("xgboost")
    X, y, w = data
    lines = {}
    for module in (xgboost, daskboost):
        matrix = module.DMatrix(X, label=y, weight=w)
        booster = module.train(PARAMS, matrix, 5)
        booster.set_param([("eval_metric", "auc"), ("nthread", 1)])
        booster.set_param("eval_metric", "error")
        lines[module.__name__] = [
            booster.eval(matrix),
            booster.eval_set([(matrix, "m")], 2, feval=lambda p, d: ("top", float(p.max()))),
            booster.eval_set([(matrix, "m")], feval=lambda p, d: ("top", float(p.max())),
                             output_margin=False)]
    for ours, theirs in zip(lines["daskboost"], lines["xgboost"]):
        ours, theirs = dict(pair.split(":") for pair in ours.split("\t")[1:]), \
            dict(pair.split(":") for pair in theirs.split("\t")[1:])
        assert ours.keys() == theirs.keys()               # (xgboost prints them in its order)
        for key in ours:
            assert float(ours[key]) == pytest.approx(float(theirs[key]), abs=2e-6)
    assert float(lines["daskboost"][1].split("top:")[1]) > 1.0     # a margin
    assert float(lines["daskboost"][2].split("top:")[1]) < 1.0     # a probability
    # Booster(params) keeps the settings of a training dict, and load_model keeps them
    shell = daskboost.Booster({**PARAMS, "eval_metric": "auc", "nthread": 1})
    shell.load_model(booster.save_raw())
    assert shell.eval(daskboost.DMatrix(X, label=y)).startswith("[0]\teval-auc:")
    assert shell.copy().eval(daskboost.DMatrix(X, label=y)).startswith("[0]\teval-auc:")
    with pytest.raises(ValueError, match="device='cuda': daskboost predicts on the CPU"):
        shell.set_param("device", "cuda")
    with pytest.raises(ValueError, match="nthread=0 must be a number of threads"):
        shell.set_param({"nthread": 0})


def test_a_boosters_nthread_is_the_threads_it_predicts_with(data, monkeypatch):
    import daskboost.booster as booster_module
    X, y, _ = data
    booster = daskboost.train(PARAMS, daskboost.DMatrix(X, label=y), 3)
    seen = []
    monkeypatch.setattr(booster_module, "map_row_chunks",
                        lambda func, n_rows, step, axis=0: seen.append(
                            booster_module.local_thread_count()) or func(0, n_rows))
    booster.predict(X, pred_contribs=True)
    booster.set_param("nthread", 1)
    booster.predict(X, pred_contribs=True)
    assert seen[-1] == 1 and seen[0] == booster_module.local_thread_count()


def test_eval_is_the_last_rounds_logged_metric_and_dump_model_writes_the_dump(data, tmp_path):
    X, y, w = data
    dtrain = daskboost.DMatrix(X[:1000], label=y[:1000])
    dvalid = daskboost.DMatrix(X[1000:], label=y[1000:], weight=w[1000:])
    log = {}
    booster = daskboost.train(PARAMS, dtrain, 5, evals=[(dvalid, "valid")], evals_result=log)
    line = booster.eval_set([(dvalid, "valid"), (dtrain, "train")], iteration=4)
    first, second = line.split("\t")[1:]
    assert line.startswith("[4]\tvalid-logloss:") and second.startswith("train-logloss:")
    # (the fit scores margins it adds up in its own order: equal to ~1e-9)
    assert float(first.split(":")[1]) == pytest.approx(log["valid"]["logloss"][-1], rel=1e-7)
    assert booster.eval(dvalid).startswith("[0]\teval-logloss:")
    with pytest.raises(TypeError, match=r"\(DMatrix, name\) pairs"):
        booster.eval_set([(X, "valid")])
    booster.dump_model(tmp_path / "dump.txt", with_stats=True)
    text = (tmp_path / "dump.txt").read_text()
    assert text == "".join(f"booster[{i}]:\n{tree}"
                           for i, tree in enumerate(booster.get_dump(with_stats=True)))
    booster.dump_model(tmp_path / "dump.json", dump_format="json")
    assert json.loads((tmp_path / "dump.json").read_text()) == [
        json.loads(tree) for tree in booster.get_dump(dump_format="json")]
    with pytest.raises(FileNotFoundError, match="featmap.txt"):
        booster.dump_model(tmp_path / "x.txt", fmap="featmap.txt")  # (test_feature_map.py)
    assert not (tmp_path / "x.txt").exists()
    with pytest.raises(FileNotFoundError, match="train.csv"):  # (test_dmatrix_files.py)
        daskboost.DMatrix(str(tmp_path / "train.csv?format=csv&label_column=0"))


def squared_log(predt, dtrain):
    """xgboost's tutorial objective, as written there (it clips ``predt`` in place)."""
    y = dtrain.get_label()
    predt[predt < -1] = -1 + 1e-6
    grad = (np.log1p(predt) - np.log1p(y)) / (predt + 1)
    hess = (-np.log1p(predt) + np.log1p(y) + 1) / np.power(predt + 1, 2)
    return grad, hess


def test_a_native_custom_objective_as_xgboosts(data):
    xgboost = pytest.importorskip("xgboost")
    X, _, w = data
    y = (X["a"] + X["b"]).to_numpy() / 4.0
    params = {"max_depth": 3, "eta": 0.3, "tree_method": "hist", "base_score": 0.5}
    outputs = {}
    for module in (xgboost, daskboost):
        dtrain = module.DMatrix(X, label=y)
        booster = module.train(params, dtrain, 8, obj=squared_log)
        outputs[module.__name__] = booster.predict(module.DMatrix(X))
    np.testing.assert_allclose(outputs["daskboost"], outputs["xgboost"], atol=1e-5)
    # the estimators weigh the rows: an obj that ignores weights trains weighted
    weighted = daskboost.train(params, daskboost.DMatrix(X, label=y, weight=w), 3,
                               obj=squared_log)
    by_estimator = daskboost.DaskBoostRegressor(
        n_estimators=3, max_depth=3, learning_rate=0.3, base_score=0.5,
        objective=lambda y_true, y_pred: squared_log(y_pred.copy(), daskboost.DMatrix(
            np.zeros((len(y_true), 1)), label=np.float32(y_true)))).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(weighted.predict(X), by_estimator.predict(X))
    with pytest.raises(ValueError, match="give one objective"):
        daskboost.train({"objective": "reg:squarederror"}, X, y, obj=squared_log)
    with pytest.raises(TypeError, match="obj must be a function"):
        daskboost.train(params, X, y, obj="squared_log")


def _weighted_auc(predt, dmatrix):
    from sklearn.metrics import roc_auc_score
    weight = dmatrix.get_weight()
    return "wauc", roc_auc_score(dmatrix.get_label(), predt,
                                 sample_weight=weight if weight.size else None)


def test_a_native_custom_metric_as_xgboosts(data):
    # xgboost's custom_metric(predt, dmatrix): once per eval set and round on all its
    # rows (its predictions as predict gives them, its labels and weights), after the
    # default metric, watched by early stopping in the direction `maximize` gives.  On
    # discrete data the models agree, so the logs and the stopping round agree too.
    xgboost = pytest.importorskip("xgboost")
    X, y, w = data
    logs, best, seen = {}, {}, {}
    for module in (xgboost, daskboost):
        def metric(predt, dmatrix, module=module):
            seen.setdefault(module.__name__, []).append(
                (predt.min(), predt.max(), dmatrix.get_label().shape[0]))
            return _weighted_auc(predt, dmatrix)
        dtrain = module.DMatrix(X[:1000], label=y[:1000], weight=w[:1000])
        dvalid = module.DMatrix(X[1000:], label=y[1000:], weight=w[1000:])
        logs[module.__name__] = {}
        booster = module.train(PARAMS, dtrain, 40, evals=[(dtrain, "train"), (dvalid, "valid")],
                               custom_metric=metric, maximize=True, early_stopping_rounds=4,
                               evals_result=logs[module.__name__], verbose_eval=False)
        best[module.__name__] = booster.best_iteration
    ours, theirs = logs["daskboost"], logs["xgboost"]
    assert list(ours["valid"]) == list(theirs["valid"]) == ["logloss", "wauc"]
    assert best["daskboost"] == best["xgboost"] < 39          # stopped early, at one round
    for name in ("train", "valid"):
        np.testing.assert_allclose(ours[name]["wauc"], theirs[name]["wauc"], atol=1e-6)
    # probabilities of all the eval set's rows, one call per set and round
    assert all(0.0 < lo and hi < 1.0 for lo, hi, _ in seen["daskboost"])
    assert [n for _, _, n in seen["daskboost"]] == [1000, 500] * len(ours["valid"]["wauc"])
    # a custom objective's metric sees raw margins, as xgboost's (output_margin=True)
    squared = lambda predt, dtrain: (predt - dtrain.get_label(), np.ones_like(predt))  # noqa: E731
    margins = []
    daskboost.train({"max_depth": 2, "base_score": 0.0}, daskboost.DMatrix(X, label=y - 5), 3,
                    evals=[(daskboost.DMatrix(X, label=y - 5), "all")], obj=squared,
                    custom_metric=lambda p, d: margins.append(p.min()) or ("m", 0.0))
    assert min(margins) < -1.0


def test_a_native_custom_metric_in_cv_is_per_fold_and_side(data):
    # a weighted mean absolute error written as a custom metric gives the built-in
    # "mae" of every fold's train and test rows, with their weights: the right rows
    X, y, w = data
    dtrain = daskboost.DMatrix(X, label=y, weight=w)

    def mae(predt, dmatrix):
        return "mae2", np.average(np.abs(predt - dmatrix.get_label()),
                                  weights=dmatrix.get_weight())
    result = daskboost.cv({**PARAMS, "eval_metric": "mae"}, dtrain, 8, nfold=3,
                          custom_metric=mae)
    for side in ("train", "test"):
        for stat in ("mean", "std"):
            np.testing.assert_allclose(result[f"{side}-mae2-{stat}"], result[f"{side}-mae-{stat}"],
                                       rtol=1e-6, atol=1e-9)
    # early stopping on it, in the direction maximize gives: a higher MAE "better" stops
    # at once, as the error falls
    stopped = daskboost.cv(PARAMS, dtrain, 30, nfold=3, custom_metric=mae, maximize=True,
                           early_stopping_rounds=2)
    assert len(stopped) == 1 and list(stopped.columns[-2:]) == ["test-mae2-mean",
                                                                  "test-mae2-std"]


def test_a_metric_function_out_of_core_says_its_memory_grows(data, tmp_path):
    # its eval rows come to the client every round: not flat in the rows, whatever
    # memory_budget says; a built-in metric, or no budget, says nothing
    import warnings
    from sklearn.metrics import roc_auc_score
    from daskboost.verbosity import DaskBoostWarning
    X, y, _ = data
    budget = {"memory_budget": "64MB", "cache_dir": str(tmp_path)}
    with pytest.warns(DaskBoostWarning, match="metric function 'roc_auc_score' is called on all"):
        daskboost.DaskBoostClassifier(n_estimators=2, eval_metric=roc_auc_score, **budget).fit(
            X, y, eval_set=[(X, y)])
    with pytest.warns(DaskBoostWarning, match="metric function '_weighted_auc' is called"):
        daskboost.cv({**PARAMS, **budget}, daskboost.DMatrix(X, label=y), 2, nfold=2,
                     custom_metric=_weighted_auc)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DaskBoostWarning)
        daskboost.DaskBoostClassifier(n_estimators=2, eval_metric="auc", **budget).fit(
            X, y, eval_set=[(X, y)])
        daskboost.DaskBoostClassifier(n_estimators=2, eval_metric=roc_auc_score).fit(
            X, y, eval_set=[(X, y)])


@pytest.mark.parametrize("metric, maximize, error, match", [
    (lambda p, d: [("a", 1.0), ("b", 2.0)], None, TypeError, "one \\(name, value\\) pair"),
    (lambda p, d: (3, 1.0), None, TypeError, "the name a non-empty string"),
    (lambda p, d: ("m", float("nan")), None, ValueError, "'m' returned nan on 1000 rows"),
    (lambda p, d: ("m", "high"), None, ValueError, "must return a number"),
    ("auc", None, TypeError, "custom_metric must be a function"),
    (None, True, ValueError, "maximize=True is custom_metric's direction"),
    (lambda p, d: ("m", 1.0), "yes", TypeError, "maximize='yes' must be True, False or None"),
], ids=["list", "name", "nan", "text", "not callable", "maximize alone", "maximize type"])
def test_a_bad_native_custom_metric_is_named(data, metric, maximize, error, match):
    X, y, _ = data
    dtrain = daskboost.DMatrix(X[:1000], label=y[:1000])
    with pytest.raises(error, match=match):
        daskboost.train(PARAMS, dtrain, 2, evals=[(dtrain, "train")], custom_metric=metric,
                        maximize=maximize)


def test_a_native_custom_metric_whose_name_changes_is_refused(data):
    X, y, _ = data
    dtrain = daskboost.DMatrix(X[:1000], label=y[:1000])
    names = iter(["first", "second"])
    with pytest.raises(ValueError, match="name 'second' after 'first'"):
        daskboost.train(PARAMS, dtrain, 3, evals=[(dtrain, "train")],
                        custom_metric=lambda p, d: (next(names), 0.5))


def test_the_xgboost_script_example_runs(capsys):
    import importlib.util
    import pathlib
    import re
    path = pathlib.Path(__file__).parent.parent / "examples" / "xgboost_script.py"
    spec = importlib.util.spec_from_file_location("xgboost_script", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    booster, model = example.main(["--rows", "4000"])
    out = capsys.readouterr().out
    rounds, best = (int(v) for v in re.search(r"stopped after (\d+) rounds; best round (\d+)",
                                              out).groups())
    assert (rounds, best) == (booster.num_boosted_rounds(), booster.best_iteration)
    assert rounds == best + 11 < 200  # EarlyStopping(rounds=10) stopped it
    assert re.search(r"reloaded, every round: \[\d+\]\tvalid-logloss:0\.\d+", out)
    assert float(re.search(r"cv, 3 folds, 30 rounds: test auc (0\.\d+)", out).group(1)) > 0.6
    assert isinstance(model, daskboost.DaskBoostClassifier) and model.client is not None


def test_a_sparse_matrix_named_by_its_matrix(data):
    """scipy.sparse rows (in memory or as a dask array's chunks) keep their
    feature_names beside them: train, cv and the dask API name the model's features so,
    and the model is the unnamed one's."""
    import scipy.sparse

    X, y, _ = data
    csr = scipy.sparse.csr_matrix(X.where(X > 0.5).fillna(0).to_numpy())
    names = list("vwxyz")
    unnamed = daskboost.train(PARAMS, daskboost.DMatrix(csr, label=y), 3)
    named = daskboost.train(PARAMS, daskboost.DMatrix(csr, label=y, feature_names=names), 3)
    assert named.feature_names == names and unnamed.feature_names is None
    assert np.array_equal(named.predict(daskboost.DMatrix(csr)),
                          unnamed.predict(daskboost.DMatrix(csr)))
    assert named.trees_to_dataframe().Gain.equals(unnamed.trees_to_dataframe().Gain)
    _, folds = daskboost.cv(PARAMS, daskboost.DMatrix(csr, label=y, feature_names=names),
                            2, nfold=3, return_cvbooster=True)
    assert all(b.feature_names == names for b in folds.boosters)
    chunks = da.from_array(csr, chunks=(500, 5), asarray=False)
    on_dask = daskboost.train(PARAMS, daskboost.DMatrix(
        chunks, label=da.from_array(y, chunks=500), feature_names=names), 3)
    assert on_dask.feature_names == names
    with pytest.raises(ValueError, match="feature_names has 2 names; the data has 5"):
        daskboost.DMatrix(csr, label=y, feature_names=["a", "b"])


def test_get_data_and_the_feature_names_setter_are_xgboosts():
    """``get_data()``: the values not missing as a float32 CSR matrix, as xgboost's (a
    categorical column as its codes); ``dtrain.feature_names = [...]`` names the data."""
    import scipy.sparse
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.2] = np.nan
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["c"] = pd.Categorical(rng.choice(["x", "y", None], 200))
    for data in (X, frame, scipy.sparse.random(200, 4, density=0.3, format="csr",
                                               random_state=0)):
        options = {"enable_categorical": True} if isinstance(data, pd.DataFrame) else {}
        ours, theirs = (m(data, **options).get_data() for m in (daskboost.DMatrix,
                                                                 xgboost.DMatrix))
        assert ours.dtype == np.float32 and ours.shape == theirs.shape
        assert ours.nnz == theirs.nnz and (ours != theirs).nnz == 0
    with pytest.raises(TypeError, match="get_data: column 's' has dtype .*, not numbers"):
        daskboost.DMatrix(pd.DataFrame({"s": ["a", "b"]})).get_data()
    with pytest.raises(TypeError, match="get_data: the data is a dask collection"):
        daskboost.DMatrix(da.from_array(X, chunks=100)).get_data()
    sparse = daskboost.DMatrix(scipy.sparse.csr_matrix(np.eye(3)))
    sparse.feature_names = ["p", "q", "r"]
    assert sparse.feature_names == ["p", "q", "r"]
    sparse.feature_names = None
    assert sparse.feature_names is None
    dense = daskboost.DMatrix(X)
    dense.feature_names = list("wxyz")
    assert dense.feature_names == list("wxyz") and list(dense.data.columns) == list("wxyz")
    with pytest.raises(ValueError, match="feature_names has 2 names; the data has 4"):
        dense.feature_names = ["a", "b"]
    with pytest.raises(ValueError, match="the data is a DataFrame"):
        dense.feature_names = None
