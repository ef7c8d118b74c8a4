"""A level kernel called back to back, or after a pause: what a gap between kernels costs.

A small fit (diamonds' four 11,000-row partitions, issue 13) calls the level kernels of
each partition with the grower's Python (split search, bookkeeping) in between, about a
millisecond a level. This measures what such a gap does to the kernel that follows it,
with nothing of daskboost's between the calls:

* Data: ``--partitions`` (default 4) partitions of ``--rows`` (default 11,000) rows x
  ``--features`` (default 9) uint8 codes in 256 bins, float32 gradients; one level of one
  tree: every row at the root, split on feature 0 at bin 128, the left child's histogram
  built (``histogram.build_histograms``, the kernel a level pass runs: routing, then the
  additions).
* Modes, each a round over the partitions, ``--calls`` (default 200) rounds:
  ``back to back`` (no pause), ``sleep`` (``time.sleep(--gap-ms)`` before each call: the
  calling thread waits), ``busy`` (a Python loop of ``--gap-ms`` before each call: the
  calling thread keeps running, touching almost no memory). Only the kernel call is
  timed.
* Threads: ``--threads`` (default ``1,2``): the kernel's native threads
  (``native_threads.use``); with 2, the second is an OpenMP worker that waits between
  calls in every mode.
* Repeats (``--repeats``, default 5) alternate over the modes and thread counts;
  reported: the median over repeats of the mean microseconds a call, and each mode's
  ratio to ``back to back`` at the same thread count.

Run from the repository root::

    python benchmarks/bench_kernel_gaps.py
    python benchmarks/bench_kernel_gaps.py --rows 65000 --features 10 --gap-ms 0.5
"""

import common  # noqa: F401  (first: fixes the thread count)

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

MODES = ("back to back", "sleep", "busy")
N_BINS = 256


def make_partitions(n_partitions, n_rows, n_features, seed):
    """[(codes, grad, hess)] of uint8 codes in N_BINS bins and float32 (g, h)."""
    rng = np.random.default_rng(seed)
    return [(rng.integers(0, N_BINS, size=(n_rows, n_features), dtype=np.uint8),
             rng.standard_normal((1, n_rows)).astype(np.float32),
             rng.uniform(0.1, 1.0, (1, n_rows)).astype(np.float32))
            for _ in range(n_partitions)]


def one_split_level(n_features):
    """The kernel's level arguments: the root split on feature 0 at bin N_BINS // 2, the
    left child (node 1) built into slot 0."""
    from daskboost.partition import no_splits
    splits = no_splits(1, 3)
    split_feature, split_bin, _, left_child, right_child = splits
    split_feature[0, 0], split_bin[0, 0] = 0, N_BINS // 2
    left_child[0, 0], right_child[0, 0] = 1, 2
    node_to_slot = np.array([[-1, 0, -1]], dtype=np.int32)
    cell_offsets = np.arange(n_features + 1, dtype=np.int64) * N_BINS
    return splits, node_to_slot, cell_offsets


def pause(mode, seconds):
    """Wait ``seconds`` as ``mode`` says: asleep, in a Python loop, or not at all."""
    if mode == "sleep":
        time.sleep(seconds)
    elif mode == "busy":
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass


def run_mode(partitions, level, mode, gap_s, calls):
    """Mean seconds of one kernel call in ``mode``."""
    from daskboost.histogram import build_histograms
    splits, node_to_slot, cell_offsets = level
    positions = np.zeros((1, partitions[0][0].shape[0]), dtype=np.uint8)
    total = 0.0
    for _ in range(calls):
        for codes, grad, hess in partitions:
            moved = np.empty_like(positions)
            pause(mode, gap_s)
            start = time.perf_counter()
            build_histograms(codes, grad, hess, positions, *splits, N_BINS, node_to_slot, 1,
                             cell_offsets, out_positions=moved)
            total += time.perf_counter() - start
    return total / (calls * len(partitions))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--rows", type=int, default=11_000, help="rows a partition")
    parser.add_argument("--features", type=int, default=9)
    parser.add_argument("--calls", type=int, default=200, help="rounds over the partitions")
    parser.add_argument("--gap-ms", type=float, default=1.0, help="the pause before a call")
    parser.add_argument("--threads", default="1,2", help="native threads, comma-separated")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",") if t.strip()]
    if (min(args.partitions, args.rows, args.features, args.calls, args.repeats) < 1
            or args.gap_ms < 0 or not threads or min(threads) < 1):
        parser.error("need positive --partitions, --rows, --features, --calls, --repeats, "
                     "--threads and --gap-ms >= 0")
    from daskboost import native_threads

    partitions = make_partitions(args.partitions, args.rows, args.features, args.seed)
    level = one_split_level(args.features)
    print(f"# {args.partitions} partitions x {args.rows:,} rows x {args.features} uint8 "
          f"features; gap {args.gap_ms} ms; {args.calls} rounds a mode; median of "
          f"{args.repeats} alternating repeats", flush=True)
    seconds = {(n, mode): [] for n in threads for mode in MODES}
    used = 1  # the most native threads a kernel got
    for n in threads:  # untimed warm-up (JIT or its cache)
        with native_threads.use(n):
            run_mode(partitions, level, "back to back", 0.0, 2)
    for repeat in range(args.repeats):
        for n in threads:
            with native_threads.use(n):
                used = max(used, native_threads.threads())
                for mode in MODES:
                    seconds[(n, mode)].append(run_mode(partitions, level, mode,
                                                       args.gap_ms / 1000, args.calls))
        print(f"# repeat {repeat + 1}/{args.repeats} done", flush=True)
    rows = []
    for n in threads:
        base = common.median(seconds[(n, "back to back")])
        for mode in MODES:
            us = common.median(seconds[(n, mode)])
            rows.append([str(n), mode, f"{us * 1e6:.1f}", f"{us / base:.2f}"])
    print()
    print(common.markdown_table(["native threads", "mode", "us a call (median)",
                                 "÷ back to back"], rows))
    if used != max(threads):
        print(f"(native threads unavailable here: every kernel ran on {used} thread)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
