"""Survival (accelerated failure time, ``survival:aft``): daskboost vs xgboost, the one
other library with the model (LightGBM and scikit-learn have none).

* Data: the regression benchmark's features (``common.make_regression``): ``--rows``
  (default 500,000) training rows x 28 float32 features (5% NaN), 100,000 test rows.
  Event times ``exp(f / 2 + noise)``; a third of the rows right-censored (only a lower
  bound known), a tenth interval-censored, the rest observed.  Seeded.
* Model: ``--rounds`` (default 100) rounds of depth-6 trees, learning rate 0.1, the
  normal distribution with scale 1, 256 bins, 2 threads each.
* daskboost fits from a parquet lake (``--files`` files, the bounds two columns of it,
  written untimed; the timed fit is ``dd.read_parquet`` -> ``fit`` on dask's local
  threaded scheduler); xgboost fits an in-memory ``DMatrix`` with the bounds (built
  inside the timing).  Warm-up: an untimed small fit per library (numba JIT).
* Reported per library: median fit seconds over ``--repeats`` (the contestants in a
  balanced order within each repeat), daskboost's fit time over the library's (< 1:
  daskboost is faster), and the test ``aft-nloglik``.

Run from the repository root::

    python benchmarks/bench_survival.py --repeats 3
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# common fixes OMP_NUM_THREADS (default 2) when imported, before numpy loads: import it first
from common import (FEATURE_NAMES, MAX_BIN, machine_info, make_regression,  # noqa: E402
                    timed_contestants, write_parquet_lake)

import argparse  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

LIBRARIES = ("daskboost", "xgboost")
BOUNDS = ("lower", "upper")
THREADS = 2
WARMUP_ROWS = 2000
PARAMS = {"objective": "survival:aft", "max_depth": 6, "learning_rate": 0.1,
          "max_bin": MAX_BIN, "aft_loss_distribution": "normal",
          "aft_loss_distribution_scale": 1.0}


def intervals(f, seed):
    """``(n, 2)`` float32 bounds of event times ``exp(f / 2 + noise)``: a third
    right-censored, a tenth interval-censored, the rest observed."""
    rng = np.random.default_rng(seed)
    time = np.exp(0.5 * f + 0.5 * rng.standard_normal(len(f)))
    lower, upper = time.copy(), time.copy()
    kind = rng.random(len(f))
    right = kind < 1 / 3
    lower[right] *= rng.uniform(0.3, 1.0, right.sum())
    upper[right] = np.inf
    interval = (kind >= 1 / 3) & (kind < 0.43)
    lower[interval] *= 0.8
    upper[interval] *= 1.25
    return np.column_stack([lower, upper]).astype(np.float32)


def contestant(name, lake, X, bounds, rounds):
    """``fit(small=False) -> margin(X)``, the model's log-times."""
    if name == "daskboost":
        import dask.dataframe as dd
        from daskboost import DaskBoostRegressor

        def fit(small=False):
            frame = dd.read_parquet(lake["small" if small else "full"])
            model = DaskBoostRegressor(n_estimators=rounds, **PARAMS)
            model.fit(frame[FEATURE_NAMES], frame[list(BOUNDS)])
            return lambda X_test: np.asarray(model.predict(X_test, output_margin=True))
        return fit
    if name == "xgboost":
        import xgboost as xgb
        rows = {True: slice(0, WARMUP_ROWS), False: slice(None)}

        def fit(small=False):
            part = rows[small]
            matrix = xgb.DMatrix(X[part], nthread=THREADS)
            matrix.set_float_info("label_lower_bound", bounds[part, 0])
            matrix.set_float_info("label_upper_bound", bounds[part, 1])
            model = xgb.train({**PARAMS, "tree_method": "hist", "nthread": THREADS}, matrix,
                              rounds)
            return lambda X_test: model.predict(xgb.DMatrix(X_test), output_margin=True)
        return fit
    raise ValueError(f"unknown library {name!r}")


def aft_nloglik(bounds, margin):
    from daskboost.survival import NORMAL, interval_losses
    b = bounds.astype(np.float64)
    return float(np.mean(interval_losses(b[:, 0], b[:, 1], margin.astype(np.float64),
                                         PARAMS["aft_loss_distribution_scale"], NORMAL)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--test-rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    X, _, f = make_regression(args.rows, args.seed)
    bounds = intervals(f, args.seed)
    X_test, _, f_test = make_regression(args.test_rows, args.seed + 100)
    bounds_test = intervals(f_test, args.seed + 100)
    with tempfile.TemporaryDirectory(prefix="bench_survival_") as tmp:
        lake = {"full": os.path.join(tmp, "full"), "small": os.path.join(tmp, "small")}
        write_parquet_lake(lake["full"], X, bounds, args.files, label_name=BOUNDS)
        write_parquet_lake(lake["small"], X[:WARMUP_ROWS], bounds[:WARMUP_ROWS], 1,
                           label_name=BOUNDS)
        fits = {n: contestant(n, lake, X, bounds, args.rounds) for n in LIBRARIES}
        table = timed_contestants(
            fits, args.repeats, lambda margin: aft_nloglik(bounds_test, margin(X_test)),
            "test aft-nloglik", lambda margin: margin(X_test[:10]))
    print()
    print(f"{args.rows:,} training rows x {X.shape[1]} ({np.isinf(bounds[:, 1]).mean():.0%} "
          f"right-censored), {args.test_rows:,} test rows, {args.rounds} rounds of depth 6; "
          f"{machine_info()['cpu_count']} CPUs")
    print(table)


if __name__ == "__main__":
    sys.exit(main())
