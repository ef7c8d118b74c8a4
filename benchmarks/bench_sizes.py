"""Fit time across data sizes: daskboost vs LightGBM and xgboost, warm, in memory.

What it measures, side by side in one process and one run:

* Data: the binary task of ``bench_binary`` (``common.make_binary``: 28 float32
  features, 5% missing values, ``--missing-fraction``), at ``--sizes`` training rows
  (default 20,000, 100,000 and 1,000,000) and one test set of ``--test-rows`` rows
  (default 200,000).
* Input as users hold it at that size: numpy arrays in memory for the smaller sizes;
  from 1,000,000 rows up a dask array of 8 row chunks for daskboost (the threaded
  scheduler, no distributed Client), numpy for the others.  ``--chunk-rows N``: a dask
  array of N-row chunks for daskboost at every size (a user's array in small chunks).
* Model: 100 trees, depth 6, learning rate 0.1, 256 bins (255 for LightGBM), L2 1,
  minimum child hessian 1, 2 threads each (the settings of ``bench_binary``).
* ``daskboost-quantized``: daskboost with ``quantized_grad=True`` (4 bins), as a
  contestant of its own.
* Every library fits 1,000 rows untimed first (numba's JIT, imports); then
  ``--repeats`` fits per size and library, round robin over the libraries (a shared,
  noisy machine drifts on all of them alike). Reported per size: median fit seconds,
  test AUC, and daskboost's fit time as a ratio to each library's (< 1: faster).
* ``--auc-samples K`` (default 1): the test AUC is also given as the mean over K
  training samples (data seeds ``--seed``, ``--seed + 100``, ...; the K - 1 more fits
  untimed). One 20,000-row sample's AUC moves by about +-0.002 between equally good
  models (two binnings, or two libraries), so a comparison of accuracy at small
  sizes needs several.

Run from the repository root::

    python benchmarks/bench_sizes.py --repeats 5 --auc-samples 5
    python benchmarks/bench_sizes.py --sizes 20000 --libraries daskboost,lightgbm
    python benchmarks/bench_sizes.py --sizes 60000 --chunk-rows 10000 --libraries daskboost,lightgbm
"""

import common  # noqa: F401  (first: fixes the thread count)

import argparse  # noqa: E402

import numpy as np  # noqa: E402

LIBRARIES = ("daskboost", common.QUANTIZED, common.FLOAT, "lightgbm", "xgboost")
SIZES = (20_000, 100_000, 1_000_000)
DASK_FROM_ROWS = 1_000_000
DASK_CHUNKS = 8
ROUNDS, DEPTH, LEARNING_RATE = 100, 6, 0.1


def make_fit(name, X, y, chunk_rows=None, output="proba", **overrides):
    """``fit() -> predict_proba(X_test)[:, 1]`` of one library on (X, y) (``chunk_rows``:
    daskboost's input a dask array of such row chunks; ``output="leaf"``: each row's
    leaf in each tree instead, ``apply`` / ``pred_leaf``; ``overrides``: more daskboost
    parameters)."""
    if name in common.DASKBOOST_VARIANTS:
        from daskboost import DaskBoostClassifier
        if chunk_rows is None and len(X) >= DASK_FROM_ROWS:
            chunk_rows = -(-len(X) // DASK_CHUNKS)
        if chunk_rows is not None:
            import dask.array as da
            X, y = (da.from_array(X, chunks=(chunk_rows, -1)),
                    da.from_array(y, chunks=chunk_rows))
        extra = {**common.DASKBOOST_VARIANTS[name], **overrides}
        model = DaskBoostClassifier(n_estimators=ROUNDS, max_depth=DEPTH,
                                    learning_rate=LEARNING_RATE, max_bin=256, reg_lambda=1.0,
                                    min_child_weight=1.0, **extra)
    elif name == "lightgbm":
        import lightgbm
        model = lightgbm.LGBMClassifier(
            n_estimators=ROUNDS, max_depth=DEPTH, num_leaves=2 ** DEPTH,
            learning_rate=LEARNING_RATE, max_bin=255, min_child_samples=1,
            min_child_weight=1.0, reg_lambda=1.0, n_jobs=common.N_THREADS, verbose=-1)
    else:
        import xgboost
        model = xgboost.XGBClassifier(
            n_estimators=ROUNDS, max_depth=DEPTH, learning_rate=LEARNING_RATE, max_bin=256,
            tree_method="hist", n_jobs=common.N_THREADS)

    def fit():
        model.fit(X, y)
        if output == "leaf":
            if name == "lightgbm":
                return lambda X_test: np.asarray(model.predict(X_test, pred_leaf=True))
            return lambda X_test: np.asarray(model.apply(X_test))
        return lambda X_test: np.asarray(model.predict_proba(X_test))[:, 1]

    return fit


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES),
                        help="comma list of training row counts")
    parser.add_argument("--test-rows", type=int, default=200_000)
    parser.add_argument("--missing-fraction", type=float, default=0.05,
                        help="fraction of feature values set missing")
    parser.add_argument("--auc-samples", type=int, default=1,
                        help="training samples whose mean test AUC is reported too (the "
                             "first is the timed one)")
    parser.add_argument("--chunk-rows", type=int, default=None,
                        help="daskboost's input: a dask array of chunks of this many rows "
                             "at every size")
    common.add_run_options(parser, LIBRARIES)
    args = common.parse_run_args(parser, LIBRARIES, argv)
    sizes = common.parse_number_list(parser, "--sizes", args.sizes, int, "integers")
    if (not sizes or min(sizes) < 1000 or args.repeats < 1 or args.test_rows < 1000
            or args.auc_samples < 1 or (args.chunk_rows is not None and args.chunk_rows < 1)):
        parser.error("--sizes of at least 1000 rows, --test-rows >= 1000, --repeats >= 1, "
                     "--auc-samples >= 1, --chunk-rows >= 1")
    if not 0.0 <= args.missing_fraction < 1.0:
        parser.error(f"--missing-fraction must be in [0, 1); got {args.missing_fraction}")
    missing = args.missing_fraction
    machine = common.machine_info()
    X_test, y_test, _ = common.make_binary(args.test_rows, args.seed + 1, missing)
    X_warm, y_warm, _ = common.make_binary(1000, args.seed + 2, missing)
    for name in args.libraries:  # JIT compilation and imports: untimed
        for gradients in (common.WARMUP_GRADIENTS if name in common.DASKBOOST_VARIANTS
                          else [{}]):
            make_fit(name, X_warm, y_warm, **gradients)()
    rows, results = [], {}
    for size in sizes:
        X, y, _ = common.make_binary(size, args.seed, missing)
        fits = {name: make_fit(name, X, y, args.chunk_rows) for name in args.libraries}
        times = {name: [] for name in args.libraries}
        predictors = {}
        for repeat in range(args.repeats):
            for name, fit in fits.items():
                predictors[name], seconds, _ = common.timed(fit)
                times[name].append(seconds)
                print(f"# {size} rows repeat {repeat + 1}/{args.repeats} {name}: "
                      f"fit {seconds:.3f} s", flush=True)
        aucs = {name: common.roc_auc(y_test, predict(X_test))
                for name, predict in predictors.items()}
        sample_aucs = {name: [auc] for name, auc in aucs.items()}
        for sample in range(1, args.auc_samples):  # untimed: accuracy only
            X, y, _ = common.make_binary(size, args.seed + 100 * sample, missing)
            for name in args.libraries:
                predict = make_fit(name, X, y, args.chunk_rows)()
                sample_aucs[name].append(common.roc_auc(y_test, predict(X_test)))
        medians = {name: common.median(v) for name, v in times.items()}
        results[size] = {"seconds": times, "auc": aucs, "sample_aucs": sample_aucs}
        for name in args.libraries:
            rows.append([f"{size:,}", name, f"{medians[name]:.3f}", f"{aucs[name]:.4f}",
                         f"{np.mean(sample_aucs[name]):.4f}",
                         common.ratio_cell(medians, name),
                         common.ratio_cell(medians, name, common.QUANTIZED)])
    common.report(args, "sizes",
                  ["rows", "library", "fit s (median)", "test AUC",
                   f"mean test AUC of {args.auc_samples} samples", "daskboost fit ÷ library's",
                   f"{common.QUANTIZED} fit ÷ library's"],
                  rows, machine, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
