"""Regression benchmark (squared error): daskboost vs xgboost, lightgbm and scikit-learn.

Same harness as bench_binary.py (common.run_benchmark: one process, one run, round-robin
repeats, medians, daskboost's fit-time ratios); what differs:

* Data: ``--rows`` (default 1,000,000) training rows x 28 float32 features plus a separate
  ``--test-rows`` (default 200,000) test set, the same feature columns as the binary case
  (normal, uniform, exponential and small-integer columns, then 5% of all values set to
  NaN at random). The float32 target is the binary case's nonlinear logit (standard
  deviation ~2.2, computed on the complete features) plus Gaussian noise of standard
  deviation 1, so the true function's test RMSE, the floor, is ~1.0 (R^2 ~0.83).
  Seeded (``--seed``): every run sees the same data.
* Model: reg:squarederror, 100 trees, depth 6, learning rate 0.1, 256 bins (255 for
  lightgbm and scikit-learn), L2 penalty 1, minimum child hessian 1. daskboost:
  ``DaskBoostRegressor(objective="reg:squarederror")``; xgboost:
  ``XGBRegressor(tree_method="hist", objective="reg:squarederror")``; lightgbm:
  ``LGBMRegressor(objective="regression", num_leaves=64, max_depth=6)``; scikit-learn:
  ``HistGradientBoostingRegressor(loss="squared_error")``.
* daskboost fits from a parquet lake (``--files`` files, written untimed; the timed fit
  is ``dd.read_parquet`` -> ``fit(ddf[features], ddf["label"])`` on dask's local
  threaded scheduler); the others fit in-memory numpy. All predict the numpy test set.
* Reported per library: median fit and predict seconds over ``--repeats`` (default 3),
  test RMSE and its ratio to xgboost's (> 1: less accurate than xgboost), and daskboost's
  fit time as a ratio to the library's (< 1 means daskboost is faster).
* Threads: 2 for everyone; warm-up: an untimed 1,000-row fit per library (numba JIT).

Run from the repository root::

    python benchmarks/bench_regression.py --repeats 3
    python benchmarks/bench_regression.py --rows 20000 --repeats 1 --libraries daskboost,xgboost
    python benchmarks/bench_regression.py --output benchmarks/results/regression

``--output PATH`` writes ``PATH.json`` (configuration, every timing, versions) and
``PATH.md`` (the table) besides printing the table to stdout.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# common fixes OMP_NUM_THREADS (default 2) when imported, before numpy loads: import it first
from common import (REGRESSION_NOISE, Case, DataSummary, Metric, make_regression,  # noqa: E402
                    rmse, run_benchmark)


def describe_data(y_train, y_test, test_f):
    floor = rmse(y_test, test_f)
    r2 = 1.0 - floor ** 2 / float(y_test.var(dtype="float64"))
    line = (f"target mean {y_train.mean(dtype='float64'):.3f}, sd "
            f"{y_train.std(dtype='float64'):.3f} (train); true-function test RMSE "
            f"{floor:.4f}, R^2 {r2:.4f} (floor on complete features)")
    footnote = (f"Floor: the true function's test RMSE is {floor:.4f} (noise sd "
                f"{REGRESSION_NOISE:g}, complete features).")
    return DataSummary(line, [footnote], {"noise_sd": REGRESSION_NOISE, "true_test_rmse": floor,
                                          "true_test_r2": r2})


CASE = Case(name="bench_regression", title="regression", task="regression", doc=__doc__,
            make_data=make_regression, describe_data=describe_data,
            metrics=[Metric("rmse", "RMSE", rmse, versus="ratio")],
            default_rows=1_000_000, default_test_rows=200_000,
            config={"objective": "reg:squarederror"})


def main(argv=None):
    return run_benchmark(CASE, argv)


if __name__ == "__main__":
    sys.exit(main())
