"""Boosted random forests (xgboost's ``num_parallel_tree``) and the random forest
estimators (``XGBRFRegressor``, ``XGBRFClassifier``): against xgboost's models, the
copies of a round grown from the round's starting gradients, through partitions,
schedulers, the out-of-core store and eval sets, in model files both ways.

The features take few distinct integer values, so the bins are xgboost's and, without
row or column sampling, a model differs from xgboost's only by float32 rounding:
predictions are compared to 1e-5 relative.  With sampling (daskboost draws its own
keyed samples), the forests are compared by their held-out error."""

import json

import dask
import dask.array as da
import numpy as np
import pytest

import daskboost as dxb
from daskboost.booster import Booster

xgb = pytest.importorskip("xgboost")


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 16, size=(n, 6)).astype(np.float64)
    y = X[:, 0] + 2 * np.sin(X[:, 1]) + 0.1 * X[:, 2] * X[:, 3] + rng.normal(size=n)
    return X, y


@pytest.fixture(scope="module")
def data():
    return _data()


def _classes(y, n_classes):
    return np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))


@pytest.mark.parametrize("objective, n_classes", [("reg:squarederror", 0),
                                                  ("binary:logistic", 2),
                                                  ("multi:softprob", 3)])
def test_boosted_forests_without_sampling_are_xgboosts(data, objective, n_classes):
    X, y = data
    label = y if not n_classes else _classes(y, n_classes)
    params = dict(objective=objective, max_depth=3, eta=0.5, num_parallel_tree=3,
                  max_bin=256)
    if n_classes > 2:
        params["num_class"] = n_classes
    theirs = xgb.train({**params, "tree_method": "hist", "nthread": 1},
                       xgb.DMatrix(X, label), 4)
    ours = dxb.train(params, dxb.DMatrix(X, label), 4)
    K = max(1, n_classes if n_classes > 2 else 1)
    assert ours.parallel_trees == 3 and ours.n_rounds == 4 and len(ours.trees) == 4 * 3 * K
    np.testing.assert_allclose(ours.predict(dxb.DMatrix(X), output_margin=True),
                               theirs.predict(xgb.DMatrix(X), output_margin=True),
                               rtol=1e-5, atol=1e-5)
    # every copy grows from the round's starting gradients: without sampling the copies
    # are the same tree (copy 1 would differ had it seen copy 0 in the margins)
    first_round = ours.trees[:3 * K]
    for copy in (1, 2):
        for k in range(K):
            a, b = first_round[k].to_dict(), first_round[copy * K + k].to_dict()
            assert a == b


def test_ranking_forests_without_sampling_are_xgboosts():
    """The copies' first passes compute whole queries' gradients from the round's start
    too (the ranking objectives' own path)."""
    rng = np.random.default_rng(4)
    qid = np.repeat(np.arange(120), rng.integers(2, 30, 120))
    X = rng.integers(0, 10, size=(len(qid), 4)).astype(np.float64)
    y = np.clip(np.round(X[:, 0] / 3 + rng.normal(scale=0.7, size=len(qid))), 0, 3)
    params = dict(n_estimators=3, num_parallel_tree=2, max_depth=3)
    ours = dxb.XGBRanker(**params).fit(X, y, qid=qid)
    theirs = xgb.XGBRanker(**params, tree_method="hist", n_jobs=1).fit(X, y, qid=qid)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-5, atol=1e-5)


def test_approx_and_trimming_add_the_copies_before_their_pass(data):
    """``approx`` (the data binned again every round) and ``trim_fraction`` start a
    round with a pass of their own that adds the last round's copies: on features of
    few values approx bins as hist does, so the same forest."""
    X, y = data
    hist = dxb.DaskBoostRegressor(**FOREST).fit(X, y)
    approx = dxb.DaskBoostRegressor(**FOREST, tree_method="approx").fit(X, y)
    np.testing.assert_allclose(approx.predict(X), hist.predict(X), rtol=1e-9, atol=1e-9)
    trimmed = dxb.DaskBoostRegressor(**FOREST, trim_fraction=1e-9).fit(X, y)
    np.testing.assert_allclose(trimmed.predict(X), hist.predict(X), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("settings", [{"objective": "reg:squarederror"},
                                      {"objective": "reg:absoluteerror"},
                                      {"objective": "reg:quantileerror",
                                       "quantile_alpha": [0.2, 0.7]},
                                      {"objective": "count:poisson"}])
def test_copies_alike_make_the_one_copy_model(data, settings):
    """Without sampling the P copies are one tree at learning_rate / P each: the forest
    predicts as the one-copy model (adaptive leaves too: each copy's leaves are refitted
    to the residuals at the round's start, scaled by learning_rate / P)."""
    X, y = data
    y = np.abs(y) if settings["objective"] == "count:poisson" else y
    params = dict(settings, n_estimators=4, max_depth=3, learning_rate=0.5)
    forest = dxb.DaskBoostRegressor(**params, num_parallel_tree=3).fit(X, y)
    single = dxb.DaskBoostRegressor(**params).fit(X, y)
    assert len(forest.get_booster().trees) == 3 * len(single.get_booster().trees)
    np.testing.assert_allclose(forest.predict(X, output_margin=True),
                               single.predict(X, output_margin=True), rtol=1e-9, atol=1e-9)


def test_each_copys_leaves_are_refitted_to_its_own_rows(data):
    """Adaptive leaves with column sampling: each copy's leaf is learning_rate / P times
    the median of the start residuals of the rows that reach it in that copy (the
    sketch's median: its rank within 0.05 of a half)."""
    X, y = data
    model = dxb.DaskBoostRegressor(objective="reg:absoluteerror", n_estimators=1,
                                   num_parallel_tree=4, max_depth=3, learning_rate=0.8,
                                   colsample_bynode=0.5, random_state=1).fit(X, y)
    booster = model.get_booster()
    residuals = y - booster.base_margin[0]
    leaves = booster.predict(dxb.DMatrix(X), pred_leaf=True)
    assert len({json.dumps(t.to_dict(), sort_keys=True) for t in booster.trees}) == 4
    for copy, tree in enumerate(booster.trees):
        for leaf in np.unique(leaves[:, copy]):
            rows = residuals[leaves[:, copy] == leaf]
            median = tree.value[leaf] * 4 / 0.8
            assert abs(np.mean(rows <= median) - 0.5) < 0.05, (copy, leaf)


def test_a_copy_is_a_tree_of_the_scaled_learning_rate_with_its_own_samples(data):
    """Copy 0 of a forest draws its rows and columns as round 0 of a one-copy fit and
    its leaves are scaled by learning_rate / copies; the other copies draw others."""
    X, y = data
    sampled = dict(n_estimators=1, max_depth=4, subsample=0.7, colsample_bynode=0.6,
                   random_state=3)
    forest = dxb.DaskBoostRegressor(**sampled, learning_rate=1.0, num_parallel_tree=4)
    single = dxb.DaskBoostRegressor(**sampled, learning_rate=0.25)
    trees = forest.fit(X, y).get_booster().trees
    assert trees[0].to_dict() == single.fit(X, y).get_booster().trees[0].to_dict()
    assert len({json.dumps(t.to_dict(), sort_keys=True) for t in trees}) == 4


def test_random_forest_estimators_are_xgboosts_forests(data):
    X, y = data
    train, test = slice(0, 2000), slice(2000, None)
    ours = dxb.XGBRFRegressor(n_estimators=40, max_depth=6, random_state=0)
    theirs = xgb.XGBRFRegressor(n_estimators=40, max_depth=6, random_state=0)
    for name in ("learning_rate", "subsample", "colsample_bynode", "reg_lambda"):
        assert getattr(ours, name) == theirs.get_xgb_params()[name], name
    assert ours.get_xgb_params()["num_parallel_tree"] == 40
    assert ours.get_num_boosting_rounds() == 1
    ours.fit(X[train], y[train])
    theirs.fit(X[train], y[train])
    booster = ours.get_booster()
    assert (booster.n_rounds, booster.parallel_trees, len(booster.trees)) == (1, 40, 40)

    def rmse(model):
        return float(np.sqrt(np.mean((model.predict(X[test]) - y[test]) ** 2)))
    # the same forest up to the samples drawn: the held-out errors within 3%
    assert abs(rmse(ours) / rmse(theirs) - 1) < 0.03, (rmse(ours), rmse(theirs))
    labels = _classes(y, 3)
    clf = dxb.XGBRFClassifier(n_estimators=20, max_depth=5, random_state=0)
    their_clf = xgb.XGBRFClassifier(n_estimators=20, max_depth=5, random_state=0)
    clf.fit(X[train], labels[train])
    their_clf.fit(X[train], labels[train])
    assert len(clf.get_booster().trees) == 60
    assert clf.predict_proba(X[test]).shape == (1000, 3)
    assert abs(clf.score(X[test], labels[test])
               - their_clf.score(X[test], labels[test])) < 0.03
    assert repr(dxb.XGBRFRegressor(n_estimators=7)) == "DaskBoostRFRegressor(n_estimators=7)"
    assert dxb.dask.DaskXGBRFClassifier is dxb.XGBRFClassifier


def _dask_input(X, y, chunks=1000):
    return da.from_array(X, chunks=(chunks, 6)), da.from_array(y, chunks=chunks)


FOREST = dict(n_estimators=3, num_parallel_tree=3, max_depth=4, subsample=0.8,
              colsample_bynode=0.7, learning_rate=0.8)


@pytest.mark.parametrize("quantized", [False, True])
def test_the_same_forest_on_every_scheduler_and_memory_budget(data, quantized):
    X, y = data
    dX, dy = _dask_input(X, y)
    params = dict(FOREST, quantized_grad=quantized)

    def fit(**extra):
        model = dxb.DaskBoostRegressor(**params, **extra)
        return model.fit(dX, dy, eval_set=[(dX, dy), (X[:500], y[:500])])
    threaded = fit()
    with dask.config.set(scheduler="sync"):
        inline = fit()
    spilled = fit(memory_budget="100KB")
    for other in (inline, spilled):
        assert other.get_booster().save_raw() == threaded.get_booster().save_raw()
        assert other.evals_result() == threaded.evals_result()
    whole = dxb.DaskBoostRegressor(**params).fit(X, y)
    np.testing.assert_allclose(whole.predict(X), threaded.predict(X), rtol=1e-9, atol=1e-9)


def test_the_same_forest_on_a_cluster(data, cluster):
    distributed = pytest.importorskip("distributed")
    X, y = data
    dX, dy = _dask_input(X, y, chunks=750)

    def fit():
        return dxb.DaskBoostRegressor(**FOREST).fit(dX, dy, eval_set=[(dX, dy)])
    threaded = fit()
    with distributed.Client(cluster):
        on_cluster = fit()
    assert on_cluster.get_booster().save_raw() == threaded.get_booster().save_raw()
    assert on_cluster.evals_result() == threaded.evals_result()


def test_eval_sets_and_early_stopping_count_boosting_rounds(data):
    X, y = data
    train, valid = slice(0, 2000), slice(2000, None)
    model = dxb.DaskBoostRegressor(n_estimators=40, num_parallel_tree=3, max_depth=5,
                                   learning_rate=0.6, subsample=0.7, early_stopping_rounds=2)
    model.fit(X[train], y[train], eval_set=[(X[train], y[train]), (X[valid], y[valid])])
    booster = model.get_booster()
    held_out = model.evals_result()["validation_1"]["rmse"]
    assert len(held_out) < 40 and len(held_out) == booster.n_rounds
    assert model.best_iteration == int(np.argmin(held_out))
    for name, rows in (("validation_0", train), ("validation_1", valid)):
        for r, value in enumerate(model.evals_result()[name]["rmse"]):
            pred = booster.predict(dxb.DMatrix(X[rows]), iteration_range=(0, r + 1))
            # (the metric's sums are not numpy's: 1e-7, as for one tree a round)
            assert value == pytest.approx(np.sqrt(np.mean((pred - y[rows]) ** 2)), rel=1e-7)
    best = (0, model.best_iteration + 1)
    np.testing.assert_array_equal(model.predict(X[valid]),
                                  booster.predict(dxb.DMatrix(X[valid]), iteration_range=best))


def test_cv_of_a_forest_scores_its_folds_models_every_boosting_round(data):
    X, y = data
    kept = []

    class Keep(dxb.TrainingCallback):
        def after_training(self, model):
            kept.extend(pack.bst for pack in model.cvfolds)
            return model
    frame = dxb.cv({**FOREST, "seed": 2}, dxb.DMatrix(X, y), num_boost_round=3, nfold=3,
                   seed=5, callbacks=[Keep()])
    assert len(frame) == 3 and all(b.parallel_trees == 3 and b.n_rounds == 3 for b in kept)
    folds = dxb.cv_folds(len(X), 3, seed=5)
    for r in range(3):
        held_out = [np.sqrt(np.mean((b.predict(dxb.DMatrix(X[folds == f]),
                                               iteration_range=(0, r + 1))
                                     - y[folds == f]) ** 2)) for f, b in enumerate(kept)]
        assert frame["test-rmse-mean"][r] == pytest.approx(np.mean(held_out), rel=1e-7)


def test_weights_are_repeated_rows_when_no_row_is_sampled():
    """scikit-learn's weight check, which a forest with row sampling is expected to fail
    (tests/test_sklearn_checks.py), passes without it."""
    from sklearn.utils.estimator_checks import check_sample_weight_equivalence_on_dense_data
    for make in (dxb.XGBRFRegressor, dxb.XGBRFClassifier):
        check_sample_weight_equivalence_on_dense_data(make.__name__,
                                                      make(n_estimators=10, subsample=1.0))


def test_continuing_a_forest_adds_whole_rounds(data):
    X, y = data
    params = dict(FOREST, n_estimators=2)
    first = dxb.DaskBoostRegressor(**params).fit(X, y)
    continued = dxb.DaskBoostRegressor(**params).fit(X, y, xgb_model=first)
    at_once = dxb.DaskBoostRegressor(**dict(params, n_estimators=4)).fit(X, y)
    assert continued.get_booster().save_raw() == at_once.get_booster().save_raw()
    with pytest.raises(ValueError, match="num_parallel_tree=3; this fit uses "
                                         "num_parallel_tree=2"):
        dxb.DaskBoostRegressor(**dict(params, num_parallel_tree=2)).fit(X, y, xgb_model=first)


def test_forest_model_files_both_ways(data, tmp_path):
    X, y = data
    labels = _classes(y, 3)
    model = dxb.DaskBoostClassifier(**FOREST).fit(X, labels)
    booster = model.get_booster()
    path = tmp_path / "forest.json"
    model.save_model(path)
    loaded = dxb.DaskBoostClassifier().load_model(path)
    assert loaded.get_booster().save_raw() == booster.save_raw()
    # slices keep whole rounds of K x P trees
    assert len(booster[1:3].trees) == 2 * 9 and booster[1:3].n_rounds == 2
    np.testing.assert_array_equal(
        booster[0:2].predict(dxb.DMatrix(X), output_margin=True),
        booster.predict(dxb.DMatrix(X), output_margin=True, iteration_range=(0, 2)))
    # xgboost reads the export: the same margins and, in xgboost's tree order, leaves
    exported = tmp_path / "forest.xgb.json"
    booster.save_model(exported, format="xgboost")
    theirs = xgb.Booster(model_file=str(exported))
    dX = xgb.DMatrix(X)
    np.testing.assert_allclose(theirs.predict(dX, output_margin=True),
                               booster.predict(dxb.DMatrix(X), output_margin=True),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(theirs.predict(dX, pred_leaf=True, strict_shape=True),
                                  booster.predict(dxb.DMatrix(X), pred_leaf=True,
                                                  strict_shape=True))
    # and its forests are read, their trees in daskboost's order
    forest = xgb.XGBRFRegressor(n_estimators=5, max_depth=3).fit(X, y)
    forest.save_model(tmp_path / "theirs.json")
    read = Booster.load(tmp_path / "theirs.json")
    assert (read.parallel_trees, read.n_rounds) == (5, 1)
    np.testing.assert_allclose(read.predict(X), forest.predict(X), rtol=1e-5, atol=1e-5)
    assert loaded.num_parallel_tree == 3  # (the estimator's parameter is saved)
    more = loaded.fit(X, labels, xgb_model=path)  # and its model continued
    assert more.get_booster().n_rounds == 6
    assert dxb.sklearn.load_estimator(path).__class__ is dxb.DaskBoostClassifier
    rf = dxb.XGBRFRegressor(n_estimators=4, max_depth=3).fit(X, y)
    rf.save_model(tmp_path / "rf.json")
    assert type(dxb.sklearn.load_estimator(tmp_path / "rf.json")) is dxb.XGBRFRegressor


def test_crafted_forest_files_are_refused_by_name(data, tmp_path):
    X, y = data
    payload = dxb.DaskBoostRegressor(**dict(FOREST, n_estimators=1)).fit(X, y) \
        .get_booster().to_dict()
    for value, message in ((0, "num_parallel_tree = 0 must be an integer"),
                           ("3", "num_parallel_tree must be an integer; got '3'"),
                           (2, "3 trees is not a whole number of rounds of 2 trees")):
        with pytest.raises(ValueError, match=message):
            Booster.from_dict(dict(payload, num_parallel_tree=value), "crafted.json")
    theirs = json.loads(dxb.DaskBoostRegressor(**dict(FOREST, n_estimators=1)).fit(X, y)
                        .get_booster().save_raw(format="xgboost"))
    theirs["learner"]["gradient_booster"]["model"]["gbtree_model_param"][
        "num_parallel_tree"] = "x"
    with pytest.raises(ValueError, match="num_parallel_tree 'x' must be an integer"):
        Booster.from_dict(theirs, "crafted.json")


def test_what_forests_do_not_do_is_refused_by_name(data):
    X, y = data
    with pytest.raises(ValueError, match="num_parallel_tree=0 must be >= 1"):
        dxb.DaskBoostRegressor(num_parallel_tree=0).fit(X, y)
    with pytest.raises(ValueError, match="early_stopping_rounds=2: a random forest"):
        dxb.XGBRFRegressor(early_stopping_rounds=2).fit(X, y, eval_set=[(X, y)])
