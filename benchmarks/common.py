"""Shared code of the daskboost benchmarks: data, metrics, timing, reports, the parquet
lake, the four contestants and the benchmark driver ``run_benchmark(case)``.

Importing this module fixes the thread count: it sets OMP_NUM_THREADS (unless already
set) before numpy or any OpenMP runtime loads, so benchmark scripts import it first.
"""

import os

# Fix the thread count before numpy / OpenMP runtimes load (an explicit setting wins).
N_THREADS = 2
os.environ.setdefault("OMP_NUM_THREADS", str(N_THREADS))

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable, Optional, Sequence  # noqa: E402

import numpy as np  # noqa: E402


# ---- synthetic data -----------------------------------------------------------------------

N_FEATURES = 28
FEATURE_NAMES = [f"f{i:02d}" for i in range(N_FEATURES)]
LABEL_NAME = "label"

# Fixed affine map of the raw logit, chosen once on a 1M-row sample: the logit then has
# mean ~ -0.4 and standard deviation ~ 2.2, giving ~44% positives and a Bayes (true-logit)
# AUC of ~0.88 on complete data; with 5% of values missing a 100-tree depth-6 model reaches
# ~0.83. Fixed constants keep train and test on one distribution whatever their sizes.
_LOGIT_SCALE = 1.3
_LOGIT_SHIFT = -0.6


def _raw_features(rng, n_rows):
    """Complete (no missing values) float32 features of mixed shapes."""
    X = np.empty((n_rows, N_FEATURES), dtype=np.float32)
    X[:, 0:12] = rng.standard_normal((n_rows, 12), dtype=np.float32)
    X[:, 1] = 0.6 * X[:, 0] + 0.8 * X[:, 1]                  # a correlated pair
    X[:, 12:20] = rng.random((n_rows, 8), dtype=np.float32)  # uniform [0, 1)
    X[:, 20:24] = rng.standard_exponential((n_rows, 4), dtype=np.float32)  # skewed
    X[:, 24:28] = rng.integers(0, 10, size=(n_rows, 4)).astype(np.float32)  # discrete 0..9
    return X


def _logit(X):
    """A nonlinear logit with interactions; features 8-11, 18-19, 23 and 27 are noise."""
    x = X.astype(np.float64, copy=False)
    z = (0.8 * x[:, 0] - 0.6 * x[:, 1]
         + 0.7 * x[:, 2] * x[:, 3]
         + 1.0 * np.sin(2.0 * x[:, 4])
         + 0.8 * (x[:, 5] > 0.3) * x[:, 6]
         - 0.4 * (x[:, 7] ** 2 - 1.0)
         + 1.5 * (x[:, 12] - 0.5) * (x[:, 13] > 0.4)
         + 1.2 * np.abs(x[:, 14] - 0.5)
         + 0.9 * x[:, 15] * x[:, 16]
         - 0.8 * (x[:, 17] > 0.75)
         + 0.6 * np.tanh(x[:, 20] - 1.0)
         + 0.5 * np.log1p(x[:, 21]) * np.sign(x[:, 0])
         - 0.3 * x[:, 22]
         + 0.6 * np.isin(x[:, 24], (2.0, 5.0, 7.0))
         + 0.08 * (x[:, 25] - 4.5) * (x[:, 26] > 5.0))
    return _LOGIT_SCALE * z + _LOGIT_SHIFT


def train_then_use_run(doc, libraries, rows, use, argv=None, add_options=None):
    """The command line of a benchmark that fits on ``--train-rows`` rows of the binary
    task (default 100,000) and then times a use of ``--rows`` other rows (default
    ``rows``; ``use`` says what for, e.g. "predict"; ``add_options(parser)``: the
    benchmark's own options): returns (args, machine info, X, y, X_test)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=rows, help=f"rows to {use}")
    parser.add_argument("--train-rows", type=int, default=100_000)
    if add_options is not None:
        add_options(parser)
    add_run_options(parser, libraries)
    args = parse_run_args(parser, libraries, argv)
    if args.rows < 1000 or args.train_rows < 1000 or args.repeats < 1:
        parser.error("--rows and --train-rows >= 1000, --repeats >= 1")
    machine = machine_info()
    X, y, _ = make_binary(args.train_rows, args.seed)
    X_test, _, _ = make_binary(args.rows, args.seed + 1)
    return args, machine, X, y, X_test


def make_binary(n_rows, seed, missing_fraction=0.05):
    """``(X, y, logit)``: float32 features with NaNs at random, int8 labels, true logit.

    The label is ``logit + logistic noise > 0`` computed on the complete features; then
    ``missing_fraction`` of all feature values are replaced by NaN, independently.
    """
    rng = np.random.default_rng(seed)
    X = _raw_features(rng, n_rows)
    logit = _logit(X)
    u = rng.random(n_rows)
    noise = np.log(u) - np.log1p(-u)                           # standard logistic
    y = (logit + noise > 0).astype(np.int8)
    _set_missing(rng, X, missing_fraction)
    return X, y, logit


def _set_missing(rng, X, missing_fraction):
    """Replace ``missing_fraction`` of all values of ``X`` by NaN, independently, in place."""
    if missing_fraction > 0:
        X[rng.random(X.shape, dtype=np.float32) < missing_fraction] = np.nan


# Multiclass: the fifteen terms of ``_logit`` taken as separate columns, standardised with
# their exact means and standard deviations under ``_raw_features``' distributions, and
# mixed into N_CLASSES class scores by a fixed random matrix (its own seed, so train and
# test share it). With _CLASS_SCALE = 0.8 the Bayes classifier (argmax of the true scores)
# reaches ~0.66 accuracy and ~0.95 mlogloss on complete data; classes hold 4-17% of rows.
N_CLASSES = 10
_CLASS_SCALE = 0.8
_CLASS_WEIGHT_SEED = 20240601
_TERM_MEAN = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25, 0.25, 0.25, -0.103638,
                       0.0, 1.0, 0.3, 0.0])
_TERM_STD = np.array([1.0, 1.0, 1.0, 0.706990, 0.618135, 1.414214, 0.223607, 0.144338,
                      0.220479, 0.433013, 0.575589, 0.729336, 1.0, 0.458258, 1.816590])


def _terms(X):
    """(n, 15) float64: the terms of ``_logit`` (without its coefficients), standardised."""
    x = X.astype(np.float64, copy=False)
    T = np.column_stack([
        x[:, 0], x[:, 1], x[:, 2] * x[:, 3], np.sin(2.0 * x[:, 4]), (x[:, 5] > 0.3) * x[:, 6],
        x[:, 7] ** 2 - 1.0, (x[:, 12] - 0.5) * (x[:, 13] > 0.4), np.abs(x[:, 14] - 0.5),
        x[:, 15] * x[:, 16], (x[:, 17] > 0.75) * 1.0, np.tanh(x[:, 20] - 1.0),
        np.log1p(x[:, 21]) * np.sign(x[:, 0]), x[:, 22], np.isin(x[:, 24], (2.0, 5.0, 7.0)) * 1.0,
        (x[:, 25] - 4.5) * (x[:, 26] > 5.0)])
    return (T - _TERM_MEAN) / _TERM_STD


def class_scores(X):
    """(n, N_CLASSES) true class scores: softmax of a row gives its class probabilities."""
    weights = np.random.default_rng(_CLASS_WEIGHT_SEED).standard_normal((N_CLASSES, 15))
    return _CLASS_SCALE * (_terms(X) @ weights.T)


def make_multiclass(n_rows, seed, missing_fraction=0.05):
    """``(X, y, scores)``: float32 features with NaNs, int8 labels 0..9, true class scores.

    The label is ``argmax(scores + Gumbel noise)`` on the complete features, i.e. drawn
    from ``softmax(scores)``; then ``missing_fraction`` of all feature values become NaN.
    """
    rng = np.random.default_rng(seed)
    X = _raw_features(rng, n_rows)
    scores = class_scores(X)
    y = np.argmax(scores + rng.gumbel(size=scores.shape), axis=1).astype(np.int8)
    _set_missing(rng, X, missing_fraction)
    return X, y, scores


# Regression: the binary task's logit (standard deviation ~2.2) plus Gaussian noise of
# standard deviation 1, so the true function's RMSE (the floor) is ~1.0 and its R^2 ~0.83.
REGRESSION_NOISE = 1.0


def make_regression(n_rows, seed, missing_fraction=0.05):
    """``(X, y, f)``: float32 features with NaNs, float32 targets ``f + noise``, true ``f``."""
    rng = np.random.default_rng(seed)
    X = _raw_features(rng, n_rows)
    f = _logit(X)
    y = (f + REGRESSION_NOISE * rng.standard_normal(n_rows)).astype(np.float32)
    _set_missing(rng, X, missing_fraction)
    return X, y, f


# ---- metrics ------------------------------------------------------------------------------

def roc_auc(y_true, score):
    """Area under the ROC curve from average ranks (ties get half credit)."""
    y_true = np.asarray(y_true).astype(bool)
    score = np.asarray(score, dtype=np.float64)
    n_pos = int(y_true.sum())
    n_neg = y_true.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("AUC needs both classes in y_true")
    order = np.argsort(score, kind="mergesort")
    sorted_score = score[order]
    # start index of each run of equal scores, and the run's average 1-based rank
    starts = np.flatnonzero(np.r_[True, sorted_score[1:] != sorted_score[:-1]])
    ends = np.r_[starts[1:], score.size]
    run_rank = (starts + ends + 1) / 2.0
    ranks = np.empty(score.size, dtype=np.float64)
    ranks[order] = np.repeat(run_rank, ends - starts)
    return float((ranks[y_true].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def softmax(scores):
    scores = np.asarray(scores, dtype=np.float64)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def mlogloss(y_true, proba):
    """Mean negative log probability of the true class (xgboost's ``mlogloss``: the
    probability is floored at 1e-16); ``proba`` is (n, n_classes), classes 0..K-1."""
    proba = np.asarray(proba, dtype=np.float64)
    y_true = np.asarray(y_true).astype(np.int64)
    p = proba[np.arange(y_true.size), y_true]
    return float(-np.mean(np.log(np.maximum(p, 1e-16))))


def accuracy(y_true, proba):
    """Share of rows whose most probable class is the true one."""
    return float(np.mean(np.argmax(np.asarray(proba), axis=1) == np.asarray(y_true)))


def rmse(y_true, prediction):
    diff = np.asarray(y_true, dtype=np.float64) - np.asarray(prediction, dtype=np.float64)
    return float(np.sqrt(np.mean(diff * diff)))


# ---- timing -------------------------------------------------------------------------------

def timed(fn, *args, **kwargs):
    """``(result, wall seconds, process CPU seconds)`` of one call, after a gc pass.

    CPU seconds count all of the process's threads: on 2 threads a busy call has
    cpu/wall near 2, and a much lower ratio suggests the machine was contended.
    """
    gc.collect()
    start, cpu_start = time.perf_counter(), time.process_time()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start, time.process_time() - cpu_start


def balanced_order(names, repeat):
    """``names`` in the order repeat ``repeat`` runs them: the rows of a Williams design
    (a Latin square balanced for the one before: over ``len(names)`` repeats, or twice
    that for an odd count, each contestant is first equally often and follows each
    other one equally often within a repeat).  A fit right after another library's runs
    slower (its threads may still spin, its memory is in the caches): with each repeat
    merely starting one contestant later, each always followed the same one (on
    diamonds, daskboost's lake fit always came right after LightGBM's)."""
    names = list(names)
    n = len(names)
    if n < 2:
        return names
    # first row 0, 1, n-1, 2, n-2, ...; row r adds r (mod n); odd n: then mirrored rows
    first, low, high = [0], 1, n - 1
    while len(first) < n:
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    rows = [[(k + r) % n for k in first] for r in range(n)]
    if n % 2:
        rows += [row[::-1] for row in rows]
    return [names[k] for k in rows[repeat % len(rows)]]


def median(values):
    return float(statistics.median(values))


# ---- reporting ----------------------------------------------------------------------------

def markdown_table(header, rows):
    """A GitHub markdown table; ``rows`` are sequences of already formatted cells."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def ratio_cell(medians, name, reference="daskboost"):
    """``medians[reference] / medians[name]`` as a table cell ("" for the reference
    itself, or when the reference was not run)."""
    if reference not in medians or name == reference:
        return ""
    return f"{medians[reference] / medians[name]:.2f}"


def timed_contestants(fits, repeats, score, score_name, warm_up):
    """Fit each contestant of ``fits`` ({name: ``fit(small=False) -> predict``}) once
    small, untimed (``warm_up(predict)``), then ``repeats`` times in a balanced order;
    ``score(predict)`` scores each fitted model.  Prints each fit and returns the
    markdown table: median fit seconds, daskboost's median over the library's, the
    last fit's ``score_name``."""
    names = list(fits)
    for name in names:
        warm_up(fits[name](small=True))
    seconds = {name: [] for name in names}
    scores = {}
    for repeat in range(repeats):
        for name in balanced_order(names, repeat):
            predict, wall, cpu = timed(fits[name])
            seconds[name].append(wall)
            scores[name] = score(predict)
            print(f"repeat {repeat} {name}: fit {wall:.2f} s (CPU {cpu:.2f} s), "
                  f"{score_name} {scores[name]:.4f}", flush=True)
    medians = {name: median(values) for name, values in seconds.items()}
    return markdown_table(["library", "fit s (median)", "daskboost ÷ library", score_name],
                          [[name, f"{medians[name]:.2f}", ratio_cell(medians, name),
                            f"{scores[name]:.4f}"] for name in names])


def report(args, benchmark, header, rows, machine, results):
    """Print the markdown table of ``rows``; with ``--output``, write the run too
    (``write_results``). Returns the table."""
    table = markdown_table(header, rows)
    print()
    print(table)
    if args.output:
        write_results(args.output, benchmark, vars(args), machine, results, table)
    return table


def load_average():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # not available on this platform
        return None


def machine_info():
    import importlib.metadata as md
    versions = {}
    for package in ("daskboost", "dask", "distributed", "numpy", "pandas", "pyarrow", "numba",
                    "xgboost", "lightgbm", "scikit-learn"):
        try:
            versions[package] = md.version(package)
        except md.PackageNotFoundError:
            versions[package] = None
    try:
        import subprocess
        repo = Path(__file__).resolve().parent.parent
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {
        "git_commit": commit,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "load_average_at_start": load_average(),
        "versions": versions,
    }


def write_results(path, benchmark, config, machine, results, markdown):
    """Write the run (command, config, machine, results) as ``PATH.json`` and the table
    as ``PATH.md``; print where they went."""
    payload = {
        "benchmark": benchmark,
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
        "config": config,
        "machine": {**machine, "load_average_at_end": load_average()},
        "results": results,
        "markdown": markdown,
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    json_path = path.with_suffix(".json")
    md_path = path.with_suffix(".md")
    json_path.write_text(json.dumps(payload, indent=2, sort_keys=False) + "\n")
    md_path.write_text(markdown + "\n")
    print(f"\n# wrote {json_path} and {md_path}")


# ---- parquet lake -------------------------------------------------------------------------

def write_parquet_lake(directory, X, y, n_files, feature_names=FEATURE_NAMES,
                       label_name=LABEL_NAME):
    """Write rows of (X, y) as ``n_files`` parquet files of near-equal length; a 2-D y
    (several targets) as one column per target, ``label_name`` then a list of names.

    NaN features are stored as parquet nulls (as ``pandas.DataFrame.to_parquet`` would);
    they read back as NaN. Returns the directory's total size in bytes.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, X.shape[0], n_files + 1).astype(np.int64)
    total = 0
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        columns = [pa.array(np.ascontiguousarray(X[lo:hi, j]), from_pandas=True)
                   for j in range(X.shape[1])]
        targets = y[lo:hi].reshape(hi - lo, -1)
        columns += [pa.array(np.ascontiguousarray(targets[:, t]))
                    for t in range(targets.shape[1])]
        labels = [label_name] if y.ndim == 1 else list(label_name)
        table = pa.Table.from_arrays(columns, names=list(feature_names) + labels)
        path = directory / f"part-{i:04d}.parquet"
        pq.write_table(table, path)
        total += path.stat().st_size
    return total


# ---- the benchmark: settings and the four contestants ---------------------------------

# daskboost with its defaults ("daskboost": quantized gradients from 100,000 numeric rows),
# with quantized gradients always and never (issue 15): contestants of their own
QUANTIZED = "daskboost-quantized"
QUANTIZED_PARAMS = {"quantized_grad": True, "num_grad_quant_bins": 4}
FLOAT = "daskboost-float"
FLOAT_PARAMS = {"quantized_grad": False}
# xgboost's ``missing`` set to a value (the lake holds none of it): what masking the
# input costs, the lake then read as pandas partitions rather than a column at a time
MISSING = "daskboost-missing"
MISSING_PARAMS = {"missing": -999.0}
DASKBOOST_VARIANTS = {"daskboost": {}, QUANTIZED: QUANTIZED_PARAMS, FLOAT: FLOAT_PARAMS,
                      MISSING: MISSING_PARAMS}
# a warm-up fit is small, so the default would take float gradients: warm-ups fit with
# each kind of gradients, so that no timed fit loads compiled kernels
WARMUP_GRADIENTS = ({"quantized_grad": True}, {"quantized_grad": False})
LIBRARIES = ("daskboost", QUANTIZED, FLOAT, MISSING, "xgboost", "lightgbm", "sklearn")
REFERENCE = "xgboost"
N_ESTIMATORS = 100
MAX_DEPTH = 6
LEARNING_RATE = 0.1
MAX_BIN = 256
WARMUP_ROWS = 1000
TASKS = ("binary", "multiclass", "regression")


def _predictor(task, model):
    """``X_test -> predictions`` read by the case's metrics: P(class 1) for binary tasks,
    the (n, n_classes) probabilities for multiclass ones, the predictions for regression."""
    if task == "binary":
        return lambda X_test: model.predict_proba(X_test)[:, 1]
    if task == "multiclass":
        return lambda X_test: np.asarray(model.predict_proba(X_test))
    return lambda X_test: np.asarray(model.predict(X_test))


# Each ``make_*`` returns (params, fit, warmup, notes); ``fit()`` trains on the full
# training data and returns a callable mapping a numpy test matrix to predictions (see
# ``_predictor``); ``warmup(X_small)`` is an untimed tiny fit.

def make_daskboost(task, lake_dir, warmup_lake_dir, extra_params=None):
    import dask.dataframe as dd
    from daskboost import DaskBoostClassifier, DaskBoostRegressor

    params = dict(n_estimators=N_ESTIMATORS, max_depth=MAX_DEPTH, learning_rate=LEARNING_RATE,
                  max_bin=MAX_BIN, reg_lambda=1.0, gamma=0.0, min_child_weight=1.0,
                  **(extra_params or {}))
    if task == "regression":
        params["objective"] = "reg:squarederror"
    model_class = DaskBoostRegressor if task == "regression" else DaskBoostClassifier

    def fit_lake(directory, **overrides):
        ddf = dd.read_parquet(directory)
        X = ddf[FEATURE_NAMES]
        y = ddf[LABEL_NAME]
        model = model_class(**{**params, **overrides}).fit(X, y)
        return _predictor(task, model)

    def warmup(X_small):
        for gradients in WARMUP_GRADIENTS:
            predict = fit_lake(warmup_lake_dir, n_estimators=3, **gradients)
            predict(X_small)

    notes = ["fit = dd.read_parquet + column selection + fit (parquet read included)",
             "local threaded scheduler (dask default), no distributed Client",
             f"numba warm-up: an untimed {WARMUP_ROWS}-row fit from parquet before timing"]
    if task == "multiclass":
        notes.append("objective left to DaskBoostClassifier: multi:softprob with num_class "
                     "from the labels (one tree per class and round); softmax hessian "
                     "2p(1-p) as in xgboost")
    return params, (lambda: fit_lake(lake_dir)), warmup, notes


def make_xgboost(task, X, y, X_small, y_small):
    import xgboost

    params = dict(tree_method="hist", n_estimators=N_ESTIMATORS, max_depth=MAX_DEPTH,
                  learning_rate=LEARNING_RATE, max_bin=MAX_BIN, n_jobs=N_THREADS)
    if task == "multiclass":
        params["objective"] = "multi:softprob"
    elif task == "regression":
        params["objective"] = "reg:squarederror"
    model_class = xgboost.XGBRegressor if task == "regression" else xgboost.XGBClassifier

    def fit(X_fit=X, y_fit=y, **overrides):
        model = model_class(**{**params, **overrides}).fit(X_fit, y_fit)
        return _predictor(task, model)

    def warmup(_):
        fit(X_small, y_small, n_estimators=3)

    notes = ["defaults kept: reg_lambda=1, gamma=0, min_child_weight=1"]
    return params, fit, warmup, notes


def make_lightgbm(task, X, y, X_small, y_small):
    import lightgbm

    # lightgbm grows leaf-wise; num_leaves=64 with max_depth=6 allows a full depth-6 tree.
    # min_child_weight is lightgbm's min_sum_hessian_in_leaf (xgboost's min_child_weight);
    # min_child_samples=1 removes lightgbm's extra row-count floor (default 20).
    params = dict(n_estimators=N_ESTIMATORS, max_depth=MAX_DEPTH, num_leaves=2 ** MAX_DEPTH,
                  learning_rate=LEARNING_RATE, max_bin=MAX_BIN - 1, n_jobs=N_THREADS,
                  min_child_weight=1.0, min_child_samples=1, reg_lambda=1.0,
                  min_split_gain=0.0, verbose=-1)
    if task == "multiclass":
        params["objective"] = "multiclass"
    elif task == "regression":
        params["objective"] = "regression"
    model_class = lightgbm.LGBMRegressor if task == "regression" else lightgbm.LGBMClassifier

    def fit(X_fit=X, y_fit=y, **overrides):
        model = model_class(**{**params, **overrides}).fit(X_fit, y_fit)
        return _predictor(task, model)

    def warmup(_):
        fit(X_small, y_small, n_estimators=3)

    notes = ["max_bin=255 is the setting comparable to xgboost's max_bin=256",
             "leaf-wise growth, capped by max_depth=6 and num_leaves=64",
             "min_sum_hessian_in_leaf=1 (sklearn-API name min_child_weight), "
             "min_child_samples=1 (lightgbm default 20)",
             "bin edges come from a 200k-row sample (bin_construct_sample_cnt default)"]
    if task == "multiclass":
        notes.append("softmax hessian K/(K-1) p(1-p) (xgboost/daskboost: 2p(1-p)), so the "
                     "same min_child_weight and reg_lambda weigh a little differently")
    return params, fit, warmup, notes


def make_sklearn(task, X, y, X_small, y_small):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    params = dict(max_iter=N_ESTIMATORS, max_depth=MAX_DEPTH, max_leaf_nodes=2 ** MAX_DEPTH,
                  learning_rate=LEARNING_RATE, max_bins=MAX_BIN - 1, early_stopping=False,
                  l2_regularization=1.0, min_samples_leaf=1, random_state=0)
    if task == "multiclass":
        params["loss"] = "log_loss"
    elif task == "regression":
        params["loss"] = "squared_error"
    model_class = (HistGradientBoostingRegressor if task == "regression"
                   else HistGradientBoostingClassifier)

    def fit(X_fit=X, y_fit=y, **overrides):
        model = model_class(**{**params, **overrides}).fit(X_fit, y_fit)
        return _predictor(task, model)

    def warmup(_):
        fit(X_small, y_small, max_iter=3)

    notes = ["max_bins=255 (its maximum; NaN gets an extra bin)",
             "leaf-wise growth, capped by max_depth=6 and max_leaf_nodes=64",
             "no min_child_weight parameter (internal min hessian to split is 1e-3)",
             "bin edges come from a 200k-row subsample",
             f"threads from OpenMP: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}"]
    if task == "multiclass":
        notes.append("softmax hessian p(1-p) (xgboost/daskboost: 2p(1-p))")
    return params, fit, warmup, notes


MAKERS = {"xgboost": make_xgboost, "lightgbm": make_lightgbm, "sklearn": make_sklearn}


# ---- the benchmark: cases and the driver ----------------------------------------------

@dataclass(frozen=True)
class Metric:
    """A test metric: per-run values go to ``results[library][key]``, their median to
    ``results[library]["test_" + key]``, and the comparison with xgboost to
    ``key + "_minus_xgboost"`` (``versus="difference"``, listed under the table) or
    ``key + "_ratio_to_xgboost"`` (``versus="ratio"``, a table column)."""
    key: str                                  # "auc"
    label: str                                # "AUC": progress lines, "test AUC" column
    fn: Callable                              # fn(y_test, predictions) -> float
    digits: int = 4
    versus: Optional[str] = "difference"      # "difference", "ratio" or None

    @property
    def comparison_key(self):
        if self.versus is None:
            return None
        return f"{self.key}_{'minus' if self.versus == 'difference' else 'ratio_to'}_{REFERENCE}"


@dataclass
class DataSummary:
    """What ``Case.describe_data`` tells about the generated data: ``line`` follows
    "# data generated in X s; " on stdout, ``footnotes`` go under the table and ``info``
    into the JSON config (as "data")."""
    line: str
    footnotes: Sequence[str] = ()
    info: dict = field(default_factory=dict)


@dataclass
class Case:
    """One benchmark: a task, its data, its metrics and how it is described."""
    name: str                       # "bench_binary" (the JSON's "benchmark")
    title: str                      # "binary" in "# daskboost binary benchmark: ..."
    task: str                       # one of TASKS
    doc: str                        # the script's docstring; its first paragraph is --help's
    make_data: Callable             # (n_rows, seed) -> (X float32, y, truth)
    describe_data: Callable         # (y_train, y_test, truth_test) -> DataSummary
    metrics: Sequence[Metric]
    default_rows: int = 1_000_000
    default_test_rows: int = 200_000
    trees: str = f"{N_ESTIMATORS} trees"   # how the model size reads in the report
    config: dict = field(default_factory=dict)  # extra JSON config entries

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, not {self.task!r}")


def add_run_options(parser, libraries):
    """The options every side-by-side benchmark takes: --repeats, --libraries (out of
    ``libraries``), --seed and --output."""
    parser.add_argument("--repeats", type=int, default=3,
                        help="fits per library; median times are reported")
    parser.add_argument("--libraries", default=",".join(libraries),
                        help=f"comma list out of {','.join(libraries)}")
    parser.add_argument("--seed", type=int, default=0, help="data seed")
    parser.add_argument("--output", default=None,
                        help="write PATH.json and PATH.md with the results")
    if QUANTIZED in libraries:
        parser.add_argument("--quant-bins", type=int, default=4,
                            help=f"num_grad_quant_bins of {QUANTIZED}")


def parse_run_args(parser, libraries, argv=None):
    """``parser.parse_args(argv)`` with ``args.libraries`` (the comma list of
    ``add_run_options``) replaced by its names, checked against ``libraries``,
    duplicates dropped; a parser error names unknown ones."""
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.libraries.split(",") if name.strip()]
    unknown = [name for name in names if name not in libraries]
    if unknown or not names:
        parser.error(f"--libraries: unknown {unknown}; choose from {','.join(libraries)}")
    args.libraries = list(dict.fromkeys(names))
    if QUANTIZED in libraries:
        QUANTIZED_PARAMS["num_grad_quant_bins"] = args.quant_bins
    return args


def parse_number_list(parser, option, text, kind, what):
    """The comma list ``text`` of option ``option`` as ``kind`` values (a parser error
    says ``what`` the list holds)."""
    try:
        return [kind(part) for part in text.split(",") if part.strip()]
    except ValueError:
        parser.error(f"{option}: comma list of {what}; got {text!r}")


def parse_args(case, argv=None):
    parser = argparse.ArgumentParser(description=case.doc.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=case.default_rows, help="training rows")
    parser.add_argument("--test-rows", type=int, default=case.default_test_rows,
                        help="test rows")
    parser.add_argument("--files", type=int, default=8, help="parquet files in daskboost's lake")
    add_run_options(parser, LIBRARIES)
    args = parse_run_args(parser, LIBRARIES, argv)
    if args.rows < 2 * WARMUP_ROWS or args.test_rows < 100 or args.repeats < 1 or args.files < 1:
        parser.error(f"need --rows >= {2 * WARMUP_ROWS}, --test-rows >= 100, "
                     "--repeats >= 1, --files >= 1")
    return args


def fit_ratios(results):
    """Set ``result[name + "_fit_ratio"]`` (daskboost variant ``name``'s median fit
    seconds over the library's) in every library's result, for each daskboost variant
    run (plain and quantized); returns those variants' names."""
    ours = {name: results[name]["fit_s_median"] for name in ("daskboost", QUANTIZED)
            if name in results}
    for result in results.values():
        fit_s = result["fit_s_median"]
        for name, seconds in ours.items():
            result[f"{name}_fit_ratio"] = (seconds / fit_s if seconds is not None and fit_s
                                           else None)
    return list(ours)


def _fmt(value, digits):
    return "n/a" if value is None else f"{value:.{digits}f}"


def run_benchmark(case, argv=None):
    """Run ``case`` as a command-line benchmark; returns the process exit status (1 when a
    library failed). See bench_binary.py's docstring for what is measured and how."""
    args = parse_args(case, argv)
    info = machine_info()
    print(f"# daskboost {case.title} benchmark: {args.rows:,} train rows x "
          f"{len(FEATURE_NAMES)} float32 features (5% NaN), {args.test_rows:,} test rows",
          flush=True)
    print(f"# {case.trees}, depth {MAX_DEPTH}, learning_rate {LEARNING_RATE}, "
          f"max_bin {MAX_BIN} (lightgbm/sklearn: 255), repeats {args.repeats} (median), "
          f"seed {args.seed}", flush=True)

    start = time.perf_counter()
    X_train, y_train, _ = case.make_data(args.rows, seed=2 * args.seed)
    X_test, y_test, test_truth = case.make_data(args.test_rows, seed=2 * args.seed + 1)
    data = case.describe_data(y_train, y_test, test_truth)
    print(f"# data generated in {time.perf_counter() - start:.1f} s; {data.line}", flush=True)
    X_small, y_small = X_train[:WARMUP_ROWS], y_train[:WARMUP_ROWS]

    results = {}
    with tempfile.TemporaryDirectory(prefix="daskboost-bench-") as tmp:
        contestants = {}
        lake = None
        lake_dir, warmup_dir = Path(tmp) / "train", Path(tmp) / "warmup"
        for name in args.libraries:
            if name in DASKBOOST_VARIANTS and lake is None:
                import dask
                import dask.dataframe as dd
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
            if name in DASKBOOST_VARIANTS:
                contestants[name] = make_daskboost(case.task, lake_dir, warmup_dir,
                                                   DASKBOOST_VARIANTS[name])
            else:
                contestants[name] = MAKERS[name](case.task, X_train, y_train, X_small, y_small)
            results[name] = {"params": contestants[name][0], "notes": contestants[name][3],
                             "fit_s": [], "fit_cpu_s": [], "predict_s": [],
                             **{metric.key: [] for metric in case.metrics}, "error": None}

        # untimed warm-up: numba JIT for daskboost, first-call overheads for the others
        for name, (_, _, warmup, _) in contestants.items():
            try:
                _, seconds, _ = timed(warmup, X_small)
                print(f"# warm-up {name}: {seconds:.1f} s (untimed)", flush=True)
            except Exception:
                results[name]["error"] = traceback.format_exc()
                print(f"# warm-up {name} FAILED:\n{results[name]['error']}", flush=True)

        for repeat in range(args.repeats):
            for name in balanced_order(contestants, repeat):
                _, fit, _, _ = contestants[name]
                result = results[name]
                if result["error"] is not None:
                    continue
                try:
                    predict, fit_s, fit_cpu_s = timed(fit)
                    prediction, predict_s, _ = timed(predict, X_test)
                    values = [metric.fn(y_test, prediction) for metric in case.metrics]
                except Exception:
                    result["error"] = traceback.format_exc()
                    print(f"# {name} FAILED (repeat {repeat + 1}):\n{result['error']}", flush=True)
                    continue
                finally:
                    predict = prediction = None
                    gc.collect()
                result["fit_s"].append(fit_s)
                result["fit_cpu_s"].append(fit_cpu_s)
                result["predict_s"].append(predict_s)
                for metric, value in zip(case.metrics, values):
                    result[metric.key].append(value)
                scores = ", ".join(f"{metric.label} {value:.{metric.digits}f}"
                                   for metric, value in zip(case.metrics, values))
                print(f"# repeat {repeat + 1}/{args.repeats} {name}: fit {fit_s:.2f} s "
                      f"(cpu {fit_cpu_s:.2f} s), predict {predict_s:.3f} s, {scores}",
                      flush=True)

    # ---- summary ------------------------------------------------------------------------
    for result in results.values():
        ok = result["error"] is None and result["fit_s"]
        result["fit_s_median"] = median(result["fit_s"]) if ok else None
        result["predict_s_median"] = median(result["predict_s"]) if ok else None
        for metric in case.metrics:
            result["test_" + metric.key] = median(result[metric.key]) if ok else None
    ours = fit_ratios(results)
    for result in results.values():
        for metric in case.metrics:
            if metric.versus is None:
                continue
            value = result["test_" + metric.key]
            reference = results.get(REFERENCE, {}).get("test_" + metric.key)
            if value is None or reference is None:
                compared = None
            elif metric.versus == "difference":
                compared = value - reference
            else:
                compared = value / reference if reference else None
            result[metric.comparison_key] = compared

    header = ["library", "fit s (median)", "predict s"]
    for metric in case.metrics:
        header.append(f"test {metric.label}")
        if metric.versus == "ratio":
            header.append(f"{metric.label} / {REFERENCE}")
    header.extend(f"{name} fit ratio" for name in ours)
    rows = []
    for name, r in results.items():
        row = [name, _fmt(r["fit_s_median"], 2), _fmt(r["predict_s_median"], 3)]
        for metric in case.metrics:
            row.append(_fmt(r["test_" + metric.key], metric.digits))
            if metric.versus == "ratio":
                row.append(_fmt(r[metric.comparison_key], 4))
        rows.append(row + [_fmt(r[f"{ours_name}_fit_ratio"], 2) for ours_name in ours])
    lines = [markdown_table(header, rows), ""]
    lines.append(f"{args.rows:,} train x {len(FEATURE_NAMES)} features (5% NaN), "
                 f"{args.test_rows:,} test rows; {case.trees}, depth {MAX_DEPTH}, "
                 f"learning_rate {LEARNING_RATE}; median of {args.repeats} run(s); "
                 f"{N_THREADS} threads each.")
    lines.append("daskboost fit ratio = daskboost fit s / library fit s (< 1: daskboost is "
                 f"faster); {QUANTIZED}: daskboost with {QUANTIZED_PARAMS}; {FLOAT}: with "
                 f"{FLOAT_PARAMS}; {MISSING}: with {MISSING_PARAMS}. "
                 "daskboost's fit includes reading the parquet lake "
                 f"({args.files} files) with dd.read_parquet; the others fit in-memory numpy.")
    lines.append("daskboost was warmed up (untimed 1,000-row fit) so numba JIT compile time "
                 "is not counted; the other libraries had a tiny untimed fit too.")
    lines.append("lightgbm max_bin=255 and sklearn max_bins=255 are the settings comparable "
                 "to xgboost/daskboost max_bin=256.")
    for metric in case.metrics:
        if metric.versus != "difference":
            continue
        diffs = [f"{name} {r[metric.comparison_key]:+.{metric.digits}f}"
                 for name, r in results.items()
                 if name != REFERENCE and r[metric.comparison_key] is not None]
        if diffs:
            lines.append(f"test {metric.label} minus {REFERENCE}'s: " + ", ".join(diffs) + ".")
    lines.extend(data.footnotes)
    failed = [name for name, r in results.items() if r["error"] is not None]
    if failed:
        lines.append("FAILED (see traceback above / in the JSON): " + ", ".join(failed) + ".")
    markdown = "\n".join(lines)
    print()
    print(markdown)

    if args.output:
        config = {"rows": args.rows, "test_rows": args.test_rows,
                  "features": len(FEATURE_NAMES), "missing_fraction": 0.05,
                  "repeats": args.repeats, "seed": args.seed, "threads": N_THREADS,
                  "warmup_rows": WARMUP_ROWS, **case.config}
        if data.info:
            config["data"] = data.info
        config["parquet_lake"] = lake
        write_results(args.output, case.name, config, info, results, markdown)
    return 1 if failed else 0
