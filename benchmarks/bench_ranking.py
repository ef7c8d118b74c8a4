"""Learning to rank: daskboost vs xgboost's and LightGBM's LambdaMART.

* Data: ``--queries`` (default 10,000) training queries of 10-90 documents (~500,000
  rows) x 28 float32 features (5% NaN) and ``--test-queries`` (default 2,000) test
  queries: the binary benchmark's features, a document's relevance 0..4 the quantile
  bin of its true logit plus noise within its query.  Seeded (``--seed``).
* Model: ``rank:ndcg`` (LightGBM: ``lambdarank``), 100 rounds, depth 6 (LightGBM: 64
  leaves), learning rate 0.1, 256 bins (255 for LightGBM), L2 penalty 1, minimum child
  hessian 1; 2 threads each.  Pairs: xgboost's defaults (``topk``, k = 32) for
  daskboost and xgboost, LightGBM's (``lambdarank_truncation_level`` 30).
* daskboost fits from a parquet lake (``--files`` files, each holding whole queries, a
  ``qid`` column; written untimed; the timed fit is ``dd.read_parquet`` -> ``fit`` on
  dask's local threaded scheduler); the others fit in-memory numpy.  Warm-up: an untimed
  small fit per library (numba JIT).
* Reported per library: median fit seconds over ``--repeats`` (the contestants in a
  balanced order within each repeat), daskboost's fit time over the library's (< 1:
  daskboost is faster), and the test NDCG@10 (xgboost's ``ndcg@10`` on every library's
  scores, so the same metric for all).
* ``--cv NFOLD``: cross-validation instead, ``NFOLD`` folds of whole queries, every
  round's train and test ``ndcg@10``: ``daskboost.cv`` of a ``DMatrix`` of the lake
  (folds ``cv_folds(..., qid=qid)``) against the five fits on those folds' training
  queries (``daskboost-fits``: each reads the lake and keeps the rows of the other
  folds, a ``fold`` column; bare fits, no metric), ``xgboost.cv`` (its own folds of whole queries) and
  ``lightgbm.cv`` (``GroupKFold``), in memory.  Reported: the median seconds, the
  ratio, and the last round's mean test NDCG@10.

Run from the repository root::

    python benchmarks/bench_ranking.py --repeats 3
    python benchmarks/bench_ranking.py --cv 5 --repeats 3
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# common fixes OMP_NUM_THREADS (default 2) when imported, before numpy loads: import it first
from common import (FEATURE_NAMES, LABEL_NAME, LEARNING_RATE, MAX_BIN,  # noqa: E402
                    MAX_DEPTH, N_ESTIMATORS, machine_info, make_binary, timed_contestants)

import argparse  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

LIBRARIES = ("daskboost", "xgboost", "lightgbm")
CV_CONTESTANTS = ("daskboost", "daskboost-fits", "xgboost", "lightgbm")
THREADS = 2
WARMUP_QUERIES = 50


def make_data(n_queries, seed):
    """(X, relevance, qid): queries of 10..90 documents, rows sorted by query."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(10, 91, n_queries)
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), sizes)
    X, _, logit = make_binary(len(qid), seed)
    score = logit + rng.normal(scale=1.0, size=len(qid))
    relevance = np.digitize(score, np.quantile(score, [0.5, 0.75, 0.9, 0.97]))
    return X, relevance.astype(np.float32), qid


def write_query_lake(directory, X, y, qid, n_files, folds=None):
    """``n_files`` parquet files of whole queries (ascending qid), with a qid column (and
    a ``fold`` column, ``folds``, if given)."""
    os.makedirs(directory)
    starts = np.flatnonzero(np.r_[True, np.diff(qid) != 0])
    cuts = [0, *starts[np.linspace(0, len(starts), n_files + 1)[1:-1].astype(int)], len(qid)]
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        frame = pd.DataFrame(X[a:b], columns=FEATURE_NAMES)
        frame["qid"] = qid[a:b]
        frame[LABEL_NAME] = y[a:b]
        if folds is not None:
            frame["fold"] = folds[a:b]
        frame.to_parquet(os.path.join(directory, f"part-{i:03d}.parquet"), index=False)


def ndcg_at_10(y, scores, qid):
    """xgboost's ``ndcg@10`` of the scores (the same function for every library)."""
    from daskboost.metrics import evaluate
    groups = np.r_[0, np.flatnonzero(np.diff(qid)) + 1, len(qid)]
    return evaluate("ndcg@10", [(y, np.asarray(scores, np.float64), None, groups)], None)

def contestant(name, lake, X, y, qid):
    """``fit(small=False) -> predict(X_test)``."""
    common = dict(n_estimators=N_ESTIMATORS, learning_rate=LEARNING_RATE)
    small_rows = int(np.searchsorted(qid, WARMUP_QUERIES))
    if name == "daskboost":
        import dask.dataframe as dd
        from daskboost import DaskBoostRanker

        def fit(small=False):
            frame = dd.read_parquet(lake["small" if small else "full"])
            model = DaskBoostRanker(objective="rank:ndcg", max_depth=MAX_DEPTH, max_bin=MAX_BIN,
                                    reg_lambda=1.0, min_child_weight=1.0, **common)
            model.fit(frame[FEATURE_NAMES + ["qid"]], frame[LABEL_NAME])
            return lambda X_test: np.asarray(model.predict(X_test))
        return fit
    if name == "xgboost":
        import xgboost as xgb

        def fit(small=False):
            rows = slice(0, small_rows) if small else slice(None)
            model = xgb.XGBRanker(objective="rank:ndcg", tree_method="hist",
                                  max_depth=MAX_DEPTH, max_bin=MAX_BIN, reg_lambda=1.0,
                                  min_child_weight=1.0, n_jobs=THREADS, **common)
            model.fit(X[rows], y[rows], qid=qid[rows])
            return lambda X_test: model.predict(X_test)
        return fit
    if name == "lightgbm":
        import lightgbm as lgb

        def fit(small=False):
            rows = slice(0, small_rows) if small else slice(None)
            sizes = np.diff(np.r_[0, np.flatnonzero(np.diff(qid[rows])) + 1, len(qid[rows])])
            model = lgb.LGBMRanker(objective="lambdarank", num_leaves=64, max_depth=MAX_DEPTH,
                                   max_bin=MAX_BIN - 1, reg_lambda=1.0, min_child_weight=1.0,
                                   n_jobs=THREADS, verbose=-1, **common)
            model.fit(X[rows], y[rows], group=sizes)
            return lambda X_test: model.predict(X_test)
        return fit
    raise ValueError(f"unknown library {name!r}")


def cv_contestant(name, lake, X, y, qid, nfold):
    """``run(small=False) -> the last round's mean test ndcg@10`` of ``nfold``-fold
    cross-validation."""
    common = dict(max_depth=MAX_DEPTH, max_bin=MAX_BIN, reg_lambda=1.0, min_child_weight=1.0,
                  eta=LEARNING_RATE)
    small_rows = int(np.searchsorted(qid, WARMUP_QUERIES))
    rows = {True: slice(0, small_rows), False: slice(None)}
    if name.startswith("daskboost"):
        import dask.dataframe as dd
        import daskboost as dxb
        params = {"objective": "rank:ndcg", "eval_metric": "ndcg@10", **common}

        def run(small=False):
            frame = dd.read_parquet(lake["small" if small else "full"])
            if name == "daskboost":
                result = dxb.cv(params, dxb.DMatrix(frame[FEATURE_NAMES], frame[LABEL_NAME],
                                                    qid=frame["qid"]),
                                N_ESTIMATORS, nfold=nfold, seed=0)
                return float(result["test-ndcg@10-mean"].iloc[-1])
            for f in range(nfold):  # (bare fits: no metric, hence no score)
                part = frame[frame["fold"] != f]
                model = dxb.XGBRanker(n_estimators=N_ESTIMATORS, **common)
                model.fit(part[FEATURE_NAMES + ["qid"]], part[LABEL_NAME])
            return float("nan")
        return run
    if name == "xgboost":
        import xgboost as xgb

        def run(small=False):
            r = rows[small]
            result = xgb.cv({"objective": "rank:ndcg", "eval_metric": "ndcg@10",
                             "tree_method": "hist", "nthread": THREADS, **common},
                            xgb.DMatrix(X[r], y[r], qid=qid[r]), N_ESTIMATORS, nfold=nfold,
                            seed=0)
            return float(result["test-ndcg@10-mean"].iloc[-1])
        return run
    if name == "lightgbm":
        import lightgbm as lgb

        def run(small=False):
            r = rows[small]
            sizes = np.diff(np.r_[0, np.flatnonzero(np.diff(qid[r])) + 1, len(qid[r])])
            result = lgb.cv({"objective": "lambdarank", "num_leaves": 64,
                             "max_depth": MAX_DEPTH, "max_bin": MAX_BIN - 1, "lambda_l2": 1.0,
                             "min_sum_hessian_in_leaf": 1.0, "learning_rate": LEARNING_RATE,
                             "num_threads": THREADS, "verbose": -1, "metric": "ndcg",
                             "ndcg_eval_at": [10]},
                            lgb.Dataset(X[r], y[r], group=sizes), N_ESTIMATORS, nfold=nfold,
                            stratified=False, eval_train_metric=True)
            return float(result["valid ndcg@10-mean"][-1])
        return run
    raise ValueError(f"unknown contestant {name!r}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--test-queries", type=int, default=2_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--libraries", default=None,
                        help=f"comma-separated, of {','.join(LIBRARIES)} (with --cv: of "
                             f"{','.join(CV_CONTESTANTS)})")
    parser.add_argument("--cv", type=int, default=0, metavar="NFOLD",
                        help="cross-validation with NFOLD folds of whole queries instead")
    args = parser.parse_args(argv)
    valid = CV_CONTESTANTS if args.cv else LIBRARIES
    names = [n for n in (args.libraries or ",".join(valid)).split(",") if n]
    unknown = sorted(set(names) - set(valid))
    if unknown:
        parser.error(f"--libraries: unknown {unknown}; choose from {list(valid)}")
    if args.cv:
        return run_cv(args, names)

    X, y, qid = make_data(args.queries, args.seed)
    X_test, y_test, qid_test = make_data(args.test_queries, args.seed + 100)
    with tempfile.TemporaryDirectory(prefix="bench_ranking_") as tmp:
        lake = {"full": os.path.join(tmp, "full"), "small": os.path.join(tmp, "small")}
        write_query_lake(lake["full"], X, y, qid, args.files)
        small = int(np.searchsorted(qid, WARMUP_QUERIES))
        write_query_lake(lake["small"], X[:small], y[:small], qid[:small], 1)
        fits = {n: contestant(n, lake, X, y, qid) for n in names}
        table = timed_contestants(
            fits, args.repeats, lambda predict: ndcg_at_10(y_test, predict(X_test), qid_test),
            "test NDCG@10", lambda predict: predict(X_test[:10]))
    print()
    print(f"{len(qid):,} training rows ({args.queries:,} queries) x {X.shape[1]}, "
          f"{len(qid_test):,} test rows, {N_ESTIMATORS} rounds, depth {MAX_DEPTH}; "
          f"{machine_info()['cpu_count']} CPUs")
    print(table)


def run_cv(args, names):
    """``--cv``: the cross-validations of ``names`` on the training queries."""
    import daskboost as dxb
    X, y, qid = make_data(args.queries, args.seed)
    folds = dxb.cv_folds(len(qid), args.cv, seed=0, qid=qid)
    small = int(np.searchsorted(qid, WARMUP_QUERIES))
    with tempfile.TemporaryDirectory(prefix="bench_ranking_cv_") as tmp:
        lake = {"full": os.path.join(tmp, "full"), "small": os.path.join(tmp, "small")}
        write_query_lake(lake["full"], X, y, qid, args.files, folds)
        write_query_lake(lake["small"], X[:small], y[:small], qid[:small], 1,
                         dxb.cv_folds(small, args.cv, seed=0, qid=qid[:small]))
        runs = {n: cv_contestant(n, lake, X, y, qid, args.cv) for n in names}
        table = timed_contestants(runs, args.repeats, lambda score: score,
                                  "last mean test NDCG@10", lambda score: None)
    print()
    print(f"{args.cv}-fold cross-validation of {len(qid):,} rows ({args.queries:,} queries) "
          f"x {X.shape[1]}, {N_ESTIMATORS} rounds, depth {MAX_DEPTH}; "
          f"{machine_info()['cpu_count']} CPUs")
    print(table)


if __name__ == "__main__":
    sys.exit(main())
