"""The command line on parquet lakes, label columns given by name, and progress lines."""

import io
import json
import re

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost import DaskBoostClassifier, DaskBoostRanker, DaskBoostRegressor
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


def test_several_label_columns_train_a_multi_target_model(lake, capsys):
    tmp, frame = lake
    model_path, preds_path = tmp / "t.json", tmp / "t.parquet"
    assert main(["train", str(tmp / "lake"), "--label", "r", "y", "--quiet",
                 "--param", "n_estimators=5", "--param", "max_depth=3",
                 "--eval", str(tmp / "lake" / "p0.parquet"), "--output", str(model_path)]) == 0
    assert main(["predict", str(model_path), str(tmp / "lake"),
                 "--output", str(preds_path)]) == 0
    preds = pd.read_parquet(preds_path)
    assert list(preds.columns) == ["prediction_0", "prediction_1"]
    data = dd.read_parquet(str(tmp / "lake"))
    expected = DaskBoostRegressor(n_estimators=5, max_depth=3).fit(
        data.drop(columns=["r", "y"]), data[["r", "y"]])
    np.testing.assert_allclose(preds.to_numpy(),
                               expected.predict(frame.drop(columns=["r", "y"])), rtol=1e-12)
    assert main(["train", str(tmp / "lake"), "--label", "r", "nope", "--quiet",
                 "--output", str(model_path)]) == 2
    assert "label column 'nope' is not in the data" in capsys.readouterr().err


def test_several_quantiles_predict_a_column_per_level(lake, capsys):
    tmp, frame = lake
    model_path, preds_path = tmp / "q.json", tmp / "q.parquet"
    assert main(["train", str(tmp / "lake"), "--label", "r", "--drop", "y", "--quiet",
                 "--objective", "reg:quantileerror", "--param", "quantile_alpha=[0.1, 0.9]",
                 "--param", "n_estimators=5", "--output", str(model_path)]) == 0
    assert main(["predict", str(model_path), str(tmp / "lake"),
                 "--output", str(preds_path)]) == 0
    preds = pd.read_parquet(preds_path)
    assert list(preds.columns) == ["prediction_0.1", "prediction_0.9"]
    expected = DaskBoostRegressor().load_model(model_path).predict(frame[list("abcd")])
    np.testing.assert_allclose(preds.to_numpy(), expected, rtol=1e-12)


def test_ranking_takes_the_query_ids_from_a_column(tmp_path):
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(120), rng.integers(2, 15, 120))
    frame = pd.DataFrame(rng.integers(0, 5, size=(len(qid), 3)).astype(float),
                         columns=list("abc")).assign(qid=qid)
    frame["rel"] = np.clip(frame["a"] + rng.integers(-1, 2, len(qid)), 0, 4)
    (tmp_path / "lake").mkdir()
    for i, part in enumerate((qid < 60, qid >= 60)):  # whole queries in each file
        frame[part].to_parquet(tmp_path / "lake" / f"part-{i}.parquet", index=False)
    model_path, preds_path = tmp_path / "rank.json", tmp_path / "rank.parquet"
    assert main(["train", str(tmp_path / "lake"), "--label", "rel", "--qid", "qid", "--quiet",
                 "--objective", "rank:ndcg", "--param", "n_estimators=4",
                 "--eval", str(tmp_path / "lake"), "--output", str(model_path)]) == 0
    model = DaskBoostRanker().load_model(model_path)
    assert list(model.feature_names_in_) == ["a", "b", "c"]  # (not the query ids)
    assert main(["predict", str(model_path), str(tmp_path / "lake"), "--id", "qid",
                 "--output", str(preds_path)]) == 0
    preds = pd.read_parquet(preds_path)
    expected = DaskBoostRanker(n_estimators=4).fit(frame[list("abc")], frame["rel"], qid=qid)
    np.testing.assert_allclose(preds["prediction"].to_numpy(),
                               expected.predict(frame[list("abc")]), atol=1e-12)
    np.testing.assert_array_equal(preds["qid"].to_numpy(), qid)


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
    (["train", "{tmp}/lake", "--label", "y", "--objective", "binary:svm"],
     r"objective='binary:svm' is not supported; valid objectives: 'reg:squarederror', .*"
     r"'multi:softmax', 'rank:pairwise', 'rank:ndcg', 'rank:map'$"),
    (["train", "{tmp}/lake", "--label", "y", "--objective", "rank:ndcg"],
     "objective='rank:ndcg' ranks within queries: give --qid COL"),
    (["train", "{tmp}/lake", "--label", "y", "--qid", "y"],
     "--qid 'y' is for the ranking objectives"),
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
    # as before the objectives' metadata: the binary:* and multi:* objectives (and the
    # rank:* ones a ranker)
    for name in OBJECTIVES:
        expected = (DaskBoostClassifier if name.startswith(("binary:", "multi:"))
                    else DaskBoostRanker if name.startswith("rank:") else DaskBoostRegressor)
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


# --- choosing columns: --features, --drop, --weight; predict selects by name; --id ---

@pytest.fixture()
def wide_lake(tmp_path):
    """Features a-d, label y, weights w, a string id and a timestamp; the files order their
    columns differently (a reader must select by name)."""
    rng = np.random.default_rng(1)
    (tmp_path / "wide").mkdir()
    frames = []
    orders = [["id", "ts", "a", "b", "c", "d", "w", "y"],
              ["y", "d", "c", "w", "b", "a", "ts", "id"],
              ["a", "w", "id", "b", "y", "ts", "d", "c"]]
    for i, order in enumerate(orders):
        df = pd.DataFrame(rng.integers(0, 10, size=(1000, 4)).astype(float), columns=list("abcd"))
        df["y"] = (df.a + df.c / 2 + rng.logistic(size=1000) > 6).astype(int)
        df["w"] = rng.uniform(0.1, 5.0, size=1000) * (1 + 3 * df.y)
        df["id"] = [f"row{i}-{j}" for j in range(1000)]
        df["ts"] = pd.Timestamp("2026-01-01") + pd.to_timedelta(np.arange(1000), unit="s")
        df[order].to_parquet(tmp_path / "wide" / f"p{i}.parquet", index=False)
        frames.append(df)
    return tmp_path, pd.concat(frames, ignore_index=True)


def final_metric(err):
    """The last round's first eval metric value from the progress lines."""
    return re.findall(r"validation_0-\w+=(\S+)", err)[-1]


def train_argv(tmp, *options, output="m.json", quiet=True):
    return ["train", str(tmp / "wide"), "--label", "y", *(["--quiet"] if quiet else []),
            "--scheduler", "synchronous", "--param", "n_estimators=4", "--param", "max_depth=3",
            *options, "--output", str(tmp / output)]


def test_features_and_drop_choose_the_training_columns(wide_lake, capsys):
    tmp, frame = wide_lake
    assert main(train_argv(tmp, "--features", "c", "a", output="f.json")) == 0
    assert main(train_argv(tmp, "--drop", "id", "ts", "w", "b", output="d.json")) == 0
    assert "on 3 features" in capsys.readouterr().out
    by_features = DaskBoostRegressor().load_model(tmp / "f.json")
    by_drop = DaskBoostRegressor().load_model(tmp / "d.json")
    assert list(by_features.feature_names_in_) == ["c", "a"]
    # the first file's column order, minus the dropped columns, the label and the weight
    assert list(by_drop.feature_names_in_) == ["a", "c", "d"]
    data = dd.read_parquet(str(tmp / "wide"), columns=["c", "a", "y"])
    expected = DaskBoostRegressor(n_estimators=4, max_depth=3).fit(data[["c", "a"]], data["y"])
    assert by_features.get_booster().to_dict() == expected.get_booster().to_dict()


def test_the_weight_column_weighs_training_and_eval_rows(wide_lake, capsys):
    tmp, frame = wide_lake
    frame[list("abcdy")].iloc[:500].to_parquet(tmp / "eval_unweighted.parquet")
    frame[list("abcdwy")].iloc[:500].to_parquet(tmp / "eval_weighted.parquet")
    common = ["--drop", "id", "ts", "--weight", "w", "--objective", "binary:logistic"]
    assert main(train_argv(tmp, *common, "--eval", str(tmp / "eval_weighted.parquet"),
                           output="w.json", quiet=False)) == 0
    weighted_err = capsys.readouterr().err
    cli_model = DaskBoostClassifier().load_model(tmp / "w.json")
    assert list(cli_model.feature_names_in_) == list("abcd")       # the weight is no feature
    data = dd.read_parquet(str(tmp / "wide"), columns=list("abcdwy"))
    ev = dd.from_pandas(frame[list("abcdwy")].iloc[:500], npartitions=1)
    expected = DaskBoostClassifier(n_estimators=4, max_depth=3).fit(
        data[list("abcd")], data["y"], sample_weight=data["w"],
        eval_set=[(ev[list("abcd")], ev["y"])], sample_weight_eval_set=[ev["w"]])
    unweighted = DaskBoostClassifier(n_estimators=4, max_depth=3).fit(
        data[list("abcd")], data["y"], eval_set=[(ev[list("abcd")], ev["y"])])
    assert cli_model.get_booster().to_dict() == expected.get_booster().to_dict()
    assert cli_model.get_booster().to_dict() != unweighted.get_booster().to_dict()
    [(name, values)] = expected.evals_result_["validation_0"].items()
    assert final_metric(weighted_err) == f"{values[-1]:.6g}"
    # --eval data without the weight column: its rows weigh 1
    assert main(train_argv(tmp, *common, "--eval", str(tmp / "eval_unweighted.parquet"),
                           output="u.json", quiet=False)) == 0
    ev_expected = DaskBoostClassifier(n_estimators=4, max_depth=3).fit(
        data[list("abcd")], data["y"], sample_weight=data["w"],
        eval_set=[(ev[list("abcd")], ev["y"])])
    [(name, values)] = ev_expected.evals_result_["validation_0"].items()
    assert final_metric(capsys.readouterr().err) == f"{values[-1]:.6g}"


@pytest.mark.parametrize("options,message", [
    (["--features", "a", "zz"], r"--features column\(s\) \['zz'\] not in the data; "
                                r"columns: \['id', 'ts', 'a', 'b', 'c', 'd', 'w', 'y'\]$"),
    (["--features", "a", "y"], r"--features: 'y' is the label column, not a feature$"),
    (["--features", "a", "w", "--weight", "w"], "'w' is the weight column, not a feature$"),
    (["--drop", "id", "nope"], r"--drop column\(s\) \['nope'\] not in the data; columns: "),
    (["--drop", "id", "ts", "a", "b", "c", "d", "w"], "no feature columns left; columns: "),
    (["--drop", "id", "ts", "--weight", "weights"],
     "weight column 'weights' is not in the data; columns: "),
    (["--drop", "id", "ts", "--weight", "y"], "--weight 'y' is the label column$"),
    (["--features", "a", "--eval", "{tmp}/eval.parquet"],
     r"column\(s\) \['y'\] not in the data; columns: \['a', 'b'\]$"),
])
def test_bad_columns_are_one_line_before_any_data_is_read(wide_lake, capsys, monkeypatch,
                                                          options, message):
    import daskboost.cli as cli
    tmp, frame = wide_lake
    frame[["a", "b"]].to_parquet(tmp / "eval.parquet", index=False)

    def no_reading(*args):
        raise AssertionError("data read before the columns were checked")
    monkeypatch.setattr(cli, "read_columns", no_reading)
    options = [o.format(tmp=tmp) for o in options]
    assert main(train_argv(tmp, *options)) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("daskboost: error: ")
    assert re.search(message, err.strip()), err
    assert not (tmp / "m.json").exists()


def test_features_and_drop_exclude_each_other(wide_lake, capsys):
    tmp, _ = wide_lake
    with pytest.raises(SystemExit) as exit_:
        main(train_argv(tmp, "--features", "a", "--drop", "id"))
    assert exit_.value.code == 2
    assert "--drop: not allowed with argument --features" in capsys.readouterr().err


def test_predict_selects_the_model_features_by_name(wide_lake, capsys):
    tmp, frame = wide_lake
    assert main(train_argv(tmp, "--features", "d", "a", "c", "--weight", "w",
                           "--objective", "binary:logistic")) == 0
    model = DaskBoostClassifier().load_model(tmp / "m.json")
    # the lake's files order their columns differently, none like the model; extra columns
    assert main(["predict", str(tmp / "m.json"), str(tmp / "wide"), "--id", "id",
                 "--output", str(tmp / "p.parquet")]) == 0
    preds = pd.read_parquet(tmp / "p.parquet")
    assert list(preds.columns) == ["id", "proba_0", "proba_1", "prediction"]
    by_id = frame.set_index("id").loc[preds["id"]]
    np.testing.assert_array_equal(preds["proba_1"].to_numpy(),
                                  model.predict_proba(by_id[["d", "a", "c"]])[:, 1])
    assert main(["predict", str(tmp / "m.json"), str(tmp / "wide"), "--margin",
                 "--output", str(tmp / "margin.parquet")]) == 0
    assert list(pd.read_parquet(tmp / "margin.parquet").columns) == ["margin"]


@pytest.mark.parametrize("columns,options,message", [
    ("ad", [], r"the model's feature column\(s\) \['c'\] not in the data; columns: \['a', 'd', "
               r"'id', 'prediction'\]$"),
    ("acd", ["--id", "key"], r"--id column \['key'\] not in the data; columns: "),
    ("acd", ["--id", "prediction"], r"--id 'prediction' clashes with a prediction column; "
                                    r"columns: \['prediction'\]$"),
])
def test_predict_column_errors_are_one_line(wide_lake, capsys, columns, options, message):
    tmp, frame = wide_lake
    assert main(train_argv(tmp, "--features", "a", "c", "d")) == 0
    frame[list(columns) + ["id"]].assign(prediction=1.0).to_parquet(tmp / "new.parquet")
    assert main(["predict", str(tmp / "m.json"), str(tmp / "new.parquet"), *options,
                 "--output", str(tmp / "p.parquet")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and re.search(message, err.strip()), err
    assert not (tmp / "p.parquet").exists()


def test_multiclass_margins_are_written_one_column_per_class(wide_lake):
    tmp, frame = wide_lake
    frame.assign(y=frame.a.astype(int) % 3).to_parquet(tmp / "three.parquet")
    assert main(["train", str(tmp / "three.parquet"), "--label", "y", "--drop", "id", "ts",
                 "--objective", "multi:softprob", "--quiet", "--param", "n_estimators=2",
                 "--output", str(tmp / "m.json")]) == 0
    assert main(["predict", str(tmp / "m.json"), str(tmp / "three.parquet"), "--margin",
                 "--id", "id", "--output", str(tmp / "p.parquet")]) == 0
    preds = pd.read_parquet(tmp / "p.parquet")
    assert list(preds.columns) == ["id", "margin_0", "margin_1", "margin_2"]
    model = DaskBoostClassifier().load_model(tmp / "m.json")
    np.testing.assert_array_equal(preds[["margin_0", "margin_1", "margin_2"]].to_numpy(),
                                  model.predict(frame[list("abcdw")], output_margin=True))


# ---- explain, importance, export (issue 16) --------------------------------------------

@pytest.fixture()
def trained(lake):
    tmp, frame = lake
    model_path = tmp / "model.json"
    assert main(["train", str(tmp / "lake"), "--label", "y", "--drop", "r", "--quiet",
                 "--objective", "binary:logistic", "--param", "n_estimators=6",
                 "--param", "max_depth=3", "--output", str(model_path)]) == 0
    return tmp, frame, model_path


def test_explain_writes_a_column_per_feature_and_the_bias_in_row_order(trained, capsys):
    tmp, frame, model_path = trained
    out = tmp / "contribs.parquet"
    assert main(["explain", str(model_path), str(tmp / "lake"), "--output", str(out),
                 "--id", "r"]) == 0
    written = pd.read_parquet(out)
    assert list(written.columns) == ["r", "a", "b", "c", "d", "bias"]
    np.testing.assert_array_equal(written["r"].to_numpy(), frame["r"].to_numpy())
    model = DaskBoostClassifier().load_model(model_path)
    X = frame[list("abcd")]
    np.testing.assert_allclose(written[["a", "b", "c", "d", "bias"]].to_numpy(),
                               model.predict(X, pred_contribs=True), rtol=1e-12)
    np.testing.assert_allclose(written[["a", "b", "c", "d", "bias"]].sum(axis=1),
                               model.predict(X, output_margin=True), atol=1e-9)
    assert main(["explain", str(model_path), str(tmp / "lake"), "--output", str(out),
                 "--approx"]) == 0
    np.testing.assert_allclose(pd.read_parquet(out).to_numpy(),
                               model.predict(X, pred_contribs=True, approx_contribs=True))


def test_explain_multiclass_names_a_column_per_class(wide_lake):
    tmp, frame = wide_lake
    frame.assign(y=frame.a.astype(int) % 3).to_parquet(tmp / "three.parquet")
    assert main(["train", str(tmp / "three.parquet"), "--label", "y", "--features", "a", "b",
                 "--objective", "multi:softprob", "--quiet", "--param", "n_estimators=2",
                 "--output", str(tmp / "m.json")]) == 0
    assert main(["explain", str(tmp / "m.json"), str(tmp / "three.parquet"),
                 "--output", str(tmp / "c.parquet")]) == 0
    written = pd.read_parquet(tmp / "c.parquet")
    model = DaskBoostClassifier().load_model(tmp / "m.json")
    assert list(written.columns) == [f"{name}_{c}" for c in model.classes_
                                     for name in ("a", "b", "bias")]
    np.testing.assert_allclose(written.to_numpy().reshape(len(frame), 3, 3),
                               model.predict(frame[["a", "b"]], pred_contribs=True))


def test_importance_prints_largest_first_and_plots(trained, capsys):
    tmp, _, model_path = trained
    capsys.readouterr()
    plot = tmp / "importance.png"
    assert main(["importance", str(model_path), "--type", "weight", "--plot", str(plot)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["feature", "weight"]
    printed = {line.split()[0]: float(line.split()[1]) for line in lines[1:-1]}
    scores = DaskBoostClassifier().load_model(model_path).get_booster().get_score(importance_type="weight")
    assert printed == scores
    assert list(printed.values()) == sorted(printed.values(), reverse=True)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["importance", str(model_path), "--type", "shap"]) == 2
    assert "--type 'shap'" in capsys.readouterr().err


def test_export_writes_a_model_xgboost_loads(trained):
    xgb = pytest.importorskip("xgboost")
    tmp, frame, model_path = trained
    out = tmp / "xgb.json"
    assert main(["export", str(model_path), "--format", "xgboost", "--output", str(out)]) == 0
    model = DaskBoostClassifier().load_model(model_path)
    X = frame[list("abcd")]
    theirs = xgb.Booster(model_file=str(out)).predict(xgb.DMatrix(X))
    np.testing.assert_allclose(theirs, model.predict_proba(X)[:, 1], atol=1e-6)
    # any other name: xgboost's binary UBJSON, as xgboost writes it
    assert main(["export", str(model_path), "--format", "xgboost", "--output",
                 str(tmp / "xgb.ubj")]) == 0
    assert (tmp / "xgb.ubj").read_bytes()[:2] == b"{L"
    np.testing.assert_array_equal(
        xgb.Booster(model_file=str(tmp / "xgb.ubj")).predict(xgb.DMatrix(X)), theirs)
    # and the xgboost file serves the other commands
    assert main(["explain", str(out), str(tmp / "lake"), "--output",
                 str(tmp / "c.parquet")]) == 0
    assert main(["export", str(tmp / "missing.json"), "--format", "xgboost", "--output",
                 str(tmp / "x.json")]) == 2
    assert not (tmp / "x.json").exists()
