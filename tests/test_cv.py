"""Cross-validation (daskboost.cv): the folds' models grown together are the models
separate fits grow, and the frame is xgboost's."""

import os
import signal

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import daskboost.cross_validation as cross_validation
from daskboost import (DaskBoostClassifier, DaskBoostRegressor, TrainingCallback, cv,
                       cv_folds)
from worker_faults import die_once_in_pass

FAST = {"max_depth": 3, "learning_rate": 0.3}


class KeepModels(TrainingCallback):
    """Keeps the folds' final Boosters (xgboost's way: ``model.cvfolds[f].bst``)."""

    def after_training(self, model):
        self.models = [pack.bst for pack in model.cvfolds]
        return model


def discrete(n=1200, seed=5, missing=0.05):
    """Features with few distinct values (every value in every fold's training rows, so
    cv's bins are a fit's bins), some missing."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, 4)).astype(np.float64)
    X[rng.random(X.shape) < missing] = np.nan
    Z = np.nan_to_num(X)
    y = 1.5 * Z[:, 0] - Z[:, 1] + 0.5 * Z[:, 2] * Z[:, 3] + rng.normal(scale=0.5, size=n)
    return X, y, rng


# ---- the folds' models ------------------------------------------------------------------

def _separate_fits_equal_cv_folds(params, X, y, make, nfold=4, seed=7, weight=None,
                                  stratified=False, rounds=5):
    keep = KeepModels()
    cv(params, X, y, nfold=nfold, num_boost_round=rounds, seed=seed, callbacks=[keep],
       sample_weight=weight, stratified=stratified)
    folds = cv_folds(len(X), nfold, seed=seed, stratify=y if stratified else None)
    assert len(keep.models) == nfold
    for f, model in enumerate(keep.models):
        trains = folds != f
        Xf = X.iloc[trains] if isinstance(X, pd.DataFrame) else X[trains]
        alone = make(n_estimators=rounds, **params).fit(
            Xf, y[trains], sample_weight=None if weight is None else weight[trains])
        # the same trees, leaf values and start, to the last bit
        assert model.to_dict() == alone.get_booster().to_dict(), f"fold {f}"


def test_each_fold_is_the_model_a_fit_on_its_training_rows_grows():
    X, y, _ = discrete()
    params = {**FAST, "colsample_bytree": 0.75, "colsample_bynode": 0.7, "random_state": 3}
    _separate_fits_equal_cv_folds(params, X, y, DaskBoostRegressor)


@pytest.mark.parametrize("objective", ["reg:squarederror", "multi:softprob",
                                       "reg:absoluteerror"])
def test_each_fold_equals_its_fit_as_a_boosted_random_forest(objective):
    # each round's copies grow from the fold's margins at the round's start, each with
    # its own columns (rows are not sampled: a fold's rows would draw by other indices)
    X, y, rng = discrete(seed=10)
    make = DaskBoostRegressor
    if objective == "multi:softprob":
        y, make = (np.nan_to_num(X[:, 0]) + rng.integers(0, 2, len(X))).astype(int) % 3, \
            DaskBoostClassifier
    _separate_fits_equal_cv_folds({**FAST, "objective": objective, "num_parallel_tree": 3,
                                   "colsample_bynode": 0.6, "random_state": 1}, X, y, make,
                                  nfold=3, rounds=3)


def test_each_fold_equals_its_fit_multiclass_weighted_stratified():
    X, y, rng = discrete(seed=6)
    classes = (np.nan_to_num(X[:, 0]) + rng.integers(0, 2, len(X))).astype(int) % 3
    weight = rng.uniform(0.5, 2.0, len(X))
    _separate_fits_equal_cv_folds({**FAST, "objective": "multi:softprob",
                                   "colsample_bylevel": 0.5}, X, classes,
                                  DaskBoostClassifier, weight=weight, stratified=True)


def test_each_fold_equals_its_fit_lossguide_poisson_categorical():
    X, y, rng = discrete(seed=8)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    names = np.array(list("pqrstu"))[np.nan_to_num(X[:, 3]).astype(int)]
    frame["d"] = pd.Categorical(np.where(np.isnan(X[:, 3]), None, names))
    counts = np.abs(np.round(y))
    _separate_fits_equal_cv_folds({"max_depth": 0, "grow_policy": "lossguide", "max_leaves": 6,
                                   "objective": "count:poisson"}, frame, counts,
                                  DaskBoostRegressor, nfold=3)


@pytest.mark.parametrize("objective,alpha", [("reg:absoluteerror", 0.3),
                                             ("reg:quantileerror", 0.3),
                                             ("reg:quantileerror", [0.3, 0.8])])
def test_each_fold_equals_its_fit_with_adaptive_leaves(objective, alpha):
    # leaves refitted to quantiles of each fold's own training residuals (with several
    # quantile levels: each output's at its own level)
    X, y, rng = discrete(seed=9)
    weight = rng.uniform(0.5, 2.0, len(X))
    _separate_fits_equal_cv_folds({**FAST, "objective": objective, "quantile_alpha": alpha},
                                  X, y, DaskBoostRegressor, nfold=3, weight=weight, rounds=4)


# ---- the frame ----------------------------------------------------------------------------

def test_the_frame_is_xgboosts_mean_and_std_over_the_folds_models():
    X, y, _ = discrete()
    keep = KeepModels()
    frame = cv(FAST, X, y, nfold=5, num_boost_round=4, metrics=["rmse", "mae"], seed=2,
               callbacks=[keep])
    assert frame.columns.tolist() == [
        "train-rmse-mean", "train-rmse-std", "train-mae-mean", "train-mae-std",
        "test-rmse-mean", "test-rmse-std", "test-mae-mean", "test-mae-std"]
    assert len(frame) == 4
    folds = cv_folds(len(X), 5, seed=2)
    for round_ in range(4):
        by = {(name, metric): [] for name in ("train", "test") for metric in ("rmse", "mae")}
        for f, model in enumerate(keep.models):
            for name, rows in (("train", folds != f), ("test", folds == f)):
                error = model.predict(X[rows], iteration_range=(0, round_ + 1)) - y[rows]
                by[(name, "rmse")].append(np.sqrt(np.mean(error ** 2)))
                by[(name, "mae")].append(np.mean(np.abs(error)))
        for (name, metric), values in by.items():
            row = frame.iloc[round_]
            assert row[f"{name}-{metric}-mean"] == pytest.approx(np.mean(values), rel=1e-6)
            # numpy's std (ddof=0), as xgboost's cv
            assert row[f"{name}-{metric}-std"] == pytest.approx(np.std(values), rel=1e-6)


def test_summed_and_ranked_metrics_of_weighted_rows_are_the_folds_models():
    # log loss and error are summed per fold in one pass over the rows (row losses);
    # AUC is computed on each fold's rows: each agrees with its folds' models
    from sklearn.metrics import roc_auc_score
    X, y, rng = discrete(n=900)
    labels = (y > np.median(y)).astype(np.int64)
    weight = rng.uniform(0.2, 3.0, size=len(labels))
    keep = KeepModels()
    frame = cv({**FAST, "objective": "binary:logistic"}, X, labels, nfold=4,
               num_boost_round=3, metrics=["logloss", "error", "auc"], seed=4,
               sample_weight=weight, callbacks=[keep])
    folds = cv_folds(len(X), 4, seed=4)
    for round_ in range(3):
        values = {}
        for f, model in enumerate(keep.models):
            for name, rows in (("train", folds != f), ("test", folds == f)):
                p = model.predict(X[rows], iteration_range=(0, round_ + 1))
                yr, wr = labels[rows], weight[rows]
                clipped = np.clip(p, 1e-16, 1 - 1e-16)
                loss = -(yr * np.log(clipped) + (1 - yr) * np.log(1 - clipped))
                for metric, value in (
                        ("logloss", np.sum(wr * loss) / np.sum(wr)),
                        ("error", np.sum(wr * ((p > 0.5) != yr)) / np.sum(wr)),
                        ("auc", roc_auc_score(yr, p, sample_weight=wr))):
                    values.setdefault((name, metric), []).append(value)
        for (name, metric), by_fold in values.items():
            got = frame.iloc[round_][f"{name}-{metric}-mean"]
            assert got == pytest.approx(np.mean(by_fold), rel=1e-6), (round_, name, metric)


@pytest.mark.parametrize("order", ["in fold order", "as read"])
def test_row_losses_are_summed_per_fold_in_row_order(order):
    # cv's fold sums of row losses add each fold's rows in row order, as np.bincount
    # does: bit for bit, whether the rows are in fold order (runs of one fold) or not,
    # and a fold without rows sums to 0
    from daskboost.fold_states import _sum_by_fold
    rng = np.random.default_rng(7)
    folds = rng.choice(np.array([0, 1, 3], dtype=np.int32), size=5000)
    if order == "in fold order":
        folds = np.sort(folds, kind="stable")
    values = rng.lognormal(sigma=3.0, size=len(folds))  # wide range: the order shows
    got = _sum_by_fold(values, folds, 5)
    assert got.tobytes() == np.bincount(folds, values, 5).tobytes()
    assert got[2] == got[4] == 0.0
    assert _sum_by_fold(values[:0], folds[:0], 2).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("task", ["regression", "binary"])
def test_the_mean_test_metric_is_scikit_learns_cross_val_score(task):
    from sklearn.model_selection import PredefinedSplit, cross_val_score
    X, y, rng = discrete()
    if task == "binary":
        y = (y + rng.normal(scale=1.0, size=len(y)) > np.median(y)).astype(int)
        params, metric, scoring = {**FAST, "objective": "binary:logistic"}, "logloss", \
            "neg_log_loss"
        estimator = DaskBoostClassifier(n_estimators=6, **params)
    else:
        params, metric, scoring = FAST, "rmse", "neg_root_mean_squared_error"
        estimator = DaskBoostRegressor(n_estimators=6, **params)
    frame = cv(params, X, y, nfold=5, num_boost_round=6, metrics=metric, seed=11)
    split = PredefinedSplit(cv_folds(len(X), 5, seed=11))
    scores = -cross_val_score(estimator, X, y, cv=split, scoring=scoring)
    assert abs(frame[f"test-{metric}-mean"].iloc[-1] - scores.mean()) < 0.01


@pytest.mark.parametrize("stratified", [False, True])
def test_folds_do_not_depend_on_the_partitioning(stratified):
    X, y, rng = discrete()
    if stratified:
        y = pd.Series(np.where(y > np.median(y), "high", "low"))
        params = {**FAST, "objective": "binary:logistic", "subsample": 0.8}
        metrics = ["logloss", "error"]
    else:
        y = pd.Series(y)
        params, metrics = {**FAST, "subsample": 0.8}, ["rmse"]

    def run(X_, y_):
        return cv(params, X_, y_, nfold=3, num_boost_round=4, stratified=stratified,
                  metrics=metrics, seed=5)

    in_memory = run(X, y)
    frame = pd.DataFrame(X, columns=list("abcd"))
    for parts in (1, 3):
        arrays = run(da.from_array(X, chunks=(-(-len(X) // parts), 4)),
                     da.from_array(y.to_numpy(), chunks=-(-len(X) // parts)))
        frames = run(dd.from_pandas(frame, npartitions=parts),
                     dd.from_pandas(y, npartitions=parts))
        for other in (arrays, frames):
            # the same folds and rows: the same models up to the order of float sums
            pd.testing.assert_frame_equal(other, in_memory, rtol=1e-9, atol=1e-12)


def test_early_stopping_stops_and_cuts_at_the_best_round():
    X, y, rng = discrete(n=600)
    y = y + rng.normal(scale=4.0, size=len(y))  # noise: deep trees soon overfit
    params = {"max_depth": 6, "learning_rate": 0.8, "min_child_weight": 0.0, "reg_lambda": 0}
    full = cv(params, X, y, nfold=3, num_boost_round=40, seed=1)
    rounds = []

    class Count(TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            rounds.append(epoch)
            return False

    stopped = cv(params, X, y, nfold=3, num_boost_round=40, seed=1,
                 early_stopping_rounds=3, callbacks=[Count()])
    best = int(np.argmin(full["test-rmse-mean"].to_numpy()[:len(rounds)]))
    assert len(rounds) == best + 1 + 3 < 40  # three rounds without improvement, then stop
    assert len(stopped) == best + 1
    pd.testing.assert_frame_equal(stopped, full.iloc[:best + 1])


def test_callbacks_see_xgboosts_cv_log_and_may_stop():
    X, y, _ = discrete(n=600)
    calls = []

    class Recorder(TrainingCallback):
        def before_training(self, model):
            calls.append(("before_training", len(model.cvfolds), model.num_boosted_rounds()))
            return model

        def after_iteration(self, model, epoch, evals_log):
            mean, std = evals_log["test"]["rmse"][-1]
            calls.append(("after_iteration", epoch, model.num_boosted_rounds(),
                          [pack.bst.num_boosted_rounds() for pack in model.cvfolds],
                          sorted(evals_log), len(evals_log["train"]["rmse"]), mean, std))
            return epoch == 2

    frame = cv(FAST, X, y, nfold=3, num_boost_round=10, callbacks=[Recorder()])
    assert calls[0] == ("before_training", 3, 0)
    assert [c[1:6] for c in calls[1:]] == [(e, e + 1, [e + 1] * 3, ["test", "train"], e + 1)
                                           for e in range(3)]
    assert len(frame) == 3  # stopped after round 2, which is kept
    assert [c[6] for c in calls[1:]] == frame["test-rmse-mean"].tolist()
    assert [c[7] for c in calls[1:]] == frame["test-rmse-std"].tolist()


def test_an_xgboost_callback_subclass_works_in_cv():
    xgb = pytest.importorskip("xgboost")
    seen = []

    class Theirs(xgb.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            seen.append((epoch, len(model.cvfolds), evals_log["test"]["rmse"][-1][0]))
            return False

    X, y, _ = discrete(n=300)
    frame = cv(FAST, X, y, nfold=3, num_boost_round=2, callbacks=[Theirs()])
    assert [s[:2] for s in seen] == [(0, 3), (1, 3)]
    assert [s[2] for s in seen] == frame["test-rmse-mean"].tolist()


OUT_OF_CORE_CASES = {
    "regression": (FAST, False, False),
    "multiclass weighted stratified": ({**FAST, "objective": "multi:softprob",
                                        "subsample": 0.8}, True, True),
    "adaptive leaves weighted": ({**FAST, "objective": "reg:absoluteerror"}, True, False),
    "quantized lossguide": ({"max_depth": 0, "grow_policy": "lossguide", "max_leaves": 6,
                             "quantized_grad": True}, False, False),
    # quantized: the rows in fold order, the codes binned block by block in that order
    "quantized multiclass weighted stratified sampled": (
        {**FAST, "objective": "multi:softprob", "subsample": 0.8, "quantized_grad": True},
        True, True),
}


@pytest.mark.parametrize("case", list(OUT_OF_CORE_CASES))
def test_out_of_core_folds_in_row_blocks_give_the_same_frame_and_models(tmp_path, monkeypatch,
                                                                        case):
    # budget 0 and blocks of 128 rows: every partition's codes and per-row arrays (the
    # folds' margins, gradients, node ids and each row's fold) live in row blocks on disk
    import functools

    import daskboost.blockstore as blockstore
    import daskboost.sklearn
    from daskboost.blockstore import RowColumn
    params, weighted, classify = OUT_OF_CORE_CASES[case]
    X, y, rng = discrete(n=900)
    if classify:
        y = (np.nan_to_num(X[:, 0]) + rng.integers(0, 2, len(X))).astype(int) % 3
    weight = rng.uniform(0.5, 2.0, len(X)) if weighted else None
    kwargs = dict(nfold=3, num_boost_round=3, sample_weight=weight, stratified=classify)
    keep = KeepModels()
    in_memory = cv(params, X, y, callbacks=[keep], **kwargs)
    monkeypatch.setattr(daskboost.sklearn, "StoreConfig",
                        functools.partial(blockstore.StoreConfig, block_rows=128))
    blocked, in_fold_order = [], []
    original = cross_validation.bin_fold_partition

    def spy(*args, **kw):
        state = original(*args, **kw)
        blocked.append(all(isinstance(a, RowColumn) for a in (state.margin, state.folds)))
        in_fold_order.append(state.row_order is not None)
        return state

    monkeypatch.setattr(cross_validation._FoldBoosting, "bin_state", staticmethod(spy))
    keep_spilled = KeepModels()
    spilled = cv({**params, "memory_budget": 0, "cache_dir": str(tmp_path)}, X, y,
                 callbacks=[keep_spilled], **kwargs)
    assert blocked and all(blocked)
    assert in_fold_order == [params.get("quantized_grad", False)] * len(blocked)
    pd.testing.assert_frame_equal(spilled, in_memory, rtol=0, atol=0)
    for ours, theirs in zip(keep_spilled.models, keep.models):
        assert ours.to_dict()["trees"] == theirs.to_dict()["trees"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("daskboost-cache-")]


def test_given_folds_out_of_core_give_the_frame_in_memory(tmp_path, monkeypatch):
    # budget 0 and blocks of 128 rows: each partition's part of the given folds is held
    # in row blocks on disk with the rest of its rows' arrays
    import functools

    import daskboost.blockstore as blockstore
    import daskboost.sklearn
    X, y, _ = discrete(n=900)
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), npartitions=3)
    target = dd.from_pandas(pd.Series(y), npartitions=3)
    given = dd.from_pandas(pd.Series(np.arange(len(X)) // 5 % 3), npartitions=3)
    params = {**FAST, "quantized_grad": True}
    in_memory = cv(params, frame, target, folds=given, num_boost_round=3)
    monkeypatch.setattr(daskboost.sklearn, "StoreConfig",
                        functools.partial(blockstore.StoreConfig, block_rows=128))
    spilled = cv({**params, "memory_budget": 0, "cache_dir": str(tmp_path)}, frame, target,
                 folds=given, num_boost_round=3)
    pd.testing.assert_frame_equal(spilled, in_memory, rtol=0, atol=0)
    dealt = cv(params, frame, target, nfold=3, num_boost_round=3)
    assert not np.allclose(dealt["test-rmse-mean"], in_memory["test-rmse-mean"])


@pytest.mark.parametrize("params, classify", [
    ({**FAST, "quantized_grad": True, "subsample": 0.7, "colsample_bynode": 0.8}, False),
    ({**FAST, "quantized_grad": True, "objective": "multi:softprob"}, True),
], ids=["regression, sampled", "multiclass"])
def test_rows_in_fold_order_give_the_same_frame_and_models(params, classify, monkeypatch):
    # with quantized gradients each partition's rows are sorted by fold (held-out rows in
    # one run for the level kernels); integer sums, draws by global row index and each
    # fold's metric sums in the order read: the same bytes as the rows as read
    import daskboost.fold_states as fold_states
    X, y, rng = discrete(n=1500)
    if classify:
        y = (np.nan_to_num(X[:, 0]) + rng.integers(0, 2, len(X))).astype(int) % 3
    X, y = da.from_array(X, chunks=(500, -1)), da.from_array(y, chunks=500)
    kwargs = dict(nfold=4, num_boost_round=4, stratified=classify, seed=3)
    reordered = []
    in_fold_order = fold_states._in_fold_order

    def spy(state, order):
        state = in_fold_order(state, order)
        reordered.append(state.row_order is not None
                         and bool(np.all(np.diff(state.folds) >= 0))
                         and not np.array_equal(state.row_order, np.arange(len(state.folds))))
        return state

    monkeypatch.setattr(fold_states, "_in_fold_order", spy)
    keep = KeepModels()
    in_order = cv(params, X, y, callbacks=[keep], **kwargs)
    assert reordered == [True] * 3
    folds_and_order = fold_states._folds_and_order
    monkeypatch.setattr(fold_states, "_folds_and_order",
                        lambda *args: (folds_and_order(*args)[0], None))  # rows as read
    keep_as_read = KeepModels()
    as_read = cv(params, X, y, callbacks=[keep_as_read], **kwargs)
    pd.testing.assert_frame_equal(in_order, as_read, rtol=0, atol=0)
    for ours, theirs in zip(keep.models, keep_as_read.models):
        assert ours.to_dict() == theirs.to_dict()


# ---- parameters and bad input -------------------------------------------------------------

def test_xgboost_parameter_names_and_estimator_parameters_are_both_understood():
    X, y, _ = discrete(n=400)
    ours = cv({"learning_rate": 0.2, "reg_lambda": 2.0, "random_state": 1, "max_depth": 3},
              X, y, nfold=3, num_boost_round=3)
    theirs = cv({"eta": 0.2, "lambda": 2.0, "seed": 1, "max_depth": 3}, X, y, nfold=3,
                num_boost_round=3)
    pd.testing.assert_frame_equal(ours, theirs, rtol=0, atol=0)
    from_estimator = cv(DaskBoostRegressor(n_estimators=3, learning_rate=0.2, reg_lambda=2.0,
                                           random_state=1, max_depth=3).get_params(),
                        X, y, nfold=3)
    pd.testing.assert_frame_equal(from_estimator, ours, rtol=0, atol=0)
    as_dict = cv({"eta": 0.2, "lambda": 2.0, "seed": 1, "max_depth": 3}, X, y, nfold=3,
                 num_boost_round=3, as_pandas=False)
    assert as_dict == ours.to_dict(orient="list")


def test_array_likes_are_read_as_fit_reads_them():
    X, y, _ = discrete(n=300)
    as_numpy = cv(FAST, X, y, nfold=3, num_boost_round=2)
    as_lists = cv(FAST, X.tolist(), y.tolist(), nfold=3, num_boost_round=2)
    pd.testing.assert_frame_equal(as_lists, as_numpy, rtol=0, atol=0)


def test_sparse_x_gives_the_frame_of_the_dense_matrix_with_nan_where_nothing_is_stored():
    sparse = pytest.importorskip("scipy.sparse")
    X, y, rng = discrete(n=600, missing=0.0)
    X[rng.random(X.shape) < 0.3] = 0.0
    dense = np.where(X == 0.0, np.nan, X)
    frame = cv(FAST, sparse.csr_matrix(X), y, nfold=3, num_boost_round=3)
    pd.testing.assert_frame_equal(frame, cv(FAST, dense, y, nfold=3, num_boost_round=3),
                                  rtol=0, atol=0)


# ---- folds the user gives ------------------------------------------------------------

def test_given_folds_in_every_shape_are_the_folds_cv_deals():
    """The fold of each row as numpy, a list, pandas, a dask Series or Array; xgboost's
    (train, test) pairs; a splitter: each gives the frame of ``cv``'s own folds when it
    names the same folds."""
    from sklearn.model_selection import PredefinedSplit
    X, y, _ = discrete(n=600)
    ids = cv_folds(len(X), 4, seed=7)
    dealt = cv(FAST, X, y, nfold=4, seed=7, num_boost_round=4)
    pairs = [(np.flatnonzero(ids != f), np.flatnonzero(ids == f)) for f in range(4)]
    for folds in (ids, ids.tolist(), pd.Series(ids), pairs, PredefinedSplit(ids)):
        pd.testing.assert_frame_equal(cv(FAST, X, y, folds=folds, num_boost_round=4), dealt,
                                      rtol=0, atol=0)
    # a column of the same dask DataFrame, float or quantized gradients (rows in fold
    # order): each partition takes its rows' part
    frame = pd.DataFrame(X, columns=list("abcd")).assign(fold=ids, y=y)
    lake = dd.from_pandas(frame, npartitions=3)
    for params in (FAST, {**FAST, "quantized_grad": True, "subsample": 0.8}):
        dealt = cv(params, lake[list("abcd")], lake["y"], nfold=4, seed=7, num_boost_round=4)
        for folds in (lake["fold"], lake["fold"].to_dask_array()):
            pd.testing.assert_frame_equal(
                cv(params, lake[list("abcd")], lake["y"], folds=folds, num_boost_round=4),
                dealt, rtol=0, atol=0)


def test_group_folds_hold_each_group_out_whole():
    """Rows of a group share a label offset that a feature reveals: folds that split
    groups leak it (an optimistic test metric); GroupKFold's folds do not."""
    from sklearn.model_selection import GroupKFold
    rng = np.random.default_rng(3)
    groups = rng.integers(0, 60, size=1800)
    offset = rng.normal(scale=3.0, size=60)[groups]
    X = np.column_stack([groups + rng.normal(scale=0.01, size=len(groups)),
                         rng.normal(size=(len(groups), 2))])
    y = offset + X[:, 1] + rng.normal(scale=0.3, size=len(groups))
    params = {"max_depth": 6, "learning_rate": 0.3}
    dealt = cv(params, X, y, nfold=5, num_boost_round=20, seed=0)
    grouped = cv(params, X, y, folds=list(GroupKFold(5).split(X, y, groups)),
                 num_boost_round=20)
    # the leak: ~1.5 against ~3.9 (the spread of the offsets of groups never seen)
    assert grouped["test-rmse-mean"].iloc[-1] > 3.0
    assert dealt["test-rmse-mean"].iloc[-1] < 0.5 * grouped["test-rmse-mean"].iloc[-1]


def test_given_folds_models_are_the_fits_on_their_training_rows():
    """GroupKFold's splits: each fold's model is the fit on its training rows, to the
    last bit (every feature value in every fold's training rows: the same bins), and
    the mean test metric is scikit-learn's cross_val_score on the same splits."""
    from sklearn.model_selection import GroupKFold, cross_val_score
    X, y, rng = discrete()
    groups = rng.integers(0, 40, size=len(X))
    splits = list(GroupKFold(4).split(X, y, groups))
    keep = KeepModels()
    frame = cv(FAST, X, y, folds=splits, num_boost_round=5, callbacks=[keep])
    for (train, _), model in zip(splits, keep.models):
        alone = DaskBoostRegressor(n_estimators=5, **FAST).fit(X[train], y[train])
        assert model.to_dict() == alone.get_booster().to_dict()
    scores = -cross_val_score(DaskBoostRegressor(n_estimators=5, **FAST), X, y, cv=splits,
                              scoring="neg_root_mean_squared_error")
    # (the same models; predict's float32 output against cv's float64 margins)
    assert abs(frame["test-rmse-mean"].iloc[-1] - scores.mean()) < 1e-6


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(folds=[0, 1] * 14 + [0]), ValueError,
     r"folds has 29 rows' folds but X has 30 rows"),
    (dict(folds=[0, 2] * 15), ValueError, r"folds: fold 1 holds out no row"),
    (dict(folds=[0] * 30), ValueError, r"folds: every row is in fold 0; cv needs at least 2"),
    (dict(folds=[-1, 1] * 15), ValueError, r"folds: -1 is not a fold"),
    (dict(folds=[0.0, 1.5] * 15), ValueError, r"folds: 1.5 is not a fold"),
    (dict(folds=[0.0, np.nan] * 15), ValueError, r"folds: nan is not a fold"),
    (dict(folds=np.array(["a", "b"] * 15)), TypeError, r"folds must hold integer fold"),
    (dict(folds=np.zeros((30, 2), int)), ValueError, r"got an array of shape \(30, 2\)"),
    (dict(folds=[0, 1] * 15, nfold=3), ValueError, r"nfold=3 and folds disagree: folds has 2"),
    (dict(folds=[0, 1] * 15, stratified=True), ValueError, r"stratified=True and folds"),
    (dict(folds=[(np.arange(10, 30), np.arange(10)), (np.arange(5, 30), np.arange(5))]),
     ValueError, r"row 0 is in the test rows of more than one fold \(folds\[1\]"),
    (dict(folds=[(np.arange(15, 30), np.arange(15)), (np.arange(15), np.arange(15, 29))]),
     ValueError, r"folds\[1\]: its 15 train indices are not the 16 rows outside"),
    (dict(folds=[(np.arange(15, 30), np.arange(15)), (np.arange(15), np.arange(15, 31))]),
     ValueError, r"folds\[1\]'s test index 30 is not a row of X \(0 .. 29\)"),
    (dict(folds=[(np.arange(10, 30), np.arange(10)), (np.r_[0:10, 20:30], np.arange(10, 20))]),
     ValueError, r"row 20 is in no fold's test rows"),
])
def test_bad_given_folds_are_refused_before_any_pass(no_pass, kwargs, error, message):
    X, y, _ = discrete(n=30)
    with pytest.raises(error, match=message):
        cv({}, X, y, **kwargs)


def test_splits_that_train_on_fewer_rows_and_splitters_on_dask_data_are_refused(no_pass):
    from sklearn.model_selection import KFold, TimeSeriesSplit
    X, y, _ = discrete(n=30)
    with pytest.raises(ValueError, match=r"folds\[0\]: its 6 train indices .*"
                                         r"TimeSeriesSplit, are not supported"):
        cv({}, X, y, folds=TimeSeriesSplit(4))
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), npartitions=2)
    with pytest.raises(TypeError, match=r"folds=KFold\(...\): a scikit-learn splitter "
                                        r"needs X and y in memory"):
        cv({}, frame, dd.from_pandas(pd.Series(y), npartitions=2), folds=KFold(3))
    with pytest.raises(TypeError, match=r"folds as \(train, test\) index pairs needs X with "
                                        r"a known number of rows"):
        cv({}, frame, dd.from_pandas(pd.Series(y), npartitions=2),
           folds=[(np.arange(15, 30), np.arange(15)), (np.arange(15), np.arange(15, 30))])


def test_given_folds_not_as_long_as_a_dask_frame_are_refused_after_the_scan():
    X, y, _ = discrete(n=30)
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), npartitions=2)
    with pytest.raises(ValueError, match=r"folds has 20 rows' folds but X has 30 rows"):
        cv({}, frame, dd.from_pandas(pd.Series(y), npartitions=2), folds=[0, 1] * 10)


@pytest.fixture
def no_pass(monkeypatch):
    """Any pass over the data fails the test (errors must come before)."""
    def refuse(*args, **kwargs):
        raise AssertionError("a pass over the data ran")
    monkeypatch.setattr(cross_validation, "make_runtime", refuse)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(nfold=1), ValueError, r"nfold=1 must be >= 2"),
    (dict(nfold=-3), ValueError, r"nfold=-3 must be >= 2"),
    (dict(nfold=2.0), TypeError, r"nfold=2.0 must be an integer"),
    (dict(nfold=31), ValueError, r"nfold=31 is more than the 30 rows of X"),
    (dict(stratified=True), ValueError,
     r"stratified=True needs a classification objective .*objective=None is a regression"),
    (dict(params={"objective": "reg:squarederror"}, stratified=True), ValueError,
     r"stratified=True needs a classification objective"),
    (dict(params={"etta": 0.1}), ValueError, r"params: 'etta' is not a parameter"),
    (dict(params={"eta": 0.1, "learning_rate": 0.2}), ValueError,
     r"'eta' and 'learning_rate' are the same parameter"),
    (dict(params={"n_estimators": 5}, num_boost_round=6), ValueError,
     r"num_boost_round=6 and params\['n_estimators'\]=5 disagree"),
    (dict(params={"learning_rate": -1}), ValueError, r"learning_rate=-1.0 must be > 0"),
    (dict(num_boost_round=0), ValueError, r"num_boost_round=0 must be >= 1"),
    (dict(early_stopping_rounds=0), ValueError, r"early_stopping_rounds=0 must be >= 1"),
    (dict(params={"tree_method": "approx"}), ValueError, r"tree_method='approx' is not supported"),
    (dict(params={"trim_fraction": 0.1}), ValueError, r"trim_fraction=0.1 is not supported"),
    (dict(callbacks=[object()]), TypeError, r"callbacks\[0\] \(object\) has none"),
])
def test_bad_input_is_refused_before_any_pass(no_pass, kwargs, error, message):
    X, y, _ = discrete(n=30)
    kwargs = {"params": {}, **kwargs}
    with pytest.raises(error, match=message):
        cv(kwargs.pop("params"), X, y, **kwargs)


def test_nfold_above_the_rows_of_a_dask_frame_is_refused_after_the_scan():
    X, y, _ = discrete(n=30)
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), npartitions=2)
    with pytest.raises(ValueError, match=r"nfold=40 is more than the 30 rows of X"):
        cv({}, frame, dd.from_pandas(pd.Series(y), npartitions=2), nfold=40)


# ---- a cluster --------------------------------------------------------------------------

def test_on_a_cluster_the_same_frame_a_lost_worker_and_a_failing_callback(caplog, tmp_path):
    distributed = pytest.importorskip("distributed")
    from daskboost import worker_states
    X, y, _ = discrete(n=800)
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), npartitions=4)
    target = dd.from_pandas(pd.Series(y), npartitions=4)
    threaded = cv(FAST, frame, target, nfold=3, num_boost_round=4)
    # quantized: each partition's rows in fold order, on the workers and when rebuilt
    quantized = {**FAST, "quantized_grad": True, "subsample": 0.8}
    threaded_quantized = cv(quantized, frame, target, nfold=3, num_boost_round=4)
    # folds given as a column: each task gets its partition's part, rebuilt too
    given = dd.from_pandas(pd.Series(np.arange(len(X)) // 7 % 3), npartitions=4)
    threaded_given = cv(quantized, frame, target, folds=given, num_boost_round=4)

    class Kill(TrainingCallback):
        """Kills a worker (SIGKILL) after round 1: its partitions' states are lost."""

        killed = None

        def after_iteration(self, model, epoch, evals_log):
            if epoch == 1:
                pids = client.run(os.getpid)
                Kill.killed = sorted(pids)[0]
                os.kill(pids[Kill.killed], signal.SIGKILL)
            return False

    class Boom(TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            if epoch == 1:
                raise RuntimeError("boom in round 1")
            return False

    def held(dask_worker):
        return (len(worker_states._fits), len(worker_states._holders),
                len(worker_states._pools), worker_states.SUMS_HANDLER in dask_worker.handlers)

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        on_cluster = cv(FAST, frame, target, nfold=3, num_boost_round=4)
        # the lost partitions are rebuilt with their folds and the folds' trees so far
        recovered = cv(FAST, frame, target, nfold=3, num_boost_round=4, callbacks=[Kill()])
        assert Kill.killed is not None
        assert "were lost with a worker; rebuilding them" in caplog.text
        client.wait_for_workers(2, timeout=60)
        Kill.killed = None
        recovered_quantized = cv(quantized, frame, target, nfold=3, num_boost_round=4,
                                 callbacks=[Kill()])
        assert Kill.killed is not None
        client.wait_for_workers(2, timeout=60)
        Kill.killed = None
        recovered_given = cv(quantized, frame, target, folds=given, num_boost_round=4,
                             callbacks=[Kill()])
        assert Kill.killed is not None
        client.wait_for_workers(2, timeout=60)
        # a worker lost within the evaluation pass after round 2, once the other has
        # evaluated its partitions (and computed their margins ahead): the round is
        # grown again from the margins the survivors still hold unchanged
        flag = os.path.join(tmp_path, "died")
        client.run(die_once_in_pass, "daskboost.fold_states", "fold_partials", flag, 2,
                   1.0)
        lost_in_evaluation = cv(FAST, frame, target, nfold=3, num_boost_round=4)
        assert os.path.exists(flag)
        client.wait_for_workers(2, timeout=60)
        with pytest.raises(RuntimeError, match="boom in round 1"):
            cv(FAST, frame, target, nfold=3, num_boost_round=4, callbacks=[Boom()])
        left = client.run(held)
    pd.testing.assert_frame_equal(on_cluster, threaded, rtol=0, atol=0)
    pd.testing.assert_frame_equal(recovered, threaded, rtol=0, atol=0)
    pd.testing.assert_frame_equal(recovered_quantized, threaded_quantized, rtol=0, atol=0)
    pd.testing.assert_frame_equal(recovered_given, threaded_given, rtol=0, atol=0)
    pd.testing.assert_frame_equal(lost_in_evaluation, threaded, rtol=0, atol=0)
    # every worker forgot the fits: no states, actor, thread pool or handler left
    assert list(left.values()) == [(0, 0, 0, False)] * 2


def test_verbose_eval_prints_xgboosts_lines_every_period(capsys):
    X, y, _ = discrete(n=300)
    frame = cv(FAST, X, y, nfold=3, num_boost_round=5, verbose_eval=2)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["[0]", "[2]", "[4]"]
    mean, std = frame["test-rmse-mean"].iloc[2], frame["test-rmse-std"].iloc[2]
    assert lines[1].split("\t")[2] == f"test-rmse:{mean:.5f}+{std:.5f}"
    cv(FAST, X, y, nfold=3, num_boost_round=2, verbose_eval=True, show_stdv=False)
    assert capsys.readouterr().out.splitlines()[1].split("\t")[2] == \
        f"test-rmse:{cv(FAST, X, y, nfold=3, num_boost_round=2)['test-rmse-mean'].iloc[1]:.5f}"
