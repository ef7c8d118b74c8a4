"""Text-file benchmark: ``daskboost.DMatrix("path?format=...")`` against xgboost's,
scikit-learn's and pandas' readers of the same libsvm and CSV files.

What it measures, side by side in one process and one run:

* Data: the binary task of bench_binary.py (``common.make_binary``): ``--rows`` (default
  1,000,000) rows x 28 float32 features, 5% of the values NaN, labels 0/1, written once
  (untimed) to a temporary directory, as one file per format (``--formats``, default
  ``libsvm,csv``):

  - libsvm: ``label 0:v 1:v ... 27:v`` per row, 0-based indices, a NaN simply not written
    (missing), the values with ``%.9g`` (a float32 comes back exactly), the label an
    integer;
  - csv: the label in column 0, then the 28 features with ``%.9g``, an empty field for
    a NaN; no header line (the bytes ``pandas.DataFrame.to_csv(header=False,
    index=False, float_format="%.9g", na_rep="")`` writes, formatted here in blocks of
    rows with one ``%`` each: a few times faster).

* Contestants (``--contestants``, default all), each loading the whole file into its own
  in-memory matrix:

  - ``daskboost``: ``daskboost.DMatrix("path?format=libsvm")`` (a scipy.sparse CSR matrix)
    or ``DMatrix("path?format=csv&label_column=0")`` (a dense float32 array), then
    ``num_row()``;
  - ``xgboost``: ``xgboost.DMatrix(the same URI, nthread=2)``, then ``num_row()``
    (xgboost 3.1+ warns that text input is deprecated: the warning is silenced here);
  - ``sklearn`` (libsvm only): ``sklearn.datasets.load_svmlight_file(path,
    zero_based=True)`` (a float64 CSR matrix and the labels);
  - ``pandas`` (csv only): ``pandas.read_csv(path, header=None)`` (its C parser: a float64
    DataFrame, label column included).

  The files were just written and are read again every repeat: they come from the page
  cache, so this measures parsing, not the disk.
* Repeats (``--repeats``, default 3) go round-robin over the contestants (in the balanced
  orders of ``common.balanced_order``), format by format; reported per format and
  contestant: the median seconds, the file's size in MB (10^6 bytes), MB/s (size ÷
  median), and daskboost's time as a ratio of each (``daskboost ÷ contestant`` < 1:
  daskboost is faster).
* A check, printed under each table: daskboost's and xgboost's matrices (first repeat)
  have the same row and column counts, label sums and non-missing counts, and these are
  the data's (rows, 28, positives, values that are not NaN).
* Threads: 2 (``OMP_NUM_THREADS``, xgboost's ``nthread``); an untimed warm-up of every
  contestant on a 2,000-row file of each format first (numba JIT or its cache).

Run from the repository root::

    python benchmarks/bench_text_files.py               # 1M rows, libsvm + csv, 3 repeats
    python benchmarks/bench_text_files.py --rows 200000 --repeats 5
    python benchmarks/bench_text_files.py --formats csv --contestants daskboost,xgboost
    python benchmarks/bench_text_files.py --output benchmarks/results/text_files

``--output PATH`` writes ``PATH.json`` (configuration, every timing, the check, versions)
and ``PATH.md`` (the tables) besides printing them to stdout.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# common fixes OMP_NUM_THREADS (default 2) when imported, before numpy loads: import it first
from common import (N_FEATURES, N_THREADS, balanced_order, machine_info,  # noqa: E402
                    make_binary, markdown_table, median, ratio_cell, timed, write_results)

import argparse  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

FORMATS = ("libsvm", "csv")
URI_QUERY = {"libsvm": "?format=libsvm", "csv": "?format=csv&label_column=0"}
CONTESTANTS = {  # name: (label in the table, formats it reads)
    "daskboost": ("daskboost.DMatrix", FORMATS),
    "xgboost": ("xgboost.DMatrix", FORMATS),
    "sklearn": ("sklearn load_svmlight_file", ("libsvm",)),
    "pandas": ("pandas.read_csv", ("csv",)),
}
WARMUP_ROWS = 2000
BLOCK_ROWS = 20_000     # rows formatted by one '%' when writing
_NAN_ENTRY = re.compile(r" \d+:nan")


# ---- the files ------------------------------------------------------------------------------

def write_text_file(path, X, y, fmt):
    """Write ``(X, y)`` to ``path`` as libsvm or csv (see the module docstring): per block
    of rows one ``%`` of a row format repeated, then the NaN entries taken out of the
    text (libsvm: `` j:nan`` dropped; csv: ``nan`` made an empty field)."""
    n_rows, n_features = X.shape
    if fmt == "libsvm":
        row_format = "%d" + "".join(f" {j}:%.9g" for j in range(n_features)) + "\n"
    else:
        row_format = "%d" + ",%.9g" * n_features + "\n"
    with open(path, "w", encoding="ascii", newline="\n") as f:
        for start in range(0, n_rows, BLOCK_ROWS):
            stop = min(start + BLOCK_ROWS, n_rows)
            block = np.empty((stop - start, n_features + 1), dtype=np.float64)
            block[:, 0] = y[start:stop]
            block[:, 1:] = X[start:stop]
            text = (row_format * (stop - start)) % tuple(block.ravel().tolist())
            f.write(_NAN_ENTRY.sub("", text) if fmt == "libsvm" else text.replace("nan", ""))


# ---- the contestants ------------------------------------------------------------------------

def loaders(fmt):
    """{contestant: callable(path) -> what it loaded} for the format ``fmt``."""
    query = URI_QUERY[fmt]

    def run_daskboost(path):
        import daskboost
        matrix = daskboost.DMatrix(f"{path}{query}")
        matrix.num_row()
        return matrix

    def run_xgboost(path):
        import xgboost
        matrix = xgboost.DMatrix(f"{path}{query}", nthread=N_THREADS)
        matrix.num_row()
        return matrix

    def run_sklearn(path):
        from sklearn.datasets import load_svmlight_file
        return load_svmlight_file(str(path), zero_based=True)

    def run_pandas(path):
        import pandas as pd
        return pd.read_csv(path, header=None)

    runs = {"daskboost": run_daskboost, "xgboost": run_xgboost, "sklearn": run_sklearn,
            "pandas": run_pandas}
    return {name: run for name, run in runs.items() if fmt in CONTESTANTS[name][1]}


def summary(matrix):
    """``[rows, columns, label sum, non-missing values]`` of a daskboost or xgboost
    DMatrix."""
    label = np.asarray(matrix.get_label(), dtype=np.float64)
    return [int(matrix.num_row()), int(matrix.num_col()), float(label.sum()),
            int(matrix.num_nonmissing())]


def check_lines(fmt, summaries, expected):
    """The check's sentence for one format: daskboost's and xgboost's summaries against
    each other and against the data written."""
    def said(values):
        return (f"{values[0]:,} rows, {values[1]} columns, label sum {values[2]:,.0f}, "
                f"{values[3]:,} non-missing values")

    if not summaries:
        return [f"Check ({fmt}): not run (needs daskboost or xgboost among the contestants)."]
    lines = []
    if len(summaries) == 2 and summaries["daskboost"] == summaries["xgboost"]:
        agree = f"daskboost and xgboost agree: {said(summaries['daskboost'])}"
    else:
        agree = "; ".join(f"{name}: {said(values)}" for name, values in summaries.items())
        if len(summaries) == 2:
            agree = f"daskboost and xgboost DISAGREE: {agree}"
    ok = all(values == expected for values in summaries.values())
    verdict = ("the same as the data written" if ok
               else f"NOT the data written ({said(expected)})")
    lines.append(f"Check ({fmt}): {agree}; {verdict}.")
    return lines


# ---- the run ------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows in each file")
    parser.add_argument("--formats", default=",".join(FORMATS),
                        help=f"comma-separated, among {', '.join(FORMATS)}")
    parser.add_argument("--contestants", default=",".join(CONTESTANTS),
                        help=f"comma-separated, among {', '.join(CONTESTANTS)} (sklearn reads "
                             "libsvm only, pandas csv only)")
    parser.add_argument("--repeats", type=int, default=3, help="median of this many runs")
    parser.add_argument("--seed", type=int, default=0, help="data seed")
    parser.add_argument("--output", default=None,
                        help="write PATH.json and PATH.md with the results")
    args = parser.parse_args(argv)
    if args.rows < WARMUP_ROWS or args.repeats < 1:
        parser.error(f"need --rows >= {WARMUP_ROWS} and --repeats >= 1")
    formats = [name.strip() for name in args.formats.split(",") if name.strip()]
    chosen = [name.strip() for name in args.contestants.split(",") if name.strip()]
    if not formats or any(fmt not in FORMATS for fmt in formats):
        parser.error(f"--formats={args.formats!r}: among {', '.join(FORMATS)}")
    if not chosen or any(name not in CONTESTANTS for name in chosen):
        parser.error(f"--contestants={args.contestants!r}: among {', '.join(CONTESTANTS)}")
    runs = {fmt: {name: run for name, run in loaders(fmt).items() if name in chosen}
            for fmt in formats}
    if not any(runs.values()):
        parser.error(f"no contestant among {', '.join(chosen)} reads {', '.join(formats)}")
    # xgboost 3.1+ warns on every text URI that text input is deprecated
    warnings.filterwarnings("ignore", message=r"(?s).*Text file input has been deprecated")

    info = machine_info()
    print(f"# daskboost text-file benchmark: {args.rows:,} rows x {N_FEATURES} float32 "
          f"features (5% NaN), binary labels; formats {', '.join(formats)}; "
          f"{N_THREADS} threads; repeats {args.repeats} (median)", flush=True)
    X, y, _ = make_binary(args.rows, seed=args.seed)
    expected = [args.rows, N_FEATURES, float(y.sum(dtype=np.int64)),
                int(np.count_nonzero(~np.isnan(X)))]
    results = {fmt: {name: {"load_s": [], "load_cpu_s": [], "error": None}
                     for name in runs[fmt]} for fmt in formats}
    summaries = {fmt: {} for fmt in formats}
    sizes = {}
    with tempfile.TemporaryDirectory(prefix="daskboost-bench-text-") as tmp:
        paths, warmups = {}, {}
        for fmt in formats:
            paths[fmt] = Path(tmp) / f"data.{fmt}"
            warmups[fmt] = Path(tmp) / f"warmup.{fmt}"
            _, seconds, _ = timed(write_text_file, paths[fmt], X, y, fmt)
            write_text_file(warmups[fmt], X[:WARMUP_ROWS], y[:WARMUP_ROWS], fmt)
            sizes[fmt] = paths[fmt].stat().st_size
            print(f"# wrote {fmt}: {sizes[fmt] / 1e6:.1f} MB in {seconds:.1f} s (untimed)",
                  flush=True)
        del X, y

        for fmt in formats:  # untimed warm-up
            for name, run in runs[fmt].items():
                try:
                    run(warmups[fmt])
                except Exception:
                    results[fmt][name]["error"] = traceback.format_exc()
                    print(f"# {fmt} {name} FAILED (warm-up):\n{results[fmt][name]['error']}",
                          flush=True)

        for repeat in range(args.repeats):
            for fmt in formats:
                for name in balanced_order(runs[fmt], repeat):
                    result = results[fmt][name]
                    if result["error"] is not None:
                        continue
                    loaded = None
                    try:
                        loaded, seconds, cpu = timed(runs[fmt][name], paths[fmt])
                        if repeat == 0 and name in ("daskboost", "xgboost"):
                            summaries[fmt][name] = summary(loaded)
                    except Exception:
                        result["error"] = traceback.format_exc()
                        print(f"# {fmt} {name} FAILED (repeat {repeat + 1}):\n"
                              f"{result['error']}", flush=True)
                        continue
                    finally:
                        loaded = None
                    result["load_s"].append(seconds)
                    result["load_cpu_s"].append(cpu)
                    print(f"# repeat {repeat + 1}/{args.repeats} {fmt} {name}: {seconds:.3f} s "
                          f"(cpu {cpu:.3f} s)", flush=True)

    lines = []
    for fmt in formats:
        megabytes = sizes[fmt] / 1e6
        medians = {name: median(result["load_s"]) for name, result in results[fmt].items()
                   if result["error"] is None and result["load_s"]}
        rows = []
        for name, result in results[fmt].items():
            label = CONTESTANTS[name][0]
            if name not in medians:
                rows.append([label, "failed", f"{megabytes:.1f}", "", ""])
                continue
            result["load_s_median"] = medians[name]
            result["mb_per_s"] = megabytes / medians[name]
            ratio = ratio_cell(medians, name)
            result["daskboost_ratio"] = (medians["daskboost"] / medians[name]
                                         if ratio else None)
            rows.append([label, f"{medians[name]:.3f}", f"{megabytes:.1f}",
                         f"{result['mb_per_s']:.1f}", ratio])
        lines += [f"### {fmt}: {URI_QUERY[fmt]}", "",
                  markdown_table(["contestant", "seconds (median)", "file MB", "MB/s",
                                  "daskboost ÷ contestant"], rows), ""]
        lines += check_lines(fmt, summaries[fmt], expected)
        lines.append("")
    lines.append(f"{args.rows:,} rows x {N_FEATURES} features (5% NaN: libsvm leaves them "
                 "out, csv has empty fields), values written with %.9g; median of "
                 f"{args.repeats} run(s) going round-robin; {N_THREADS} threads; files read "
                 "from the page cache. daskboost ÷ contestant < 1: daskboost is faster.")
    markdown = "\n".join(lines)
    print()
    print(markdown)
    if args.output:
        config = {"rows": args.rows, "formats": formats, "contestants": chosen,
                  "repeats": args.repeats, "seed": args.seed, "threads": N_THREADS,
                  "warmup_rows": WARMUP_ROWS, "file_bytes": sizes,
                  "uris": {fmt: f"<path>{URI_QUERY[fmt]}" for fmt in formats}}
        payload = {"timings": results,
                   "check": {"expected": expected, "summaries": summaries}}
        write_results(args.output, "bench_text_files", config, info, payload, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
