"""``daskboost.dask``: xgboost.dask's functional API (``DaskDMatrix``, ``train``,
``predict``, ``inplace_predict``), run as a script written for xgboost.dask runs."""

import json

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import daskboost
from daskboost import DaskBoostClassifier
from daskboost import dask as dxgb

PARAMS = {"objective": "binary:logistic", "max_depth": 3, "eta": 0.3, "tree_method": "hist"}


@pytest.fixture(scope="module")
def data():
    """Discrete features (xgboost's cuts and ours agree), weights, a held-out part."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 8, size=(2000, 5)).astype(np.float64)
    y = (X[:, 0] + X[:, 1] + rng.normal(size=len(X)) > 8).astype(np.float64)
    weight = rng.uniform(0.5, 2.0, size=len(X))
    return X, y, weight


def chunked(*arrays):
    return [da.from_array(a, chunks=500) for a in arrays]


def booster_json(booster):
    return json.dumps(booster.to_dict(), sort_keys=True)


def test_train_is_daskboost_train_with_weighted_eval_sets(data):
    X, y, weight = data
    dX, dy, dw = chunked(X, y, weight)
    dtrain = dxgb.DaskDMatrix(None, dX, dy, weight=dw)
    dvalid = dxgb.DaskDMatrix(None, dX[:1000], dy[:1000], weight=dw[:1000])
    result = dxgb.train(None, PARAMS, dtrain, num_boost_round=8,
                        evals=[(dtrain, "train"), (dvalid, "valid")], verbose_eval=False)
    assert set(result) == {"booster", "history"}
    estimator = DaskBoostClassifier(max_depth=3, learning_rate=0.3, n_estimators=8).fit(
        dX, dy, sample_weight=dw, eval_set=[(dX, dy), (dX[:1000], dy[:1000])],
        sample_weight_eval_set=[dw, dw[:1000]])
    assert booster_json(result["booster"]) == booster_json(estimator.get_booster())
    assert result["history"] == {"train": estimator.evals_result_["validation_0"],
                                 "valid": estimator.evals_result_["validation_1"]}
    native = daskboost.train(PARAMS, dX, dy, num_boost_round=8, sample_weight=dw,
                                 evals=[(dX[:1000], dy[:1000], "valid")])
    assert booster_json(native) == booster_json(result["booster"])


def test_train_and_predict_as_xgboost_dask_on_a_cluster(cluster, data):
    distributed = pytest.importorskip("distributed")
    xgb_dask = pytest.importorskip("xgboost.dask")
    X, y, weight = data
    dX, dy, dw = chunked(X, y, weight)
    with distributed.Client(cluster) as client:
        outputs = {}
        for module in (xgb_dask, dxgb):
            dtrain = module.DaskDMatrix(client, dX, dy, weight=dw)
            dvalid = module.DaskDMatrix(client, dX[:1000], dy[:1000])
            result = module.train(client, PARAMS, dtrain, num_boost_round=10,
                                  evals=[(dtrain, "train"), (dvalid, "valid")],
                                  early_stopping_rounds=3, verbose_eval=False)
            frame = dd.from_dask_array(dX, columns=[f"f{i}" for i in range(5)])
            outputs[module] = (
                result["history"],
                module.predict(client, result, dX).compute(),
                module.predict(client, result["booster"], dX, output_margin=True).compute(),
                module.inplace_predict(client, result, dX, predict_type="margin").compute(),
                module.predict(client, result, dX, pred_contribs=True).compute(),
                module.predict(client, result, dX, pred_leaf=True).compute().shape,
                type(module.predict(client, result, frame)).__name__)
    ours, theirs = outputs[dxgb], outputs[xgb_dask]
    assert ours[0].keys() == theirs[0].keys()
    for name in ours[0]:
        np.testing.assert_allclose(ours[0][name]["logloss"], theirs[0][name]["logloss"],
                                   rtol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], atol=1e-6)   # (float32 sums in xgboost)
    np.testing.assert_allclose(ours[2], theirs[2], atol=1e-5)
    np.testing.assert_allclose(ours[3], ours[2], rtol=1e-12)
    np.testing.assert_allclose(ours[4], theirs[4], atol=1e-5)
    assert ours[5] == theirs[5] and ours[6] == theirs[6] == "Series"


def test_a_custom_metric_on_a_cluster_sees_all_the_rows(cluster, data):
    # xgboost.dask calls a custom metric on each worker's rows; here it gets all the eval
    # set's rows at once, in partition order: the same log as one in-memory partition
    distributed = pytest.importorskip("distributed")
    from sklearn.metrics import roc_auc_score
    X, y, weight = data
    dX, dy, dw = chunked(X, y, weight)

    def wauc(predt, dmatrix):
        return "wauc", roc_auc_score(dmatrix.get_label(), predt,
                                     sample_weight=dmatrix.get_weight())
    with distributed.Client(cluster) as client:
        dtrain = dxgb.DaskDMatrix(client, dX, dy, weight=dw)
        history = dxgb.train(client, PARAMS, dtrain, num_boost_round=6,
                             evals=[(dtrain, "train")], custom_metric=wauc,
                             maximize=True)["history"]
    local = {}
    daskboost.train(PARAMS, daskboost.DMatrix(X, label=y, weight=weight), 6,
                    evals=[(daskboost.DMatrix(X, label=y, weight=weight), "train")],
                    custom_metric=wauc, evals_result=local)
    assert list(history["train"]) == ["logloss", "wauc"]
    np.testing.assert_allclose(history["train"]["wauc"], local["train"]["wauc"], rtol=1e-12)


def test_xgboost_dask_estimators_with_their_client(cluster, data):
    distributed = pytest.importorskip("distributed")
    xgb_dask = pytest.importorskip("xgboost.dask")
    X, y, weight = data
    dX, dy, dw = chunked(X, y, weight)
    params = dict(n_estimators=6, max_depth=3, learning_rate=0.3, tree_method="hist")
    local = dxgb.DaskXGBClassifier(**params).fit(dX, dy, sample_weight=dw)
    with distributed.Client(cluster) as client:
        outputs = {}
        for module in (xgb_dask, dxgb):
            model = module.DaskXGBClassifier(**params)
            model.client = client
            model.fit(dX, dy, sample_weight=dw, eval_set=[(dX, dy)])
            outputs[module] = (model, model.predict_proba(dX).compute(),
                               model.evals_result()["validation_0"]["logloss"])
        ours, theirs = outputs[dxgb], outputs[xgb_dask]
    # a client that is not the default one (xgboost.dask's estimators need one that
    # is): the fit runs on it because it is set, even on collections persisted there
    with distributed.Client(cluster, set_as_default=False) as client:
        model = dxgb.DaskXGBClassifier(**params)
        model.client = client
        with distributed.get_task_stream(client=client) as tasks:
            model.fit(*client.persist([dX, dy]), sample_weight=client.persist(dw))
        assert tasks.data  # (its tasks ran on the cluster)
        assert model.client is client
    assert isinstance(ours[0], DaskBoostClassifier)
    assert booster_json(ours[0].get_booster()) == booster_json(local.get_booster()) \
        == booster_json(model.get_booster())
    np.testing.assert_allclose(ours[1], theirs[1], atol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5)
    import pickle

    from sklearn.base import clone
    assert pickle.loads(pickle.dumps(ours[0])).client is None
    assert clone(ours[0]).client is None
    with pytest.raises(TypeError, match="client must be a distributed.Client or None"):
        ours[0].client = "tcp://127.0.0.1:8786"


def test_a_matrix_missing_value_names_and_types(data):
    X, y, _ = data
    masked = np.where(X == 0, -999.0, X)
    dX, dy, dmasked = chunked(X, y, masked)
    plain = dxgb.train(None, PARAMS, dxgb.DaskDMatrix(None, np.where(X == 0, np.nan, X), y),
                       num_boost_round=4, verbose_eval=False)["booster"]
    given = dxgb.train(None, PARAMS, dxgb.DaskDMatrix(None, dmasked, dy, missing=-999.0),
                       num_boost_round=4, verbose_eval=False)["booster"]
    assert booster_json(given) == booster_json(plain)
    names = ["a", "b", "c", "d", "e"]
    named = dxgb.train(None, PARAMS, dxgb.DaskQuantileDMatrix(
        None, dX, dy, feature_names=names, feature_types=["q", "q", "q", "q", "c"],
        max_bin=16), num_boost_round=2, verbose_eval=False)["booster"]
    assert named.feature_names == names and named.feature_types == ["q"] * 4 + ["c"]
    prediction = dxgb.predict(None, named, dxgb.DaskDMatrix(None, dX, feature_names=names))
    np.testing.assert_allclose(prediction.compute(),
                               named.predict(pd.DataFrame(X, columns=names)), rtol=1e-12)


def test_a_future_of_the_booster_predicts(cluster, data):
    distributed = pytest.importorskip("distributed")
    X, y, _ = data
    booster = daskboost.train(PARAMS, X, y, num_boost_round=3)
    with distributed.Client(cluster) as client:
        future = client.scatter(booster)
        values = dxgb.predict(client, future, da.from_array(X, chunks=500)).compute()
    np.testing.assert_allclose(values, booster.predict(X), rtol=1e-12)


@pytest.mark.parametrize("call, error, match", [
    (lambda X, y: dxgb.DaskDMatrix(None, da.from_array(X), y, group=[len(y)]), ValueError,
     "group .* needs in-memory data"),
    (lambda X, y: dxgb.DaskDMatrix(None, da.from_array(X), label_lower_bound=da.from_array(y),
                                   label_upper_bound=y), TypeError,
     "must both be dask collections, or both in memory"),
    (lambda X, y: dxgb.DaskDMatrix(None, X, y, feature_names=["a"]), ValueError,
     "feature_names has 1 names; the data has 5 features"),
    (lambda X, y: dxgb.train(None, PARAMS, (X, y)), TypeError, "dtrain must be a DaskDMatrix"),
    (lambda X, y: dxgb.train(None, PARAMS, dxgb.DaskDMatrix(None, X, y),
                             evals=[(X, "valid")]), TypeError, r"\(DMatrix, name\)"),
    (lambda X, y: dxgb.train(None, PARAMS, dxgb.DaskDMatrix(None, X, y),
                             obj=lambda p, d: (p, p)), ValueError, "give one objective"),
    (lambda X, y: dxgb.train(None, {"max_depth": -1}, dxgb.DaskDMatrix(None, X, y)),
     ValueError, "max_depth"),
    (lambda X, y: dxgb.predict(None, "model.json", X), TypeError, "model must be"),
    (lambda X, y: dxgb.inplace_predict(None, daskboost.train(PARAMS, X, y, 1), X,
                                       predict_type="leaf"), ValueError, "predict_type"),
    (lambda X, y: dxgb.predict(None, daskboost.train(PARAMS, X, y, 1), X, pred_leaf=True,
                               pred_contribs=True), ValueError, "give one of"),
], ids=["qid", "survival bounds", "feature names", "not a matrix", "evals", "obj",
        "bad parameter", "not a model", "predict_type", "two kinds"])
def test_what_is_not_done_is_refused_by_name(data, call, error, match):
    X, y, _ = data
    with pytest.raises(error, match=match):
        call(X, y)


@pytest.mark.parametrize("kind", [{}, {"output_margin": True}, {"pred_leaf": True},
                                  {"pred_contribs": True}, {"pred_interactions": True}])
def test_strict_shape_is_the_boosters(data, kind):
    """xgboost's ``strict_shape=True``: every axis kept (binary and multiclass, arrays and
    frames), as ``Booster.predict(..., strict_shape=True)`` gives them."""
    X, y, _ = data
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcde")), npartitions=3)
    for params, labels in ((PARAMS, y), ({**PARAMS, "objective": "multi:softprob",
                                          "num_class": 3}, X[:, 0] % 3)):
        booster = daskboost.train(params, X, labels, 2)
        expected = booster.predict(X, strict_shape=True, **kind)
        assert expected.ndim > booster.predict(X, **kind).ndim or params is not PARAMS
        for data_ in (chunked(X)[0], frame):
            got = dxgb.predict(None, booster, data_, strict_shape=True, **kind).compute()
            assert got.shape == expected.shape
            np.testing.assert_allclose(got, expected, rtol=1e-6)
        if not kind:
            np.testing.assert_allclose(dxgb.inplace_predict(None, booster, chunked(X)[0],
                                                            strict_shape=True).compute(),
                                       expected, rtol=1e-6)
