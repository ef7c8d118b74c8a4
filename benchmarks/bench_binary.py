"""Binary classification benchmark: daskboost vs xgboost, lightgbm and scikit-learn.

What it measures, in one process and one run, side by side:

* Data: a synthetic task of ``--rows`` (default 1,000,000) training rows x 28 float32
  features plus a separate ``--test-rows`` (default 200,000) test set. Features mix
  normal, uniform, exponential and small-integer columns; the label is
  ``logit + logistic noise > 0`` for a nonlinear logit with interactions (several
  features are pure noise), and then 5% of all feature values are set to NaN at random.
  Generation is vectorised and seeded (``--seed``), so every run sees the same data.
* Model: 100 trees, depth 6, learning rate 0.1, 256 bins (255 for lightgbm and
  scikit-learn, whose ``max_bin(s)=255`` is the comparable setting), L2 penalty 1,
  minimum child hessian 1, the settings of each library mapped as closely as it allows.
* daskboost reads the training data as a realistic lake: the train rows are written
  (untimed) as ``--files`` parquet files in a temporary directory, and the timed fit is
  ``dd.read_parquet(dir)`` -> ``X = ddf[features]``, ``y = ddf["label"]`` ->
  ``DaskBoostClassifier.fit(X, y)`` on the default local threaded scheduler (no
  distributed Client), so reading the parquet is part of the fit time. The other
  libraries fit on the in-memory numpy arrays. Every library predicts the in-memory
  200k-row numpy test set.
* Reported per library: median fit seconds and median predict seconds over
  ``--repeats`` runs (default 3; the repeats go round-robin over the libraries so slow
  drifts of a shared machine hit all of them), test AUC, and daskboost's fit time as a
  ratio to the library's (< 1 means daskboost is faster), plus each AUC minus xgboost's.
* Threads: 2 for everyone (the reference machine has 2 cores): xgboost and lightgbm get
  ``n_jobs=2``, OMP_NUM_THREADS defaults to 2 (for scikit-learn's OpenMP) and dask's
  threaded scheduler uses its default pool of one thread per core.
* Warm-up (untimed): daskboost first fits 1,000 rows read from a tiny parquet lake so
  numba's JIT compilation is not counted; the other libraries get a tiny fit as well.

Run from the repository root::

    python benchmarks/bench_binary.py --repeats 3
    python benchmarks/bench_binary.py --rows 50000 --repeats 1 --libraries daskboost,xgboost
    python benchmarks/bench_binary.py --output benchmarks/results/binary

``--output PATH`` writes ``PATH.json`` (configuration, every timing, versions) and
``PATH.md`` (the table) besides printing the table to stdout.
"""

import os
import sys

# Fix the thread count before numpy / OpenMP runtimes load (an explicit setting wins).
N_THREADS = 2
os.environ.setdefault("OMP_NUM_THREADS", str(N_THREADS))

import argparse  # noqa: E402
import gc  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import (FEATURE_NAMES, LABEL_NAME, load_average, machine_info,  # noqa: E402
                    make_binary, markdown_table, median, roc_auc, timed, write_parquet_lake,
                    write_results)

LIBRARIES = ("daskboost", "xgboost", "lightgbm", "sklearn")
REFERENCE = "xgboost"
N_ESTIMATORS = 100
MAX_DEPTH = 6
LEARNING_RATE = 0.1
MAX_BIN = 256
WARMUP_ROWS = 1000


# ---- the four contestants ---------------------------------------------------------------
# Each ``make_*`` returns (params, fit, warmup, notes); ``fit()`` trains on the full
# training data and returns a callable mapping a numpy test matrix to P(class 1);
# ``warmup(X_small)`` is an untimed tiny fit.

def make_daskboost(lake_dir, warmup_lake_dir):
    import dask.dataframe as dd
    from daskboost import DaskBoostClassifier

    params = dict(n_estimators=N_ESTIMATORS, max_depth=MAX_DEPTH, learning_rate=LEARNING_RATE,
                  max_bin=MAX_BIN, reg_lambda=1.0, gamma=0.0, min_child_weight=1.0)

    def fit_lake(directory, **overrides):
        ddf = dd.read_parquet(directory)
        X = ddf[FEATURE_NAMES]
        y = ddf[LABEL_NAME]
        clf = DaskBoostClassifier(**{**params, **overrides}).fit(X, y)
        return lambda X_test: clf.predict_proba(X_test)[:, 1]

    def warmup(X_small):
        predict = fit_lake(warmup_lake_dir, n_estimators=3)
        predict(X_small)

    notes = ["fit = dd.read_parquet + column selection + fit (parquet read included)",
             "local threaded scheduler (dask default), no distributed Client",
             f"numba warm-up: an untimed {WARMUP_ROWS}-row fit from parquet before timing"]
    return params, (lambda: fit_lake(lake_dir)), warmup, notes


def make_xgboost(X, y, X_small, y_small):
    import xgboost

    params = dict(tree_method="hist", n_estimators=N_ESTIMATORS, max_depth=MAX_DEPTH,
                  learning_rate=LEARNING_RATE, max_bin=MAX_BIN, n_jobs=N_THREADS)

    def fit(X_fit=X, y_fit=y, **overrides):
        clf = xgboost.XGBClassifier(**{**params, **overrides}).fit(X_fit, y_fit)
        return lambda X_test: clf.predict_proba(X_test)[:, 1]

    def warmup(_):
        fit(X_small, y_small, n_estimators=3)

    notes = ["defaults kept: reg_lambda=1, gamma=0, min_child_weight=1"]
    return params, fit, warmup, notes


def make_lightgbm(X, y, X_small, y_small):
    import lightgbm

    # lightgbm grows leaf-wise; num_leaves=64 with max_depth=6 allows a full depth-6 tree.
    # min_child_weight is lightgbm's min_sum_hessian_in_leaf (xgboost's min_child_weight);
    # min_child_samples=1 removes lightgbm's extra row-count floor (default 20).
    params = dict(n_estimators=N_ESTIMATORS, max_depth=MAX_DEPTH, num_leaves=2 ** MAX_DEPTH,
                  learning_rate=LEARNING_RATE, max_bin=MAX_BIN - 1, n_jobs=N_THREADS,
                  min_child_weight=1.0, min_child_samples=1, reg_lambda=1.0,
                  min_split_gain=0.0, verbose=-1)

    def fit(X_fit=X, y_fit=y, **overrides):
        clf = lightgbm.LGBMClassifier(**{**params, **overrides}).fit(X_fit, y_fit)
        return lambda X_test: clf.predict_proba(X_test)[:, 1]

    def warmup(_):
        fit(X_small, y_small, n_estimators=3)

    notes = ["max_bin=255 is the setting comparable to xgboost's max_bin=256",
             "leaf-wise growth, capped by max_depth=6 and num_leaves=64",
             "min_sum_hessian_in_leaf=1 (sklearn-API name min_child_weight), "
             "min_child_samples=1 (lightgbm default 20)",
             "bin edges come from a 200k-row sample (bin_construct_sample_cnt default)"]
    return params, fit, warmup, notes


def make_sklearn(X, y, X_small, y_small):
    from sklearn.ensemble import HistGradientBoostingClassifier

    params = dict(max_iter=N_ESTIMATORS, max_depth=MAX_DEPTH, max_leaf_nodes=2 ** MAX_DEPTH,
                  learning_rate=LEARNING_RATE, max_bins=MAX_BIN - 1, early_stopping=False,
                  l2_regularization=1.0, min_samples_leaf=1, random_state=0)

    def fit(X_fit=X, y_fit=y, **overrides):
        clf = HistGradientBoostingClassifier(**{**params, **overrides}).fit(X_fit, y_fit)
        return lambda X_test: clf.predict_proba(X_test)[:, 1]

    def warmup(_):
        fit(X_small, y_small, max_iter=3)

    notes = ["max_bins=255 (its maximum; NaN gets an extra bin)",
             "leaf-wise growth, capped by max_depth=6 and max_leaf_nodes=64",
             "no min_child_weight parameter (internal min hessian to split is 1e-3)",
             "bin edges come from a 200k-row subsample",
             f"threads from OpenMP: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}"]
    return params, fit, warmup, notes


# ---- driver -----------------------------------------------------------------------------

def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="training rows")
    parser.add_argument("--test-rows", type=int, default=200_000, help="test rows")
    parser.add_argument("--repeats", type=int, default=3,
                        help="fits per library; median times are reported")
    parser.add_argument("--libraries", default=",".join(LIBRARIES),
                        help=f"comma list out of {','.join(LIBRARIES)}")
    parser.add_argument("--files", type=int, default=8, help="parquet files in daskboost's lake")
    parser.add_argument("--seed", type=int, default=0, help="data seed")
    parser.add_argument("--output", default=None,
                        help="write PATH.json and PATH.md with the results")
    args = parser.parse_args(argv)
    libraries = [name.strip() for name in args.libraries.split(",") if name.strip()]
    unknown = [name for name in libraries if name not in LIBRARIES]
    if unknown or not libraries:
        parser.error(f"--libraries: unknown {unknown}; choose from {','.join(LIBRARIES)}")
    args.libraries = list(dict.fromkeys(libraries))
    if args.rows < 2 * WARMUP_ROWS or args.test_rows < 100 or args.repeats < 1 or args.files < 1:
        parser.error(f"need --rows >= {2 * WARMUP_ROWS}, --test-rows >= 100, "
                     "--repeats >= 1, --files >= 1")
    return args


def _fmt(value, digits):
    return "n/a" if value is None else f"{value:.{digits}f}"


def main(argv=None):
    args = parse_args(argv)
    info = machine_info()
    print(f"# daskboost binary benchmark: {args.rows:,} train rows x {len(FEATURE_NAMES)} "
          f"float32 features (5% NaN), {args.test_rows:,} test rows", flush=True)
    print(f"# {N_ESTIMATORS} trees, depth {MAX_DEPTH}, learning_rate {LEARNING_RATE}, "
          f"max_bin {MAX_BIN} (lightgbm/sklearn: 255), repeats {args.repeats} (median), "
          f"seed {args.seed}", flush=True)

    start = time.perf_counter()
    X_train, y_train, _ = make_binary(args.rows, seed=2 * args.seed)
    X_test, y_test, test_logit = make_binary(args.test_rows, seed=2 * args.seed + 1)
    print(f"# data generated in {time.perf_counter() - start:.1f} s; positives: train "
          f"{y_train.mean():.3f}, test {y_test.mean():.3f}; true-logit test AUC "
          f"{roc_auc(y_test, test_logit):.4f} (ceiling on complete features)", flush=True)
    X_small, y_small = X_train[:WARMUP_ROWS], y_train[:WARMUP_ROWS]

    results = {}
    with tempfile.TemporaryDirectory(prefix="daskboost-bench-") as tmp:
        contestants = {}
        lake = None
        for name in args.libraries:
            if name == "daskboost":
                import dask
                import dask.dataframe as dd
                lake_dir, warmup_dir = Path(tmp) / "train", Path(tmp) / "warmup"
                start = time.perf_counter()
                size = write_parquet_lake(lake_dir, X_train, y_train, args.files)
                write_parquet_lake(warmup_dir, X_small, y_small, 2)
                npartitions = dd.read_parquet(lake_dir).npartitions
                lake = {"files": args.files, "bytes": size, "npartitions": npartitions,
                        "dask_threads": dask.system.CPU_COUNT}
                print(f"# parquet lake: {args.files} files, {size / 2**20:.0f} MiB, "
                      f"{npartitions} dask partitions, written in "
                      f"{time.perf_counter() - start:.1f} s (untimed); dask threaded "
                      f"scheduler pool: {dask.system.CPU_COUNT} threads", flush=True)
                contestants[name] = make_daskboost(lake_dir, warmup_dir)
            else:
                maker = {"xgboost": make_xgboost, "lightgbm": make_lightgbm,
                         "sklearn": make_sklearn}[name]
                contestants[name] = maker(X_train, y_train, X_small, y_small)
            results[name] = {"params": contestants[name][0], "notes": contestants[name][3],
                             "fit_s": [], "fit_cpu_s": [], "predict_s": [], "auc": [],
                             "error": None}

        # untimed warm-up: numba JIT for daskboost, first-call overheads for the others
        for name, (_, _, warmup, _) in contestants.items():
            try:
                _, seconds, _ = timed(warmup, X_small)
                print(f"# warm-up {name}: {seconds:.1f} s (untimed)", flush=True)
            except Exception:
                results[name]["error"] = traceback.format_exc()
                print(f"# warm-up {name} FAILED:\n{results[name]['error']}", flush=True)

        for repeat in range(args.repeats):
            for name, (_, fit, _, _) in contestants.items():
                result = results[name]
                if result["error"] is not None:
                    continue
                try:
                    predict, fit_s, fit_cpu_s = timed(fit)
                    proba, predict_s, _ = timed(predict, X_test)
                    auc = roc_auc(y_test, proba)
                except Exception:
                    result["error"] = traceback.format_exc()
                    print(f"# {name} FAILED (repeat {repeat + 1}):\n{result['error']}", flush=True)
                    continue
                finally:
                    predict = proba = None
                    gc.collect()
                result["fit_s"].append(fit_s)
                result["fit_cpu_s"].append(fit_cpu_s)
                result["predict_s"].append(predict_s)
                result["auc"].append(auc)
                print(f"# repeat {repeat + 1}/{args.repeats} {name}: fit {fit_s:.2f} s "
                      f"(cpu {fit_cpu_s:.2f} s), predict {predict_s:.3f} s, AUC {auc:.4f}",
                      flush=True)

    # ---- summary ------------------------------------------------------------------------
    for result in results.values():
        ok = result["error"] is None and result["fit_s"]
        result["fit_s_median"] = median(result["fit_s"]) if ok else None
        result["predict_s_median"] = median(result["predict_s"]) if ok else None
        result["test_auc"] = median(result["auc"]) if ok else None
    ours = results.get("daskboost", {}).get("fit_s_median")
    reference_auc = results.get(REFERENCE, {}).get("test_auc")
    for result in results.values():
        fit_s = result["fit_s_median"]
        result["daskboost_fit_ratio"] = ours / fit_s if ours is not None and fit_s else None
        result["auc_minus_xgboost"] = (result["test_auc"] - reference_auc
                                       if result["test_auc"] is not None
                                       and reference_auc is not None else None)

    header = ["library", "fit s (median)", "predict s", "test AUC", "daskboost fit ratio"]
    rows = [[name, _fmt(r["fit_s_median"], 2), _fmt(r["predict_s_median"], 3),
             _fmt(r["test_auc"], 4), _fmt(r["daskboost_fit_ratio"], 2)]
            for name, r in results.items()]
    lines = [markdown_table(header, rows), ""]
    lines.append(f"{args.rows:,} train x {len(FEATURE_NAMES)} features (5% NaN), "
                 f"{args.test_rows:,} test rows; {N_ESTIMATORS} trees, depth {MAX_DEPTH}, "
                 f"learning_rate {LEARNING_RATE}; median of {args.repeats} run(s); "
                 f"{N_THREADS} threads each.")
    lines.append("daskboost fit ratio = daskboost fit s / library fit s (< 1: daskboost is "
                 "faster). daskboost's fit includes reading the parquet lake "
                 f"({args.files} files) with dd.read_parquet; the others fit in-memory numpy.")
    lines.append("daskboost was warmed up (untimed 1,000-row fit) so numba JIT compile time "
                 "is not counted; the other libraries had a tiny untimed fit too.")
    lines.append("lightgbm max_bin=255 and sklearn max_bins=255 are the settings comparable "
                 "to xgboost/daskboost max_bin=256.")
    diffs = [f"{name} {r['auc_minus_xgboost']:+.4f}" for name, r in results.items()
             if name != REFERENCE and r["auc_minus_xgboost"] is not None]
    if diffs:
        lines.append("test AUC minus xgboost's: " + ", ".join(diffs) + ".")
    failed = [name for name, r in results.items() if r["error"] is not None]
    if failed:
        lines.append("FAILED (see traceback above / in the JSON): " + ", ".join(failed) + ".")
    markdown = "\n".join(lines)
    print()
    print(markdown)

    if args.output:
        payload = {
            "benchmark": "bench_binary",
            "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
            "config": {"rows": args.rows, "test_rows": args.test_rows,
                       "features": len(FEATURE_NAMES), "missing_fraction": 0.05,
                       "repeats": args.repeats, "seed": args.seed, "threads": N_THREADS,
                       "warmup_rows": WARMUP_ROWS, "parquet_lake": lake},
            "machine": {**info, "load_average_at_end": load_average()},
            "results": results,
            "markdown": markdown,
        }
        json_path, md_path = write_results(args.output, payload, markdown)
        print(f"\n# wrote {json_path} and {md_path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
