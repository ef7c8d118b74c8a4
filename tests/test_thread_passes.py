"""In-process passes (``thread_passes``): any number of runners adds the same pairs in
the same order as ``reduction``; a failing partition stops the pass and leaves nothing
running; kernels spread over ranges give their results in range order."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from daskboost import native_threads, thread_passes
from daskboost.reduction import reduce_all, reduce_nodes
from daskboost.thread_passes import (kernel_threads, map_ranges, run_partitions, run_pass,
                                     thread_ranges)


def bracket(a, b):
    """A combine that records the order of every addition: not associative, not
    commutative."""
    return f"({a}+{b})"


@pytest.fixture(scope="module")
def pool():
    with ThreadPoolExecutor(3) as executor:
        yield executor


def slow_leaf(state, arg):
    time.sleep(0.001 * ((state * 7) % 3))  # partitions finish out of order
    return state + 1, f"p{state}"


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 9])
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_any_number_of_runners_adds_the_same_pairs_in_the_same_order(pool, n, threads):
    states, total = run_pass(slow_leaf, list(range(n)), None, bracket,
                             pool if threads > 1 else None, threads)
    assert states == [i + 1 for i in range(n)]
    assert total == reduce_all([f"p{i}" for i in range(n)], bracket)


@pytest.mark.parametrize("indices", [[0, 1, 2], [3, 4, 5, 6], [7, 8], [4]])
def test_a_workers_range_completes_the_nodes_reduce_nodes_completes(pool, indices):
    # a cluster worker holds partitions ``indices`` of 9 and sends its subtrees' roots
    _, nodes = run_partitions(slow_leaf, list(indices), None, bracket, pool, 3, indices, 9)
    expected = reduce_nodes({(0, i): f"p{i}" for i in indices}, 9, bracket)
    assert nodes == expected


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_each_partitions_reads_start_once_before_the_partition_before_it_runs(
        pool, threads):
    events = []
    lock = threading.Lock()

    def step(state, arg):
        with lock:
            events.append(("start", state))
        time.sleep(0.002)
        with lock:
            events.append(("end", state))
        return state, f"p{state}"

    def read_ahead(state, arg):
        assert arg == "the pass's argument"
        events.append(("read", state))  # (under the runners' lock)

    step.read_ahead = read_ahead
    n = 9
    states, total = run_pass(step, list(range(n)), "the pass's argument", bracket,
                             pool if threads > 1 else None, threads)
    assert total == reduce_all([f"p{i}" for i in range(n)], bracket)
    assert sorted(s for kind, s in events if kind == "read") == list(range(n))
    for j in range(1, n):
        # partition j's reads start before the partition before it runs (so they can
        # be done when j is taken), and never after j started
        assert events.index(("read", j)) < events.index(("start", j - 1))
        assert events.index(("read", j)) < events.index(("start", j))


def test_a_failing_partition_raises_and_leaves_no_runner_working(pool):
    running = []
    lock = threading.Lock()

    def step(state, arg):
        if state == 0:  # the caller's first partition fails at once ...
            time.sleep(0.01)  # (once the pool's runners have taken theirs)
            raise RuntimeError("partition 0 failed")
        with lock:
            running.append(state)
        time.sleep(0.05)  # ... while the others are still at work
        with lock:
            running.remove(state)
        return state, "x"

    with pytest.raises(RuntimeError, match="partition 0 failed"):
        run_pass(step, list(range(40)), None, bracket, pool, 3)
    assert running == []  # nothing still runs on the states once the error is raised


def test_map_ranges_gives_results_in_range_order_on_the_loop_threads(pool, monkeypatch):
    monkeypatch.setattr(native_threads, "_switched_off", True)  # the pool's threads
    assert len(thread_ranges(10)) == 1  # no threads given: one range
    with kernel_threads(pool, 3):
        ranges = thread_ranges(10)
        assert [list(r) for r in ranges] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
        assert len(thread_ranges(10, min_items_per_thread=6)) == 1
        threads = set()

        def kernel(r):
            threads.add(threading.get_ident())
            time.sleep(0.01)
            return list(r)

        assert map_ranges(kernel, ranges) == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert len(threads) > 1


def test_a_pass_driven_from_a_busy_pool_takes_its_runners_back():
    # several cluster workers of one process share a fit's pool: a pass driven from a
    # pool thread may find no other thread free; it must run everything itself
    busy = ThreadPoolExecutor(1)
    try:
        driver = busy.submit(run_pass, slow_leaf, list(range(6)), None, bracket, busy, 3)
        states, total = driver.result(timeout=30)  # a deadlock fails here
    finally:
        busy.shutdown(wait=False)
    assert states == [i + 1 for i in range(6)]
    assert total == reduce_all([f"p{i}" for i in range(6)], bracket)


class Sized:
    """A state that says how many rows it holds (as ``PartitionState.n_rows``)."""

    def __init__(self, n_rows):
        self.n_rows = n_rows


@pytest.mark.skipif(not native_threads.available(), reason="no native threads here")
def test_few_or_small_partitions_go_one_after_the_other_on_native_threads(pool):
    small = thread_passes.NATIVE_PASS_MAX_ROWS
    on_native = thread_passes.pass_on_native_threads
    assert on_native([Sized(10**7)], 2)  # fewer partitions than threads
    assert on_native([Sized(10**7)] * 2, 2)  # as many
    assert on_native([Sized(small)] * 8, 2)  # small ones
    assert not on_native([Sized(small + 1)] * 3, 2)  # more large ones: the pool's runners
    assert not on_native([Sized(small + 1)] * 8, 2)
    assert not on_native([1, 2, 3], 2)  # states that do not say their rows
    assert not on_native([Sized(10)] * 4, 1)  # one thread: the serial kernels

    seen = []

    def step(state, arg):
        seen.append((threading.get_ident(), native_threads.threads()))
        return state, "x"

    run_partitions(step, [Sized(100)] * 4, None, bracket, pool, 2)
    assert seen == [(threading.get_ident(), 2)] * 4
    seen.clear()
    run_partitions(step, [Sized(small + 1)] * 4, None, bracket, pool, 2)
    assert {threads for _, threads in seen} == {1}
    # the loop's own kernels (split search) on native threads only with such passes
    with kernel_threads(pool, 2, [Sized(100)] * 4):
        assert native_threads.threads() == 2 and len(thread_ranges(10)) == 1
    with kernel_threads(pool, 2, [Sized(small + 1)] * 4):
        assert native_threads.threads() == 1 and len(thread_ranges(10)) == 2
