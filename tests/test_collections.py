"""Any dask collection on any scheduler (issue 14, item 3).

Persisted arrays and frames, collections made of ``client.scatter`` futures or
``dask.delayed`` parts, arrays with unknown chunk sizes: each trains (with an eval
set) and predicts, on the threaded scheduler and on a ``distributed`` cluster, and
gives the model file, the eval scores and the predictions of the same rows in a plain
dask array with the same partitioning.

How a collection becomes graph inputs is ``data._dask_blocks`` (every partition key
defined in the graph, a persisted collection's Futures included) and
``graphs.task``/``graphs.ref`` (inputs are explicit references).
"""

import concurrent.futures

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost import DaskBoostRegressor
from daskboost.data import partition_input
from daskboost.graphs import per_partition_graph, ref

N, PARTS = 1600, 4
ROWS = N // PARTS


def rows():
    """(X, y): few distinct values (exact bins), 10% missing, 4 columns."""
    rng = np.random.default_rng(14)
    X = rng.integers(0, 7, size=(N, 4)).astype(np.float64)
    y = X[:, 0] - 0.5 * X[:, 1] * (X[:, 2] > 3) + rng.normal(0, 0.3, N)
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def fit_and_predict(X, y, tmp_path):
    """(model file bytes, eval scores, predictions) of a fit with X as its eval set."""
    model = DaskBoostRegressor(n_estimators=4, max_depth=3).fit(X, y, eval_set=[(X, y)])
    path = tmp_path / "model.json"
    model.save_model(path)
    return path.read_bytes(), model.evals_result(), np.asarray(dask.compute(model.predict(X))[0])


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """What the plain dask array (chunks of 400 rows) gives on the threaded scheduler."""
    X, y = rows()
    with dask.config.set(scheduler="threads"):
        return fit_and_predict(da.from_array(X, chunks=(ROWS, 4)), da.from_array(y, chunks=ROWS),
                               tmp_path_factory.mktemp("plain"))


def assert_same(result, plain):
    assert result[0] == plain[0]  # the model file, byte for byte
    assert result[1] == plain[1]
    np.testing.assert_array_equal(result[2], plain[2])


def persisted_array():
    X, y = rows()
    return (da.from_array(X, chunks=(ROWS, 4)).persist(),
            da.from_array(y, chunks=ROWS).persist())


def persisted_array_column_chunks():
    X, y = rows()  # X is rechunked to one column block; y is used as it is
    return (da.from_array(X, chunks=(ROWS, 2)).persist(),
            da.from_array(y, chunks=ROWS).persist())


def persisted_frame():
    X, y = rows()
    frame = pd.DataFrame(X)  # integer column names: no feature names, as for the array
    return (dd.from_pandas(frame, npartitions=PARTS).persist(),
            dd.from_pandas(pd.Series(y, name="y"), npartitions=PARTS).persist())


def delayed_parts():
    X, y = rows()
    block = dask.delayed(lambda values, i: values[i * ROWS:(i + 1) * ROWS])
    return (da.concatenate([da.from_delayed(block(X, i), (ROWS, 4), np.float64)
                            for i in range(PARTS)]),
            da.concatenate([da.from_delayed(block(y, i), (ROWS,), np.float64)
                            for i in range(PARTS)]))


def unknown_chunks():
    X, y = rows()
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=PARTS)
    X_unknown = frame.to_dask_array()
    assert np.isnan(X_unknown.chunks[0]).all()
    return X_unknown, dd.from_pandas(pd.Series(y), npartitions=PARTS).to_dask_array()


COLLECTIONS = [persisted_array, persisted_array_column_chunks, persisted_frame, delayed_parts,
               unknown_chunks]


@pytest.mark.parametrize("make", COLLECTIONS)
def test_threaded_scheduler(make, plain, tmp_path):
    with dask.config.set(scheduler="threads"):
        assert_same(fit_and_predict(*make(), tmp_path), plain)


@pytest.mark.parametrize("make", COLLECTIONS)
def test_distributed(make, cluster, plain, tmp_path):
    # persisted on a cluster, a collection's graph maps its keys to Futures: the
    # tasks used to receive the key itself ("could not convert string to float:
    # 'array-...'")
    import distributed
    with distributed.Client(cluster):
        assert_same(fit_and_predict(*make(), tmp_path), plain)


def test_scattered_futures(cluster, plain, tmp_path):
    import distributed
    X, y = rows()
    with distributed.Client(cluster) as client:
        x_parts = client.scatter([X[i * ROWS:(i + 1) * ROWS] for i in range(PARTS)])
        y_parts = client.scatter([y[i * ROWS:(i + 1) * ROWS] for i in range(PARTS)])
        X_dask = da.concatenate([da.from_delayed(f, (ROWS, 4), np.float64) for f in x_parts])
        y_dask = da.concatenate([da.from_delayed(f, (ROWS,), np.float64) for f in y_parts])
        assert_same(fit_and_predict(X_dask, y_dask, tmp_path), plain)


@pytest.mark.parametrize("threads", [1, 2])
def test_in_process_cluster(plain, tmp_path, threads):
    # LocalCluster(processes=False): both workers in this process, so the workers'
    # StateHolders share one process (each must get its own peers' sums: it used to
    # hang, the sums of one delivered to the other); with 2 threads each, the two
    # workers' passes share the fit's pool of 2 threads (a pass waiting on runners the
    # busy pool never started used to hang)
    import distributed
    pool = concurrent.futures.ThreadPoolExecutor(1)  # a hang fails the test (timeout)
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=threads,
                                      processes=False, dashboard_address=None) as local, \
                distributed.Client(local):
            work = pool.submit(lambda: fit_and_predict(*persisted_array(), tmp_path))
            assert_same(work.result(timeout=60), plain)
    finally:
        pool.shutdown(wait=False)


def test_every_partition_key_is_defined_in_the_graph(cluster):
    import distributed
    with distributed.Client(cluster):
        X, y = persisted_array()
        data = partition_input(X, y)
    for key in data.x_keys + data.y_keys:
        assert key in data.graph
        # a persisted partition: the Future of its key, which keeps the data alive
        assert isinstance(data.graph[key], distributed.Future) and data.graph[key].key == key


def test_task_arguments_are_never_taken_for_keys():
    # a string argument equal to a key stays a string; only a ref is replaced
    data = partition_input(np.arange(6.0).reshape(3, 2))
    key = data.x_keys[0]
    graph, keys = per_partition_graph(data, "t", lambda i: (lambda x, k: (x.shape, k),
                                                            ref(key), key))
    assert dask.get(graph, keys[0]) == ((3, 2), key)
