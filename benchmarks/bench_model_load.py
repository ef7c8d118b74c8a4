"""Model loading benchmark: a large model file read back by daskboost and by xgboost.

What it measures, side by side in one process:

* Model: ``--trees`` (default 1,000) regression trees of depth ``--depth`` (default 6)
  fitted (untimed) by daskboost and by xgboost on the same 20,000 synthetic rows x 28
  features (``common.make_regression``), each saved as its library's JSON model file.
* Timed, per repeat and alternating between the libraries: daskboost's
  ``DaskBoostRegressor().load_model(path)``, which parses the JSON and checks every
  field of the model before anything can use it (``daskboost.model_file``), and
  xgboost's ``XGBRegressor().load_model(path)`` of its own JSON file. Each load is
  followed, untimed, by a prediction of 1,000 rows, so both have really read the model.
* Reported: median load seconds over ``--repeats`` loads, nodes and file size per
  library, and daskboost's time as a ratio to xgboost's (< 1: daskboost is faster).

Run from the repository root::

    python benchmarks/bench_model_load.py --repeats 15
    python benchmarks/bench_model_load.py --trees 200 --output benchmarks/results/model_load
"""

import common  # noqa: F401  (first: fixes the thread count)

import argparse  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

LIBRARIES = ("daskboost", "xgboost")


def fit_and_save(library, X, y, trees, depth, path):
    """Fit ``trees`` trees of depth ``depth`` and save them as ``path``; returns the node
    count of the saved model."""
    params = dict(n_estimators=trees, max_depth=depth, learning_rate=0.05, max_bin=256)
    if library == "daskboost":
        from daskboost import DaskBoostRegressor
        model = DaskBoostRegressor(**params).fit(X, y)
        model.save_model(path)
        return sum(tree.n_nodes for tree in model.get_booster().trees)
    import xgboost
    model = xgboost.XGBRegressor(tree_method="hist", n_jobs=common.N_THREADS, **params).fit(X, y)
    model.save_model(path)
    return int(model.get_booster().trees_to_dataframe().shape[0])


def load(library, path):
    if library == "daskboost":
        from daskboost import DaskBoostRegressor
        return DaskBoostRegressor().load_model(path)
    import xgboost
    model = xgboost.XGBRegressor(n_jobs=common.N_THREADS)
    model.load_model(path)
    return model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=6)
    common.add_run_options(parser, LIBRARIES)
    args = common.parse_run_args(parser, LIBRARIES, argv)
    if args.trees < 1 or args.depth < 1 or args.repeats < 1:
        parser.error("need --trees >= 1, --depth >= 1, --repeats >= 1")
    X, y = common.make_regression(20_000, args.seed)[:2]
    X_predict = X[:1000]
    machine = common.machine_info()
    with tempfile.TemporaryDirectory(prefix="daskboost-bench-load-") as directory:
        paths, nodes, times = {}, {}, {name: [] for name in args.libraries}
        for name in args.libraries:
            paths[name] = os.path.join(directory, f"{name}.json")
            nodes[name] = fit_and_save(name, X, y, args.trees, args.depth, paths[name])
            load(name, paths[name]).predict(X_predict)  # warm: imports, JIT
        for repeat in range(args.repeats):
            for name in args.libraries:
                model, seconds, _ = common.timed(load, name, paths[name])
                assert np.isfinite(model.predict(X_predict)).all()
                times[name].append(seconds)
        sizes = {name: os.path.getsize(paths[name]) for name in args.libraries}
    medians = {name: common.median(values) for name, values in times.items()}
    rows = []
    for name in args.libraries:
        rows.append([name, f"{nodes[name]:,}", f"{sizes[name] / 2 ** 20:.1f} MiB",
                     f"{1e3 * medians[name]:.0f} ms", common.ratio_cell(medians, name)])
    table = common.markdown_table(
        ["library", "nodes", "file", "median load", "daskboost / library"], rows)
    print(f"{args.trees} trees, depth {args.depth}, {args.repeats} loads each\n")
    print(table)
    if args.output:
        common.write_results(args.output, "model_load", vars(args), machine,
                             {"seconds": times, "nodes": nodes, "bytes": sizes}, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
