"""Distributed benchmark: daskboost vs lightgbm.dask and xgboost.dask on one LocalCluster.

What it measures, in one process and one run, on one cluster shared by all contestants:

* Cluster: ``distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
  dashboard_address=None)`` with a ``distributed.Client``: two worker processes of one
  thread each (the reference machine has 2 cores). The workers are started with
  OMP_NUM_THREADS=1 (this process keeps common.py's 2), lightgbm.dask sets
  ``num_threads`` to each worker's thread count (1) and xgboost.dask uses the worker's
  thread count too, so every library trains on 2 threads in all.
* Data: the binary task of bench_binary.py (``common.make_binary``): ``--rows`` (default
  1,000,000) training rows x 28 float32 features, 5% of the values NaN, and a separate
  ``--test-rows`` (default 200,000) in-memory test set (seeds ``2 * --seed`` and
  ``2 * --seed + 1``, as in bench_binary.py). The training rows are written (untimed)
  as a parquet lake of ``--files`` (default 8) files in a temporary directory.
* Model: ``--rounds`` (default 100) trees, depth 6, learning rate 0.1, 256 bins (255 for
  lightgbm, its comparable setting), L2 penalty 1, minimum child hessian 1, the settings
  of bench_binary.py / common.py mapped onto each library's dask estimator:

  - daskboost: ``DaskBoostClassifier(n_estimators, max_depth=6, learning_rate=0.1,
    max_bin=256, reg_lambda=1, gamma=0, min_child_weight=1)``; it runs on the active
    Client by itself.
  - lightgbm: ``lightgbm.DaskLGBMClassifier(client=client, ...)`` with the parameters
    of ``common.make_lightgbm`` (``num_leaves=64``, ``max_bin=255``,
    ``min_child_weight=1``, ``min_child_samples=1``, ``reg_lambda=1``), minus
    ``n_jobs`` (lightgbm.dask sets the thread count per worker).
  - xgboost: ``xgboost.dask.DaskXGBClassifier(tree_method="hist", max_bin=256, ...)``
    with ``client`` set to the Client.

* Timed fit, the same for every library: ``ddf = dd.read_parquet(lake)`` ->
  ``estimator.fit(ddf[features], ddf["label"])``, so reading the parquet lake on the
  workers is part of every fit time. For lightgbm and xgboost the frame is
  ``.persist()``-ed before the column selection (they persist their inputs anyway):
  selected separately, the one label column's small parquet reads get fused by dask
  into fewer partitions than the 28 features', which their dask APIs reject
  ("Partitions between X and label are not consistent"); daskboost takes the two
  selections as they are.
* Test AUC: each fitted model predicts the in-memory 200k-row test set in the client
  process: daskboost ``model.predict_proba(X_test)[:, 1]`` on the numpy array,
  lightgbm ``model.to_local().predict_proba(X_test_df)[:, 1]`` and xgboost
  ``model.get_booster().inplace_predict(X_test_df)`` on a pandas DataFrame with the
  feature names (the models were trained on named columns).
* Reported per library: median fit seconds over ``--repeats`` runs (default 3; the
  repeats go round-robin over the libraries so slow drifts of a shared machine hit all
  of them), the workers' CPU seconds during the fit (summed over both workers; near 2 x
  wall when both are busy), test AUC, and daskboost's fit time as a ratio to the
  library's (< 1 means daskboost is faster). A library that fails gets its error in its
  table row and the others still run.
* Warm-up (untimed): before timing, every library fits 3 trees on a 1,000-row lake of
  ``--files`` files (so both workers run tasks: numba JIT or cache loading for
  daskboost, first-call overheads and network setup for the others).

Run from the repository root::

    python benchmarks/bench_distributed.py --repeats 3
    python benchmarks/bench_distributed.py --rows 20000 --rounds 3 --repeats 1
    python benchmarks/bench_distributed.py --libraries daskboost,xgboost \\
        --output benchmarks/results/distributed

``--output PATH`` writes ``PATH.json`` (configuration, every timing, versions) and
``PATH.md`` (the table) besides printing the table to stdout.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# common fixes OMP_NUM_THREADS (default 2) when imported, before numpy loads: import it first
from common import (FEATURE_NAMES, LABEL_NAME, LEARNING_RATE, MAX_BIN, MAX_DEPTH,  # noqa: E402
                    N_ESTIMATORS, QUANTIZED, QUANTIZED_PARAMS, FLOAT, FLOAT_PARAMS,
                    DASKBOOST_VARIANTS, WARMUP_GRADIENTS, WARMUP_ROWS, add_run_options,
                    fit_ratios, machine_info, make_binary, markdown_table, median,
                    parse_run_args, roc_auc, timed, write_parquet_lake, write_results)

import argparse  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

LIBRARIES = ("daskboost", QUANTIZED, FLOAT, "lightgbm", "xgboost")
N_WORKERS = 2
THREADS_PER_WORKER = 1
WARMUP_ROUNDS = 3


# ---- the contestants ----------------------------------------------------------------------
# Each ``make_*(client, rounds)`` returns (params, fit, predict, notes): ``fit(lake_dir,
# **overrides)`` reads the lake with dd.read_parquet and returns the fitted estimator,
# ``predict(model, X_test, X_test_df)`` returns P(label = 1) for the in-memory test set.

def _read_lake(lake_dir, persist=False):
    """``(X, y)`` of the lake: dd.read_parquet and column selection.

    ``persist=True`` persists the whole frame first (for lightgbm.dask and xgboost.dask,
    which persist their inputs anyway): projecting the 28 feature columns and the label
    column separately lets dask fuse the label's small parquet reads into fewer
    partitions than the features', and those libraries need equal partitions in X and y.
    """
    import dask.dataframe as dd
    ddf = dd.read_parquet(str(lake_dir))
    if persist:
        ddf = ddf.persist()
    return ddf[FEATURE_NAMES], ddf[LABEL_NAME]


def make_daskboost(client, rounds, extra_params=None):
    from daskboost import DaskBoostClassifier

    params = dict(n_estimators=rounds, max_depth=MAX_DEPTH, learning_rate=LEARNING_RATE,
                  max_bin=MAX_BIN, reg_lambda=1.0, gamma=0.0, min_child_weight=1.0,
                  **(extra_params or {}))

    def fit(lake_dir, **overrides):
        X, y = _read_lake(lake_dir)
        return DaskBoostClassifier(**{**params, **overrides}).fit(X, y)

    def predict(model, X_test, X_test_df):
        return model.predict_proba(X_test)[:, 1]

    notes = ["fit = dd.read_parquet + column selection + fit, on the active Client",
             "test predictions: predict_proba on the in-memory numpy test set"]
    return params, fit, predict, notes


def make_lightgbm(client, rounds):
    import warnings

    import lightgbm

    # lightgbm.dask drops the sklearn API's n_jobs (threads = the worker's) with a warning
    warnings.filterwarnings("ignore", message="Parameter n_jobs will be ignored")

    # as common.make_lightgbm, without n_jobs: lightgbm.dask overrides num_threads with
    # each worker's thread count (and warns about an explicit one)
    params = dict(n_estimators=rounds, max_depth=MAX_DEPTH, num_leaves=2 ** MAX_DEPTH,
                  learning_rate=LEARNING_RATE, max_bin=MAX_BIN - 1, min_child_weight=1.0,
                  min_child_samples=1, reg_lambda=1.0, min_split_gain=0.0, verbose=-1)

    def fit(lake_dir, **overrides):
        X, y = _read_lake(lake_dir, persist=True)
        return lightgbm.DaskLGBMClassifier(client=client, **{**params, **overrides}).fit(X, y)

    def predict(model, X_test, X_test_df):
        return model.to_local().predict_proba(X_test_df)[:, 1]

    notes = ["lightgbm.DaskLGBMClassifier; max_bin=255 is the setting comparable to "
             "xgboost's max_bin=256",
             "leaf-wise growth, capped by max_depth=6 and num_leaves=64",
             "min_child_weight=1 (min_sum_hessian_in_leaf), min_child_samples=1",
             f"num_threads per worker set by lightgbm.dask ({THREADS_PER_WORKER})",
             "test predictions: to_local().predict_proba on a pandas DataFrame"]
    return params, fit, predict, notes


def make_xgboost(client, rounds):
    import xgboost
    import xgboost.dask

    params = dict(tree_method="hist", n_estimators=rounds, max_depth=MAX_DEPTH,
                  learning_rate=LEARNING_RATE, max_bin=MAX_BIN)

    def fit(lake_dir, **overrides):
        X, y = _read_lake(lake_dir, persist=True)
        model = xgboost.dask.DaskXGBClassifier(**{**params, **overrides})
        model.client = client
        return model.fit(X, y)

    def predict(model, X_test, X_test_df):
        booster = model.get_booster()
        booster.set_param({"nthread": 2})
        return np.asarray(booster.inplace_predict(X_test_df))

    notes = ["xgboost.dask.DaskXGBClassifier; defaults kept: reg_lambda=1, gamma=0, "
             "min_child_weight=1",
             "threads per worker: the worker's thread count (1)",
             "test predictions: get_booster().inplace_predict on a pandas DataFrame"]
    return params, fit, predict, notes


MAKERS = {"daskboost": make_daskboost,
          QUANTIZED: lambda client, rounds: make_daskboost(client, rounds, QUANTIZED_PARAMS),
          FLOAT: lambda client, rounds: make_daskboost(client, rounds, FLOAT_PARAMS),
          "lightgbm": make_lightgbm, "xgboost": make_xgboost}


# ---- command line -------------------------------------------------------------------------

def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="training rows")
    parser.add_argument("--test-rows", type=int, default=200_000, help="test rows")
    parser.add_argument("--rounds", type=int, default=N_ESTIMATORS, help="trees (boosting rounds)")
    parser.add_argument("--files", type=int, default=8, help="parquet files in the training lake")
    add_run_options(parser, LIBRARIES)
    args = parse_run_args(parser, LIBRARIES, argv)
    if (args.rows < 2 * WARMUP_ROWS or args.test_rows < 100 or args.repeats < 1
            or args.files < 1 or args.rounds < 1):
        parser.error(f"need --rows >= {2 * WARMUP_ROWS}, --test-rows >= 100, --repeats >= 1, "
                     "--files >= 1, --rounds >= 1")
    return args


def _fmt(value, digits):
    return "n/a" if value is None else f"{value:.{digits}f}"


@contextlib.contextmanager
def _worker_threads_env():
    """Start the cluster with OMP_NUM_THREADS=THREADS_PER_WORKER: the nanny copies
    OMP_NUM_THREADS from os.environ into the workers (it beats distributed's own
    ``pre-spawn-environ`` setting of 1), and common.py set it to 2 for this process."""
    old = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = str(THREADS_PER_WORKER)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = old


def _worker_cpu(client):
    """Sum over the workers of their processes' CPU seconds (all threads)."""
    return float(sum(client.run(time.process_time).values()))


def _error_cell(error):
    """The last line of a traceback, short enough for a table cell."""
    last = error.strip().splitlines()[-1] if error.strip() else "error"
    last = last.replace("|", "/")
    return "FAILED: " + (last if len(last) <= 120 else last[:117] + "...")


# ---- the benchmark ------------------------------------------------------------------------

def main(argv=None):
    args = parse_args(argv)
    info = machine_info()
    print(f"# daskboost distributed benchmark: {args.rows:,} train rows x {len(FEATURE_NAMES)} "
          f"float32 features (5% NaN), {args.test_rows:,} test rows", flush=True)
    print(f"# {args.rounds} trees, depth {MAX_DEPTH}, learning_rate {LEARNING_RATE}, max_bin "
          f"{MAX_BIN} (lightgbm: 255), repeats {args.repeats} (median), seed {args.seed}; "
          f"LocalCluster {N_WORKERS} worker processes x {THREADS_PER_WORKER} thread",
          flush=True)

    import pandas as pd
    import dask
    import dask.dataframe as dd
    import distributed

    start = time.perf_counter()
    X_train, y_train, _ = make_binary(args.rows, seed=2 * args.seed)
    X_test, y_test, test_logit = make_binary(args.test_rows, seed=2 * args.seed + 1)
    X_test_df = pd.DataFrame(X_test, columns=FEATURE_NAMES)
    true_auc = roc_auc(y_test, test_logit)
    print(f"# data generated in {time.perf_counter() - start:.1f} s; positives: train "
          f"{y_train.mean():.3f}, test {y_test.mean():.3f}; true-logit test AUC "
          f"{true_auc:.4f} (ceiling on complete features)", flush=True)
    X_small, y_small = X_train[:WARMUP_ROWS], y_train[:WARMUP_ROWS]

    results = {}
    lake = None
    cluster_info = None
    with tempfile.TemporaryDirectory(prefix="daskboost-bench-dist-") as tmp:
        lake_dir, warmup_dir = Path(tmp) / "train", Path(tmp) / "warmup"
        start = time.perf_counter()
        size = write_parquet_lake(lake_dir, X_train, y_train, args.files)
        write_parquet_lake(warmup_dir, X_small, y_small, args.files)
        npartitions = dd.read_parquet(str(lake_dir)).npartitions
        lake = {"files": args.files, "bytes": size, "npartitions": npartitions}
        print(f"# parquet lake: {args.files} files, {size / 2**20:.0f} MiB, {npartitions} dask "
              f"partitions, written in {time.perf_counter() - start:.1f} s (untimed)",
              flush=True)
        del X_train, y_train
        gc.collect()

        start = time.perf_counter()
        with _worker_threads_env(), \
                distributed.LocalCluster(n_workers=N_WORKERS,
                                         threads_per_worker=THREADS_PER_WORKER,
                                         processes=True, dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            worker_env = client.run(lambda: {k: os.environ.get(k) for k in
                                             ("OMP_NUM_THREADS", "MKL_NUM_THREADS")})
            cluster_info = {"n_workers": N_WORKERS, "threads_per_worker": THREADS_PER_WORKER,
                            "processes": True, "worker_env": list(worker_env.values()),
                            "scheduler": str(dask.config.get("scheduler", None))}
            print(f"# LocalCluster up in {time.perf_counter() - start:.1f} s; worker env "
                  f"{list(worker_env.values())[0]}", flush=True)

            contestants = {}
            for name in args.libraries:
                results[name] = {"params": None, "notes": [], "fit_s": [], "fit_cpu_s": [],
                                 "worker_cpu_s": [], "predict_s": [], "auc": [],
                                 "error": None}
                try:
                    contestants[name] = MAKERS[name](client, args.rounds)
                    params, _, _, notes = contestants[name]
                    results[name]["params"] = {k: v for k, v in params.items()}
                    results[name]["notes"] = notes
                except Exception:
                    results[name]["error"] = traceback.format_exc()
                    print(f"# {name} setup FAILED:\n{results[name]['error']}", flush=True)

            # untimed warm-up: numba JIT/caches for daskboost, first-call overheads for others
            for name, (_, fit, predict, _) in contestants.items():
                if results[name]["error"] is not None:
                    continue
                try:
                    for gradients in WARMUP_GRADIENTS if name in DASKBOOST_VARIANTS else [{}]:
                        model, seconds, _ = timed(fit, warmup_dir, n_estimators=WARMUP_ROUNDS,
                                                  **gradients)
                        predict(model, X_small, X_test_df.iloc[:WARMUP_ROWS])
                    print(f"# warm-up {name}: {seconds:.1f} s (untimed)", flush=True)
                except Exception:
                    results[name]["error"] = traceback.format_exc()
                    print(f"# warm-up {name} FAILED:\n{results[name]['error']}", flush=True)
                finally:
                    model = None
                    gc.collect()
                    client.run(gc.collect)

            for repeat in range(args.repeats):
                for name, (_, fit, predict, _) in contestants.items():
                    result = results[name]
                    if result["error"] is not None:
                        continue
                    try:
                        cpu_before = _worker_cpu(client)
                        model, fit_s, fit_cpu_s = timed(fit, lake_dir)
                        worker_cpu_s = _worker_cpu(client) - cpu_before
                        proba, predict_s, _ = timed(predict, model, X_test, X_test_df)
                        auc = roc_auc(y_test, proba)
                    except Exception:
                        result["error"] = traceback.format_exc()
                        print(f"# {name} FAILED (repeat {repeat + 1}):\n{result['error']}",
                              flush=True)
                        continue
                    finally:
                        model = proba = None
                        gc.collect()
                        client.run(gc.collect)
                    result["fit_s"].append(fit_s)
                    result["fit_cpu_s"].append(fit_cpu_s)
                    result["worker_cpu_s"].append(worker_cpu_s)
                    result["predict_s"].append(predict_s)
                    result["auc"].append(auc)
                    print(f"# repeat {repeat + 1}/{args.repeats} {name}: fit {fit_s:.2f} s "
                          f"(workers' cpu {worker_cpu_s:.2f} s, client cpu {fit_cpu_s:.2f} s), "
                          f"predict {predict_s:.3f} s, AUC {auc:.4f}", flush=True)

    # ---- summary ------------------------------------------------------------------------
    for result in results.values():
        ok = result["error"] is None and bool(result["fit_s"])
        result["fit_s_median"] = median(result["fit_s"]) if ok else None
        result["worker_cpu_s_median"] = median(result["worker_cpu_s"]) if ok else None
        result["predict_s_median"] = median(result["predict_s"]) if ok else None
        result["test_auc"] = median(result["auc"]) if ok else None
    ours = fit_ratios(results)

    header = (["library", "fit s (median)", "workers' cpu s", "test AUC"]
              + [f"{name} fit ratio" for name in ours])
    rows = []
    for name, r in results.items():
        if r["error"] is not None:
            rows.append([name, _error_cell(r["error"])] + [""] * (len(header) - 2))
            continue
        rows.append([name, _fmt(r["fit_s_median"], 2), _fmt(r["worker_cpu_s_median"], 1),
                     _fmt(r["test_auc"], 4)]
                    + [_fmt(r[f"{ours_name}_fit_ratio"], 2) for ours_name in ours])
    lines = [markdown_table(header, rows), ""]
    lines.append(f"{args.rows:,} train x {len(FEATURE_NAMES)} features (5% NaN), "
                 f"{args.test_rows:,} test rows; {args.rounds} trees, depth {MAX_DEPTH}, "
                 f"learning_rate {LEARNING_RATE}; median of {args.repeats} run(s); "
                 f"distributed.LocalCluster of {N_WORKERS} worker processes x "
                 f"{THREADS_PER_WORKER} thread, one Client, shared by all libraries.")
    lines.append("Every fit is dd.read_parquet of the same lake "
                 f"({args.files} files) + fit on the cluster, so reading is timed for all.")
    lines.append("daskboost fit ratio = daskboost fit s / library fit s (< 1: daskboost is "
                 f"faster); {QUANTIZED}: daskboost with {QUANTIZED_PARAMS}; {FLOAT}: with "
                 f"{FLOAT_PARAMS}. workers' cpu s = CPU seconds of both worker processes "
                 "during the "
                 f"fit (up to {N_WORKERS * THREADS_PER_WORKER} x wall when both are busy).")
    lines.append(f"Warm-up: every library fitted {WARMUP_ROUNDS} trees on a {WARMUP_ROWS:,}-row "
                 "lake first (untimed). lightgbm max_bin=255 is the setting comparable to "
                 "xgboost/daskboost max_bin=256.")
    lines.append(f"true-logit test AUC {true_auc:.4f} (ceiling on complete features).")
    failed = [name for name, r in results.items() if r["error"] is not None]
    if failed:
        lines.append("FAILED (see traceback above / in the JSON): " + ", ".join(failed) + ".")
    markdown = "\n".join(lines)
    print()
    print(markdown)

    if args.output:
        config = {"rows": args.rows, "test_rows": args.test_rows, "rounds": args.rounds,
                  "features": len(FEATURE_NAMES), "missing_fraction": 0.05,
                  "repeats": args.repeats, "seed": args.seed, "libraries": args.libraries,
                  "warmup_rows": WARMUP_ROWS, "warmup_rounds": WARMUP_ROUNDS,
                  "cluster": cluster_info, "parquet_lake": lake,
                  "true_logit_test_auc": true_auc}
        write_results(args.output, "bench_distributed", config, info, results, markdown)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
