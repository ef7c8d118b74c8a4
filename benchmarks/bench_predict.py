"""Prediction speed: daskboost vs xgboost and LightGBM, rows per second, in memory.

What it measures, side by side in one process and one run:

* Each library fits the binary task of ``bench_binary`` (``common.make_binary``) on
  ``--train-rows`` rows (default 100,000; untimed): 100 trees, depth 6, learning rate
  0.1, 256 bins (255 for LightGBM), 2 threads.
* Then ``predict_proba`` of ``--rows`` in-memory float32 rows (default 1,000,000, 5%
  missing), ``--repeats`` times per library, round robin (a shared, noisy machine
  drifts on all of them alike). Each library predicts a 1,000-row batch first, untimed.
  ``--predict leaf``: each row's leaf in each tree instead (``apply``, LightGBM's
  ``pred_leaf``).
* ``--batch-rows k``: the rows are predicted k at a time, one call per batch (a
  service answering requests: the per-call cost, not the kernel's); ``--input pandas``:
  each batch a pandas DataFrame of named columns (the models then fit on one too).
* Reported: median seconds, rows per second, and daskboost's time as a ratio to each
  library's (< 1: faster); the largest difference of daskboost's probabilities between
  repeats (0: deterministic).

Run from the repository root::

    python benchmarks/bench_predict.py --repeats 5
    python benchmarks/bench_predict.py --repeats 5 --predict leaf
    python benchmarks/bench_predict.py --repeats 5 --rows 2000 --batch-rows 1 --input pandas
"""

import common  # noqa: F401  (first: fixes the thread count)

import numpy as np  # noqa: E402

from bench_sizes import make_fit  # noqa: E402  (the same models as the size benchmark)

LIBRARIES = ("daskboost", "xgboost", "lightgbm")


def main(argv=None):
    args, machine, X, y, X_test = common.train_then_use_run(__doc__, LIBRARIES, 1_000_000,
                                                            "predict", argv, _add_options)
    if args.input == "pandas":
        import pandas as pd
        X = pd.DataFrame(X, columns=common.FEATURE_NAMES)
        X_test = pd.DataFrame(X_test, columns=common.FEATURE_NAMES)
    predictors = {name: in_batches(make_fit(name, X, y, output=args.predict)(),
                                   args.batch_rows)
                  for name in args.libraries}
    for predict in predictors.values():
        predict(X_test[:1000])
    times = {name: [] for name in args.libraries}
    outputs = {name: [] for name in args.libraries}
    for repeat in range(args.repeats):
        for name, predict in predictors.items():
            out, seconds, _ = common.timed(predict, X_test)
            times[name].append(seconds)
            outputs[name].append(out)
            print(f"# repeat {repeat + 1}/{args.repeats} {name}: {seconds:.3f} s", flush=True)
    medians = {name: common.median(v) for name, v in times.items()}
    rows = [[name, f"{medians[name]:.3f}", f"{args.rows / medians[name]:,.0f}",
             common.ratio_cell(medians, name)] for name in args.libraries]
    common.report(args, "predict" if args.predict == "proba" else "predict-leaf",
                  ["library", "predict s (median)", "rows / s", "daskboost time ÷ library's"],
                  rows, machine, {"seconds": times})
    if "daskboost" in outputs:
        spread = max(float(np.max(np.abs(o - outputs["daskboost"][0])))
                     for o in outputs["daskboost"])
        print(f"\ndaskboost: largest difference between repeats {spread:g}")
    return 0


def in_batches(predict, batch_rows):
    """``predict`` called on ``batch_rows`` rows at a time (None: on all of them)."""
    if batch_rows is None:
        return predict

    def predict_batches(X):
        return np.concatenate([predict(X[start:start + batch_rows])
                               for start in range(0, len(X), batch_rows)])
    return predict_batches


def _add_options(parser):
    parser.add_argument("--batch-rows", type=int, default=None,
                        help="predict this many rows per call (default: all in one call)")
    parser.add_argument("--input", choices=("numpy", "pandas"), default="numpy",
                        help="what each call is given")
    parser.add_argument("--predict", choices=("proba", "leaf"), default="proba",
                        help="what is predicted: probabilities, or each row's leaf per tree")


if __name__ == "__main__":
    raise SystemExit(main())
