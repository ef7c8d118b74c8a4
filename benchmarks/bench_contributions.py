"""SHAP contributions speed: daskboost vs xgboost (the same model) and LightGBM.

What it measures, side by side in one process and one run:

* daskboost fits the binary task of ``bench_binary`` (``common.make_binary``) on
  ``--train-rows`` rows (default 100,000; untimed): 100 trees, depth 6, learning rate
  0.1, 256 bins, 2 threads.  Its model is exported (``save_model(format="xgboost")``)
  and loaded by xgboost: both explain the very same trees.  LightGBM fits its own model
  of the same size (255 bins, 64 leaves at most, depth 6).
* Then the exact TreeSHAP contributions of ``--rows`` float32 rows (default 100,000, 28
  features, 5% missing): daskboost ``predict(X, pred_contribs=True)``, xgboost
  ``Booster.predict(DMatrix(X), pred_contribs=True)`` (DMatrix built outside the
  timing), LightGBM ``predict(X, pred_contrib=True)``; ``--repeats`` times, round robin
  (a shared, noisy machine drifts on all alike), after a 1,000-row batch each, untimed.
* Reported: median seconds, rows per second, daskboost's time as a ratio to each
  library's (< 1: faster), and the largest difference between daskboost's and
  xgboost's contributions (the same model: float32 rounding only).

Run from the repository root::

    python benchmarks/bench_contributions.py --repeats 3
"""

import common  # noqa: F401  (first: fixes the thread count)

import os  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

from bench_sizes import DEPTH, LEARNING_RATE, ROUNDS  # noqa: E402

LIBRARIES = ("daskboost", "xgboost", "lightgbm")


def explainers(names, X, y, directory):
    """{library: explain(X_test) -> (n, F + 1) contributions}; xgboost explains
    daskboost's model."""
    from daskboost import DaskBoostClassifier
    model = DaskBoostClassifier(n_estimators=ROUNDS, max_depth=DEPTH, learning_rate=LEARNING_RATE,
                                max_bin=256, reg_lambda=1.0, min_child_weight=1.0).fit(X, y)
    out = {}
    if "daskboost" in names:
        out["daskboost"] = lambda X_test: model.predict(X_test, pred_contribs=True)
    if "xgboost" in names:
        import xgboost
        path = os.path.join(directory, "daskboost-model.json")
        model.save_model(path, format="xgboost")
        booster = xgboost.Booster(model_file=path)
        booster.set_param({"nthread": common.N_THREADS})
        matrices = {}

        def explain_xgboost(X_test):
            return booster.predict(matrices[id(X_test)], pred_contribs=True)
        explain_xgboost.prepare = lambda X_test: matrices.setdefault(
            id(X_test), xgboost.DMatrix(X_test, nthread=common.N_THREADS))
        out["xgboost"] = explain_xgboost
    if "lightgbm" in names:
        import lightgbm
        other = lightgbm.LGBMClassifier(
            n_estimators=ROUNDS, max_depth=DEPTH, num_leaves=2 ** DEPTH,
            learning_rate=LEARNING_RATE, max_bin=255, min_child_samples=1,
            min_child_weight=1.0, reg_lambda=1.0, n_jobs=common.N_THREADS, verbose=-1).fit(X, y)
        out["lightgbm"] = lambda X_test: other.predict(X_test, pred_contrib=True)
    return {name: out[name] for name in names}


def main(argv=None):
    args, machine, X, y, X_test = common.train_then_use_run(__doc__, LIBRARIES, 100_000,
                                                            "explain", argv)
    warm = X_test[:1000]
    with tempfile.TemporaryDirectory(prefix="daskboost-bench-contribs-") as directory:
        explain = explainers(args.libraries, X, y, directory)
        for function in explain.values():
            for batch in (warm, X_test):
                getattr(function, "prepare", lambda _: None)(batch)
            function(warm)
        times = {name: [] for name in args.libraries}
        outputs = {}
        for repeat in range(args.repeats):
            for name, function in explain.items():
                out, seconds, _ = common.timed(function, X_test)
                times[name].append(seconds)
                outputs[name] = out
                print(f"# repeat {repeat + 1}/{args.repeats} {name}: {seconds:.2f} s",
                      flush=True)
    medians = {name: common.median(v) for name, v in times.items()}
    rows = [[name, f"{medians[name]:.2f}", f"{args.rows / medians[name]:,.0f}",
             common.ratio_cell(medians, name)] for name in args.libraries]
    common.report(args, "contributions",
                  ["library", "pred_contribs s (median)", "rows / s",
                   "daskboost time ÷ library's"], rows, machine, {"seconds": times})
    if "daskboost" in outputs and "xgboost" in outputs:
        difference = float(np.max(np.abs(outputs["daskboost"] - outputs["xgboost"])))
        print(f"\nlargest |daskboost - xgboost| contribution (same model): {difference:.2g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
