"""Cold start: import time and the extra cost of a fresh process's first fit.

What it measures, for daskboost, xgboost and LightGBM, each in fresh Python processes,
round robin over the libraries, ``--repeats`` processes each:

* ``import`` seconds of the library (its dependencies included).
* Then, after ``--pause`` seconds spent elsewhere (0: the fit starts right after the
  import; a script usually reads its data first, e.g. a parquet lake), two fits of the
  binary task of ``bench_binary`` (``common.make_binary``, ``--rows`` rows, 100 trees,
  depth 6, 2 threads) each followed by a prediction of the training rows.
* ``first extra``: (first fit + predict) minus (second fit + predict): what the first
  call pays once per process (for daskboost numba's start-up and loading its compiled
  kernels from numba's cache; the cache itself is filled by an untimed process first).

Reported: medians per library and pause.

Run from the repository root::

    python benchmarks/bench_cold_start.py --repeats 7
    python benchmarks/bench_cold_start.py --pauses 0,1 --libraries daskboost
"""

import common  # noqa: F401  (first: fixes the thread count)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

LIBRARIES = ("daskboost", "xgboost", "lightgbm")

# the child process: times its import, pauses, fits twice; prints one JSON line
CHILD = r"""
import json, sys, time
library, data_path, pause = sys.argv[1], sys.argv[2], float(sys.argv[3])
start = time.perf_counter()
if library == "daskboost":
    from daskboost import DaskBoostClassifier as Model
    params = dict(max_bin=256)
elif library == "xgboost":
    from xgboost import XGBClassifier as Model
    params = dict(tree_method="hist", max_bin=256, n_jobs=2)
else:
    from lightgbm import LGBMClassifier as Model
    params = dict(num_leaves=64, max_bin=255, min_child_samples=1, n_jobs=2, verbose=-1)
import_seconds = time.perf_counter() - start
time.sleep(pause)
import numpy as np
data = np.load(data_path)
X, y = data["X"], data["y"]
fits = []
for _ in range(2):
    start = time.perf_counter()
    model = Model(n_estimators=100, max_depth=6, learning_rate=0.1, **params).fit(X, y)
    model.predict_proba(X)
    fits.append(time.perf_counter() - start)
print(json.dumps({"import": import_seconds, "first": fits[0], "second": fits[1]}))
"""


def run_child(library, data_path, pause):
    env = dict(os.environ, OMP_NUM_THREADS=str(common.N_THREADS))
    done = subprocess.run([sys.executable, "-c", CHILD, library, data_path, str(pause)],
                          capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{library} child failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--pauses", default="0,1",
                        help="comma list of seconds between import and the first fit")
    common.add_run_options(parser, LIBRARIES)
    args = common.parse_run_args(parser, LIBRARIES, argv)
    pauses = common.parse_number_list(parser, "--pauses", args.pauses, float, "seconds")
    if args.rows < 100 or args.repeats < 1 or not pauses or min(pauses) < 0:
        parser.error("need --rows >= 100, --repeats >= 1 and --pauses >= 0")
    X, y = common.make_binary(args.rows, args.seed)[:2]
    machine = common.machine_info()
    results = {f"{name} pause {pause:g}": [] for pause in pauses for name in args.libraries}
    with tempfile.TemporaryDirectory(prefix="daskboost-bench-cold-") as directory:
        data_path = os.path.join(directory, "data.npz")
        np.savez(data_path, X=X, y=y)
        for name in args.libraries:
            run_child(name, data_path, 0.0)  # untimed: fills numba's cache for daskboost
        for repeat in range(args.repeats):
            for pause in pauses:
                for name in args.libraries:
                    results[f"{name} pause {pause:g}"].append(run_child(name, data_path, pause))
                    print(f"repeat {repeat} pause {pause:g} {name}: "
                          f"{results[f'{name} pause {pause:g}'][-1]}", flush=True)
    rows = []
    for key, runs in results.items():
        name, pause = key.split(" pause ")
        imports = common.median([run["import"] for run in runs])
        extras = common.median([run["first"] - run["second"] for run in runs])
        second = common.median([run["second"] for run in runs])
        rows.append([name, f"{pause} s", f"{imports:.3f}", f"{extras:.3f}", f"{second:.3f}"])
    common.report(args, "cold_start",
                  ["library", "pause before fit", "import s", "first extra s",
                   "warm fit+predict s"], rows, machine, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
