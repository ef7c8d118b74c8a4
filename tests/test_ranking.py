"""Learning to rank: LambdaMART's objectives and the ranking metrics against xgboost's,
query groups through partitions, schedulers and the out-of-core store, the ranker's
scikit-learn and native APIs, model files, and the errors of bad query groups.

The features take few distinct integer values, so the bins are the same as xgboost's
and a model differs from xgboost's only by float32 rounding: predictions are compared
to 1e-5, metric values to 1e-9 (the same per-query sums in float64)."""

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import daskboost as dxb
from daskboost import lambdarank
from daskboost.query_groups import check_partition_bounds, partition_queries

xgb = pytest.importorskip("xgboost")

N_QUERIES = 300
ROUNDS = 6


def _ranking_data(seed=0, n_queries=N_QUERIES, largest=50):
    """(X, y, qid, sizes): queries of 1 .. largest - 1 documents (some larger than
    xgboost's default k = 32), relevance 0..4 from the first feature, ties in it."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, largest, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    X = rng.integers(0, 12, size=(len(qid), 5)).astype(np.float32)
    y = np.clip(np.round(X[:, 0] / 3 + rng.normal(scale=0.8, size=len(qid))), 0, 4)
    return X, y, qid, sizes


@pytest.fixture(scope="module")
def data():
    return _ranking_data()


def _xgb_fit(params, X, y, qid, weight=None, rounds=ROUNDS, metrics=None):
    d = xgb.DMatrix(X, y, qid=qid, weight=weight)
    result = {}
    p = {"tree_method": "hist", "max_depth": 4, "eta": 0.3, "nthread": 1, **params}
    if metrics:
        p["eval_metric"] = metrics
    booster = xgb.train(p, d, rounds, evals=[(d, "train")], evals_result=result,
                        verbose_eval=False)
    return booster.predict(d, output_margin=True), result["train"]


def _ours(params, X, y, qid, weight=None, rounds=ROUNDS, metrics=None):
    d = dxb.DMatrix(X, y, qid=qid, weight=weight)
    result = {}
    p = {"max_depth": 4, "eta": 0.3, **params}
    if metrics:
        p["eval_metric"] = metrics
    booster = dxb.train(p, d, rounds, evals=[(d, "train")], evals_result=result,
                        verbose_eval=False)
    return booster.predict(d, output_margin=True), result["train"]


@pytest.mark.parametrize("objective", ["rank:ndcg", "rank:pairwise", "rank:map"])
@pytest.mark.parametrize("settings", [
    {},
    {"lambdarank_num_pair_per_sample": 4},
    {"lambdarank_pair_method": "mean", "lambdarank_num_pair_per_sample": 2},
    {"lambdarank_normalization": False, "lambdarank_score_normalization": False},
    {"ndcg_exp_gain": False},
    {"query_weights": True},
], ids=["topk32", "topk4", "mean2", "unnormalised", "linear_gain", "query_weights"])
def test_models_and_default_metric_are_xgboosts(data, objective, settings):
    X, y, qid, sizes = data
    settings = dict(settings)
    weight = (np.random.default_rng(5).uniform(0.5, 2.0, len(sizes))
              if settings.pop("query_weights", False) else None)
    labels = (y > 1).astype(np.float64) if objective == "rank:map" else y
    params = {"objective": objective, **settings}
    theirs, their_metrics = _xgb_fit(params, X, labels, qid, weight)
    ours, our_metrics = _ours(params, X, labels, qid, weight)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
    assert list(our_metrics) == list(their_metrics)  # ndcg@32, ndcg@4, ndcg, map@32 ...
    for name in their_metrics:
        np.testing.assert_allclose(our_metrics[name], their_metrics[name], rtol=0, atol=1e-9)


def test_metrics_with_k_and_minus_are_xgboosts(data):
    X, y, qid, sizes = data
    binary = (y > 2).astype(np.float64)
    weight = np.random.default_rng(3).uniform(1.0, 2.0, len(sizes))
    metrics = ["ndcg", "ndcg@5", "ndcg@3-", "ndcg-", "map", "map@4", "map@2-", "pre@3", "pre"]
    _, theirs = _xgb_fit({"objective": "rank:map"}, X, binary, qid, weight, rounds=3,
                         metrics=metrics)
    _, ours = _ours({"objective": "rank:map"}, X, binary, qid, weight, rounds=3,
                    metrics=metrics)
    assert list(ours) == metrics
    for name in metrics:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=0, atol=1e-9, err_msg=name)


def test_ranker_matches_xgboosts_ranker_and_its_score(data):
    X, y, qid, _ = data
    ours = dxb.XGBRanker(n_estimators=ROUNDS, max_depth=4).fit(X, y, qid=qid)
    theirs = xgb.XGBRanker(n_estimators=ROUNDS, max_depth=4, tree_method="hist",
                           n_jobs=1).fit(X, y, qid=qid)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-5)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(qid=qid)
    assert ours.score(frame, y) == pytest.approx(theirs.score(frame, y), abs=1e-9)
    # a qid column of X is the query ids (fit, predict and score take it out of X)
    from_column = dxb.XGBRanker(n_estimators=ROUNDS, max_depth=4).fit(frame, y)
    np.testing.assert_array_equal(from_column.predict(frame), ours.predict(X))


def test_group_sizes_and_query_weights_are_query_ids_and_row_weights(data):
    X, y, qid, sizes = data
    weights = np.random.default_rng(7).uniform(0.5, 2.0, len(sizes))
    by_group = dxb.XGBRanker(n_estimators=3).fit(X, y, group=sizes, sample_weight=weights)
    by_qid = dxb.XGBRanker(n_estimators=3).fit(X, y, qid=qid,
                                               sample_weight=np.repeat(weights, sizes))
    assert by_group.get_booster().save_raw() == by_qid.get_booster().save_raw()
    unweighted = dxb.XGBRanker(n_estimators=3).fit(X, y, qid=qid)
    assert not np.array_equal(unweighted.predict(X), by_qid.predict(X))


def _query_frame(X, y, qid, npartitions):
    """A dask DataFrame indexed by qid: each query's rows in one partition."""
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(y=y)
    frame.index = pd.Index(qid, name="qid")
    return dd.from_pandas(frame, npartitions=npartitions, sort=True)


def test_dask_partitions_give_the_model_of_the_whole_data(data):
    X, y, qid, _ = data
    frame = _query_frame(X, y, qid, 4)
    assert frame.npartitions == 4
    on_dask = dxb.XGBRanker(n_estimators=ROUNDS, max_depth=4).fit(
        frame.drop(columns="y"), frame["y"], qid=frame.index.to_series())
    whole = dxb.XGBRanker(n_estimators=ROUNDS, max_depth=4).fit(X, y, qid=qid)
    np.testing.assert_allclose(np.asarray(on_dask.predict(frame.drop(columns="y"))),
                               whole.predict(X), atol=1e-9)
    # a dask array whose chunks end at query starts, the query ids a dask array too
    bounds = np.flatnonzero(np.diff(qid)) + 1
    cuts = [0, *bounds[[60, 150, 240]], len(qid)]
    chunks = (tuple(np.diff(cuts)),)
    on_arrays = dxb.XGBRanker(n_estimators=ROUNDS, max_depth=4).fit(
        da.from_array(X, chunks=chunks + (5,)), da.from_array(y, chunks=chunks),
        qid=da.from_array(qid, chunks=chunks))
    np.testing.assert_allclose(np.asarray(on_arrays.predict(X)), whole.predict(X), atol=1e-9)


def test_mean_pairs_draw_by_the_querys_place_among_all(data):
    """The "mean" draws are keyed by (round, the query's index among all queries), as
    xgboost's: the same model from four partitions as from one."""
    X, y, qid, _ = data
    params = dict(n_estimators=ROUNDS, max_depth=4, lambdarank_pair_method="mean")
    frame = _query_frame(X, y, qid, 4)
    parts = dxb.XGBRanker(**params).fit(frame.drop(columns="y"), frame["y"],
                                        qid=frame.index.to_series())
    whole = dxb.XGBRanker(**params).fit(X, y, qid=qid)
    np.testing.assert_allclose(np.asarray(parts.predict(X)), whole.predict(X), atol=1e-9)


def test_on_a_cluster_the_same_model(data, cluster):
    distributed = pytest.importorskip("distributed")
    X, y, qid, _ = data
    frame = _query_frame(X, y, qid, 3)

    def fit():
        return dxb.XGBRanker(n_estimators=ROUNDS, max_depth=4).fit(
            frame.drop(columns="y"), frame["y"], qid=frame.index.to_series(),
            eval_set=[(frame.drop(columns="y"), frame["y"])],
            eval_qid=[frame.index.to_series()])

    threaded = fit()
    with distributed.Client(cluster):
        on_cluster = fit()
    assert on_cluster.get_booster().save_raw() == threaded.get_booster().save_raw()
    assert on_cluster.evals_result() == threaded.evals_result()


@pytest.mark.parametrize("quantized", [False, True])
def test_out_of_core_the_same_model(data, quantized):
    X, y, qid, _ = data
    params = dict(n_estimators=4, max_depth=4, quantized_grad=quantized)
    in_memory = dxb.XGBRanker(**params).fit(X, y, qid=qid)
    spilled = dxb.XGBRanker(**params, memory_budget="200KB").fit(X, y, qid=qid)
    assert spilled.get_booster().save_raw() == in_memory.get_booster().save_raw()


def test_early_stopping_keeps_the_best_ndcg(data):
    X, y, qid, _ = data
    train, valid = qid < 200, qid >= 200
    model = dxb.XGBRanker(n_estimators=60, max_depth=6, learning_rate=0.5,
                          early_stopping_rounds=3, eval_metric="ndcg@5")
    model.fit(X[train], y[train], qid=qid[train], eval_set=[(X[valid], y[valid])],
              eval_qid=[qid[valid]])
    scores = model.evals_result()["validation_0"]["ndcg@5"]
    assert len(scores) < 60
    assert model.best_iteration == int(np.argmax(scores))
    assert len(scores) == model.best_iteration + 4


def test_model_files_round_trip_and_xgboost_reads_them(data, tmp_path):
    X, y, qid, _ = data
    model = dxb.XGBRanker(n_estimators=4, lambdarank_pair_method="mean",
                          lambdarank_num_pair_per_sample=3).fit(X, y, qid=qid)
    model.save_model(tmp_path / "ours.json")
    again = dxb.XGBRanker()
    again.load_model(tmp_path / "ours.json")
    assert again.lambdarank_pair_method == "mean"
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    model.save_model(tmp_path / "xgb.json", format="xgboost")
    theirs = xgb.Booster(model_file=str(tmp_path / "xgb.json"))
    np.testing.assert_allclose(theirs.predict(xgb.DMatrix(X)), model.predict(X), atol=1e-5)
    settings = theirs.save_config()
    assert '"lambdarank_pair_method":"mean"' in settings.replace(" ", "")
    assert '"lambdarank_num_pair_per_sample":"3"' in settings.replace(" ", "")
    # xgboost's ranker, read here: its predictions and its lambdarank parameters
    xr = xgb.XGBRanker(n_estimators=4, tree_method="hist", lambdarank_num_pair_per_sample=8)
    xr.fit(X, y, qid=qid).save_model(tmp_path / "theirs.json")
    booster = dxb.Booster(model_file=str(tmp_path / "theirs.json"))
    assert booster.objective == "rank:ndcg"
    assert booster.objective_params == {"lambdarank_num_pair_per_sample": 8}
    np.testing.assert_allclose(booster.predict(dxb.DMatrix(X)), xr.predict(X), atol=1e-5)


def test_native_api_group_and_eval(data):
    X, y, qid, sizes = data
    by_group = dxb.DMatrix(X, y, group=sizes)
    np.testing.assert_array_equal(by_group.get_group(), sizes)
    assert by_group.get_uint_info("group_ptr")[-1] == len(y)
    booster = dxb.train({"objective": "rank:pairwise"}, by_group, 3)
    line = booster.eval(by_group)
    theirs = xgb.train({"objective": "rank:pairwise", "tree_method": "hist", "nthread": 1},
                       xgb.DMatrix(X, y, group=sizes), 3).eval(xgb.DMatrix(X, y, group=sizes))
    assert line.split(":")[0] == theirs.split(":")[0] == "[0]\teval-ndcg@32"
    assert float(line.split(":")[1]) == pytest.approx(float(theirs.split(":")[1]), abs=1e-6)


def test_clone_and_params_hold_the_lambdarank_parameters():
    from sklearn.base import clone
    model = dxb.DaskBoostRanker(lambdarank_num_pair_per_sample=5, max_depth=3)
    params = clone(model).get_params()
    assert params["lambdarank_num_pair_per_sample"] == 5 and params["max_depth"] == 3
    assert params["objective"] == "rank:ndcg"
    assert model._estimator_type == "ranker"


def test_query_bounds_across_partitions():
    check_partition_bounds([partition_queries(np.array([0, 0, 1]), None),
                            partition_queries(np.array([], np.int64), None),
                            partition_queries(np.array([2, 5]), None)])
    with pytest.raises(ValueError, match="qid 1 is split between partitions 0 and 1"):
        check_partition_bounds([partition_queries(np.array([0, 1]), None),
                                partition_queries(np.array([1, 2]), None)])
    with pytest.raises(ValueError, match="not sorted in non-decreasing order across"):
        check_partition_bounds([partition_queries(np.array([3, 4]), None),
                                partition_queries(np.array([1, 2]), None)])


def test_metric_kernel_by_hand():
    """ndcg@2 of one query by hand: scores rank the documents (rel 2, 0, 1); ideal (2, 1)."""
    margin = np.array([3.0, 2.0, 1.0])
    labels = np.array([2, 0, 1], np.float32)
    total, weight = lambdarank.ranking_metric_sums(lambdarank.NDCG, 2, False, True, margin,
                                                   labels, np.array([0, 3]),
                                                   np.empty(0, np.float32))
    dcg = 3 / np.log2(2) + 0 / np.log2(3)
    ideal = 3 / np.log2(2) + 1 / np.log2(3)
    assert weight == 1.0 and total == pytest.approx(dcg / ideal, abs=1e-12)


def _fit_error(**kwargs):
    X, y, qid, sizes = _ranking_data(n_queries=40)
    args = dict(qid=qid)
    args.update(kwargs.pop("fit", {}))
    data = kwargs.pop("data", (X, y))
    with pytest.raises(ValueError) as error:
        dxb.XGBRanker(n_estimators=2, **kwargs).fit(*data, **args)
    return str(error.value)


def test_bad_query_groups_are_refused_by_name():
    X, y, qid, sizes = _ranking_data(n_queries=40)
    assert "qid must be sorted in non-decreasing order" in _fit_error(fit={"qid": qid[::-1]})
    assert "give qid (each row's query id)" in _fit_error(fit={"qid": None})
    assert "give the query groups once" in _fit_error(fit={"group": sizes})
    assert "sizes add up to" in _fit_error(fit={"qid": None, "group": sizes[1:]})
    varying = np.random.default_rng(0).uniform(size=len(y))
    assert "the rows of a query must have the same weight" in _fit_error(
        fit={"sample_weight": varying})
    assert "one weight per query group (40 queries)" in _fit_error(
        fit={"sample_weight": np.ones(7)})
    assert "lambdarank_unbiased=True" in _fit_error(lambdarank_unbiased=True)
    assert "lambdarank_num_pair_per_sample=0 must be" in _fit_error(
        lambdarank_num_pair_per_sample=0)
    assert "lambdarank_pair_method='all' must be" in _fit_error(lambdarank_pair_method="all")
    assert "labels 0 or 1" in _fit_error(objective="rank:map")
    assert "whole numbers in [0, 31]" in _fit_error(data=(X, y + 0.5))
    assert "the query groups of eval_set[0]" in _fit_error(fit={"eval_set": [(X, y)]})
    split = dd.from_pandas(pd.DataFrame(X).assign(qid=qid, y=y), npartitions=3)
    with pytest.raises(ValueError, match=r"qid \d+ is split between partitions 0 and 1"):
        dxb.XGBRanker(n_estimators=2).fit(split.drop(columns="y"), split["y"])


class _KeepFolds(dxb.TrainingCallback):
    def after_training(self, model):
        self.models = [pack.bst for pack in model.cvfolds]
        return model


@pytest.mark.parametrize("settings", [{}, {"lambdarank_pair_method": "mean",
                                           "lambdarank_num_pair_per_sample": 2},
                                      {"objective": "rank:pairwise", "query_weights": True}])
def test_cv_folds_hold_whole_queries_and_each_is_the_fit_on_its_queries(data, settings):
    """cv of a ranking deals whole queries to the folds (keyed by the query's index
    among all); each fold's model is the fit on the queries it trains on, to the last
    bit (its queries numbered and weighed among its own, as that fit's), and the frame
    is those fits' metrics on the queries held out, averaged."""
    X, y, qid, sizes = data
    settings = dict(settings)
    weight = None
    if settings.pop("query_weights", False):
        weight = np.repeat(np.random.default_rng(3).uniform(0.5, 2, len(sizes)), sizes)
    params = {"objective": "rank:ndcg", "max_depth": 4, **settings}
    keep = _KeepFolds()
    frame = dxb.cv(params, dxb.DMatrix(X, y, qid=qid, weight=weight), 4, nfold=3, seed=2,
                   callbacks=[keep])
    folds = dxb.cv_folds(len(y), 3, seed=2, qid=qid)
    assert all(len(set(folds[qid == q])) == 1 for q in np.unique(qid))
    assert sorted(np.bincount([folds[qid == q][0] for q in np.unique(qid)])) == [100] * 3
    metric = frame.columns[2][len("test-"):-len("-mean")]
    held_out = []
    for f, model in enumerate(keep.models):
        trains, tests = folds != f, folds == f
        result = {}
        alone = dxb.train({**params, "eval_metric": metric},
                          dxb.DMatrix(X[trains], y[trains], qid=qid[trains],
                                      weight=None if weight is None else weight[trains]), 4,
                          evals=[(dxb.DMatrix(X[tests], y[tests], qid=qid[tests],
                                              weight=None if weight is None else weight[tests]),
                                  "test")], evals_result=result)
        assert model.to_dict() == alone.to_dict(), f"fold {f}"
        held_out.append(result["test"][metric])
    np.testing.assert_allclose(frame[f"test-{metric}-mean"], np.mean(held_out, axis=0),
                               rtol=1e-12)


def test_cv_of_a_ranking_on_dask_partitions_and_a_cluster(data, cluster):
    """Folds keyed by the queries' places among all: a dask frame of whole queries in 4
    partitions gives the frame of the data whole (to float rounding), and a cluster the
    same frame as the threaded scheduler, early stopping included."""
    distributed = pytest.importorskip("distributed")
    X, y, qid, _ = data
    frame = _query_frame(X, y, qid, 4)
    # ("mean" pairs: each query draws by its place among its fold's, partition by partition)
    params = {"objective": "rank:ndcg", "max_depth": 3, "eta": 0.1,
              "lambdarank_pair_method": "mean", "lambdarank_num_pair_per_sample": 2}

    def on_parts():
        return dxb.cv(params, dxb.DMatrix(frame.drop(columns="y"), frame["y"],
                                          qid=frame.index.to_series()),
                      40, nfold=3, seed=1, early_stopping_rounds=3)
    threaded = on_parts()
    whole = dxb.cv(params, dxb.DMatrix(X, y, qid=qid), 40, nfold=3, seed=1,
                   early_stopping_rounds=3)
    assert 4 < len(threaded) < 40
    np.testing.assert_allclose(threaded.to_numpy(), whole.to_numpy(), rtol=1e-6)
    with distributed.Client(cluster):
        assert on_parts().equals(threaded)


def test_ranking_is_refused_where_it_is_not_built():
    X, y, qid, sizes = _ranking_data(n_queries=40)
    with pytest.raises(ValueError, match="valid objectives: 'rank:pairwise'"):
        dxb.XGBRanker(objective="reg:squarederror").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="objective='rank:ndcg' is not supported here"):
        dxb.XGBRegressor(objective="rank:ndcg").fit(X, y)
    with pytest.raises(ValueError, match="'rank:ndcg' ranks the rows of each query: give"):
        dxb.cv({"objective": "rank:ndcg"}, X, y, 2)
    with pytest.raises(ValueError, match="ndcg@5' ranks the rows of each query"):
        dxb.cv({"objective": "reg:squarederror"}, X, y, 2, metrics="ndcg@5")
    ranked = dxb.DMatrix(X, y, qid=qid)
    with pytest.raises(ValueError, match="stratified=True with query groups"):
        dxb.cv({"objective": "rank:ndcg"}, ranked, 2, stratified=True)
    with pytest.raises(ValueError, match="folds with query groups"):
        dxb.cv({"objective": "rank:ndcg"}, ranked, 2, folds=np.arange(len(y)) % 2)
    with pytest.raises(ValueError, match="nfold=41 is more than the 40 queries"):
        dxb.cv({"objective": "rank:ndcg"}, ranked, 2, nfold=41)
    with pytest.raises(ValueError, match="would split them"):
        dxb.DMatrix(X, y, qid=qid).slice([0, 1])
    with pytest.raises(ValueError, match=r"map' ranks the rows of each query: validation_0 "
                                         "needs its query ids"):
        dxb.train({"eval_metric": "map"}, dxb.DMatrix(X, y), 2,
                  evals=[(dxb.DMatrix(X, y), "validation_0")])


@pytest.mark.parametrize("string_feature", [False, True])
def test_a_lake_of_whole_queries_is_read_by_its_columns(data, tmp_path, string_feature):
    """A plain read of a lake of whole queries (a qid column) goes to daskboost's own
    lake reader (column by column, or a frame per partition with a string feature) and
    gives the model dask's reading of the same partitions gives."""
    from daskboost.data import partition_input
    X, y, qid, _ = data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(qid=qid, y=y)
    if string_feature:
        frame["kind"] = np.where(X[:, 1] > 5, "high", "low")
    (tmp_path / "lake").mkdir()
    for i, part in enumerate(np.array_split(np.unique(qid), 3)):
        frame[np.isin(qid, part)].to_parquet(tmp_path / "lake" / f"p{i}.parquet", index=False)
    lake = dd.read_parquet(tmp_path / "lake")
    columns = [c for c in lake.columns if c != "y"]
    features = [c for c in columns if c != "qid"]
    planned = partition_input(lake[features], lake["y"], qid=lake["qid"],
                              enable_categorical=True)
    assert planned.q_keys is not None and "daskboost-lake" in str(planned.q_keys[0])
    model = dxb.XGBRanker(n_estimators=4, max_depth=4)
    from_lake = model.fit(lake[columns], lake["y"]).get_booster().save_raw()
    by_dask = lake.persist()  # (a persisted frame: dask's partitions, read by dask)
    assert model.fit(by_dask[columns], by_dask["y"]).get_booster().save_raw() == from_lake


def test_the_ranking_example_beats_ranking_by_one_feature(tmp_path, monkeypatch, capsys):
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).parent.parent / "examples" / "ranking.py"
    spec = importlib.util.spec_from_file_location("ranking_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    monkeypatch.chdir(tmp_path)  # (it writes its lake under examples/output)
    model, score, baseline = example.main(["--queries", "800"])
    assert "held-out NDCG@10" in capsys.readouterr().out
    assert score > baseline + 0.03, (score, baseline)
    assert model.best_iteration is not None


def test_an_iterator_of_whole_queries_gives_the_model_of_its_data(data):
    """xgboost's DataIter with a qid per batch: joined in memory (DMatrix) the model of
    DMatrix(X, qid=...), written to batch files (ExtMemQuantileDMatrix) the model of a
    dask array chunked as the batches."""
    X, y, qid, _ = data
    starts = np.flatnonzero(np.diff(qid)) + 1
    cuts = [0, *starts[[100, 200]], len(qid)]

    class Queries(dxb.DataIter):
        def __init__(self):
            super().__init__()
            self.position = 0

        def next(self, input_data):
            if self.position == len(cuts) - 1:
                return False
            rows = slice(cuts[self.position], cuts[self.position + 1])
            input_data(data=X[rows], label=y[rows], qid=qid[rows])
            self.position += 1
            return True

        def reset(self):
            self.position = 0

    params = {"objective": "rank:ndcg", "max_depth": 4}
    whole = dxb.train(params, dxb.DMatrix(X, y, qid=qid), 3).save_raw()
    assert dxb.train(params, dxb.DMatrix(Queries()), 3).save_raw() == whole
    chunks = (tuple(np.diff(cuts)),)
    by_chunks = dxb.train(params, dxb.DMatrix(da.from_array(X, chunks=chunks + (5,)),
                                              da.from_array(y, chunks=chunks),
                                              qid=da.from_array(qid, chunks=chunks)), 3)
    spilled = dxb.train(params, dxb.ExtMemQuantileDMatrix(Queries()), 3)
    assert spilled.save_raw() == by_chunks.save_raw()
    with pytest.raises(ValueError, match="qid given both by the iterator's batches and to"):
        dxb.DMatrix(Queries(), qid=qid)
