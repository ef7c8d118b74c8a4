"""Out-of-core benchmark: daskboost fits on a parquet lake within a bounded memory budget.

What it measures, one fit per fresh subprocess so that each peak RSS is that fit's alone:

* Data: the binary task of bench_binary.py (``common.make_binary``): ``--rows`` (default
  20,000,000) rows x 28 float32 features, 5% of the values NaN (``--missing-fraction``),
  written as a parquet lake of ``--files`` (default 40) files under ``--lake-dir`` (default
  ``<tempdir>/daskboost-bench-lakes``). The lake is written in chunks, one file at a
  time: file ``i`` holds ``make_binary(rows_i, seed=1000 * --seed + i)``, so writing
  20M rows never holds more than one file's rows (500k with the defaults) in memory.
  A marker ``lake.json`` next to the ``data/`` directory records rows, files and seed;
  a later run with the same ones reuses the lake instead of rewriting it.
* Model: ``DaskBoostClassifier(n_estimators=--rounds (default 20), max_depth=6,
  learning_rate=0.1, max_bin=256, reg_lambda=1, gamma=0, min_child_weight=1,
  memory_budget=B)`` fitted on ``ddf = dd.read_parquet(lake/data)`` ->
  ``fit(ddf[features], ddf["label"])`` with dask's default local threaded scheduler
  (no distributed Client; one thread per core), reading included in the fit time.
* Budgets: one fit for each ``B`` in ``--budgets`` (default ``256MB,100GB``: an
  out-of-core fit whose binned blocks mostly go to disk, compressed, and one with room
  for everything). ``cache_dir`` is left at its default (a temporary directory: every
  child gets a fresh ``TMPDIR``, whose size is sampled as the spilled bytes) unless
  ``--cache-dir`` is given, which is then passed to every fit.
* Each fit runs in ``python bench_out_of_core.py --child SPEC`` (``subprocess.run``,
  through a tiny launcher interpreter: on Linux a child started directly would inherit
  this process's peak RSS, lake writing included, as its starting ru_maxrss).
  The child does two tiny untimed warm-up fits on a 1,000-row lake (one within ``B``,
  one with an 8 KB budget so the spill path is compiled and loaded too: numba JIT or
  its cache), reads every file of the lake once (untimed: ``read_files``, so that each
  timed fit finds the lake in the page cache), then the timed fit, saves the model
  (``model.save_model``) and prints a JSON line: fit seconds, process CPU seconds, peak RSS from
  ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (the whole child: imports, warm-up
  and the fit), the maximum of psutil RSS samples (process and its children, every
  0.1 s during the timed fit), the RSS just before the fit, and the peak bytes in the
  spill directory (sampled with the RSS, so a spill living < 0.1 s can be missed).
* Reported per budget: median fit seconds over ``--repeats`` (default 1; the repeats
  go round-robin over the budgets), peak RSS, peak spill, time ratio to the largest
  budget's fit, and whether the saved model JSON (``json.load`` of the file, nothing
  excluded) equals the largest budget's: "identical" or "differs" (with the first
  differing JSON paths), and the same comparison without the estimator parameters
  ``memory_budget``, ``cache_dir`` and ``cache_compression`` (``save_model`` records the
  constructor parameters, so the budget itself shows up in the file). Targets, printed
  with the report and checked for the smallest budget against the largest: peak RSS
  < 1.5 GB for the 256MB fit, out-of-core time within 1.5x of the in-memory fit,
  identical models.
* ``--scaling``: instead of the budgets, one fit for each row count in
  ``--scaling-rows`` (default ``5000000,20000000,40000000``) with the same settings and
  ``memory_budget=--scaling-budget`` (default ``256MB``), each on its own lake (written
  the same chunked way, reused when present) whose files hold as many rows as the main
  lake's (``--rows / --files``, 500k with the defaults), and one in-memory fit
  (``--scaling-reference-budget``, default ``100GB``; ``none`` to skip) of each lake:
  fit seconds, seconds per million rows, the ratio to linear scaling from the smallest
  row count (> 1: slower than linear), peak RSS, the time ratio to the in-memory fit
  and whether the models are identical (without the storage parameters). Targets
  (issue 17), checked and printed: peak RSS within 15% across the sizes and under the
  budget + 700 MB, at 20M rows at most 1.3x the in-memory fit's time, identical
  models.
* ``--cluster-workers N``: every fit (warm-ups included) on a ``distributed``
  LocalCluster of N one-thread worker processes started by the child; each worker
  holds its own block store within ``memory_budget``. The child also samples each
  process under it; ``--scaling`` then judges the largest worker's peak RSS (the
  per-worker bound of issue 17).

Run from the repository root::

    python benchmarks/bench_out_of_core.py
    python benchmarks/bench_out_of_core.py --scaling
    python benchmarks/bench_out_of_core.py --scaling --cluster-workers 2
    python benchmarks/bench_out_of_core.py --rows 200000 --files 4 --rounds 3 \\
        --budgets 1MB,1GB
    python benchmarks/bench_out_of_core.py --output benchmarks/results/out_of_core

``--output PATH`` writes ``PATH.json`` (configuration, every run, versions) and
``PATH.md`` (the table) besides printing the table to stdout.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# common fixes OMP_NUM_THREADS (default 2) when imported, before numpy loads: import it first
from common import (FEATURE_NAMES, LABEL_NAME, LEARNING_RATE, MAX_BIN, MAX_DEPTH,  # noqa: E402
                    N_FEATURES, N_THREADS, WARMUP_GRADIENTS, WARMUP_ROWS, machine_info,
                    make_binary, markdown_table, median, timed, write_parquet_lake,
                    write_results)

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

DEFAULT_ROUNDS = 20
WARMUP_ROUNDS = 3
WARMUP_SPILL_BUDGET = "8KB"      # smaller than a warm-up partition's codes: forces a spill
SAMPLE_INTERVAL_S = 0.1
RESULT_PREFIX = "BENCH_OUT_OF_CORE_RESULT "
LAKE_MARKER = "lake.json"
LAKE_VERSION = 1
MAX_FILES = 1000                 # file seeds are 1000 * seed + file index
MISSING_FRACTION = 0.05          # of the feature values, by default
WARMUP_SEED_OFFSET = 1_000_000   # the warm-up lake's seed: far from any data seed
TARGET_PEAK_RSS = 1.5e9          # bytes, for the out-of-core (smallest budget) fit
TARGET_TIME_RATIO = 1.5          # out-of-core fit time / in-memory fit time
TARGETS = ("peak RSS < 1.5 GB for the 256MB fit, out-of-core time within 1.5x of the "
           "in-memory (largest budget) fit, identical models")


# ---- the parquet lakes --------------------------------------------------------------------

def lake_spec(rows, files, seed, missing):
    return {"version": LAKE_VERSION, "rows": rows, "files": files, "seed": seed,
            "features": N_FEATURES, "missing_fraction": missing,
            "generator": "file i: common.make_binary(rows_i, seed=1000 * seed + i), rows_i "
                         "from np.linspace(0, rows, files + 1)"}


def ensure_lake(root, rows, files, seed, missing=MISSING_FRACTION, quiet=False):
    """``(data_dir, info)`` of the lake of ``rows`` rows in ``files`` files under ``root``,
    written one file at a time unless a complete one with the same spec exists there.

    The marker is written last, so an interrupted write is redone by the next run.
    """
    name = f"binary-{rows}rows-{files}files-seed{seed}"
    if missing != MISSING_FRACTION:
        name += f"-missing{missing:g}"
    directory = Path(root) / name
    data_dir, marker = directory / "data", directory / LAKE_MARKER
    spec = lake_spec(rows, files, seed, missing)
    if marker.exists():
        try:
            info = json.loads(marker.read_text())
        except (OSError, ValueError):
            info = {}
        n_found = len(list(data_dir.glob("part-*.parquet"))) if data_dir.is_dir() else 0
        if {key: info.get(key) for key in spec} == spec and n_found == files:
            if not quiet:
                print(f"# reusing the lake {directory} ({rows:,} rows, {files} files, "
                      f"{info.get('bytes', 0) / 2**20:.0f} MiB)", flush=True)
            return data_dir, {**info, "path": str(data_dir), "reused": True}
    shutil.rmtree(directory, ignore_errors=True)
    staging = directory / "staging"
    data_dir.mkdir(parents=True)
    start = time.perf_counter()
    bounds = np.linspace(0, rows, files + 1).astype(np.int64)
    total = 0
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        X, y, _ = make_binary(int(hi - lo), seed=1000 * seed + i, missing_fraction=missing)
        total += write_parquet_lake(staging, X, y, 1)
        os.replace(staging / "part-0000.parquet", data_dir / f"part-{i:04d}.parquet")
        del X, y
        if not quiet and (i + 1) % 10 == 0 and i + 1 < files:
            print(f"#   {i + 1}/{files} files written", flush=True)
    shutil.rmtree(staging, ignore_errors=True)
    seconds = time.perf_counter() - start
    info = {**spec, "bytes": total, "write_s": round(seconds, 2)}
    marker.write_text(json.dumps(info, indent=2) + "\n")
    if not quiet:
        print(f"# wrote the lake {directory} ({rows:,} rows, {files} files, "
              f"{total / 2**20:.0f} MiB) in {seconds:.1f} s (untimed)", flush=True)
    return data_dir, {**info, "path": str(data_dir), "reused": False}


# ---- the child: one fit in a fresh process ------------------------------------------------

def _tree_bytes(directory, prefix=None):
    """Bytes of the files under ``directory`` (only in entries starting with ``prefix``)."""
    total = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        if prefix is not None and not entry.name.startswith(prefix):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                total += _tree_bytes(entry.path)
            elif entry.is_file(follow_symlinks=False):
                total += entry.stat(follow_symlinks=False).st_size
        except OSError:  # removed while we looked
            pass
    return total


class _Sampler(threading.Thread):
    """Every SAMPLE_INTERVAL_S: the RSS of this process plus its children, and the bytes
    in the spill directory; keeps the maxima."""

    def __init__(self, spill_dir, spill_prefix):
        super().__init__(daemon=True)
        import psutil
        self.process = psutil.Process()
        self.spill_dir, self.spill_prefix = spill_dir, spill_prefix
        self.max_rss = self.max_spill = self.samples = 0
        self.child_peaks = {}  # pid -> the largest RSS sampled (cluster workers)
        self._stop_event = threading.Event()

    def _rss(self):
        rss = self.process.memory_info().rss
        for child in self.process.children(recursive=True):
            try:
                child_rss = child.memory_info().rss
            except Exception:  # exited in between
                continue
            rss += child_rss
            self.child_peaks[child.pid] = max(self.child_peaks.get(child.pid, 0), child_rss)
        return rss

    def sample(self):
        self.max_rss = max(self.max_rss, self._rss())
        self.max_spill = max(self.max_spill, _tree_bytes(self.spill_dir, self.spill_prefix))
        self.samples += 1

    def run(self):
        while not self._stop_event.wait(SAMPLE_INTERVAL_S):
            self.sample()

    def stop(self):
        self._stop_event.set()
        self.join()
        self.sample()


# bytes a read of ``read_files`` takes at a time
READ_CHUNK = 8 << 20


def read_files(root):
    """Read every file under ``root`` once, untimed, so that the timed fit finds the
    lake in the page cache whatever the fit before it left there; returns the seconds
    it took.  This machine drops cached file pages within minutes, with memory free
    (the 2.35 GB 20M-row lake: 4.5 s to read from disk, 0.4-0.6 s once cached): a fit
    that found its lake evicted read it from disk (the scan and bin passes), up to
    ~4.5 s a read longer than from the cache."""
    start = time.perf_counter()
    buf = bytearray(READ_CHUNK)
    for path in sorted(Path(root).rglob("*")):
        if path.is_file():
            with open(path, "rb", buffering=0) as f:
                while f.readinto(buf):
                    pass
    return time.perf_counter() - start


def child_main(spec):
    """One measured fit (see the module docstring); prints RESULT_PREFIX + a JSON line."""
    import resource

    import psutil
    import dask.dataframe as dd
    from daskboost import DaskBoostClassifier

    params = dict(n_estimators=spec["rounds"], max_depth=MAX_DEPTH, learning_rate=LEARNING_RATE,
                  max_bin=MAX_BIN, reg_lambda=1.0, gamma=0.0, min_child_weight=1.0,
                  memory_budget=spec["budget"], quantized_grad=spec["quantized_grad"])
    if spec["cache_dir"] is not None:
        params["cache_dir"] = spec["cache_dir"]
        spill_dir, spill_prefix = spec["cache_dir"], "daskboost-cache-"
    else:
        spill_dir, spill_prefix = tempfile.gettempdir(), None   # this child's own TMPDIR

    def fit(lake, **overrides):
        ddf = dd.read_parquet(lake)
        return DaskBoostClassifier(**{**params, **overrides}).fit(ddf[FEATURE_NAMES],
                                                                  ddf[LABEL_NAME])

    client = None
    if spec.get("cluster_workers"):
        # each worker a process of its own (one thread), its own block store and
        # memory_budget: the per-worker bound of issue 17
        from distributed import Client, LocalCluster
        client = Client(LocalCluster(n_workers=spec["cluster_workers"], threads_per_worker=1,
                                     processes=True, dashboard_address=None,
                                     memory_limit=0))
    start = time.perf_counter()
    for gradients in WARMUP_GRADIENTS:  # the small warm-up lake alone would take float ones
        fit(spec["warmup_lake"], n_estimators=WARMUP_ROUNDS, **gradients)
        fit(spec["warmup_lake"], n_estimators=WARMUP_ROUNDS, memory_budget=WARMUP_SPILL_BUDGET,
            **gradients)
    warmup_s = time.perf_counter() - start
    lake_read_s = read_files(spec["lake"])
    gc.collect()
    rss_before = psutil.Process().memory_info().rss
    rusage_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    sampler = _Sampler(spill_dir, spill_prefix)
    sampler.sample()
    sampler.start()
    try:
        model, fit_s, fit_cpu_s = timed(fit, spec["lake"])
    finally:
        sampler.stop()
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    model.save_model(spec["model_path"])
    peak_worker_rss = None
    if client is not None:
        # the largest process under this one: a worker (its nanny holds ~100 MB)
        peak_worker_rss = max(sampler.child_peaks.values())
        cluster = client.cluster
        client.close()
        cluster.close()
    result = {"fit_s": fit_s, "fit_cpu_s": fit_cpu_s, "warmup_s": warmup_s,
              "peak_rss_bytes": peak_rss, "sampled_peak_rss_bytes": sampler.max_rss,
              "rss_before_fit_bytes": rss_before, "peak_rss_before_fit_bytes": rusage_before,
              "peak_spill_bytes": sampler.max_spill, "rss_samples": sampler.samples,
              "peak_worker_rss_bytes": peak_worker_rss, "lake_read_s": lake_read_s,
              "model_path": spec["model_path"], "n_trees": spec["rounds"]}
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


# A small interpreter that starts the child and passes its exit status on. On Linux a
# process's ru_maxrss starts at the high-water RSS of the memory it replaced at exec: for
# a child that subprocess starts with vfork that is THIS process's peak (lake writing
# included), with fork its current RSS. Started from the ~10 MB launcher instead, the
# child's ru_maxrss counts (nearly) only its own memory.
_LAUNCHER = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"


def run_child(spec, tmp_root):
    """Run one fit in a fresh interpreter (started through _LAUNCHER); its result dict,
    or ``{"error": text}``."""
    child_tmp = Path(tempfile.mkdtemp(prefix="child-", dir=tmp_root))
    env = {**os.environ, "TMPDIR": str(child_tmp)}
    env.setdefault("OMP_NUM_THREADS", str(N_THREADS))
    command = [sys.executable, "-c", _LAUNCHER,
               sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True)
    finally:
        shutil.rmtree(child_tmp, ignore_errors=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if done.returncode != 0 or not lines:
        tail = "\n".join((done.stderr or done.stdout or "").strip().splitlines()[-25:])
        return {"error": f"child exited with status {done.returncode}:\n{tail}"}
    return json.loads(lines[-1][len(RESULT_PREFIX):])


# ---- model comparison ---------------------------------------------------------------------

def json_differences(a, b, path="", limit=5):
    """Up to ``limit`` JSON paths where ``a`` and ``b`` differ ("" when they are equal)."""
    out = []

    def walk(x, y, where):
        if len(out) >= limit:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for key in list(x) + [k for k in y if k not in x]:
                if key not in x or key not in y:
                    out.append(f"{where}.{key} (only in one)")
                else:
                    walk(x[key], y[key], f"{where}.{key}")
                if len(out) >= limit:
                    return
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                out.append(f"{where} (length {len(x)} vs {len(y)})")
                return
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, f"{where}[{i}]")
                if len(out) >= limit:
                    return
        elif x != y or type(x) is not type(y):
            out.append(where or "<root>")

    walk(a, b, path)
    return out


# estimator parameters that only say where/how binned blocks are stored during fit
STORAGE_PARAMS = ("memory_budget", "cache_dir", "cache_compression")


def _without_storage_params(model):
    params = model.get("estimator", {}).get("params")
    if isinstance(params, dict):
        model["estimator"]["params"] = {k: v for k, v in params.items()
                                        if k not in STORAGE_PARAMS}
    return model


def compare_models(paths, reference_path, drop_storage_params=False):
    """("identical" | "differs" | None, first differing paths) of all ``paths`` vs the
    reference, compared as ``json.load`` of the files: with nothing excluded, or without
    the estimator's STORAGE_PARAMS (``drop_storage_params``)."""
    if not paths or reference_path is None:
        return None, []
    prepare = _without_storage_params if drop_storage_params else (lambda model: model)
    with open(reference_path) as f:
        reference = prepare(json.load(f))
    for path in paths:
        with open(path) as f:
            model = prepare(json.load(f))
        if model != reference:
            return "differs", json_differences(model, reference)
    return "identical", []


# ---- command line -------------------------------------------------------------------------

def _int_list(text):
    return [int(float(part)) for part in text.split(",") if part.strip()]


def _quantized_grad(text):
    """--quantized-grad: "auto", "true" or "false" as the parameter's value."""
    values = {"auto": "auto", "true": True, "false": False}
    if text.lower() not in values:
        raise argparse.ArgumentTypeError(f"must be auto, true or false; got {text!r}")
    return values[text.lower()]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000_000, help="training rows")
    parser.add_argument("--files", type=int, default=40, help="parquet files in the lake")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS,
                        help="trees (boosting rounds)")
    parser.add_argument("--budgets", default="256MB,100GB",
                        help="comma list of memory_budget values, one fit each")
    parser.add_argument("--lake-dir", default=str(Path(tempfile.gettempdir())
                                                  / "daskboost-bench-lakes"),
                        help="where the lakes are written (and reused from)")
    parser.add_argument("--cache-dir", default=None,
                        help="cache_dir passed to every fit (default: the estimator's, a "
                             "temporary directory)")
    parser.add_argument("--model-dir", default=None,
                        help="keep the saved models here (default: a temporary directory)")
    parser.add_argument("--scaling", action="store_true",
                        help="measure fit time against rows instead of the budgets")
    parser.add_argument("--scaling-rows", default="5000000,20000000,40000000",
                        help="comma list of row counts for --scaling")
    parser.add_argument("--scaling-budget", default="256MB",
                        help="memory_budget of the --scaling fits")
    parser.add_argument("--scaling-reference-budget", default="100GB",
                        help="memory_budget of the in-memory fit each --scaling fit is "
                             "compared with ('none': no such fits)")
    parser.add_argument("--cluster-workers", type=int, default=0,
                        help="fit on a distributed LocalCluster of this many one-thread "
                             "worker processes (0: the threaded scheduler); with "
                             "--scaling the peak is the largest worker's")
    parser.add_argument("--quantized-grad", default="auto", type=_quantized_grad,
                        help="quantized_grad of every fit: auto (the default), true or false")
    parser.add_argument("--repeats", type=int, default=1,
                        help="fits per configuration; medians are reported")
    parser.add_argument("--seed", type=int, default=0, help="data seed")
    parser.add_argument("--missing-fraction", type=float, default=MISSING_FRACTION,
                        help="fraction of feature values missing")
    parser.add_argument("--output", default=None,
                        help="write PATH.json and PATH.md with the results")
    args = parser.parse_args(argv)
    args.budgets = list(dict.fromkeys(b.strip() for b in args.budgets.split(",") if b.strip()))
    try:
        args.scaling_rows = sorted(set(_int_list(args.scaling_rows)))
    except ValueError:
        parser.error(f"--scaling-rows: not a comma list of integers: {args.scaling_rows!r}")
    from daskboost.blockstore import parse_memory_budget
    try:
        args.budget_bytes = {b: parse_memory_budget(b) for b in args.budgets}
        parse_memory_budget(args.scaling_budget)
        if args.scaling_reference_budget != "none":
            parse_memory_budget(args.scaling_reference_budget)
    except (TypeError, ValueError) as e:
        parser.error(str(e))
    if not args.budgets or not args.scaling_rows:
        parser.error("--budgets and --scaling-rows need at least one value")
    if (args.rows < args.files or args.files < 1 or args.files > MAX_FILES or args.rounds < 1
            or args.repeats < 1 or min(args.scaling_rows) < 1 or args.cluster_workers < 0):
        parser.error(f"need 1 <= --files <= {MAX_FILES}, --rows >= --files, --rounds >= 1, "
                     "--repeats >= 1, --scaling-rows >= 1")
    return args


def _fmt(value, digits):
    return "n/a" if value is None else f"{value:.{digits}f}"


def _mb(value):
    return "n/a" if value is None else f"{value / 1e6:,.0f}"


def _error_cell(error):
    last = [line for line in error.strip().splitlines() if line.strip()]
    last = (last[-1] if last else "error").replace("|", "/")
    return "FAILED: " + (last if len(last) <= 120 else last[:117] + "...")


def _label(text):
    return re.sub(r"[^A-Za-z0-9.]+", "_", text)


def _summarise(entry):
    """Medians of an entry's runs (None when it failed or has none)."""
    runs = entry["runs"]
    ok = entry["error"] is None and bool(runs)
    for key in ("fit_s", "fit_cpu_s", "peak_rss_bytes", "sampled_peak_rss_bytes",
                "rss_before_fit_bytes", "peak_spill_bytes", "peak_worker_rss_bytes"):
        values = [run.get(key) for run in runs]
        entry[key + "_median"] = (median(values) if ok and None not in values else None)
    return ok


def _run_fits(configs, args, tmp_root, model_dir):
    """Round-robin ``args.repeats`` times over ``configs`` (dicts with "key", "lake",
    "budget", "title"); each entry gets its runs and its first error."""
    entries = {c["key"]: {**c, "runs": [], "error": None} for c in configs}
    for repeat in range(args.repeats):
        for key, entry in entries.items():
            if entry["error"] is not None:
                continue
            spec = {"lake": entry["lake"], "warmup_lake": args.warmup_lake,
                    "budget": entry["budget"], "rounds": args.rounds,
                    "quantized_grad": args.quantized_grad,
                    "cache_dir": args.cache_dir, "cluster_workers": args.cluster_workers,
                    "model_path": str(Path(model_dir) / f"model-{_label(key)}-r{repeat}.json")}
            print(f"# fitting {entry['title']} (repeat {repeat + 1}/{args.repeats}) ...",
                  flush=True)
            result = run_child(spec, tmp_root)
            if "error" in result:
                entry["error"] = result["error"]
                print(f"# {entry['title']} FAILED:\n{result['error']}", flush=True)
                continue
            entry["runs"].append(result)
            print(f"#   fit {result['fit_s']:.2f} s (cpu {result['fit_cpu_s']:.2f} s), peak "
                  f"RSS {result['peak_rss_bytes'] / 1e6:,.0f} MB (sampled "
                  f"{result['sampled_peak_rss_bytes'] / 1e6:,.0f} MB, "
                  f"{result['rss_before_fit_bytes'] / 1e6:,.0f} MB before the fit), peak "
                  f"spill {result['peak_spill_bytes'] / 1e6:,.1f} MB"
                  + (f", peak worker RSS {result['peak_worker_rss_bytes'] / 1e6:,.0f} MB"
                     if result.get("peak_worker_rss_bytes") else "")
                  + f"; lake read into the page cache before it in {result['lake_read_s']:.1f} s",
                  flush=True)
    for entry in entries.values():
        _summarise(entry)
    return entries


def run_budgets(args, tmp_root, model_dir):
    lake, lake_info = ensure_lake(args.lake_dir, args.rows, args.files, args.seed,
                                  args.missing_fraction)
    configs = [{"key": budget, "budget": budget, "lake": str(lake),
                "title": f"memory_budget={budget}"} for budget in args.budgets]
    entries = _run_fits(configs, args, tmp_root, model_dir)

    largest = max(args.budgets, key=lambda b: args.budget_bytes[b])
    reference = entries[largest]
    reference_s = reference["fit_s_median"]
    reference_model = reference["runs"][0]["model_path"] if reference["runs"] else None
    for budget, entry in entries.items():
        entry["budget_bytes"] = args.budget_bytes[budget]
        fit_s = entry["fit_s_median"]
        entry["time_ratio_to_largest"] = (fit_s / reference_s
                                          if fit_s is not None and reference_s else None)
        verdict, where = compare_models([run["model_path"] for run in entry["runs"]],
                                        reference_model)
        entry["model_vs_largest"], entry["model_differences"] = verdict, where
        verdict, where = compare_models([run["model_path"] for run in entry["runs"]],
                                        reference_model, drop_storage_params=True)
        entry["model_vs_largest_without_storage_params"] = verdict
        entry["model_differences_without_storage_params"] = where

    header = ["memory_budget", "fit s", "peak RSS MB", "sampled peak RSS MB", "peak spill MB",
              f"time / {largest}", f"model vs {largest}", "same without storage params"]
    rows = []
    for budget, e in entries.items():
        if e["error"] is not None:
            rows.append([budget, _error_cell(e["error"]), "", "", "", "", "", ""])
            continue
        verdicts = []
        for suffix in ("", "_without_storage_params"):
            verdict = e["model_vs_largest" + suffix] or "n/a"
            if e["model_differences" + suffix]:
                verdict += " (" + ", ".join(e["model_differences" + suffix][:3]) + ")"
            verdicts.append(verdict)
        rows.append([budget, _fmt(e["fit_s_median"], 2), _mb(e["peak_rss_bytes_median"]),
                     _mb(e["sampled_peak_rss_bytes_median"]),
                     _mb(e["peak_spill_bytes_median"]),
                     _fmt(e["time_ratio_to_largest"], 2), *verdicts])

    smallest = min(args.budgets, key=lambda b: args.budget_bytes[b])
    small = entries[smallest]
    checks = {}
    if smallest != largest and small["error"] is None and reference["error"] is None:
        checks = {
            "peak_rss": {"value_bytes": small["peak_rss_bytes_median"],
                         "target_bytes": TARGET_PEAK_RSS,
                         "met": small["peak_rss_bytes_median"] < TARGET_PEAK_RSS},
            "time_ratio": {"value": small["time_ratio_to_largest"],
                           "target": TARGET_TIME_RATIO,
                           "met": small["time_ratio_to_largest"] <= TARGET_TIME_RATIO},
            "models": {"value": small["model_vs_largest"],
                       "met": all(e["model_vs_largest"] == "identical"
                                  for e in entries.values() if e["error"] is None),
                       "trees_met": all(
                           e["model_vs_largest_without_storage_params"] == "identical"
                           for e in entries.values() if e["error"] is None)},
        }
    lines = [f"Targets: {TARGETS}.", "", markdown_table(header, rows), ""]
    lines.append(f"{args.rows:,} rows x {N_FEATURES} float32 features "
                 f"({args.missing_fraction:.0%} NaN) in a parquet "
                 f"lake of {args.files} files ({lake_info['bytes'] / 2**20:,.0f} MiB); "
                 f"{args.rounds} trees, depth {MAX_DEPTH}, learning_rate {LEARNING_RATE}, "
                 f"max_bin {MAX_BIN}, quantized_grad={args.quantized_grad!r}; median of "
                 f"{args.repeats} run(s); dask threaded "
                 f"scheduler, {N_THREADS} threads.")
    lines.append("Each fit ran in a fresh process after an untimed warm-up; fit s includes "
                 "dd.read_parquet. peak RSS = ru_maxrss of that process (imports and warm-up "
                 "included); sampled = max of psutil RSS every 0.1 s during the fit; peak "
                 "spill = most bytes in the cache directory during the fit.")
    lines.append(f"time / {largest} = fit s / the {largest} fit's; model vs {largest} "
                 "compares json.load of the saved model files, nothing excluded; \"same "
                 "without storage params\" compares them without the estimator parameters "
                 f"{', '.join(STORAGE_PARAMS)} (which save_model records as given).")
    if checks:
        lines.append(
            f"Target check ({smallest} vs {largest}): peak RSS "
            f"{checks['peak_rss']['value_bytes'] / 1e9:.2f} GB < 1.5 GB "
            f"{'met' if checks['peak_rss']['met'] else 'MISSED'}; time ratio "
            f"{checks['time_ratio']['value']:.2f} <= {TARGET_TIME_RATIO} "
            f"{'met' if checks['time_ratio']['met'] else 'MISSED'}; models "
            f"{'identical: met' if checks['models']['met'] else 'differ: MISSED'}"
            + ("" if checks["models"]["met"] or not checks["models"]["trees_met"] else
               " (identical without the storage params)")
            + ("" if args.rows >= 20_000_000 else
               f" (at {args.rows:,} rows, not the 20M-row target size)") + ".")
    failed = [e["title"] for e in entries.values() if e["error"] is not None]
    if failed:
        lines.append("FAILED (see the error above / in the JSON): " + ", ".join(failed) + ".")
    config = {"mode": "budgets", "rows": args.rows, "files": args.files,
              "budgets": args.budgets, "budget_bytes": args.budget_bytes,
              "largest_budget": largest, "parquet_lake": lake_info, "target_check": checks}
    return entries, "\n".join(lines), config, bool(failed)


def run_scaling(args, tmp_root, model_dir):
    rows_per_file = args.rows / args.files
    reference_budget = (None if args.scaling_reference_budget == "none"
                        else args.scaling_reference_budget)
    configs, lakes = [], {}
    for rows in args.scaling_rows:
        files = min(MAX_FILES, max(1, round(rows / rows_per_file)))
        lake, info = ensure_lake(args.lake_dir, rows, files, args.seed, args.missing_fraction)
        lakes[rows] = info
        configs.append({"key": f"{rows}rows", "rows": rows, "files": files, "lake": str(lake),
                        "budget": args.scaling_budget,
                        "title": f"{rows:,} rows ({files} files)"})
        if reference_budget is not None:
            configs.append({"key": f"{rows}rows-reference", "rows": rows, "files": files,
                            "lake": str(lake), "budget": reference_budget,
                            "title": f"{rows:,} rows, memory_budget={reference_budget}"})
    entries = _run_fits(configs, args, tmp_root, model_dir)
    scaled = [entries[c["key"]] for c in configs if not c["key"].endswith("-reference")]

    base = scaled[0]
    for entry in scaled:
        fit_s = entry["fit_s_median"]
        entry["s_per_million_rows"] = fit_s / (entry["rows"] / 1e6) if fit_s is not None else None
        linear = (base["fit_s_median"] * entry["rows"] / base["rows"]
                  if base["fit_s_median"] else None)
        entry["ratio_to_linear"] = fit_s / linear if fit_s is not None and linear else None
        reference = entries.get(entry["key"] + "-reference")
        entry["reference"] = reference
        if reference is None or reference["error"] is not None or entry["error"] is not None:
            continue
        entry["time_ratio_to_reference"] = fit_s / reference["fit_s_median"]
        entry["model_vs_reference"], entry["model_differences"] = compare_models(
            [run["model_path"] for run in entry["runs"]], reference["runs"][0]["model_path"],
            drop_storage_params=True)

    peak_key = _peak_key(args)
    header = ["rows", "files", "fit s", "s per M rows", "ratio to linear",
              "peak worker RSS MB" if args.cluster_workers else "peak RSS MB", "peak spill MB"]
    if reference_budget is not None:
        header += [f"{reference_budget} fit s", "time ratio", f"{reference_budget} peak RSS MB",
                   "model"]
    rows = []
    for e in scaled:
        if e["error"] is not None:
            rows.append([f"{e['rows']:,}", e["files"], _error_cell(e["error"])]
                        + [""] * (len(header) - 3))
            continue
        row = [f"{e['rows']:,}", e["files"], _fmt(e["fit_s_median"], 2),
               _fmt(e["s_per_million_rows"], 2), _fmt(e["ratio_to_linear"], 2),
               _mb(e[peak_key]), _mb(e["peak_spill_bytes_median"])]
        if reference_budget is not None:
            ref = e["reference"]
            if ref["error"] is not None:
                row += [_error_cell(ref["error"]), "", "", ""]
            else:
                verdict = e.get("model_vs_reference") or "n/a"
                if e.get("model_differences"):
                    verdict += " (" + ", ".join(e["model_differences"][:3]) + ")"
                row += [_fmt(ref["fit_s_median"], 2), _fmt(e.get("time_ratio_to_reference"), 2),
                        _mb(ref[peak_key]), verdict]
        rows.append(row)
    lines = [markdown_table(header, rows), ""]
    lines.append(f"{N_FEATURES} float32 features ({args.missing_fraction:.0%} NaN), "
                 "parquet lakes of ~"
                 f"{rows_per_file:,.0f} rows per file; {args.rounds} trees, depth {MAX_DEPTH}, "
                 f"learning_rate {LEARNING_RATE}, max_bin {MAX_BIN}, memory_budget="
                 f"{args.scaling_budget}; median of {args.repeats} run(s); "
                 + (f"a distributed LocalCluster of {args.cluster_workers} one-thread worker "
                    "processes, each with that budget (peak worker RSS: the largest worker "
                    "process, sampled every 0.1 s)." if args.cluster_workers else
                    f"dask threaded scheduler, {N_THREADS} threads."))
    lines.append(f"ratio to linear = fit s / (the {args.scaling_rows[0]:,}-row fit s x rows / "
                 f"{args.scaling_rows[0]:,}); > 1 is slower than linear. Each fit ran in a "
                 "fresh process after an untimed warm-up; fit s includes dd.read_parquet; "
                 "peak RSS = ru_maxrss of that process (imports and warm-up included).")
    checks = _scaling_checks(args, scaled, reference_budget)
    if checks:
        lines.append(checks["text"])
    failed = [e["title"] for e in entries.values() if e["error"] is not None]
    if failed:
        lines.append("FAILED (see the error above / in the JSON): " + ", ".join(failed) + ".")
    for entry in scaled:
        entry.pop("reference", None)  # (its own entry is in the results already)
    config = {"mode": "scaling", "scaling_rows": args.scaling_rows,
              "cluster_workers": args.cluster_workers,
              "scaling_budget": args.scaling_budget,
              "scaling_reference_budget": reference_budget, "rows_per_file": rows_per_file,
              "parquet_lakes": {str(k): v for k, v in lakes.items()}, "target_check": checks}
    return entries, "\n".join(lines), config, bool(failed)


# issue 17's targets for ``--scaling`` with a budget: peak RSS flat in the rows and under
# budget + 700 MB; time at 20M rows within 1.3x of the in-memory fit; identical models
SCALING_FLAT = 0.15
SCALING_HEADROOM = 700e6
SCALING_TIME_ROWS, SCALING_TIME_RATIO = 20_000_000, 1.3


def _peak_key(args):
    """The peak a ``--scaling`` run is judged by: the process's, or the largest worker's."""
    return "peak_worker_rss_bytes_median" if args.cluster_workers else "peak_rss_bytes_median"


def _scaling_checks(args, scaled, reference_budget):
    """The target check of a ``--scaling`` run (empty when a fit failed)."""
    from daskboost.blockstore import parse_memory_budget
    if any(e["error"] is not None for e in scaled):
        return {}
    peaks = [e[_peak_key(args)] for e in scaled]
    bound = parse_memory_budget(args.scaling_budget) + SCALING_HEADROOM
    spread = max(peaks) / min(peaks) - 1
    checks = {"peak_spread": spread, "flat_met": spread <= SCALING_FLAT,
              "bound_bytes": bound, "bound_met": max(peaks) < bound}
    parts = [f"peaks within {spread:.0%} of each other (target {SCALING_FLAT:.0%}): "
             f"{'met' if checks['flat_met'] else 'MISSED'}",
             f"highest {max(peaks) / 1e6:,.0f} MB < budget + 700 MB = {bound / 1e6:,.0f} MB: "
             f"{'met' if checks['bound_met'] else 'MISSED'}"]
    if reference_budget is not None:
        timed_entry = next((e for e in scaled if e["rows"] == SCALING_TIME_ROWS), None)
        ratio = None if timed_entry is None else timed_entry.get("time_ratio_to_reference")
        if ratio is not None:
            checks["time_ratio"], checks["time_met"] = ratio, ratio <= SCALING_TIME_RATIO
            parts.append(f"time at {SCALING_TIME_ROWS:,} rows {ratio:.2f}x the "
                         f"{reference_budget} fit (target {SCALING_TIME_RATIO}x): "
                         f"{'met' if checks['time_met'] else 'MISSED'}")
        verdicts = [e.get("model_vs_reference") for e in scaled]
        checks["models_met"] = all(v == "identical" for v in verdicts)
        parts.append("models identical to the in-memory fits (without the storage params): "
                     + ("met" if checks["models_met"] else "MISSED"))
    checks["text"] = "Target check: " + "; ".join(parts) + "."
    return checks


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        return child_main(json.loads(argv[1]))
    args = parse_args(argv)
    info = machine_info()
    if args.scaling:
        print(f"# daskboost out-of-core scaling benchmark: rows {args.scaling_rows} x "
              f"{N_FEATURES} float32 features ({args.missing_fraction:.0%} NaN), "
              f"memory_budget={args.scaling_budget}",
              flush=True)
    else:
        print(f"# daskboost out-of-core benchmark: {args.rows:,} rows x {N_FEATURES} float32 "
              f"features ({args.missing_fraction:.0%} NaN), {args.files} parquet files, "
              f"memory budgets {args.budgets}",
              flush=True)
        print(f"# targets: {TARGETS}", flush=True)
    print(f"# {args.rounds} trees, depth {MAX_DEPTH}, learning_rate {LEARNING_RATE}, max_bin "
          f"{MAX_BIN}, quantized_grad={args.quantized_grad!r}, repeats {args.repeats} "
          f"(median), seed {args.seed}; one fresh process "
          f"per fit; lakes under {args.lake_dir}", flush=True)

    Path(args.lake_dir).mkdir(parents=True, exist_ok=True)
    warmup_lake, _ = ensure_lake(args.lake_dir, WARMUP_ROWS, 2, WARMUP_SEED_OFFSET + args.seed,
                                 args.missing_fraction, quiet=True)
    args.warmup_lake = str(warmup_lake)
    with tempfile.TemporaryDirectory(prefix="daskboost-bench-ooc-") as tmp:
        model_dir = args.model_dir or str(Path(tmp) / "models")
        Path(model_dir).mkdir(parents=True, exist_ok=True)
        run = run_scaling if args.scaling else run_budgets
        entries, markdown, mode_config, failed = run(args, tmp, model_dir)
    print()
    print(markdown)

    if args.output:
        config = {"rounds": args.rounds, "features": N_FEATURES,
                  "missing_fraction": args.missing_fraction, "repeats": args.repeats,
                  "seed": args.seed, "threads": N_THREADS,
                  "lake_dir": args.lake_dir, "cache_dir": args.cache_dir,
                  "model_dir": args.model_dir, "warmup_rows": WARMUP_ROWS,
                  "warmup_rounds": WARMUP_ROUNDS, "warmup_spill_budget": WARMUP_SPILL_BUDGET,
                  "targets": TARGETS, **mode_config}
        write_results(args.output, "bench_out_of_core", config, info, entries, markdown)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
