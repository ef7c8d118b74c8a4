"""Several quantiles at once: daskboost vs xgboost, lightgbm and scikit-learn.

* Data: ``--rows`` (default 500,000) training rows x 28 float32 features (5% NaN) and
  ``--test-rows`` (default 100,000) test rows: the regression benchmark's features and
  true function ``f``, with noise whose scale grows with |f|: ``y = f + (0.3 + 0.4 |f|)
  N(0, 1)``, so the quantiles spread apart where |f| is large. Seeded (``--seed``).
* Levels ``--levels`` (default 0.05, 0.5, 0.95). daskboost and xgboost fit one model
  with ``objective="reg:quantileerror", quantile_alpha=levels`` (one tree per level and
  round); lightgbm (``objective="quantile"``) and scikit-learn's HistGradientBoosting
  (``loss="quantile"``) fit one model per level, their only way.
* Model: 100 rounds, depth 6 (lightgbm: 64 leaves), learning rate 0.1, 256 bins (255
  for lightgbm and scikit-learn), L2 penalty 1, minimum child hessian 1; 2 threads each.
* daskboost fits from a parquet lake (``--files`` files, written untimed; the timed fit
  is ``dd.read_parquet`` -> ``fit`` on dask's local threaded scheduler); the others fit
  in-memory numpy. Warm-up: an untimed 1,000-row fit per library (numba JIT).
* Reported per library: median fit seconds over ``--repeats`` (the contestants in a
  balanced order within each repeat), daskboost's fit time over the library's (< 1:
  daskboost is faster), the test pinball loss averaged over the levels (xgboost's
  ``quantile`` metric) and the share of test labels at or below each level's prediction.

Run from the repository root::

    python benchmarks/bench_quantiles.py --repeats 3
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# common fixes OMP_NUM_THREADS (default 2) when imported, before numpy loads: import it first
from common import (FEATURE_NAMES, LABEL_NAME, LEARNING_RATE, MAX_BIN,  # noqa: E402
                    MAX_DEPTH, N_ESTIMATORS, WARMUP_ROWS, balanced_order, machine_info,
                    make_regression, markdown_table, median, parse_run_args, timed,
                    write_parquet_lake)

import argparse  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

LIBRARIES = ("daskboost", "xgboost", "lightgbm", "sklearn")
THREADS = 2


def make_data(n_rows, seed):
    X, _, f = make_regression(n_rows, seed)
    rng = np.random.default_rng(seed + 1)
    y = f + (0.3 + 0.4 * np.abs(f)) * rng.standard_normal(n_rows)
    return X, y.astype(np.float32)


def pinball(y, predictions, levels):
    """The pinball loss averaged over rows and levels (xgboost's ``quantile``)."""
    d = np.asarray(y, np.float64)[:, None] - np.asarray(predictions, np.float64)
    alpha = np.asarray(levels)[None, :]
    return float(np.maximum(alpha * d, (alpha - 1.0) * d).mean())


def contestant(name, levels, lake, X, y):
    """``fit(small=False) -> predict(X_test) -> (n, Q)``."""
    common = dict(n_estimators=N_ESTIMATORS, learning_rate=LEARNING_RATE)
    if name == "daskboost":
        import dask.dataframe as dd
        from daskboost import DaskBoostRegressor

        def fit(small=False):
            frame = dd.read_parquet(lake["small" if small else "full"])
            model = DaskBoostRegressor(objective="reg:quantileerror", quantile_alpha=levels,
                                       max_depth=MAX_DEPTH, max_bin=MAX_BIN, reg_lambda=1.0,
                                       min_child_weight=1.0, **common)
            model.fit(frame[FEATURE_NAMES], frame[LABEL_NAME])
            return lambda X_test: np.asarray(model.predict(X_test)).reshape(len(X_test), -1)
        return fit
    if name == "xgboost":
        import xgboost as xgb

        def fit(small=False):
            rows = slice(0, WARMUP_ROWS) if small else slice(None)
            model = xgb.XGBRegressor(objective="reg:quantileerror", quantile_alpha=levels,
                                     tree_method="hist", max_depth=MAX_DEPTH,
                                     max_bin=MAX_BIN, reg_lambda=1.0, min_child_weight=1.0,
                                     n_jobs=THREADS, **common)
            model.fit(X[rows], y[rows])
            return lambda X_test: np.asarray(model.predict(X_test)).reshape(len(X_test), -1)
        return fit
    if name == "lightgbm":
        import lightgbm as lgb
        return _one_model_per_level(levels, X, y, lambda a: lgb.LGBMRegressor(
            objective="quantile", alpha=a, num_leaves=64, max_depth=MAX_DEPTH,
            max_bin=MAX_BIN - 1, reg_lambda=1.0, min_child_weight=1.0, n_jobs=THREADS,
            verbose=-1, **common))
    if name == "sklearn":
        from sklearn.ensemble import HistGradientBoostingRegressor
        return _one_model_per_level(levels, X, y, lambda a: HistGradientBoostingRegressor(
            loss="quantile", quantile=a, max_iter=N_ESTIMATORS, max_depth=MAX_DEPTH,
            max_leaf_nodes=None, learning_rate=LEARNING_RATE, max_bins=MAX_BIN - 1,
            l2_regularization=1.0, early_stopping=False))
    raise ValueError(f"unknown library {name!r}")


def _one_model_per_level(levels, X, y, model_at):
    """``fit`` for a library with one quantile a model: ``model_at(level)`` each."""
    def fit(small=False):
        rows = slice(0, WARMUP_ROWS) if small else slice(None)
        models = [model_at(a).fit(X[rows], y[rows]) for a in levels]
        return lambda X_test: np.column_stack([m.predict(X_test) for m in models])
    return fit


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--test-rows", type=int, default=100_000)
    parser.add_argument("--levels", default="0.05,0.5,0.95")
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--libraries", default=",".join(LIBRARIES))
    args = parse_run_args(parser, LIBRARIES, argv)
    levels = [float(v) for v in args.levels.split(",")]
    names = args.libraries

    X, y = make_data(args.rows, args.seed)
    X_test, y_test = make_data(args.test_rows, args.seed + 100)
    with tempfile.TemporaryDirectory(prefix="bench_quantiles_") as tmp:
        lake = {"full": os.path.join(tmp, "full"), "small": os.path.join(tmp, "small")}
        write_parquet_lake(lake["full"], X, y, args.files)
        write_parquet_lake(lake["small"], X[:WARMUP_ROWS], y[:WARMUP_ROWS], 1)
        fits = {n: contestant(n, levels, lake, X, y) for n in names}
        for n in names:
            fits[n](small=True)(X_test[:10])
        seconds = {n: [] for n in names}
        scores = {}
        for repeat in range(args.repeats):
            for n in balanced_order(names, repeat):
                predict, wall, cpu = timed(fits[n])
                seconds[n].append(wall)
                p = predict(X_test)
                scores[n] = (pinball(y_test, p, levels),
                             [float(np.mean(y_test <= p[:, k])) for k in range(len(levels))])
                print(f"repeat {repeat} {n}: fit {wall:.2f} s (CPU {cpu:.2f} s), "
                      f"test pinball {scores[n][0]:.5f}", flush=True)
    medians = {n: median(v) for n, v in seconds.items()}
    header = ["library", "fit s (median)", "daskboost ÷ library", "test pinball loss",
              *[f"share ≤ q{a:g}" for a in levels]]
    rows = [[n, f"{medians[n]:.2f}",
             "" if n == "daskboost" or "daskboost" not in medians
             else f"{medians['daskboost'] / medians[n]:.2f}",
             f"{scores[n][0]:.5f}", *[f"{s:.3f}" for s in scores[n][1]]] for n in names]
    print()
    print(f"{args.rows:,} training rows x {X.shape[1]}, {args.test_rows:,} test rows, levels "
          f"{levels}, {N_ESTIMATORS} rounds, depth {MAX_DEPTH}; {machine_info()['cpu_count']} "
          "CPUs")
    print(markdown_table(header, rows))


if __name__ == "__main__":
    sys.exit(main())
