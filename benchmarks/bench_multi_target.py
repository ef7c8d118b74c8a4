"""Multi-target regression: daskboost (one output per target, one fit) vs xgboost's
multi-target ``XGBRegressor`` (``multi_strategy="one_output_per_tree"``), and LightGBM
and scikit-learn, which fit one model per target (``MultiOutputRegressor``).

* Data: the regression benchmark's features (``common.make_regression``): ``--rows``
  (default 500,000) training rows x 28 float32 features (5% NaN), 100,000 test rows;
  three targets of different shapes (the benchmark's nonlinear function, a sum of
  sines of other features, a product), each with noise.  Seeded.
* Model: ``--rounds`` (default 100) rounds of depth-6 trees per target, learning rate
  0.1, 256 bins (255 for LightGBM: ``num_leaves=63``, ``max_depth=6``; scikit-learn's
  ``HistGradientBoostingRegressor``: ``max_leaf_nodes=63``, ``max_depth=6``, no early
  stopping), 2 threads each.
* daskboost fits from a parquet lake (``--files`` files, the targets three columns of
  it, written untimed; the timed fit is ``dd.read_parquet`` -> ``fit`` on dask's local
  threaded scheduler); the others fit in-memory numpy.  Warm-up: an untimed small fit
  per library (numba JIT).
* Reported per library: median fit seconds over ``--repeats`` (the contestants in a
  balanced order within each repeat), daskboost's fit time over the library's (< 1:
  daskboost is faster), and the test RMSE over every (row, target).

Run from the repository root::

    python benchmarks/bench_multi_target.py --repeats 3
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# common fixes OMP_NUM_THREADS (default 2) when imported, before numpy loads: import it first
from common import (FEATURE_NAMES, MAX_BIN, machine_info, make_regression,  # noqa: E402
                    parse_run_args, timed_contestants, write_parquet_lake)

import argparse  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

LIBRARIES = ("daskboost", "xgboost", "lightgbm", "sklearn")
DEFAULT_LIBRARIES = ("daskboost", "xgboost", "lightgbm")
TARGETS = ("target_0", "target_1", "target_2")
THREADS = 2
WARMUP_ROWS = 2000
DEPTH = 6
LEARNING_RATE = 0.1


def targets(X, f, seed):
    """Three targets, ``(n, 3)`` float32: ``f`` (the regression benchmark's function),
    a sum of sines and a product of other features, each with noise."""
    rng = np.random.default_rng(seed)
    x = np.nan_to_num(X.astype(np.float64))
    second = np.sin(3.0 * x[:, 8]) + np.sin(2.0 * x[:, 9]) * x[:, 10] + 2.0 * x[:, 18]
    third = 0.5 * x[:, 11] * x[:, 19] + np.log1p(x[:, 23]) - x[:, 27] / 5.0
    Y = np.column_stack([f, second, third]) + 0.5 * rng.standard_normal((len(f), 3))
    return Y.astype(np.float32)


def contestant(name, lake, X, Y, rounds):
    """``fit(small=False) -> predict``."""
    if name == "daskboost":
        import dask.dataframe as dd
        from daskboost import DaskBoostRegressor

        def fit(small=False):
            frame = dd.read_parquet(lake["small" if small else "full"])
            model = DaskBoostRegressor(n_estimators=rounds, max_depth=DEPTH, max_bin=MAX_BIN,
                                       learning_rate=LEARNING_RATE)
            model.fit(frame[FEATURE_NAMES], frame[list(TARGETS)])
            return lambda X_test: np.asarray(model.predict(X_test))
        return fit
    rows = {True: slice(0, WARMUP_ROWS), False: slice(None)}
    if name == "xgboost":
        import xgboost as xgb

        def fit(small=False):
            model = xgb.XGBRegressor(n_estimators=rounds, max_depth=DEPTH, max_bin=MAX_BIN,
                                     learning_rate=LEARNING_RATE, tree_method="hist",
                                     multi_strategy="one_output_per_tree", n_jobs=THREADS)
            model.fit(X[rows[small]], Y[rows[small]])
            return model.predict
        return fit
    from sklearn.multioutput import MultiOutputRegressor
    if name == "lightgbm":
        import lightgbm as lgb

        def fit(small=False):
            model = MultiOutputRegressor(lgb.LGBMRegressor(
                n_estimators=rounds, max_depth=DEPTH, num_leaves=2 ** DEPTH - 1,
                learning_rate=LEARNING_RATE, max_bin=MAX_BIN - 1, n_jobs=THREADS, verbose=-1))
            model.fit(X[rows[small]], Y[rows[small]])
            return model.predict
        return fit
    if name == "sklearn":
        from sklearn.ensemble import HistGradientBoostingRegressor

        def fit(small=False):
            model = MultiOutputRegressor(HistGradientBoostingRegressor(
                max_iter=rounds, max_depth=DEPTH, max_leaf_nodes=2 ** DEPTH - 1,
                learning_rate=LEARNING_RATE, early_stopping=False))
            model.fit(X[rows[small]], Y[rows[small]])
            return model.predict
        return fit
    raise ValueError(f"unknown library {name!r}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--test-rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--libraries", default=",".join(DEFAULT_LIBRARIES),
                        help=f"comma-separated, of {','.join(LIBRARIES)}")
    args = parse_run_args(parser, LIBRARIES, argv)
    names = args.libraries

    X, _, f = make_regression(args.rows, args.seed)
    Y = targets(X, f, args.seed)
    X_test, _, f_test = make_regression(args.test_rows, args.seed + 100)
    Y_test = targets(X_test, f_test, args.seed + 100)
    with tempfile.TemporaryDirectory(prefix="bench_multi_target_") as tmp:
        lake = {"full": os.path.join(tmp, "full"), "small": os.path.join(tmp, "small")}
        write_parquet_lake(lake["full"], X, Y, args.files, label_name=TARGETS)
        write_parquet_lake(lake["small"], X[:WARMUP_ROWS], Y[:WARMUP_ROWS], 1,
                           label_name=TARGETS)
        fits = {n: contestant(n, lake, X, Y, args.rounds) for n in names}
        table = timed_contestants(
            fits, args.repeats,
            lambda predict: float(np.sqrt(np.mean((predict(X_test) - Y_test) ** 2))),
            "test RMSE", lambda predict: predict(X_test[:10]))
    print()
    print(f"{args.rows:,} training rows x {X.shape[1]}, {len(TARGETS)} targets, "
          f"{args.test_rows:,} test rows, {args.rounds} rounds of depth {DEPTH}; "
          f"{machine_info()['cpu_count']} CPUs")
    print(table)


if __name__ == "__main__":
    sys.exit(main())
