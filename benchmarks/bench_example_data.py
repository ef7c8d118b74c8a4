"""Accuracy on the peers' own example data: daskboost float and quantized vs xgboost, LightGBM.

What it measures, side by side in one process and one run: the test metric (and the
median fit seconds) of each contestant on the small example data sets that LightGBM and
xgboost ship in their source repositories (not in their wheels, and not fetched here:
point the script at a source checkout of each):

* LightGBM ``examples/``: ``binary_classification`` (7,000 train / 500 test rows, 28
  features, test AUC), ``regression`` (the same rows, the label as a number, test RMSE)
  and ``multiclass_classification`` (7,000 / 500 rows, 5 classes, test mlogloss);
  tab-separated, the label first.
* xgboost ``demo/data/``: ``agaricus.txt.train`` / ``.test`` (6,513 / 1,611 rows, 126
  one-hot features in libsvm format, as a scipy CSR matrix for everyone; test AUC).

Model: 100 trees, depth 6, learning rate 0.1, 256 bins (LightGBM 255), 2 threads.
Contestants: ``daskboost-float`` (``quantized_grad=False``), ``daskboost-quantized``
(``quantized_grad=True``, 4 bins), ``daskboost`` (the default, ``"auto"``: float on
data this small), xgboost (``hist``) and LightGBM. Each fits once untimed, then
``--repeats`` times round robin.

Run from the repository root::

    python benchmarks/bench_example_data.py --lightgbm-examples LightGBM/examples \\
        --xgboost-data xgboost/demo/data --repeats 3
"""

import common  # noqa: F401  (first: fixes the thread count)

import argparse  # noqa: E402
import os  # noqa: E402

import numpy as np  # noqa: E402

LIBRARIES = ("daskboost", common.QUANTIZED, common.FLOAT, "xgboost", "lightgbm")
ROUNDS, DEPTH, LEARNING_RATE = 100, 6, 0.1
# name: (directory option, train file, test file, task)
DATASETS = {
    "lightgbm-binary": ("lightgbm_examples", "binary_classification/binary.train",
                        "binary_classification/binary.test", "binary"),
    "lightgbm-regression": ("lightgbm_examples", "regression/regression.train",
                            "regression/regression.test", "regression"),
    "lightgbm-multiclass": ("lightgbm_examples", "multiclass_classification/multiclass.train",
                            "multiclass_classification/multiclass.test", "multiclass"),
    "xgboost-agaricus": ("xgboost_data", "agaricus.txt.train", "agaricus.txt.test", "binary"),
}
METRIC_NAMES = {"binary": "AUC", "regression": "RMSE", "multiclass": "mlogloss"}


def read_tsv(path):
    """(X, y) of a LightGBM example file: tab-separated numbers, the label first."""
    table = np.loadtxt(path, delimiter="\t", dtype=np.float64)
    return table[:, 1:], table[:, 0]


def read_libsvm(path, n_features=None):
    """(X as CSR, y) of a libsvm file (1-based feature indices, as xgboost's demo)."""
    from scipy import sparse
    labels, rows, cols, values = [], [], [], []
    with open(path) as lines:
        for i, line in enumerate(lines):
            label, *pairs = line.split()
            labels.append(float(label))
            for pair in pairs:
                index, value = pair.split(":")
                rows.append(i)
                cols.append(int(index) - 1)
                values.append(float(value))
    width = n_features or max(cols) + 1
    X = sparse.csr_matrix((values, (rows, cols)), shape=(len(labels), width))
    return X, np.array(labels)


def load(name, args):
    """(X_train, y_train, X_test, y_test, task) of a data set."""
    option, train_file, test_file, task = DATASETS[name]
    directory = getattr(args, option)
    if name == "xgboost-agaricus":
        X, y = read_libsvm(os.path.join(directory, train_file))
        X_test, y_test = read_libsvm(os.path.join(directory, test_file), X.shape[1])
    else:
        X, y = read_tsv(os.path.join(directory, train_file))
        X_test, y_test = read_tsv(os.path.join(directory, test_file))
    if task != "regression":
        y, y_test = y.astype(np.int64), y_test.astype(np.int64)
    return X, y, X_test, y_test, task


def make_fit(name, task, X, y):
    """``fit() -> predict(X_test)``: probabilities of class 1 (binary), all classes'
    probabilities (multiclass) or values (regression)."""
    if name in common.DASKBOOST_VARIANTS:
        from daskboost import DaskBoostClassifier, DaskBoostRegressor
        cls = DaskBoostRegressor if task == "regression" else DaskBoostClassifier
        model = cls(n_estimators=ROUNDS, max_depth=DEPTH, learning_rate=LEARNING_RATE,
                    max_bin=256, **common.DASKBOOST_VARIANTS[name])
    elif name == "xgboost":
        import xgboost
        cls = xgboost.XGBRegressor if task == "regression" else xgboost.XGBClassifier
        model = cls(n_estimators=ROUNDS, max_depth=DEPTH, learning_rate=LEARNING_RATE,
                    max_bin=256, tree_method="hist", n_jobs=common.N_THREADS)
    else:
        import lightgbm
        cls = lightgbm.LGBMRegressor if task == "regression" else lightgbm.LGBMClassifier
        model = cls(n_estimators=ROUNDS, max_depth=DEPTH, num_leaves=2 ** DEPTH,
                    learning_rate=LEARNING_RATE, max_bin=255, min_child_samples=1,
                    min_child_weight=1.0, reg_lambda=1.0, n_jobs=common.N_THREADS,
                    verbose=-1)

    def fit():
        model.fit(X, y)
        if task == "regression":
            return lambda X_test: np.asarray(model.predict(X_test))
        proba = lambda X_test: np.asarray(model.predict_proba(X_test))  # noqa: E731
        return (lambda X_test: proba(X_test)[:, 1]) if task == "binary" else proba

    return fit


def metric(task, y, prediction):
    if task == "binary":
        return common.roc_auc(y, prediction)
    if task == "regression":
        return common.rmse(y, prediction)
    return common.mlogloss(y, prediction)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lightgbm-examples", default=None,
                        help="LightGBM's examples/ directory (a source checkout)")
    parser.add_argument("--xgboost-data", default=None,
                        help="xgboost's demo/data/ directory (a source checkout)")
    common.add_run_options(parser, LIBRARIES)
    args = common.parse_run_args(parser, LIBRARIES, argv)
    datasets = [name for name, (option, *_) in DATASETS.items() if getattr(args, option)]
    if not datasets or args.repeats < 1:
        parser.error("give --lightgbm-examples and/or --xgboost-data; --repeats >= 1")
    machine = common.machine_info()
    rows, results = [], {}
    for dataset in datasets:
        X, y, X_test, y_test, task = load(dataset, args)
        fits = {name: make_fit(name, task, X, y) for name in args.libraries}
        for fit in fits.values():  # JIT compilation and imports: untimed
            fit()
        times = {name: [] for name in args.libraries}
        predictors = {}
        for _ in range(args.repeats):
            for name, fit in fits.items():
                predictors[name], seconds, _ = common.timed(fit)
                times[name].append(seconds)
        scores = {name: metric(task, y_test, predict(X_test))
                  for name, predict in predictors.items()}
        medians = {name: common.median(v) for name, v in times.items()}
        results[dataset] = {"seconds": times, "metric": scores}
        reference = scores.get(common.FLOAT)
        for name in args.libraries:
            change = ("" if reference is None or name == common.FLOAT
                      else f"{scores[name] - reference:+.4f}")
            rows.append([dataset, f"{len(y):,} x {X.shape[1]}", name,
                         f"{METRIC_NAMES[task]} {scores[name]:.4f}", change,
                         f"{medians[name]:.3f}"])
    common.report(args, "example_data",
                  ["data set", "train rows x features", "library", "test metric",
                   f"minus {common.FLOAT}'s", "fit s (median)"], rows, machine, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
