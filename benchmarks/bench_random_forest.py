"""Random forests: daskboost's ``XGBRFRegressor`` vs xgboost's, LightGBM's ``rf`` boosting
and (optionally) scikit-learn's ``RandomForestRegressor``.

* Data: the regression benchmark's (``common.make_regression``): ``--rows`` (default
  500,000) training rows x 28 float32 features (5% NaN), 100,000 test rows.  Seeded.
* Model: ``--trees`` (default 100) trees of depth ``--depth`` (default 8), each on 80%
  of the rows and 80% of the columns at each node, the forest's mean (xgboost's
  random forest defaults: learning rate 1, ``reg_lambda`` 1e-5); 256 bins (255 for
  LightGBM: ``boosting_type="rf"``, ``bagging_fraction=0.8``, ``bagging_freq=1``,
  ``feature_fraction_bynode=0.8``, 255 leaves); scikit-learn: ``max_samples=0.8``,
  ``max_features=0.8`` (its NaN support), exact splits.  2 threads each.
* daskboost fits from a parquet lake (``--files`` files, written untimed; the timed fit
  is ``dd.read_parquet`` -> ``fit`` on dask's local threaded scheduler); the others fit
  in-memory numpy.  Warm-up: an untimed small fit per library (numba JIT).
* Reported per library: median fit seconds over ``--repeats`` (the contestants in a
  balanced order within each repeat), daskboost's fit time over the library's (< 1:
  daskboost is faster), and the test RMSE.

Run from the repository root::

    python benchmarks/bench_random_forest.py --repeats 3
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# common fixes OMP_NUM_THREADS (default 2) when imported, before numpy loads: import it first
from common import (FEATURE_NAMES, LABEL_NAME, MAX_BIN, machine_info,  # noqa: E402
                    make_regression, parse_run_args, rmse, timed_contestants,
                    write_parquet_lake)

import argparse  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

LIBRARIES = ("daskboost", "xgboost", "lightgbm", "sklearn")
DEFAULT_LIBRARIES = ("daskboost", "xgboost", "lightgbm")
THREADS = 2
WARMUP_ROWS = 2000
FRACTION = 0.8  # rows per tree, and columns per node


def contestant(name, lake, X, y, trees, depth):
    """``fit(small=False) -> predict``."""
    if name == "daskboost":
        import dask.dataframe as dd
        from daskboost import XGBRFRegressor

        def fit(small=False):
            frame = dd.read_parquet(lake["small" if small else "full"])
            model = XGBRFRegressor(n_estimators=trees, max_depth=depth, max_bin=MAX_BIN,
                                   subsample=FRACTION, colsample_bynode=FRACTION)
            model.fit(frame[FEATURE_NAMES], frame[LABEL_NAME])
            return lambda X_test: np.asarray(model.predict(X_test))
        return fit
    rows = {True: slice(0, WARMUP_ROWS), False: slice(None)}
    if name == "xgboost":
        import xgboost as xgb

        def fit(small=False):
            model = xgb.XGBRFRegressor(n_estimators=trees, max_depth=depth, max_bin=MAX_BIN,
                                       subsample=FRACTION, colsample_bynode=FRACTION,
                                       tree_method="hist", n_jobs=THREADS)
            model.fit(X[rows[small]], y[rows[small]])
            return model.predict
        return fit
    if name == "lightgbm":
        import lightgbm as lgb

        def fit(small=False):
            model = lgb.LGBMRegressor(boosting_type="rf", n_estimators=trees,
                                      max_depth=depth, num_leaves=min(2 ** depth, 131072) - 1,
                                      max_bin=MAX_BIN - 1, subsample=FRACTION,
                                      subsample_freq=1, feature_fraction_bynode=FRACTION,
                                      n_jobs=THREADS, verbose=-1)
            model.fit(X[rows[small]], y[rows[small]])
            return model.predict
        return fit
    if name == "sklearn":
        from sklearn.ensemble import RandomForestRegressor

        def fit(small=False):
            model = RandomForestRegressor(n_estimators=trees, max_depth=depth,
                                          max_samples=FRACTION, max_features=FRACTION,
                                          n_jobs=THREADS, random_state=0)
            model.fit(X[rows[small]], y[rows[small]])
            return model.predict
        return fit
    raise ValueError(f"unknown library {name!r}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--test-rows", type=int, default=100_000)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--libraries", default=",".join(DEFAULT_LIBRARIES),
                        help=f"comma-separated, of {','.join(LIBRARIES)}")
    args = parse_run_args(parser, LIBRARIES, argv)
    names = args.libraries

    X, y, _ = make_regression(args.rows, args.seed)
    X_test, y_test, _ = make_regression(args.test_rows, args.seed + 100)
    with tempfile.TemporaryDirectory(prefix="bench_random_forest_") as tmp:
        lake = {"full": os.path.join(tmp, "full"), "small": os.path.join(tmp, "small")}
        write_parquet_lake(lake["full"], X, y, args.files)
        write_parquet_lake(lake["small"], X[:WARMUP_ROWS], y[:WARMUP_ROWS], 1)
        fits = {n: contestant(n, lake, X, y, args.trees, args.depth) for n in names}
        table = timed_contestants(fits, args.repeats,
                                  lambda predict: rmse(y_test, predict(X_test)), "test RMSE",
                                  lambda predict: predict(X_test[:10]))
    print()
    print(f"{args.rows:,} training rows x {X.shape[1]}, {args.test_rows:,} test rows, "
          f"{args.trees} trees of depth {args.depth}; {machine_info()['cpu_count']} CPUs")
    print(table)


if __name__ == "__main__":
    sys.exit(main())
