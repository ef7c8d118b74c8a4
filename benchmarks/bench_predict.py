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
* Reported: median seconds, rows per second, and daskboost's time as a ratio to each
  library's (< 1: faster); the largest difference of daskboost's probabilities between
  repeats (0: deterministic).

Run from the repository root::

    python benchmarks/bench_predict.py --repeats 5
    python benchmarks/bench_predict.py --repeats 5 --predict leaf
"""

import common  # noqa: F401  (first: fixes the thread count)

import numpy as np  # noqa: E402

from bench_sizes import make_fit  # noqa: E402  (the same models as the size benchmark)

LIBRARIES = ("daskboost", "xgboost", "lightgbm")


def main(argv=None):
    args, machine, X, y, X_test = common.train_then_use_run(__doc__, LIBRARIES, 1_000_000,
                                                            "predict", argv, _add_options)
    predictors = {name: make_fit(name, X, y, output=args.predict)() for name in args.libraries}
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


def _add_options(parser):
    parser.add_argument("--predict", choices=("proba", "leaf"), default="proba",
                        help="what is predicted: probabilities, or each row's leaf per tree")


if __name__ == "__main__":
    raise SystemExit(main())
