"""Feature contributions (issue 16): TreeSHAP, Saabas and SHAP interaction values equal
xgboost's on the same model (exported, ``format="xgboost"``) to 1e-4; contributions sum
to the margins; dask input gives lazy arrays of the same values."""

import warnings

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
import xgboost as xgb

import daskboost as db

TOL = 1e-4
N = 800


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((N, 5)).astype(np.float32)
    X[rng.random(X.shape) < 0.15] = np.nan
    x0, x1, x2 = (np.nan_to_num(X[:, j]) for j in range(3))
    return {"X": X, "binary": (x1 + x0 * x2 > 0).astype(int),
            "target": x0 + 2 * x1 * x2 + rng.normal(scale=0.1, size=N),
            "classes": rng.integers(0, 2, N) + (x2 > 0) + (x0 > 1)}


def xgboost_predict(model, tmp_path, X, **kwargs):
    path = tmp_path / "exported.json"
    model.save_model(path, format="xgboost")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        booster = xgb.Booster(model_file=str(path))
        dmatrix = xgb.DMatrix(X, enable_categorical=isinstance(X, pd.DataFrame))
        return booster.predict(dmatrix, **kwargs)


MODELS = {
    "regression": lambda d: db.DaskBoostRegressor(n_estimators=12, max_depth=5).fit(
        d["X"], d["target"]),
    "binary": lambda d: db.DaskBoostClassifier(n_estimators=12, max_depth=4).fit(
        d["X"], d["binary"]),
    "multiclass": lambda d: db.DaskBoostClassifier(n_estimators=6, max_depth=4).fit(
        d["X"], d["classes"]),
}
KINDS = [{"pred_contribs": True}, {"pred_contribs": True, "approx_contribs": True},
         {"pred_interactions": True}, {"pred_interactions": True, "approx_contribs": True}]


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("kind", KINDS, ids=["shap", "saabas", "interactions",
                                             "approx-interactions"])
def test_contributions_equal_xgboosts_on_the_exported_model(tmp_path, data, name, kind):
    model = MODELS[name](data)
    ours = model.predict(data["X"], **kind)
    theirs = xgboost_predict(model, tmp_path, data["X"], **kind)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=TOL)
    # the same through the Booster
    np.testing.assert_array_equal(model.get_booster().predict(data["X"], **kind), ours)


@pytest.mark.parametrize("name", list(MODELS))
def test_contributions_sum_to_the_margins(data, name):
    model = MODELS[name](data)
    booster = model.get_booster()
    margins = booster.predict_margin(data["X"])  # (K, n)
    contribs = booster.predict_contributions(data["X"])  # (n, K, F + 1)
    np.testing.assert_allclose(contribs.sum(axis=2).T, margins, atol=1e-9)
    saabas = booster.predict_contributions(data["X"], approx=True)
    np.testing.assert_allclose(saabas.sum(axis=2).T, margins, atol=1e-9)
    pairs = booster.predict_contributions(data["X"], interactions=True)
    np.testing.assert_allclose(pairs.sum(axis=3), contribs, atol=1e-9)
    np.testing.assert_allclose(pairs, np.swapaxes(pairs, 2, 3), atol=1e-9)  # symmetric


def test_a_feature_no_tree_uses_gets_nothing(data):
    X = data["X"].copy()
    model = db.DaskBoostRegressor(n_estimators=8, max_depth=3,
                                  interaction_constraints=[[0, 1, 2, 3]]).fit(X, data["target"])
    unused = [f for f in range(5) if model.get_booster().get_score().get(f"f{f}") is None]
    assert 4 in unused
    contribs = model.predict(X, pred_contribs=True)
    assert np.all(contribs[:, 4] == 0)


def test_categorical_contributions_equal_xgboosts(tmp_path):
    rng = np.random.default_rng(2)
    n = 1500
    frame = pd.DataFrame({"city": rng.choice(list("abcdefgh"), n),
                          "x": rng.standard_normal(n).astype(np.float32),
                          "tier": pd.Categorical(rng.choice(["lo", "hi", None], n))})
    y = frame.city.isin(["b", "e", "g"]) * 2.0 + frame.x * (frame.tier == "hi") + frame.x
    model = db.DaskBoostRegressor(n_estimators=10, max_depth=4,
                                  max_cat_to_onehot=1).fit(frame, y)
    booster = model.get_booster()
    coded = frame.copy()
    for f, categories in booster.categories.items():
        name = booster.feature_names[f]
        coded[name] = pd.Categorical(frame[name].astype(object), categories=categories)
    for kind in KINDS[:3]:
        np.testing.assert_allclose(model.predict(frame, **kind),
                                   xgboost_predict(model, tmp_path, coded, **kind), atol=TOL)


def test_iteration_range_and_base_margin(tmp_path, data):
    model = MODELS["binary"](data)
    X = data["X"]
    first = model.predict(X, pred_contribs=True, iteration_range=(0, 7))
    theirs = xgboost_predict(model, tmp_path, X, pred_contribs=True, iteration_range=(0, 7))
    np.testing.assert_allclose(first, theirs, atol=TOL)
    assert np.abs(first - model.predict(X, pred_contribs=True)).max() > 0.01
    # (xgboost explains only ranges from round 0; here any range)
    part = model.predict(X, pred_contribs=True, iteration_range=(2, 7))
    booster = model.get_booster()
    np.testing.assert_allclose(part.sum(axis=1),
                               booster.predict_margin(X, iteration_range=(2, 7))[0], atol=1e-9)
    offsets = np.linspace(-1, 1, N)
    shifted = model.predict(X, pred_contribs=True, base_margin=offsets)
    np.testing.assert_allclose(shifted[:, :-1], model.predict(X, pred_contribs=True)[:, :-1])
    np.testing.assert_allclose(shifted[:, -1] - model.predict(X, pred_contribs=True)[:, -1],
                               offsets - booster.base_margin[0], atol=1e-12)


@pytest.mark.parametrize("kind", KINDS[::2], ids=["shap", "interactions"])
def test_dask_input_gives_a_lazy_array_of_the_same_values(data, kind):
    model = MODELS["multiclass"](data)
    expected = model.predict(data["X"], **kind)
    array = da.from_array(data["X"], chunks=(300, 5))
    lazy = model.predict(array, **kind)
    assert isinstance(lazy, da.Array) and lazy.shape == expected.shape
    np.testing.assert_array_equal(lazy.compute(), expected)
    frame = dd.from_pandas(pd.DataFrame(data["X"], columns=[f"f{i}" for i in range(5)]),
                           npartitions=3)
    lazy = model.predict(frame, **kind)
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), expected)


def test_sparse_input_equals_dense_with_nan(data):
    sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(4)
    dense = np.where(rng.random((N, 5)) < 0.5, np.nan, rng.standard_normal((N, 5)))
    model = db.DaskBoostRegressor(n_estimators=6, max_depth=4).fit(dense, data["target"])
    present = ~np.isnan(dense)
    csr = sparse.csr_matrix((dense[present], np.nonzero(present)), shape=dense.shape)
    np.testing.assert_array_equal(model.predict(csr, pred_contribs=True),
                                  model.predict(dense, pred_contribs=True))


def test_many_rows_run_in_chunks_on_threads(data):
    model = MODELS["binary"](data)
    X = np.tile(data["X"], (7, 1))  # > one chunk of rows
    whole = model.predict(X, pred_contribs=True)
    np.testing.assert_array_equal(whole[:N], model.predict(data["X"], pred_contribs=True))
    np.testing.assert_array_equal(whole[-N:], whole[:N])


@pytest.mark.parametrize("flags,message", [
    ({"pred_contribs": True, "pred_interactions": True}, "exclude each other"),
    ({"pred_contribs": True, "output_margin": True}, "output_margin=True and pred_contribs"),
    ({"pred_interactions": True, "output_margin": True}, "output_margin=True"),
    ({"approx_contribs": True}, "approx_contribs=True needs pred_contribs"),
])
def test_contradicting_flags_are_refused(data, flags, message):
    model = MODELS["binary"](data)
    for predict in (model.predict, model.get_booster().predict):
        with pytest.raises(ValueError, match=message):
            predict(data["X"][:5], **flags)


def test_an_imported_xgboost_model_explains_as_xgboost(tmp_path, data):
    """A model trained by xgboost and loaded here: the same contributions and interaction
    values as xgboost's own (its covers are xgboost's hessian sums)."""
    trained = xgb.train({"objective": "multi:softprob", "num_class": 4, "max_depth": 4},
                        xgb.DMatrix(data["X"], data["classes"]), 5)
    path = tmp_path / "xgb.json"
    trained.save_model(str(path))
    booster = db.Booster.load(path)
    for kind in KINDS[:3]:
        np.testing.assert_allclose(booster.predict(data["X"], **kind),
                                   trained.predict(xgb.DMatrix(data["X"]), **kind), atol=TOL)
