"""Fits inside a ``distributed`` worker's task: what dask-ml's searches run on a cluster.

What it measures, side by side in one run:

* A ``LocalCluster`` of one worker process with 2 threads (started by a nanny, so with
  the worker environment dask gives it: ``MALLOC_TRIM_THRESHOLD_=65536``, which fixes
  glibc's thresholds at 128 KiB).
* Inside one task on that worker: the binary task of ``bench_binary``
  (``common.make_binary``, ``--rows`` rows, default 100,000) made once, an untimed warm-up
  fit per library, then ``--repeats`` fits per library round robin: 100 trees, depth 6,
  learning rate 0.1, 256 bins (255 for LightGBM), 2 threads. numpy input, as a search
  hands each candidate its fold.
* daskboost: ``DaskBoostClassifier`` (in process on the worker: an in-memory fit inside a
  task never sends passes to the cluster); xgboost ``XGBClassifier(tree_method="hist")``;
  LightGBM ``LGBMClassifier``.
* Reported: median fit seconds per library and daskboost's time as a ratio to each.

Run from the repository root::

    python benchmarks/bench_worker_task.py --repeats 5
    python benchmarks/bench_worker_task.py --rows 20000 --libraries daskboost,lightgbm
"""

import common  # noqa: F401  (first: fixes the thread count)

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

LIBRARIES = ("daskboost", "xgboost", "lightgbm")
ROUNDS, DEPTH, LEARNING_RATE = 100, 6, 0.1


def fits_in_task(libraries, rows, repeats, seed, benchmarks_dir):
    """Runs on the worker: every fit's seconds per library, and the worker's
    MALLOC_TRIM_THRESHOLD_."""
    sys.path.insert(0, benchmarks_dir)
    import common as worker_common
    X, y = worker_common.make_binary(rows, seed)[:2]

    def model(name):
        if name == "daskboost":
            from daskboost import DaskBoostClassifier
            return DaskBoostClassifier(n_estimators=ROUNDS, max_depth=DEPTH,
                                       learning_rate=LEARNING_RATE, max_bin=256)
        if name == "xgboost":
            import xgboost
            return xgboost.XGBClassifier(n_estimators=ROUNDS, max_depth=DEPTH,
                                         learning_rate=LEARNING_RATE, max_bin=256,
                                         tree_method="hist", n_jobs=worker_common.N_THREADS)
        import lightgbm
        return lightgbm.LGBMClassifier(n_estimators=ROUNDS, max_depth=DEPTH,
                                       num_leaves=2 ** DEPTH, learning_rate=LEARNING_RATE,
                                       max_bin=255, min_child_samples=1, reg_lambda=1.0,
                                       n_jobs=worker_common.N_THREADS, verbose=-1)

    for name in libraries:
        model(name).fit(X[:1000], y[:1000])  # warm: imports, numba's cache
    seconds = {name: [] for name in libraries}
    for _ in range(repeats):
        for name in libraries:
            seconds[name].append(worker_common.timed(model(name).fit, X, y)[1])
    return seconds, os.environ.get("MALLOC_TRIM_THRESHOLD_")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    common.add_run_options(parser, LIBRARIES)
    args = common.parse_run_args(parser, LIBRARIES, argv)
    if args.rows < 1000 or args.repeats < 1:
        parser.error("need --rows >= 1000 and --repeats >= 1")
    from distributed import Client, LocalCluster
    machine = common.machine_info()
    benchmarks_dir = os.path.dirname(os.path.abspath(__file__))
    with LocalCluster(n_workers=1, threads_per_worker=common.N_THREADS, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        seconds, trim = client.submit(fits_in_task, args.libraries, args.rows, args.repeats,
                                      args.seed, benchmarks_dir, pure=False).result()
    print(f"{args.rows:,} rows, {ROUNDS} trees, depth {DEPTH}, fits inside one worker task "
          f"(worker MALLOC_TRIM_THRESHOLD_={trim}); median of {args.repeats}")
    medians = {name: common.median(values) for name, values in seconds.items()}
    rows = [[name, f"{medians[name]:.3f}", common.ratio_cell(medians, name)]
            for name in args.libraries]
    common.report(args, "worker_task", ["library", "fit s (median)", "daskboost ÷ library"],
                  rows, machine, {"seconds": seconds, "malloc_trim_threshold": trim})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
