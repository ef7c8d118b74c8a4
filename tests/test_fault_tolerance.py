"""A worker killed mid-training: the fit finishes with the model of an undisturbed run."""

import functools
import os
import signal
import threading

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost import DaskBoostClassifier, DaskBoostRegressor
from worker_faults import die_once_in_pass

distributed = pytest.importorskip("distributed")


@pytest.fixture(autouse=True)
def one_partition_per_file(monkeypatch):
    """The lake's six small files as six partitions, so that both workers hold states
    (daskboost reads a lake of small files in fewer, larger partitions:
    ``lake._grouped``)."""
    monkeypatch.setattr("daskboost.lake._grouped", lambda partitions, rows, count: partitions)


def lake(tmp_path, n=6000, seed=5):
    """A small parquet lake of 6 files (the parquet source can be read again)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 20, size=(n, 6)).astype(np.float64)
    y = np.cos(X[:, 0] / 3) + 0.1 * X[:, 1] + rng.normal(0, 0.2, n)
    X[rng.random(X.shape) < 0.05] = np.nan
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    frame["y"] = y
    frame["label"] = (frame["y"] > frame["y"].median()).astype(int)
    path = tmp_path / "lake"
    dd.from_pandas(frame, npartitions=6).to_parquet(path)
    return path


def fit(model, path, eval_set=False, **fit_kwargs):
    df = dd.read_parquet(path)
    X = df[[f"f{i}" for i in range(6)]]
    y = df["label"] if isinstance(model, DaskBoostClassifier) else df["y"]
    if eval_set:
        fit_kwargs["eval_set"] = [(X, y)]
    return model.fit(X, y, **fit_kwargs)


class KillAWorker:
    """Progress callback that kills one worker process (SIGKILL) after round
    ``after_round``, either at once (between rounds) or ``delay`` seconds later
    (somewhere in the next round's passes)."""

    def __init__(self, client, after_round, delay=None):
        self.client, self.after_round, self.delay = client, after_round, delay
        self.killed = None

    def __call__(self, rounds_done, total, evals_result):
        if rounds_done != self.after_round or self.killed is not None:
            return
        pids = self.client.run(os.getpid)
        address = sorted(pids)[0]
        self.killed = address
        kill = lambda: os.kill(pids[address], signal.SIGKILL)  # noqa: E731
        if self.delay is None:
            kill()
        else:
            threading.Timer(self.delay, kill).start()


# With a delay, enough rounds follow the kill that the fit is still running when the
# worker dies (the kill lands in some later round's passes, whatever the machine's speed).
@pytest.mark.parametrize("make, delay, eval_set", [
    (lambda: DaskBoostRegressor(n_estimators=8, max_depth=4), None, False),
    (lambda: DaskBoostClassifier(n_estimators=30, max_depth=4, subsample=0.8), 0.05, True),
    (lambda: DaskBoostRegressor(n_estimators=20, max_depth=3, tree_method="approx",
                                objective="reg:absoluteerror"), 0.02, True),
    # a boosted random forest: a round is three copies of its tree, grown together
    (lambda: DaskBoostRegressor(n_estimators=12, max_depth=3, num_parallel_tree=3,
                                subsample=0.8, colsample_bynode=0.7), 0.05, True),
])
def test_killing_a_worker_mid_training_gives_the_same_model(tmp_path, monkeypatch, caplog, make,
                                                            delay, eval_set):
    path = lake(tmp_path)
    with dask.config.set(scheduler="threads"):
        undisturbed = fit(make(), path, eval_set)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        killer = KillAWorker(client, after_round=3, delay=delay)
        # verbose=True reports progress after every round: kill from there
        monkeypatch.setattr("daskboost.sklearn.reporter_for", lambda verbose: killer)
        recovered = fit(make().set_params(verbose=True), path, eval_set)
        assert killer.killed is not None
        # the process really died (a broadcast may still reach for it: on_error="return")
        alive = client.run(os.getpid, on_error="return")
        assert not isinstance(alive.get(killer.killed, OSError()), int)
    assert "were lost with a worker; rebuilding them" in caplog.text
    # the boosters (trees, base margin, objective) are equal to the last bit
    assert recovered.get_booster().to_dict() == undisturbed.get_booster().to_dict()
    if eval_set:
        assert recovered.evals_result() == undisturbed.evals_result()


def test_a_worker_killed_while_evaluating_the_training_rows_gives_the_same_model(tmp_path,
                                                                                 caplog):
    # the eval set is the training data: its pass runs on the training states and
    # computes their margins ahead; the survivors' own margins are unchanged, so the
    # round grown again after the loss gives the same model and metrics
    path = lake(tmp_path)
    make = lambda: DaskBoostClassifier(n_estimators=8, max_depth=4)  # noqa: E731
    with dask.config.set(scheduler="threads"):
        undisturbed = fit(make(), path, eval_set=True)
    flag = str(tmp_path / "died")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        client.run(die_once_in_pass, "daskboost.training", "training_eval_step", flag, 3)
        recovered = fit(make(), path, eval_set=True)
    assert os.path.exists(flag)
    assert "were lost with a worker; rebuilding them" in caplog.text
    assert recovered.get_booster().to_dict() == undisturbed.get_booster().to_dict()
    assert recovered.evals_result() == undisturbed.evals_result()


def test_a_worker_killed_while_the_workers_grow_many_rounds_gives_the_same_model(tmp_path,
                                                                                 caplog):
    # no eval set and no progress display: the workers grow all the rounds in one call;
    # a worker killed during it makes every state be rebuilt at the call's first round
    # (the live workers' states may be rounds ahead) and the rounds grown again
    from daskboost import cluster as cluster_runtime
    path = lake(tmp_path)
    make = lambda: DaskBoostRegressor(n_estimators=60, max_depth=4)  # noqa: E731
    with dask.config.set(scheduler="threads"):
        undisturbed = fit(make(), path)
    calls = []  # rounds grown per run_loop call
    original = cluster_runtime.ClusterRuntime.run_loop

    def run_loop(self, states, loop, *args):
        calls.append(len(next(a for a in loop.args if isinstance(a, range))))  # the rounds
        if len(calls) == 1:  # kill a worker 0.2 s into the first call
            pids = self.client.run(os.getpid)
            threading.Timer(0.2, os.kill, (pids[sorted(pids)[0]], signal.SIGKILL)).start()
        return original(self, states, loop, *args)

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster), pytest.MonkeyPatch.context() as patch:
        patch.setattr(cluster_runtime.ClusterRuntime, "run_loop", run_loop)
        recovered = fit(make(), path)
    assert calls == [60, 60]  # all in one call, then again after the loss
    assert "rebuilding them (and the others)" in caplog.text
    assert recovered.get_booster().to_dict() == undisturbed.get_booster().to_dict()


def test_a_loop_failing_on_one_worker_stops_the_others_and_raises_its_error():
    # run_loop: the workers wait for each other's partial sums after every pass, so a
    # worker whose loop fails must not leave the others waiting: they are aborted and
    # the client raises the failure (here within seconds, not a hang)
    import concurrent.futures

    from daskboost.cluster import ClusterRuntime, ClusterStates
    from daskboost.worker_states import register

    def add(a, b):
        return a + b

    def count_rows(state, arg):
        return state, np.array([state * arg], dtype=np.float64)

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        runtime = ClusterRuntime(client, "failing-loop", None)
        addresses = sorted(client.scheduler_info()["workers"])
        states = ClusterStates("numbers", 4, recipe=None)
        for i in range(4):  # partitions 0, 1 on the first worker, 2, 3 on the second
            client.run(register, "failing-loop", "numbers", i, i + 1,
                       workers=[addresses[i // 2]])
            states.owners[i] = addresses[i // 2]

        def loop(fail_on=None):  # a pass loop: yields each pass's argument
            from distributed import get_worker
            first = yield 1.0
            if get_worker().address == fail_on:
                raise ValueError("this worker's loop failed")
            return first, (yield 10.0)

        # both workers see the same totals: 1 + 2 + 3 + 4, then ten times that
        _, totals = runtime.run_loop(states, loop, count_rows, add)
        assert [float(t[0]) for t in totals] == [10.0, 100.0]
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            failing = functools.partial(loop, fail_on=addresses[1])
            future = pool.submit(runtime.run_loop, states, failing, count_rows, add)
            with pytest.raises(ValueError, match="this worker's loop failed"):
                future.result(timeout=60)
        # the aborted loop left the workers usable
        _, totals = runtime.run_loop(states, loop, count_rows, add)
        assert [float(t[0]) for t in totals] == [10.0, 100.0]
        runtime.close()


def test_workers_tune_malloc_only_while_a_fit_holds_states(monkeypatch):
    from daskboost import memory, worker_states
    calls = []
    monkeypatch.setattr(memory, "tune_malloc", lambda during_fit: calls.append(during_fit))
    worker_states.begin_fit("fit-a")
    worker_states.register("fit-a", "train", 0, "state")
    worker_states.begin_fit("fit-b")
    worker_states.release("fit-a")
    worker_states.release("fit-a")  # twice: counted once
    assert calls == [True]  # fit-b still runs
    worker_states.release("fit-b")
    assert calls == [True, False]


@pytest.mark.parametrize("environment,expected", [
    ({"MALLOC_TRIM_THRESHOLD_": "65536"}, [True, False]),  # as a dask worker's
    ({}, []),  # glibc's dynamic thresholds (raised at import) are left alone
])
def test_an_in_process_fit_tunes_malloc_where_the_environment_fixed_it(
        monkeypatch, environment, expected):
    # a fit inside a worker's task (dask-ml's searches) runs in process with the worker's
    # malloc settings: its levels' arrays were fresh mmaps (2.3x slower fits)
    from daskboost import DaskBoostRegressor, memory
    for name in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_",
                 "MALLOC_MMAP_MAX_"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    calls = []
    monkeypatch.setattr(memory, "tune_malloc", lambda during_fit: calls.append(during_fit))
    X = np.arange(400, dtype=np.float64).reshape(200, 2)
    DaskBoostRegressor(n_estimators=2, max_depth=2).fit(X, X[:, 0])
    assert calls == expected


def test_a_pass_longer_than_the_heartbeat_timeout_does_not_lose_its_worker(tmp_path, caplog):
    # one-thread workers, a scheduler that declares a worker dead after 2 s without a
    # heartbeat (distributed makes that at least 10 heartbeat intervals: 5 s here), and
    # one partition whose gradients take 8 s (the first to claim the
    # marker file): the passes run off the workers' event loops, so the heartbeats go
    # on and no worker is lost
    import time

    marker = str(tmp_path / "slept")

    def slow_squared_error(y, pred):
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            time.sleep(8.0)
        except FileExistsError:
            pass
        return pred - y, np.ones_like(pred)

    path = lake(tmp_path)
    make = lambda: DaskBoostRegressor(n_estimators=3, max_depth=3,  # noqa: E731
                                      objective=slow_squared_error, base_score=0.0)
    with dask.config.set({"distributed.scheduler.worker-ttl": "2s"}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        before = sorted(client.scheduler_info()["workers"])
        t0 = time.perf_counter()
        model = fit(make(), path)
        assert time.perf_counter() - t0 > 8.0 and os.path.exists(marker)  # it did sleep
        assert sorted(client.scheduler_info()["workers"]) == before
    assert "lost" not in caplog.text
    assert model.get_booster().n_rounds == 3


CLIENT_SCRIPT = """
import sys
import dask.array as da
import numpy as np
from distributed import Client
from daskboost import DaskBoostRegressor
client = Client(sys.argv[1])
rng = np.random.default_rng(0)
X = rng.normal(size=(4000, 5))
y = X[:, 0] + rng.normal(0, 0.1, 4000)
# no eval set: the workers grow all the rounds in one call
DaskBoostRegressor(n_estimators=100000, max_depth=3).fit(
    da.from_array(X, chunks=(1000, 5)), da.from_array(y, chunks=1000))
"""


def _fits_and_holders():
    from daskboost import worker_states
    return len(worker_states._fits), len(worker_states._holders)


def test_when_the_client_and_a_worker_die_the_other_workers_stop_and_free_the_fit(tmp_path):
    import subprocess
    import sys
    import time

    script = tmp_path / "client.py"
    script.write_text(CLIENT_SCRIPT)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        fitting = subprocess.Popen([sys.executable, str(script), cluster.scheduler_address])
        try:
            deadline = time.monotonic() + 60
            while not all(n == (1, 1) for n in client.run(_fits_and_holders).values()):
                assert time.monotonic() < deadline and fitting.poll() is None
                time.sleep(0.2)
            time.sleep(1.0)  # well into the workers' loop over the rounds
            pids = client.run(os.getpid)
            doomed, survivor = sorted(pids)
            os.kill(pids[doomed], signal.SIGKILL)
            fitting.kill()
        finally:
            fitting.kill()
            fitting.wait()
        deadline = time.monotonic() + 15
        while client.run(_fits_and_holders, workers=[survivor]).get(survivor) != (0, 0):
            assert time.monotonic() < deadline, "the surviving worker kept the fit"
            time.sleep(0.2)
