"""Shared helpers for the daskboost benchmarks: data, parquet lake, AUC, timing, reports.

Benchmark scripts set OMP_NUM_THREADS before importing this module (it imports numpy).
"""

import gc
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np


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
    if missing_fraction > 0:
        X[rng.random(X.shape, dtype=np.float32) < missing_fraction] = np.nan
    return X, y, logit


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


def median(values):
    return float(statistics.median(values))


# ---- reporting ----------------------------------------------------------------------------

def markdown_table(header, rows):
    """A GitHub markdown table; ``rows`` are sequences of already formatted cells."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


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


def write_results(path, payload, markdown):
    """Write ``payload`` as JSON and ``markdown`` next to it (same stem, .json and .md)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    json_path = path.with_suffix(".json")
    md_path = path.with_suffix(".md")
    json_path.write_text(json.dumps(payload, indent=2, sort_keys=False) + "\n")
    md_path.write_text(markdown + "\n")
    return json_path, md_path


# ---- parquet lake -------------------------------------------------------------------------

def write_parquet_lake(directory, X, y, n_files, feature_names=FEATURE_NAMES,
                       label_name=LABEL_NAME):
    """Write rows of (X, y) as ``n_files`` parquet files of near-equal length.

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
        columns.append(pa.array(y[lo:hi]))
        table = pa.Table.from_arrays(columns, names=list(feature_names) + [label_name])
        path = directory / f"part-{i:04d}.parquet"
        pq.write_table(table, path)
        total += path.stat().st_size
    return total
