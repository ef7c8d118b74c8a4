"""Model files are untrusted input: every path that reads one checks it completely.

Each damaged or crafted file gives a ValueError naming the file, the tree and the field
(never a crash, a hang or numbers read from outside an array); the fuzz test applies
thousands of random mutations to valid files in a subprocess, so a crash fails the test.
"""

import json
import os
import pickle
import subprocess
import sys
import time

import numpy as np
import pytest

from daskboost import DaskBoostClassifier, DaskBoostRegressor
from daskboost.booster import Booster
from daskboost.cli import main
from daskboost.model_file import check_model
from daskboost.sklearn import load_estimator

HERE = os.path.dirname(os.path.abspath(__file__))


def _data(n=600):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) + rng.normal(size=n) * 0.1
    return X, y


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Valid model files of each kind: {kind: path}, plus the rows to predict."""
    directory = tmp_path_factory.mktemp("models")
    X, y = _data()
    estimators = {
        "regression": (DaskBoostRegressor(n_estimators=3, max_depth=2), y),
        "poisson": (DaskBoostRegressor(n_estimators=3, max_depth=2, objective="count:poisson"),
                    np.abs(y)),
        "binary": (DaskBoostClassifier(n_estimators=3, max_depth=2), y > 0),
        "multiclass": (DaskBoostClassifier(n_estimators=3, max_depth=2),
                       np.digitize(y, [-0.5, 0.5])),
        "lossguide": (DaskBoostRegressor(n_estimators=3, max_depth=0, max_leaves=5,
                                         grow_policy="lossguide"), y),
        # format version 2: a categorical feature (its values are the categories)
        "categorical": (DaskBoostRegressor(n_estimators=3, max_depth=2, max_cat_to_onehot=1,
                                           feature_types=["c", "q", "q", "q"]), y),
    }
    paths = {}
    for kind, (estimator, target) in estimators.items():
        paths[kind] = directory / f"{kind}.json"
        estimator.fit(X, target).save_model(paths[kind])
    np.save(directory / "X.npy", X[:64])
    return paths, X[:64]


def _edited(tmp_path, source, edit):
    """A copy of the model file ``source`` with ``edit(payload)`` applied."""
    payload = json.loads(source.read_text())
    edit(payload)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(payload))
    return path


def _expect_refused(path, pattern, cls=DaskBoostRegressor):
    estimator = cls()
    with pytest.raises(ValueError, match=pattern) as info:
        estimator.load_model(path)
    assert str(info.value).startswith(f"{path}: ")  # the file is named first
    assert not hasattr(estimator, "_booster")  # nothing half-loaded
    return str(info.value)


# ---- the five edits of the report ------------------------------------------------------------

def _set(field, node, value, tree=0):
    def edit(payload):
        payload["trees"][tree][field][node] = value
    return edit


def _cut(field, length, tree=0):
    def edit(payload):
        del payload["trees"][tree][field][length:]
    return edit


@pytest.mark.parametrize("edit, message", [
    (_set("left", 0, 1000000), r"tree 0, left\[0\] = 1000000 is not a node of a 7-node tree"),
    (_set("left", 1, 0), r"tree 0, left\[1\] = 0 points back to the root"),
    (_set("feature", 0, 999), r"tree 0, feature\[0\] = 999 is not a feature of this "
                              r"4-feature model"),
    (_cut("value", 2), r"tree 0: value has 2 entries; the tree has 7 nodes"),
], ids=["child out of range", "cycle to the root", "split feature 999", "value cut to 2"])
def test_reported_edits_are_refused(tmp_path, models, edit, message):
    paths, _ = models
    _expect_refused(_edited(tmp_path, paths["regression"], edit), message)


def test_truncated_file_is_refused(tmp_path, models):
    paths, _ = models
    path = tmp_path / "model.json"
    path.write_bytes(paths["regression"].read_bytes()[:500])
    _expect_refused(path, r"not a valid JSON model file \(.*char")


# ---- every field --------------------------------------------------------------------------

def _hand_made_tree(left, right, feature):
    n = len(feature)
    return {"feature": feature, "left": left, "right": right, "threshold": [0.0] * n,
            "default_left": [0] * n, "value": [0.1] * n, "gain": [0.0] * n,
            "cover": [1.0] * n}


def _replace_tree(tree):
    def edit(payload):
        payload["trees"][0] = tree
    return edit


def _top(key, value):
    def edit(payload):
        payload[key] = value
    return edit


def _delete(key):
    def edit(payload):
        del payload[key]
    return edit


def _in_estimator(key, value):
    def edit(payload):
        payload["estimator"]["params"][key] = value
    return edit


def _both(first, second):
    def edit(payload):
        first(payload)
        second(payload)
    return edit


def _drop_last_tree(payload):
    del payload["trees"][-1]


@pytest.mark.parametrize("edit, message", [
    # nodes 3 and 4 point at each other: each node has one parent, the root reaches neither
    (_replace_tree(_hand_made_tree([1, -1, -1, 4, 3, -1, -1], [2, -1, -1, 5, 6, -1, -1],
                                   [0, -1, -1, 1, 1, -1, -1])),
     r"tree 0, node 3 is on a cycle of nodes that the root does not reach"),
    (_replace_tree(_hand_made_tree([1, -1, -1, -1], [2, -1, -1, -1], [0, -1, -1, -1])),
     r"tree 0, node 3 is not reached from the root"),
    (_replace_tree(_hand_made_tree([1, -1, 1], [2, -1, 1], [0, -1, 1])),
     r"tree 0, node 1 is the child of two splits \(left\[0\] and left\[2\]\)"),
    (_set("left", 3, 2), r"tree 0, left\[3\] = 2: node 3 is a leaf"),
    (_set("feature", 0, -2), r"feature\[0\] = -2 is not a feature"),
    (_set("left", 0, 1.5), r"tree 0: left\[0\] = 1.5 is not an integer"),
    (_set("feature", 0, None), r"tree 0: feature\[0\] = nan is not an integer"),
    (_set("left", 0, "x"), r"tree 0: left\[0\] = 'x' is not a number"),
    (_set("left", 0, 2 ** 40), r"tree 0: left\[0\] = 1099511627776 is not an integer in int32"),
    (_set("left", 0, 10 ** 30), r"tree 0: left\[0\] = 1e\+30 is not an integer in int32"),
    (_set("left", 0, 10 ** 400), r"tree 0: left\[0\] = 10{79} is not a number"),
    (_set("default_left", 0, 2), r"tree 0: default_left\[0\] = 2 is not 0/1"),
    (_set("threshold", 0, "nan"), r"tree 0, threshold\[0\] is NaN"),
    (_set("threshold", 0, None), r"tree 0, threshold\[0\] is NaN"),
    (_set("threshold", 0, "1e5x"), r"tree 0: threshold\[0\] = '1e5x' is not a number"),
    (_set("value", 3, float("inf")), r"tree 0, value\[3\] = inf is not finite"),
    (_set("cover", 1, [1.0]), r"tree 0: cover\[1\] = \[1.0\] is not a number"),
    (_set("gain", 1, {"a": 1}), r"tree 0: gain\[1\] = \{'a': 1\} is not a number"),
    (_both(_set("value", 3, 1e308), _set("value", 3, 1e308, tree=1)),
     r"margins as large as inf \(output 0\)"),
    (_top("trees", {}), r"trees must be an array"),
    (_top("objective", "reg:unknown"), r"objective = 'reg:unknown' is not known"),
    (_both(_top("objective", "reg:quantileerror"), _top("objective_params", {"quantile_alpha": 1.5})),
     r"objective_params: quantile_alpha=1.5 must be in \(0, 1\)"),
    (_top("objective_params", {"no_such_parameter": 1}), r"are not all parameters"),
    (_top("base_margin", [float("nan")]), r"base_margin = \[nan\] must be finite"),
    (_top("base_margin", [0.0, 0.0]), r"gives 1 outputs per row, but base_margin has 2"),
    (_top("base_margin", "0.5"), r"base_margin must be an array of numbers"),
    (_top("n_features", 1), r"feature\[\d+\] = 1 is not a feature of this 1-feature model"),
    (_top("n_features", 4.0), r"n_features must be an integer"),
    (_top("feature_names", ["a", "b", "c"]), r"3 feature_names for n_features = 4"),
    (_top("feature_names", ["a", "b", "c", "a"]), r"feature name 'a' appears twice"),
    (_top("feature_names", 7), r"feature_names must be an array of strings or null"),
    (_top("best_iteration", 3), r"best_iteration = 3 is not a round of this 3-round model"),
    (_top("best_score", "high"), r"best_score must be a number or null"),
    (_top("version", 3), r"model format version 3 is not supported"),
    # version 2 (categorical features) needs their types and dictionaries
    (_top("version", 2), r"missing field .feature_types."),
    (_top("format", "xgboost"), r"neither a daskboost model \(format='xgboost'\) nor an xgboost"),
    (_top("extra", 1), r"unknown field 'extra'"),
    (_delete("trees"), r"missing field 'trees'"),
    (_in_estimator("max_depth", -1), r"estimator.params: max_depth=-1 must be >= 0"),
    (_top("estimator", []), r"estimator must be an object"),
])
def test_bad_fields_are_refused(tmp_path, models, edit, message):
    paths, _ = models
    _expect_refused(_edited(tmp_path, paths["regression"], edit), message)


@pytest.mark.parametrize("edit, message", [
    (_drop_last_tree, r"8 trees is not a whole number of rounds of 3 trees"),
    (_top("base_margin", [0.0, 0.0]), r"objective='multi:softprob' gives 3 outputs per row, but "
                                      r"base_margin has 2"),
    (lambda p: p["estimator"].update(classes=[0, 1]), r"classes = \[0, 1\] must list the "
                                                      r"model's 3 classes"),
    (lambda p: p["estimator"].update(classes=[0, 1, 1]), r"must be distinct labels of one type"),
    (lambda p: p["estimator"].update(classes=[0, "1", 2]), r"must be distinct labels of one type"),
    (lambda p: p["estimator"].pop("classes"), r"the model file has no classes"),
])
def test_bad_multiclass_fields_are_refused(tmp_path, models, edit, message):
    paths, _ = models
    _expect_refused(_edited(tmp_path, paths["multiclass"], edit), message, DaskBoostClassifier)


def test_log_link_margins_that_overflow_exp_are_refused(tmp_path, models):
    paths, X = models
    # 710 > log(float max): exp() of such a margin is inf
    _expect_refused(_edited(tmp_path, paths["poisson"], _set("value", 3, 710.0)),
                    r"margins as large as 7\d\d.*overflow beyond 709.78")
    # the same value in an identity-link model is a finite prediction
    model = DaskBoostRegressor().load_model(
        _edited(tmp_path, paths["regression"], _set("value", 3, 710.0)))
    assert np.isfinite(model.predict(X)).all()


def test_duplicated_key_is_refused(tmp_path, models):
    paths, _ = models
    text = paths["regression"].read_text()
    path = tmp_path / "model.json"
    path.write_text(text.replace('"n_features":4', '"n_features":4,"n_features":3', 1))
    _expect_refused(path, r"the key 'n_features' appears twice")


@pytest.mark.parametrize("content, message", [
    (b"\xff\xfe{}", r"not a valid JSON model file \(.*utf-8"),
    (b"[" * 100000 + b"]" * 100000, r"not a valid JSON model file \(.*recursion"),
    (b"[1, 2]", r"a model file holds a JSON object; got an array"),
    (b"", r"not a valid JSON model file"),
])
def test_files_that_are_not_json_objects_are_refused(tmp_path, content, message):
    path = tmp_path / "model.json"
    path.write_bytes(content)
    _expect_refused(path, message)


def test_a_failed_load_keeps_the_fitted_model(tmp_path, models):
    paths, X = models
    estimator = DaskBoostRegressor().load_model(paths["regression"])
    before = estimator.predict(X)
    with pytest.raises(ValueError):
        estimator.load_model(_edited(tmp_path, paths["lossguide"], _in_estimator("gamma", -1)))
    assert np.array_equal(estimator.predict(X), before)
    assert estimator.get_params()["max_depth"] == 2  # the params were not replaced either


def test_valid_models_of_every_kind_load_and_predict_the_same(models):
    paths, X = models
    for kind, path in paths.items():
        estimator = load_estimator(path)
        assert type(estimator) is (DaskBoostClassifier if kind in ("binary", "multiclass")
                                   else DaskBoostRegressor)
        again = type(estimator)().load_model(path)
        assert np.array_equal(estimator.predict(X), again.predict(X))
        assert np.isfinite(estimator.predict(X, output_margin=True)).all()


# ---- every path that reads a model ------------------------------------------------------------

def test_xgb_model_path_is_checked(tmp_path, models):
    paths, _ = models
    bad = _edited(tmp_path, paths["regression"], _set("left", 0, 1000000))
    X, y = _data()
    with pytest.raises(ValueError, match=rf"{bad}: tree 0, left\[0\] = 1000000"):
        DaskBoostRegressor(n_estimators=2, max_depth=2).fit(X, y, xgb_model=str(bad))
    with pytest.raises(ValueError, match=rf"{bad}: tree 0, left\[0\] = 1000000"):
        Booster.load(bad)


def test_checkpoint_file_is_checked_on_resume(tmp_path, models):
    paths, _ = models
    checkpoint = tmp_path / "checkpoint.json"
    payload = json.loads(paths["regression"].read_text())
    del payload["estimator"]  # checkpoints hold the booster only
    payload["trees"][0]["right"][0] = 0
    checkpoint.write_text(json.dumps(payload))
    X, y = _data()
    estimator = DaskBoostRegressor(n_estimators=5, max_depth=2, checkpoint_path=checkpoint)
    with pytest.raises(ValueError, match=rf"{checkpoint}: tree 0, right\[0\] = 0 points back"):
        estimator.fit(X, y, resume=True)


def test_unpickling_checks_the_model(models):
    paths, X = models
    booster = Booster.load(paths["binary"])
    booster.trees[1].feature[0] = 999  # damaged in memory, then pickled
    data = pickle.dumps(booster)
    with pytest.raises(ValueError, match=r"unpickled model: tree 1, feature\[0\] = 999"):
        pickle.loads(data)
    estimator = load_estimator(paths["binary"])
    estimator.get_booster().trees[0].left[0] = -5
    with pytest.raises(ValueError, match=r"unpickled model: tree 0, left\[0\] = -5"):
        pickle.loads(pickle.dumps(estimator))


def test_cli_reports_a_bad_model_in_one_line(tmp_path, models, capsys):
    paths, _ = models
    bad = _edited(tmp_path, paths["regression"], _set("feature", 0, 999))
    status = main(["predict", str(bad), str(tmp_path / "no-data"), "--output",
                   str(tmp_path / "p.parquet")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.splitlines() == [f"daskboost: error: {bad}: tree 0, feature[0] = 999 is not a "
                                "feature of this 4-feature model (-1 marks a leaf)"]
    assert not (tmp_path / "p.parquet").exists()


def test_cli_process_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "model.json"
    bad.write_text('{"format": "daskboost", "version": 1, "trees": [')
    done = subprocess.run([sys.executable, "-m", "daskboost.cli", "predict", str(bad),
                           str(tmp_path), "--output", str(tmp_path / "p.parquet")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "not a valid JSON model file" in done.stderr


# ---- models built in memory, and the prediction kernel's inputs -----------------------------------

def test_trained_models_pass_the_same_checks(monkeypatch):
    """The suite runs with DASKBOOST_CHECK_MODELS=1: a grower emitting a broken tree is
    caught when training builds the model, not at prediction."""
    from daskboost import grower
    assert os.environ.get("DASKBOOST_CHECK_MODELS") == "1"
    to_tree = grower.TreeGrower.to_tree

    def broken(self):
        tree = to_tree(self)
        tree.right[0] = 0
        return tree

    monkeypatch.setattr(grower.TreeGrower, "to_tree", broken)
    X, y = _data()
    with pytest.raises(ValueError, match=r"the trained model: tree 0, right\[0\] = 0 points back"):
        DaskBoostRegressor(n_estimators=2, max_depth=2).fit(X, y)


def test_check_model_accepts_trained_models(models):
    paths, _ = models
    for path in paths.values():
        check_model(Booster.load(path), "again")  # nothing raised


def test_booster_predict_checks_its_inputs(models):
    paths, X = models
    booster = Booster.load(paths["regression"])
    with pytest.raises(ValueError, match=r"X has shape \(64, 3\); the model takes \(n_rows, 4\)"):
        booster.predict(X[:, :3])
    with pytest.raises(ValueError, match=r"X has shape \(4,\)"):
        booster.predict(X[0])
    with pytest.raises(ValueError, match=r"base_margin has shape \(1, 10\); expected \(1, 64\)"):
        booster.predict_margin(X, base_margin=np.zeros((1, 10)))


# ---- fuzzing ---------------------------------------------------------------------------------

MUTATIONS_PER_MODEL = 800  # x 5 model kinds = 4,000 mutated files, about 15 s
HANG_SECONDS = 30  # no mutation finishing for this long is a hang


def _run_fuzzer(command, log):
    """Run the fuzzer; returns its exit status, or a description of a hang."""
    with open(log, "w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, text=True)
        size, progress = -1, time.monotonic()
        while process.poll() is None:
            time.sleep(0.2)
            if os.path.getsize(log) != size:
                size, progress = os.path.getsize(log), time.monotonic()
            elif time.monotonic() - progress > HANG_SECONDS:
                process.kill()
                process.wait()
                return f"a hang (no progress for {HANG_SECONDS} s)", ""
        return process.returncode, process.stderr.read()


def _fuzz(files, data, mutations, seed, tmp_path):
    """Run the fuzzer on ``files``; returns the finished lines after the checks every
    fuzz run must pass: the process ends normally, every mutation finishes, and every
    refusal is a ValueError."""
    command = [sys.executable, os.path.join(HERE, "model_fuzz.py"), *map(str, files),
               "--data", str(data), "--mutations", str(mutations), "--seed", str(seed)]
    log = tmp_path / "fuzz.jsonl"
    status, err = _run_fuzzer(command, log)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    started = {line["i"]: line for line in lines if "mutations" in line}
    finished = [line for line in lines if "outcome" in line]
    last = started[max(started)] if started else None
    assert status == 0, f"the fuzzer process ended with {status} at {last}: {err[-2000:]}"
    assert len(finished) == len(started) == mutations * len(files)
    others = [(started[line["i"]], line["detail"]) for line in finished
              if line["outcome"] == "other"]
    assert others == []  # every refusal is a ValueError
    slowest = max(finished, key=lambda line: line["seconds"])
    assert slowest["seconds"] < 10, f"slow: {started[slowest['i']]}"
    return finished


def test_fuzzed_model_files_never_crash_or_hang(models, tmp_path):
    paths, _ = models
    X_path = os.path.join(os.path.dirname(paths["regression"]), "X.npy")
    finished = _fuzz(paths.values(), X_path, MUTATIONS_PER_MODEL, 20261122, tmp_path)
    refused = sum(line["outcome"] == "ValueError" for line in finished)
    assert refused > len(finished) // 2  # most mutations break a model: the checks see them


def test_fuzzed_xgboost_format_files_never_crash_or_hang(models, tmp_path):
    """The same fuzzing on the models exported in xgboost's JSON format (issue 16):
    import reads them through the same checks."""
    paths, _ = models
    exported = []
    for kind, path in paths.items():
        exported.append(tmp_path / f"{kind}-xgboost.json")
        load_estimator(path).save_model(exported[-1], format="xgboost")
    X_path = os.path.join(os.path.dirname(paths["regression"]), "X.npy")
    finished = _fuzz(exported, X_path, MUTATIONS_PER_MODEL // 2, 20261123, tmp_path)
    refused = sum(line["outcome"] == "ValueError" for line in finished)
    assert refused > len(finished) // 4  # the checks see the broken ones


# ---- a model given as bytes (``Booster.save_raw``) ----------------------------------------

def test_model_bytes_are_checked_as_a_file_is(tmp_path, models):
    paths, X = models
    raw = _edited(tmp_path, paths["regression"], _set("left", 1, 0)).read_bytes()
    for load in (Booster.load, DaskBoostRegressor().load_model, load_estimator):
        with pytest.raises(ValueError, match=r"^the model bytes: tree 0, left\[1\] = 0 points "
                                             "back to the root"):
            load(bytearray(raw))
    with pytest.raises(ValueError, match=r"^the model bytes: not a valid JSON model file"):
        Booster.load(raw[:500])
    # the bytes of a good file load as the file does
    good = paths["regression"].read_bytes()
    np.testing.assert_array_equal(load_estimator(good).predict(X),
                                  load_estimator(paths["regression"]).predict(X))
