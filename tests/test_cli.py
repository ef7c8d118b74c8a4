"""The command line on parquet lakes, label columns given by name, and progress lines."""

import io
import json
import re

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost import DaskBoostClassifier, DaskBoostRegressor
from daskboost.cli import estimator_for, main
from daskboost.objectives import OBJECTIVES
from daskboost.progress import ProgressReporter


@pytest.fixture()
def lake(tmp_path):
    rng = np.random.default_rng(0)
    (tmp_path / "lake").mkdir()
    frames = []
    for i in range(3):
        df = pd.DataFrame(rng.integers(0, 10, size=(1500, 4)).astype(float), columns=list("abcd"))
        df["y"] = (df.a + rng.logistic(size=1500) > 4.5).astype(int)
        df["r"] = df.b * 0.5 + rng.normal(size=1500)
        df.to_parquet(tmp_path / "lake" / f"p{i}.parquet")
        frames.append(df)
    return tmp_path, pd.concat(frames, ignore_index=True)


def test_train_then_predict_matches_the_library(lake, capsys):
    tmp, frame = lake
    model_path, preds_path = tmp / "model.json", tmp / "preds.parquet"
    assert main(["train", str(tmp / "lake"), "--label", "y", "--objective", "binary:logistic",
                 "--param", "n_estimators=8", "--param", "max_depth=3",
                 "--eval", str(tmp / "lake" / "p0.parquet"), "--output", str(model_path)]) == 0
    assert "round 8/8" in capsys.readouterr().err        # progress is on in the CLI
    assert main(["predict", str(model_path), str(tmp / "lake" / "*.parquet"),
                 "--output", str(preds_path)]) == 0
    preds = pd.read_parquet(preds_path)
    assert list(preds.columns) == ["proba_0", "proba_1", "prediction"]
    X = frame.drop(columns=["y"])                         # every column but the label
    data = dd.read_parquet(str(tmp / "lake"))
    expected = DaskBoostClassifier(n_estimators=8, max_depth=3).fit(data.drop(columns=["y"]),
                                                                   data["y"])
    np.testing.assert_allclose(preds["proba_1"].to_numpy(), expected.predict_proba(X)[:, 1],
                               rtol=1e-12)


def test_regression_with_params_and_quiet(lake, capsys):
    tmp, frame = lake
    model_path = tmp / "reg.json"
    assert main(["train", str(tmp / "lake" / "p*.parquet"), "--label", "r", "--quiet",
                 "--param", "n_estimators=5", "--param", "reg_lambda=2.5",
                 "--output", str(model_path), "--scheduler", "synchronous"]) == 0
    assert "round" not in capsys.readouterr().err
    saved = json.loads(model_path.read_text())
    assert saved["estimator"]["params"]["reg_lambda"] == 2.5
    model = DaskBoostRegressor().load_model(model_path)
    assert list(model.feature_names_in_) == ["a", "b", "c", "d", "y"]


@pytest.mark.parametrize("argv,message", [
    (["train", "{tmp}/nowhere", "--label", "y"], "no parquet data at"),
    (["train", "{tmp}/lake", "--label", "target"], "label column 'target' is not in the data"),
    (["train", "{tmp}/bad", "--label", "y"], "parquet files have different schemas"),
    (["train", "{tmp}/garbage", "--label", "y"], "cannot read parquet file"),
    (["train", "{tmp}/lake", "--label", "y", "--param", "learning_rate=-1"],
     r"learning_rate=-1"),
    (["train", "{tmp}/lake", "--label", "y", "--param", "nonsense=3"], "unknown --param"),
    (["train", "{tmp}/lake", "--label", "y", "--param", "novalue"], "must look like key=value"),
    (["train", "{tmp}/lake", "--label", "y", "--objective", "binary:hinge"],
     r"objective='binary:hinge' is not supported; valid objectives: 'reg:squarederror', .*"
     r"'multi:softmax'$"),
    (["train", "{tmp}/lake", "--label", "y", "--param", "objective=5"],
     "objective=5 is not supported"),
    (["train", "{tmp}/lake", "--label", "y", "--memory-budget", "lots"], "memory_budget.*'lots'"),
    (["train", "{tmp}/lake", "--label", "y", "--cache-dir", "{tmp}/lake/p0.parquet/x"],
     "cache_dir"),
])
def test_bad_input_is_one_clear_line_and_leaves_nothing(lake, capsys, argv, message):
    tmp, frame = lake
    (tmp / "bad").mkdir()
    frame.iloc[:100].to_parquet(tmp / "bad" / "p0.parquet")
    frame.iloc[:100].astype({"a": "float32"}).to_parquet(tmp / "bad" / "p1.parquet")
    (tmp / "garbage").mkdir()
    (tmp / "garbage" / "p0.parquet").write_bytes(b"not parquet at all")
    out = tmp / "model.json"
    argv = [a.format(tmp=tmp) for a in argv] + ["--output", str(out)]
    assert main(argv) == 2
    assert re.search(message, capsys.readouterr().err)
    assert not out.exists()
    assert not [p for p in tmp.iterdir() if p.name.startswith(".model.json")]


def test_classification_objectives_train_a_classifier():
    # as before the objectives' metadata: the binary:* and multi:* objectives
    for name in OBJECTIVES:
        expected = DaskBoostClassifier if name.startswith(("binary:", "multi:")) \
            else DaskBoostRegressor
        assert estimator_for(name) is expected, name
    assert estimator_for(None) is DaskBoostRegressor


def test_train_out_of_core_leaves_no_cache(lake, capsys):
    tmp, _ = lake
    cache = tmp / "cache"
    assert main(["train", str(tmp / "lake"), "--label", "r", "--quiet", "--param",
                 "n_estimators=3", "--memory-budget", "0", "--cache-dir", str(cache),
                 "--output", str(tmp / "m.json")]) == 0
    in_memory = DaskBoostRegressor(n_estimators=3).fit(dd.read_parquet(str(tmp / "lake")), "r")
    saved = DaskBoostRegressor().load_model(tmp / "m.json")
    assert saved.get_booster().to_dict() == in_memory.get_booster().to_dict()
    assert list(cache.iterdir()) == []


def test_predict_with_a_missing_model_fails_cleanly(lake, capsys):
    tmp, _ = lake
    assert main(["predict", str(tmp / "none.json"), str(tmp / "lake"),
                 "--output", str(tmp / "p.parquet")]) == 2
    assert "no model file" in capsys.readouterr().err
    assert not (tmp / "p.parquet").exists()


def test_fit_with_the_label_as_a_column_name(lake):
    tmp, frame = lake
    data = dd.read_parquet(str(tmp / "lake"))
    by_name = DaskBoostRegressor(n_estimators=4).fit(data[list("abcd") + ["r"]], "r")
    by_series = DaskBoostRegressor(n_estimators=4).fit(data[list("abcd")], data["r"])
    X = frame[list("abcd")]
    np.testing.assert_array_equal(by_name.predict(X), by_series.predict(X))
    with pytest.raises(ValueError, match="label column 'nope' is not a column of X"):
        DaskBoostRegressor().fit(data, "nope")


def test_progress_lines():
    stream = io.StringIO()
    report = ProgressReporter(stream=stream, min_interval=0.0)
    report(1, 4, {"validation_0": {"rmse": [0.5]}})
    report(4, 4, {"validation_0": {"rmse": [0.5, 0.4, 0.3, 0.25]}})
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("[daskboost] round 1/4 validation_0-rmse=0.5 elapsed")
    assert "round 4/4 validation_0-rmse=0.25" in lines[1] and "ETA 0.0s" in lines[1]
