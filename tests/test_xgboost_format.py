"""xgboost's JSON model format (issue 16): export read by xgboost and treelite, import of
xgboost's models.  Margins are compared to 1e-5 (xgboost sums float32 leaf values);
features are float32, the values xgboost sees, so every split decides the same way."""

import json
import os
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from sklearn import exceptions as sklearn_exceptions

import daskboost as db
from daskboost.xgboost_format import daskboost_thresholds, xgboost_thresholds

TOL = 1e-5
N = 1500


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((N, 5)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan  # missing values take the default directions
    x0, x1, x2 = (np.nan_to_num(X[:, j]) for j in range(3))
    return {
        "X": X,
        "binary": (x1 + 0.5 * x2 > 0).astype(int),
        "positive": np.exp(x0) + 0.1,
        "classes": rng.integers(0, 2, N) + (x2 > 0) + (x0 > 1),
    }


def xgboost_margins(path, X, **dmatrix):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        booster = xgb.Booster(model_file=str(path))
        margins = booster.predict(xgb.DMatrix(X, **dmatrix), output_margin=True)
    return np.asarray(margins).reshape(len(X), -1).T


REGRESSION = ["reg:squarederror", "reg:absoluteerror", "reg:pseudohubererror",
              "reg:quantileerror", "count:poisson", "reg:gamma", "reg:tweedie",
              "reg:logistic", "binary:logistic"]
CLASSIFICATION = ["binary:logistic", "binary:logitraw", "binary:hinge", "multi:softprob",
                  "multi:softmax"]


@pytest.mark.parametrize("kind,objective", [("regressor", o) for o in REGRESSION]
                         + [("classifier", o) for o in CLASSIFICATION])
def test_export_predicts_the_same_in_xgboost(tmp_path, data, kind, objective):
    X = data["X"]
    if kind == "classifier":
        y = data["classes"] if objective.startswith("multi:") else data["binary"]
        model = db.DaskBoostClassifier(objective=objective, n_estimators=15, max_depth=4)
    else:
        y = data["binary"] if "logistic" in objective else data["positive"]
        model = db.DaskBoostRegressor(objective=objective, n_estimators=15, max_depth=4)
    model.fit(X, y)
    path = tmp_path / "model.json"
    model.save_model(path, format="xgboost")
    ours = model.get_booster().predict_margin(X)
    np.testing.assert_allclose(xgboost_margins(path, X), ours, rtol=0, atol=TOL)


@pytest.mark.parametrize("name", ["model.ubj", "model.bin", "model"])
def test_export_in_ubjson_is_what_xgboost_reads(tmp_path, data, name):
    """As xgboost writes: UBJSON for any name but .json, with its typed arrays; xgboost
    reads it (an estimator's, multiclass; a categorical model) and predicts the same."""
    X = data["X"]
    model = db.DaskBoostClassifier(n_estimators=6, max_depth=4).fit(X, data["classes"])
    model.save_model(tmp_path / name, format="xgboost")
    model.save_model(tmp_path / "model.json", format="xgboost")
    raw = (tmp_path / name).read_bytes()
    assert raw[:2] == b"{L"
    for field, marker in (("split_conditions", b"d"), ("left_children", b"l"),
                          ("default_left", b"U")):   # typed arrays, as xgboost writes them
        assert field.encode() + b"[$" + marker + b"#" in raw
    assert (tmp_path / "model.json").read_bytes()[:2] == b'{"'
    np.testing.assert_allclose(xgboost_margins(tmp_path / name, X),
                               model.get_booster().predict_margin(X), rtol=0, atol=TOL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_raw = xgb.Booster(model_file=model.get_booster().save_raw("ubj", format="xgboost"))
        assert bytes(from_raw.save_raw("json")) == bytes(
            xgb.Booster(model_file=str(tmp_path / "model.json")).save_raw("json"))
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"x": rng.standard_normal(2000).astype(np.float32),
                          "c": pd.Categorical(rng.choice(list("pqrs"), 2000))})
    regressor = db.DaskBoostRegressor(n_estimators=5, max_depth=3).fit(
        frame, frame.x + 2.0 * (frame.c == "q"))
    assert any(t.categories for t in regressor.get_booster().trees)
    regressor.save_model(tmp_path / "cat.ubj", format="xgboost")
    np.testing.assert_allclose(
        xgboost_margins(tmp_path / "cat.ubj", frame, enable_categorical=True)[0],
        regressor.predict(frame, output_margin=True), atol=TOL)


def test_multiclass_starts_apart_go_into_the_first_round(tmp_path, data):
    """One base_score for every class (xgboost 2 reads no more): the classes' different
    starts are added to their first trees' leaves; the margins stay the same."""
    model = db.DaskBoostClassifier(n_estimators=5, max_depth=3).fit(data["X"], data["classes"])
    booster = model.get_booster()
    assert np.ptp(booster.base_margin) > 0.01  # the case at hand
    model.save_model(tmp_path / "m.json", format="xgboost")
    exported = json.loads((tmp_path / "m.json").read_text())
    base_score = exported["learner"]["learner_model_param"]["base_score"]
    assert not base_score.startswith("[")
    start = float(base_score)
    leaves = np.asarray(exported["learner"]["gradient_booster"]["model"]["trees"][1][
        "split_conditions"])[booster.trees[1].feature < 0]
    np.testing.assert_allclose(leaves, booster.trees[1].value[booster.trees[1].feature < 0]
                               + booster.base_margin[1] - start, atol=1e-6)
    np.testing.assert_allclose(xgboost_margins(tmp_path / "m.json", data["X"]),
                               booster.predict_margin(data["X"]), atol=TOL)


def test_categorical_export_reads_the_dictionary_order(tmp_path):
    rng = np.random.default_rng(3)
    n = 3000
    cities = ["paris", "rome", "oslo", "lima", "kiev", "bonn", "nice", "riga", "bern"]
    frame = pd.DataFrame({"city": rng.choice(cities, n),
                          "x": rng.standard_normal(n).astype(np.float32),
                          "device": pd.Categorical(rng.choice(["a", "b", "c", None], n))})
    y = frame.city.isin(["rome", "lima", "bern"]) * 2.0 + frame.x + (frame.device == "b")
    for onehot in (1, 32):  # partition splits, and one-vs-rest splits
        model = db.DaskBoostRegressor(n_estimators=15, max_depth=4,
                                      max_cat_to_onehot=onehot).fit(frame, y)
        booster = model.get_booster()
        assert any(t.categories for t in booster.trees)
        path = tmp_path / f"cat{onehot}.json"
        model.save_model(path, format="xgboost")
        coded = frame.copy()
        for f, categories in booster.categories.items():
            name = booster.feature_names[f]
            coded[name] = pd.Categorical(frame[name].astype(object), categories=categories)
        theirs = xgboost_margins(path, coded, enable_categorical=True)
        np.testing.assert_allclose(theirs[0], model.predict(frame, output_margin=True),
                                   atol=TOL)


def test_treelite_loads_the_export(tmp_path, data):
    treelite = pytest.importorskip("treelite")
    model = db.DaskBoostClassifier(n_estimators=10, max_depth=4).fit(data["X"], data["classes"])
    path = tmp_path / "m.json"
    model.save_model(path, format="xgboost")
    loaded = treelite.frontend.load_xgboost_model(str(path))
    margins = treelite.gtil.predict(loaded, data["X"], pred_margin=True)
    np.testing.assert_allclose(np.asarray(margins).reshape(N, -1).T,
                               model.get_booster().predict_margin(data["X"]), atol=TOL)


def test_thresholds_send_every_float32_the_same_way():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(2000).astype(np.float32),
                        np.float32([0, -0.0, 1e-40, 3.4e38])])
    neighbours = np.concatenate([x, np.nextafter(x, np.float32(np.inf)),
                                 np.nextafter(x, np.float32(-np.inf))])
    # thresholds at, between and beyond float32 values, and past float32's range
    thresholds = np.concatenate([x.astype(np.float64), x.astype(np.float64) + 1e-12,
                                 x.astype(np.float64) - 1e-12, [1e39, -1e39, np.inf]])
    converted = xgboost_thresholds(thresholds)
    assert converted.dtype == np.float32
    for t, t32 in zip(thresholds[::7], converted[::7]):
        np.testing.assert_array_equal(neighbours <= t, neighbours < t32)
    # and back: import reads x < t' as x <= t for the same float32 values
    back = daskboost_thresholds(converted)
    for t, t32 in zip(back[::7], converted[::7]):
        np.testing.assert_array_equal(neighbours <= t, neighbours < t32)


@pytest.mark.parametrize("objective,label,extra", [
    ("reg:squarederror", "positive", {}),
    ("binary:logistic", "binary", {}),
    ("multi:softprob", "classes", {"num_class": 4}),
    ("count:poisson", "positive", {}),
    ("reg:quantileerror", "positive", {"quantile_alpha": 0.3}),
    ("reg:pseudohubererror", "positive", {"huber_slope": 2.0}),
    ("reg:tweedie", "positive", {"tweedie_variance_power": 1.3}),
])
def test_import_predicts_what_xgboost_predicts(tmp_path, data, objective, label, extra):
    X = data["X"]
    trained = xgb.train({"objective": objective, "max_depth": 4, **extra},
                        xgb.DMatrix(X, data[label]), 12)
    path = tmp_path / "xgb.json"
    trained.save_model(str(path))
    booster = db.Booster.load(path)
    assert booster.objective == objective
    for key, value in extra.items():
        assert booster.objective_params[key] == pytest.approx(value)
    np.testing.assert_allclose(booster.predict_margin(X), xgboost_margins(path, X), atol=TOL)
    # and out again: the same margins in xgboost
    booster.save_model(tmp_path / "again.json", format="xgboost")
    np.testing.assert_allclose(xgboost_margins(tmp_path / "again.json", X),
                               booster.predict_margin(X), atol=TOL)


def test_imported_model_serves_the_estimators(tmp_path, data):
    X = data["X"]
    trained = xgb.train({"objective": "binary:logistic", "max_depth": 3},
                        xgb.DMatrix(X, data["binary"], feature_names=list("abcde")), 6)
    trained.save_model(str(tmp_path / "xgb.json"))
    model = db.DaskBoostClassifier().load_model(tmp_path / "xgb.json")
    assert model.classes_.tolist() == [0, 1]
    frame = pd.DataFrame(X, columns=list("abcde"))
    np.testing.assert_allclose(model.predict_proba(frame)[:, 1],
                               trained.predict(xgb.DMatrix(frame)), atol=1e-6)
    assert set(model.get_booster().get_score()) <= set("abcde")
    assert model.get_booster().get_dump()[0].startswith("0:[")
    with pytest.raises(ValueError, match="objective"):
        db.DaskBoostClassifier().load_model(
            _saved(tmp_path, xgb.train({}, xgb.DMatrix(X, data["positive"]), 2)))


def test_imported_categorical_model_matches_stored_categories_by_value(tmp_path):
    """xgboost 3 stores a pandas column's categories (its ``cats`` section): the import
    matches them by value, in any order, with string and integer categories."""
    rng = np.random.default_rng(5)
    n = 2000
    frame = pd.DataFrame({
        "c": pd.Categorical(rng.choice(["zeta", "alpha", "emile", "b"], n),
                            categories=["zeta", "alpha", "emile", "b"]),
        "k": pd.Categorical(rng.choice([30, 10, 20], n), categories=[30, 10, 20]),
        "n": rng.standard_normal(n).astype(np.float32)})
    y = frame.c.isin(["alpha", "b"]) * 1.0 + (frame.k == 10) * 0.5 + 0.1 * frame.n
    trained = xgb.train({"max_depth": 3, "max_cat_to_onehot": 1},
                        xgb.DMatrix(frame, y, enable_categorical=True), 6)
    booster = db.Booster.load(_saved(tmp_path, trained))
    assert booster.feature_types == ["c", "c", "q"]
    assert booster.categories == {0: ["alpha", "b", "emile", "zeta"], 1: [10, 20, 30]}
    expected = trained.predict(xgb.DMatrix(frame, enable_categorical=True), output_margin=True)
    np.testing.assert_allclose(booster.predict_margin(frame)[0], expected, atol=TOL)
    as_strings = frame.assign(c=frame.c.astype(str))  # by value, whatever the dtype
    np.testing.assert_allclose(booster.predict_margin(as_strings)[0], expected, atol=TOL)


def test_imported_categorical_model_without_stored_categories_reads_the_codes(tmp_path):
    """Without stored categories (xgboost 2, or codes given as numbers) the codes are the
    dictionary, up to the largest code a split names: a larger code is unseen and takes
    the missing values' way (documented; xgboost sends it to the "no" side)."""
    rng = np.random.default_rng(6)
    n = 2000
    codes = rng.integers(0, 4, n).astype(np.float32)
    X = np.column_stack([codes, rng.standard_normal(n).astype(np.float32)])
    y = np.isin(codes, [0, 2]) * 1.0 + 0.1 * X[:, 1]
    types = {"feature_types": ["c", "q"], "enable_categorical": True}
    trained = xgb.train({"max_depth": 3, "max_cat_to_onehot": 1}, xgb.DMatrix(X, y, **types), 6)
    booster = db.Booster.load(_saved(tmp_path, trained))
    largest = len(booster.categories[0]) - 1
    assert booster.categories == {0: list(range(largest + 1))} and largest >= 2
    expected = trained.predict(xgb.DMatrix(X, **types), output_margin=True)
    known = codes <= largest
    np.testing.assert_allclose(booster.predict_margin(X)[0][known], expected[known], atol=TOL)
    as_missing = np.where(known[:, None], X, np.column_stack([np.full(n, np.nan), X[:, 1]]))
    np.testing.assert_array_equal(booster.predict_margin(X)[0][~known],
                                  booster.predict_margin(as_missing)[0][~known])


def test_non_ascii_stored_categories_fall_back_to_codes_with_a_warning(tmp_path):
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"c": pd.Categorical(rng.choice(["émile", "zoë", "ana"], 600)),
                          "n": rng.standard_normal(600).astype(np.float32)})
    y = (frame.c == "zoë") * 1.0 + 0.1 * frame.n
    trained = xgb.train({"max_depth": 2, "max_cat_to_onehot": 1},
                        xgb.DMatrix(frame, y, enable_categorical=True), 3)
    with pytest.warns(UserWarning, match="not all ASCII"):
        booster = db.Booster.load(_saved(tmp_path, trained))
    codes = np.column_stack([frame.c.cat.codes, frame.n]).astype(np.float64)
    np.testing.assert_allclose(
        booster.predict_margin(codes)[0],
        trained.predict(xgb.DMatrix(frame, enable_categorical=True), output_margin=True),
        atol=TOL)


def _saved(tmp_path, xgboost_booster, name="saved.json"):
    path = tmp_path / name
    xgboost_booster.save_model(str(path))
    return path


@pytest.mark.parametrize("params,message", [
    ({"booster": "gblinear"}, "gblinear"),
    ({"booster": "dart"}, "dart"),
    ({"objective": "survival:cox"}, "survival:cox"),
])
def test_import_refuses_what_it_cannot_represent(tmp_path, data, params, message):
    trained = xgb.train(params, xgb.DMatrix(data["X"], data["binary"]), 2)
    with pytest.raises(ValueError, match=message):
        db.Booster.load(_saved(tmp_path, trained))


def test_crafted_xgboost_files_are_refused_with_the_field(tmp_path, data):
    trained = xgb.train({"max_depth": 3}, xgb.DMatrix(data["X"], data["positive"]), 2)
    good = json.loads(trained.save_raw("json"))
    tree = good["learner"]["gradient_booster"]["model"]["trees"][0]
    cases = [
        (("left_children", 0), 10 ** 6, "tree"),           # a child outside the tree
        (("left_children", 1), 0, "tree"),                # a cycle back to the root
        (("split_indices", 0), 99, "feature"),            # a feature the model lacks
        (("split_conditions", 0), float("nan"), "threshold"),
    ]
    for (field, index), value, message in cases:
        crafted = json.loads(json.dumps(good))
        crafted_tree = crafted["learner"]["gradient_booster"]["model"]["trees"][0]
        crafted_tree[field][index] = value
        path = tmp_path / "crafted.json"
        path.write_text(json.dumps(crafted))
        with pytest.raises(ValueError, match=message):
            db.Booster.load(path)
    del tree  # (the original stays untouched)
    crafted = json.loads(json.dumps(good))
    del crafted["learner"]["learner_model_param"]
    (tmp_path / "crafted.json").write_text(json.dumps(crafted))
    with pytest.raises(ValueError, match="not a readable xgboost JSON model"):
        db.Booster.load(tmp_path / "crafted.json")


def test_bad_format_is_refused_before_writing(tmp_path, data):
    model = db.DaskBoostRegressor(n_estimators=2).fit(data["X"], data["positive"])
    with pytest.raises(ValueError, match="format='onnx'"):
        model.save_model(tmp_path / "m.json", format="onnx")
    assert not (tmp_path / "m.json").exists()


def test_custom_objective_models_do_not_export(tmp_path, data):
    def squared(y, margin):
        return margin - y, np.ones_like(margin)
    model = db.DaskBoostRegressor(objective=squared, n_estimators=2).fit(data["X"],
                                                                         data["positive"])
    with pytest.raises(ValueError, match="objective='custom' has no xgboost equivalent"):
        model.save_model(tmp_path / "m.json", format="xgboost")
    assert not (tmp_path / "m.json").exists()


def test_files_that_are_no_model_or_a_newer_schema_are_refused(tmp_path, data):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"weights": [1, 2, 3]}))
    with pytest.raises(ValueError, match="neither a daskboost model .* nor an xgboost"):
        db.Booster.load(path)
    trained = json.loads(xgb.train({}, xgb.DMatrix(data["X"], data["positive"]), 2)
                         .save_raw("json"))
    trained["version"] = [4, 0, 0]
    path.write_text(json.dumps(trained))
    with pytest.raises(ValueError, match=r"version \[4, 0, 0\] is not one this daskboost"):
        db.Booster.load(path)


XGBOOST2 = os.environ.get("DASKBOOST_XGBOOST2_PYTHON")


@pytest.mark.skipif(not XGBOOST2, reason="set DASKBOOST_XGBOOST2_PYTHON to a python with "
                    "xgboost 2.x installed (e.g. a venv with pip install 'xgboost<3')")
def test_xgboost_2_reads_the_export(tmp_path, data):
    """The export read by the last xgboost 2 (run in its own interpreter)."""
    X = data["X"]
    np.save(tmp_path / "X.npy", X)
    cases = {"binary": db.DaskBoostClassifier(n_estimators=8).fit(X, data["binary"]),
             "multiclass": db.DaskBoostClassifier(n_estimators=5).fit(X, data["classes"]),
             "poisson": db.DaskBoostRegressor(objective="count:poisson", n_estimators=8)
             .fit(X, data["positive"])}
    for name, model in cases.items():
        model.save_model(tmp_path / f"{name}.json", format="xgboost")
        np.save(tmp_path / f"{name}.npy", model.get_booster().predict_margin(X))
    script = (
        "import sys, numpy as np, xgboost as xgb\n"
        "assert xgb.__version__.startswith('2.'), xgb.__version__\n"
        "d = sys.argv[1]; X = np.load(d + '/X.npy')\n"
        "for name in sys.argv[2:]:\n"
        "    b = xgb.Booster(model_file=f'{d}/{name}.json')\n"
        "    m = np.asarray(b.predict(xgb.DMatrix(X), output_margin=True)).reshape(len(X), -1).T\n"
        "    print(name, float(np.abs(m - np.load(f'{d}/{name}.npy')).max()))\n")
    out = subprocess.run([XGBOOST2, "-c", script, str(tmp_path), *cases], capture_output=True,
                         text=True, check=True).stdout.split()
    differences = dict(zip(out[::2], map(float, out[1::2])))
    assert set(differences) == set(cases)
    assert max(differences.values()) < TOL


@pytest.mark.parametrize("learner", [[], {"objective": 3}, {"objective": {"name": []}}, "x"])
def test_load_estimator_refuses_a_malformed_learner_by_name(tmp_path, learner):
    from daskboost.sklearn import load_estimator
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"learner": learner, "version": [3, 0, 0]}))
    with pytest.raises(ValueError, match="bad.json"):
        load_estimator(path)


def test_a_category_code_beyond_what_codes_hold_is_refused(tmp_path):
    rng = np.random.default_rng(6)
    X = np.column_stack([rng.integers(0, 4, 500), rng.standard_normal(500)]).astype(np.float32)
    types = {"feature_types": ["c", "q"], "enable_categorical": True}
    trained = xgb.train({"max_depth": 2, "max_cat_to_onehot": 1},
                        xgb.DMatrix(X, X[:, 0] % 2, **types), 2)
    model = json.loads(trained.save_raw("json"))
    tree = next(t for t in model["learner"]["gradient_booster"]["model"]["trees"]
                if t["categories"])
    tree["categories"][0] = 2 ** 31 - 1
    tree["categories"].sort()
    path = tmp_path / "big.json"
    path.write_text(json.dumps(model))
    with pytest.raises(ValueError, match="names category 2147483647; daskboost holds at most"):
        db.Booster.load(path)


# ---- xgboost's binary models (UBJSON, daskboost.ubjson) -----------------------------------

@pytest.mark.parametrize("objective,label,extra", [
    ("binary:logistic", "binary", {}),
    ("multi:softprob", "classes", {"num_class": 4}),
    ("reg:squarederror", "positive", {}),
])
def test_xgboosts_binary_models_load_as_its_json_ones(tmp_path, data, objective, label, extra):
    # xgboost writes UBJSON for model.ubj (and save_raw()'s default): the same document
    # as its JSON, float32 numbers exact instead of as decimal text
    X = data["X"]
    trained = xgb.train({"objective": objective, "max_depth": 4, **extra},
                        xgb.DMatrix(X, data[label]), 8)
    trained.save_model(str(tmp_path / "xgb.ubj"))
    trained.save_model(str(tmp_path / "xgb.json"))
    assert (tmp_path / "xgb.ubj").read_bytes()[:2] == b"{L"        # binary, not JSON text
    binary, text = db.Booster.load(tmp_path / "xgb.ubj"), db.Booster.load(tmp_path / "xgb.json")
    assert binary.objective == text.objective == objective
    np.testing.assert_allclose(binary.predict_margin(X), text.predict_margin(X), atol=1e-6)
    np.testing.assert_allclose(binary.predict_margin(X), xgboost_margins(tmp_path / "xgb.json", X),
                               atol=TOL)
    raw = db.Booster.load(bytes(trained.save_raw()))                  # raw_format="ubj"
    np.testing.assert_array_equal(raw.predict_margin(X), binary.predict_margin(X))
    if objective == "binary:logistic":  # the estimators' load_model and xgb_model too
        model = db.DaskBoostClassifier().load_model(tmp_path / "xgb.ubj")
        np.testing.assert_allclose(model.predict_proba(X)[:, 1], binary.predict(X), rtol=1e-12)
        more = db.DaskBoostClassifier(n_estimators=2).fit(X, data[label],
                                                          xgb_model=tmp_path / "xgb.ubj")
        assert more.get_booster().n_rounds == 10


def _ubj_int(n):
    return b"L" + int(n).to_bytes(8, "big", signed=True)


def _ubj_key(key):
    return _ubj_int(len(key)) + key.encode()


@pytest.mark.parametrize("raw, message", [
    (b"{" + _ubj_key("a") + b"[$d#" + _ubj_int(2 ** 60), "container of 1152921504606846976 "
     "elements"),
    (b"{" + _ubj_key("a") + b"S" + _ubj_int(10 ** 12) + b"x", "a string of 1000000000000 bytes"),
    (b"{" + _ubj_int(-3) + b"abc", "negative"),
    (b"{" + _ubj_key("a") + b"[" * 200, "nested more than 128 deep"),
    (b"{" + _ubj_key("a") + b"X", "unknown UBJSON marker b'X'"),
    (b"{" + _ubj_key("a") + b"T}" + b"}", "1 bytes after the UBJSON document"),
    (b"{" + _ubj_key("a") + b"T" + _ubj_key("a") + b"F}", "the key 'a' appears twice"),
    (b"{" + _ubj_key("a") + b"[$T#" + _ubj_int(2 ** 62), "a typed container of b'T'"),
    (b"{" + _ubj_int(2) + b"\xff\xfe" + b"T}", "not UTF-8"),
    (b"{" + _ubj_key("a") + b"[$d#" + _ubj_int(3) + b"\x00" * 4, "a container of 3 elements"),
    (b"{" + _ubj_key("a") + b"d\x00", "a number of 4 bytes"),
    (b"{" + _ubj_key("learner") + b"T}", "an xgboost JSON model has a version"),
], ids=["huge count", "huge string", "negative length", "deep", "unknown marker", "trailing",
        "duplicate key", "typed booleans", "key not utf-8", "truncated array",
        "truncated number", "no model in it"])
def test_crafted_binary_models_are_refused(tmp_path, raw, message):
    path = tmp_path / "crafted.ubj"
    path.write_bytes(raw)
    with pytest.raises(ValueError, match=message):
        db.Booster.load(path)
    with pytest.raises(ValueError, match="crafted.ubj"):
        db.Booster.load(path)


def test_fuzzed_binary_models_never_crash_or_hang(tmp_path, data):
    # byte flips, cuts and insertions in an xgboost binary model: each loads a model that
    # passes the checks, or is refused with a ValueError, in well under a second
    import time
    X = data["X"]
    raw = bytes(xgb.train({"objective": "multi:softprob", "num_class": 4, "max_depth": 3},
                          xgb.DMatrix(X, data["classes"]), 3).save_raw())
    rng = np.random.default_rng(20261129)
    outcomes = {"loaded": 0, "refused": 0}
    slowest = 0.0
    for _ in range(400):
        mutated = bytearray(raw)
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(0, len(mutated)))
            what = rng.integers(0, 3)
            if what == 0:
                mutated[at] = int(rng.integers(0, 256))
            elif what == 1:
                del mutated[at:at + int(rng.integers(1, 64))]
            else:
                mutated[at:at] = bytes(rng.integers(0, 256, int(rng.integers(1, 9)),
                                                    dtype=np.uint8))
        start = time.perf_counter()
        try:
            db.Booster.load(bytes(mutated)).predict_margin(X[:20])
            outcomes["loaded"] += 1
        except ValueError:
            outcomes["refused"] += 1
        slowest = max(slowest, time.perf_counter() - start)
    assert outcomes["refused"] > 200 and slowest < 1.0, (outcomes, slowest)


@pytest.mark.parametrize("objective,label", [("binary:logistic", "binary"),
                                             ("reg:squarederror", "positive"),
                                             ("count:poisson", "positive"),
                                             ("multi:softprob", "classes")])
def test_intercept_and_config_are_xgboosts(data, objective, label):
    """``intercept_`` and ``Booster.save_config()``'s model part, against xgboost's on
    the same data (its base_score estimate is the same start as daskboost's)."""
    X, y = data["X"], data[label]
    kind = db.DaskBoostClassifier if objective.startswith(("binary", "multi")) else \
        db.DaskBoostRegressor
    ours = kind(objective=objective, n_estimators=3, max_depth=3).fit(X, y)
    theirs = getattr(xgb, "XGBClassifier" if kind is db.DaskBoostClassifier
                     else "XGBRegressor")(objective=objective, n_estimators=3,
                                          max_depth=3).fit(X, y)
    if objective != "multi:softprob":   # (xgboost's multiclass start: 0 for every class)
        np.testing.assert_allclose(ours.intercept_, theirs.intercept_, rtol=1e-5)
    assert ours.intercept_.dtype == np.float32 and ours.intercept_.shape == (
        ours.get_booster().n_outputs,)
    config = json.loads(ours.get_booster().save_config())["learner"]
    expected = json.loads(theirs.get_booster().save_config())["learner"]
    assert config["metrics"] == expected["metrics"]
    assert config["objective"]["name"] == expected["objective"]["name"]
    for name, params in expected["objective"].items():   # (numbers as written differ)
        if isinstance(params, dict):
            assert {k: float(v) for k, v in config["objective"][name].items()} == \
                pytest.approx({k: float(v) for k, v in params.items()}), name
    for key in ("num_class", "num_feature", "num_target"):
        assert config["learner_model_param"][key] == expected["learner_model_param"][key]
    assert config["gradient_booster"]["gbtree_model_param"]["num_trees"] == \
        expected["gradient_booster"]["gbtree_model_param"]["num_trees"]
    with pytest.raises(sklearn_exceptions.NotFittedError):
        kind().intercept_
