"""Cross-validation benchmark: ``daskboost.cv`` against five separate fits on the folds.

What it measures, side by side in one process and one run:

* Data: the regression task of bench_regression.py (``--task regression``, the
  default: ``common.make_regression``, RMSE) or the binary one (``--task binary``:
  ``common.make_binary``, logloss): ``--rows`` (default 1,000,000) rows x 28 float32
  features, 5% of the values NaN, written as a parquet lake of ``--files`` (default 8)
  files with one more column, ``fold``: the fold of each row (``daskboost.cv_folds``
  with ``--nfold`` (default 5) and the fold seed 0, the folds ``cv`` deals).
* Model: ``--rounds`` (default 100) rounds, depth 6, learning rate 0.1, 256 bins, L2
  penalty 1, minimum child hessian 1, the objective's default metric.
* Contestants, each reading ``dd.read_parquet(lake)`` (the read is timed) on dask's
  local threaded scheduler:

  - ``cv``: ``daskboost.cv(params, ddf[features], ddf[label], nfold)``: per round each
    fold's metric on its training rows and on its held-out rows;
  - ``fits + train/test eval``: for each fold, a fit on the rows of the other folds
    (``ddf[ddf.fold != f]``) with ``eval_set=[(those rows), (fold f's rows)]``: the same
    numbers as ``cv`` (what xgboost's ``cv`` does, fold by fold);
  - ``fits + test eval``: the same fits with ``eval_set=[(fold f's rows)]`` only;
  - ``fits``: the same fits without eval sets (training alone);
  - ``xgboost.cv``: ``pd.read_parquet(lake)`` (timed), a ``DMatrix``, then
    ``xgboost.cv`` with the same folds (the lake's ``fold`` column), ``tree_method="hist"``
    and the same parameters: per round each fold's metric on its training and held-out
    rows, as ``cv``;
  - ``lightgbm.cv``: the same read, a ``Dataset`` (binned once for all folds, as ``cv``),
    ``lightgbm.cv`` with the same folds and ``eval_train_metric=True`` (leaf-wise,
    capped at depth 6 and 64 leaves; ``max_bin=255``, ``min_data_in_leaf=1``);
  - ``scikit-learn cross_validate``: the same read, ``cross_validate`` of
    ``HistGradientBoostingRegressor`` / ``Classifier`` (100 iterations, no early stopping,
    ``max_bins=255``) with the same folds (the same index pairs) and
    ``return_train_score=True``: the last round's scores only, no per-round metrics.

  The fits' times are summed over the folds (fold data selection inside the timed
  fit, as a user would write it: the filter is lazy).
* Repeats (``--repeats``, default 3) go round-robin over the contestants; reported
  per contestant: the median seconds, and ``cv``'s time as a ratio of each (< 1: cv
  is faster). A check: ``cv``'s last mean test metric against the mean of the
  ``fits + train/test eval`` folds' last test metric (the same models up to the
  order of float sums, since the fits' bins come from their own rows: close, not
  equal).
* ``--memory-budget`` (e.g. ``32MB``): every daskboost contestant out of core with that
  budget (``cv`` streams the spilled blocks once per level for all the folds, each fit once
  per level for its own rows; the other libraries have no out-of-core mode and are left
  out); ``--contestants cv,fits``: a subset (``cv`` first).
* Threads: 2 (``OMP_NUM_THREADS``; dask's threaded scheduler uses the cores); an untimed
  warm-up of every contestant on a 2,000-row lake first (numba JIT or its cache).

Run from the repository root::

    python benchmarks/bench_cv.py                      # 1M rows, regression, 3 repeats
    python benchmarks/bench_cv.py --task binary
    python benchmarks/bench_cv.py --rows 200000 --repeats 3
    python benchmarks/bench_cv.py --memory-budget 32MB --contestants cv,fits
    python benchmarks/bench_cv.py --output benchmarks/results/cv

``--output PATH`` writes ``PATH.json`` (configuration, every timing, versions) and
``PATH.md`` (the table) besides printing the table to stdout.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# common fixes OMP_NUM_THREADS (default 2) when imported, before numpy loads: import it first
from common import (FEATURE_NAMES, LABEL_NAME, LEARNING_RATE, MAX_BIN, MAX_DEPTH,  # noqa: E402
                    N_THREADS, machine_info, make_binary, make_regression, markdown_table,
                    median, timed, write_parquet_lake, write_results)

import argparse  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

FOLD_SEED = 0
TASKS = {"regression": (make_regression, "rmse"), "binary": (make_binary, "logloss")}
DASKBOOST_CONTESTANTS = ("cv", "fits + train/test eval", "fits + test eval", "fits")
LIBRARY_CONTESTANTS = ("xgboost.cv", "lightgbm.cv", "scikit-learn cross_validate")
CONTESTANTS = DASKBOOST_CONTESTANTS + LIBRARY_CONTESTANTS
LIBRARY_METRICS = {"rmse": ("rmse", "rmse", "neg_root_mean_squared_error"),
                   "logloss": ("logloss", "binary_logloss", "neg_log_loss")}
WARMUP_ROWS = 2000


def write_lake(directory, X, y, folds, n_files):
    """The parquet lake of (X, y) with the ``fold`` column."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    write_parquet_lake(directory, X, y, n_files)
    for path in sorted(Path(directory).glob("part-*.parquet")):  # add the fold column
        table = pq.read_table(path)
        start = int(path.stem.split("-")[1])
        bounds = np.linspace(0, X.shape[0], n_files + 1).astype(np.int64)
        rows = folds[bounds[start]:bounds[start + 1]]
        pq.write_table(table.append_column("fold", pa.array(rows)), path)


def contestants(task, nfold, rounds, lake, memory_budget=None):
    """{name: callable(lake) -> (mean test metric of the folds at the last round)};
    ``memory_budget``: every contestant's (out of core: ``cv`` streams the spilled blocks
    once per level for all folds, each fit once per level for its own)."""
    import dask.dataframe as dd
    import daskboost
    from daskboost import DaskBoostClassifier, DaskBoostRegressor

    metric = TASKS[task][1]
    params = dict(max_depth=MAX_DEPTH, learning_rate=LEARNING_RATE, max_bin=MAX_BIN,
                  reg_lambda=1.0, gamma=0.0, min_child_weight=1.0)
    if task == "binary":
        params["objective"] = "binary:logistic"
    if memory_budget is not None:
        params["memory_budget"] = memory_budget
    model_class = DaskBoostClassifier if task == "binary" else DaskBoostRegressor

    def run_cv(path, n_rounds=rounds):
        ddf = dd.read_parquet(path)
        frame = daskboost.cv(params, ddf[FEATURE_NAMES], ddf[LABEL_NAME], nfold=nfold,
                             num_boost_round=n_rounds, seed=FOLD_SEED)
        return float(frame[f"test-{metric}-mean"].iloc[-1])

    def run_fits(evals, path, n_rounds=rounds):
        ddf = dd.read_parquet(path)
        last = []
        for f in range(nfold):
            train, test = ddf[ddf["fold"] != f], ddf[ddf["fold"] == f]
            eval_set = {"train/test": [(train[FEATURE_NAMES], train[LABEL_NAME]),
                                       (test[FEATURE_NAMES], test[LABEL_NAME])],
                        "test": [(test[FEATURE_NAMES], test[LABEL_NAME])],
                        None: None}[evals]
            model = model_class(n_estimators=n_rounds, eval_metric=metric, **params)
            model.fit(train[FEATURE_NAMES], train[LABEL_NAME], eval_set=eval_set)
            if evals:
                last.append(model.evals_result()[f"validation_{len(eval_set) - 1}"][metric][-1])
        return float(np.mean(last)) if last else None

    return {"cv": run_cv,
            "fits + train/test eval": lambda path, **kw: run_fits("train/test", path, **kw),
            "fits + test eval": lambda path, **kw: run_fits("test", path, **kw),
            "fits": lambda path, **kw: run_fits(None, path, **kw),
            **library_contestants(task, nfold, rounds)}, params


def _read_lake(path, nfold):
    """The lake in memory (pandas, as a user of the other libraries reads it): the
    features, the label, and the folds as ``(training rows, held-out rows)`` pairs."""
    import pandas as pd
    frame = pd.read_parquet(path)
    fold = frame["fold"].to_numpy()
    folds = [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(nfold)]
    return frame[FEATURE_NAMES], frame[LABEL_NAME].to_numpy(), folds


def library_contestants(task, nfold, rounds):
    """xgboost's and LightGBM's ``cv`` and scikit-learn's ``cross_validate`` on the same
    lake, folds and parameters: {name: callable(lake) -> mean test metric, last round}."""
    xgboost_metric, lightgbm_metric, sklearn_scoring = LIBRARY_METRICS[TASKS[task][1]]

    def run_xgboost(path, n_rounds=rounds):
        import xgboost
        X, y, folds = _read_lake(path, nfold)
        params = dict(tree_method="hist", max_depth=MAX_DEPTH, eta=LEARNING_RATE,
                      max_bin=MAX_BIN, reg_lambda=1.0, gamma=0.0, min_child_weight=1.0,
                      nthread=N_THREADS, eval_metric=xgboost_metric,
                      objective="binary:logistic" if task == "binary" else "reg:squarederror")
        frame = xgboost.cv(params, xgboost.DMatrix(X, y, nthread=N_THREADS),
                           num_boost_round=n_rounds, folds=folds)
        return float(frame[f"test-{xgboost_metric}-mean"].iloc[-1])

    def run_lightgbm(path, n_rounds=rounds):
        import lightgbm
        X, y, folds = _read_lake(path, nfold)
        params = dict(objective="binary" if task == "binary" else "regression",
                      metric=lightgbm_metric, max_depth=MAX_DEPTH, num_leaves=2 ** MAX_DEPTH,
                      learning_rate=LEARNING_RATE, max_bin=MAX_BIN - 1, lambda_l2=1.0,
                      min_gain_to_split=0.0, min_sum_hessian_in_leaf=1.0, min_data_in_leaf=1,
                      num_threads=N_THREADS, verbose=-1)
        scores = lightgbm.cv(params, lightgbm.Dataset(X, y, params={"max_bin": MAX_BIN - 1}),
                             num_boost_round=n_rounds, folds=folds, stratified=False,
                             eval_train_metric=True)
        return float(scores[f"valid {lightgbm_metric}-mean"][-1])

    def run_sklearn(path, n_rounds=rounds):
        from sklearn.ensemble import (HistGradientBoostingClassifier,
                                      HistGradientBoostingRegressor)
        from sklearn.model_selection import cross_validate
        X, y, folds = _read_lake(path, nfold)
        model_class = (HistGradientBoostingClassifier if task == "binary"
                       else HistGradientBoostingRegressor)
        model = model_class(max_iter=n_rounds, max_depth=MAX_DEPTH,
                            max_leaf_nodes=2 ** MAX_DEPTH, learning_rate=LEARNING_RATE,
                            max_bins=MAX_BIN - 1, early_stopping=False, l2_regularization=1.0,
                            min_samples_leaf=1, random_state=0)
        scores = cross_validate(model, X, y, cv=folds, scoring=sklearn_scoring,
                                return_train_score=True)
        return float(-np.mean(scores["test_score"]))

    return {"xgboost.cv": run_xgboost, "lightgbm.cv": run_lightgbm,
            "scikit-learn cross_validate": run_sklearn}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows (all folds)")
    parser.add_argument("--task", choices=sorted(TASKS), default="regression")
    parser.add_argument("--nfold", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--files", type=int, default=8, help="parquet files in the lake")
    parser.add_argument("--repeats", type=int, default=3, help="median of this many runs")
    parser.add_argument("--seed", type=int, default=0, help="data seed")
    parser.add_argument("--memory-budget", default=None,
                        help="every contestant's memory_budget (e.g. 64MB: out of core)")
    parser.add_argument("--contestants", default=None,
                        help=f"comma-separated, among {', '.join(CONTESTANTS)} (cv first; "
                             "default: all of them, daskboost's alone with --memory-budget)")
    parser.add_argument("--output", default=None,
                        help="write PATH.json and PATH.md with the results")
    args = parser.parse_args(argv)
    if args.rows < 10 * WARMUP_ROWS or args.nfold < 2 or args.rounds < 1 or args.repeats < 1:
        parser.error(f"need --rows >= {10 * WARMUP_ROWS}, --nfold >= 2, --rounds >= 1, "
                     "--repeats >= 1")
    if args.contestants is None:
        args.contestants = ",".join(DASKBOOST_CONTESTANTS if args.memory_budget
                                    else CONTESTANTS)
    chosen = [name.strip() for name in args.contestants.split(",")]
    if chosen[0] != "cv" or any(name not in CONTESTANTS for name in chosen):
        parser.error(f"--contestants={args.contestants!r}: cv first, then any of "
                     f"{', '.join(CONTESTANTS[1:])}")
    if args.memory_budget and set(chosen) & set(LIBRARY_CONTESTANTS):
        parser.error(f"--memory-budget={args.memory_budget!r}: out of core is daskboost's "
                     f"alone; choose among {', '.join(DASKBOOST_CONTESTANTS)}")
    from daskboost import cv_folds

    info = machine_info()
    make_data, metric = TASKS[args.task]
    print(f"# daskboost cv benchmark: {args.rows:,} rows x {len(FEATURE_NAMES)} float32 "
          f"features (5% NaN), {args.task}, {args.nfold} folds, {args.rounds} rounds, depth "
          f"{MAX_DEPTH}, metric {metric}; repeats {args.repeats} (median)"
          + (f"; memory_budget {args.memory_budget}" if args.memory_budget else ""), flush=True)
    X, y, _ = make_data(args.rows, seed=args.seed)
    results = {name: {"fit_s": [], "fit_cpu_s": [], "test_metric": []} for name in chosen}
    with tempfile.TemporaryDirectory(prefix="daskboost-bench-cv-") as tmp:
        lake, warmup = Path(tmp) / "lake", Path(tmp) / "warmup"
        write_lake(lake, X, y, cv_folds(args.rows, args.nfold, seed=FOLD_SEED), args.files)
        write_lake(warmup, X[:WARMUP_ROWS], y[:WARMUP_ROWS],
                   cv_folds(WARMUP_ROWS, args.nfold, seed=FOLD_SEED), 2)
        del X, y
        runs, params = contestants(args.task, args.nfold, args.rounds, lake,
                                   args.memory_budget)
        runs = {name: runs[name] for name in chosen}
        for name, run in runs.items():  # untimed warm-up
            run(warmup, n_rounds=2)
        for repeat in range(args.repeats):
            for name, run in runs.items():
                value, seconds, cpu = timed(run, lake)
                results[name]["fit_s"].append(seconds)
                results[name]["fit_cpu_s"].append(cpu)
                results[name]["test_metric"].append(value)
                shown = "" if value is None else f", mean test {metric} {value:.5f}"
                print(f"# repeat {repeat + 1}/{args.repeats} {name}: {seconds:.2f} s "
                      f"(cpu {cpu:.2f} s){shown}", flush=True)

    cv_s = median(results["cv"]["fit_s"])
    rows = []
    for name, result in results.items():
        result["fit_s_median"] = median(result["fit_s"])
        result["cv_ratio"] = cv_s / result["fit_s_median"]
        value = result["test_metric"][-1]
        rows.append([name, f"{result['fit_s_median']:.2f}", f"{result['cv_ratio']:.2f}",
                     "" if value is None else f"{value:.5f}"])
    evaluated = [name for name in results if results[name]["test_metric"][-1] is not None
                 and name in DASKBOOST_CONTESTANTS[1:]]
    lines = [markdown_table(["contestant", "seconds (median)", "cv ÷ contestant",
                             f"mean test {metric}, last round"], rows), ""]
    budget = (f"memory_budget {args.memory_budget} for every contestant; "
              if args.memory_budget else "")
    lines.append(f"{args.rows:,} rows x {len(FEATURE_NAMES)} features (5% NaN), "
                 f"{args.task}, {args.nfold} folds, {args.rounds} rounds, depth "
                 f"{MAX_DEPTH}; median of {args.repeats} run(s) going round-robin; {budget}"
                 f"{N_THREADS} threads; every contestant reads the {args.files}-file "
                 "parquet lake with dd.read_parquet (timed).")
    lines.append("cv ÷ contestant < 1: cv is faster. 'fits' are one fit per fold on the "
                 "rows of the other folds, times summed over the folds. xgboost.cv, "
                 "lightgbm.cv and cross_validate read the lake with pandas.read_parquet "
                 "(timed) and use the same folds.")
    if evaluated:
        check = abs(results["cv"]["test_metric"][-1] - results[evaluated[0]]["test_metric"][-1])
        lines.append(f"cv's mean test {metric} differs from the separate fits' by "
                     f"{check:.2e} (their bins come from their own rows).")
    markdown = "\n".join(lines)
    print()
    print(markdown)
    if args.output:
        config = {"rows": args.rows, "task": args.task, "nfold": args.nfold,
                  "rounds": args.rounds, "files": args.files, "repeats": args.repeats,
                  "seed": args.seed, "fold_seed": FOLD_SEED, "threads": N_THREADS,
                  "memory_budget": args.memory_budget, "contestants": chosen,
                  "params": params, "metric": metric}
        write_results(args.output, "bench_cv", config, info, results, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
