"""The model depends on the data, not on how it is partitioned or scheduled."""

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost import DaskBoostClassifier, DaskBoostRegressor


def discrete_frame(seed=0, n=5000):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 15, size=(n, 5)).astype(np.float64)
    y = np.sin(X[:, 0]) + 0.2 * X[:, 1] * (X[:, 2] > 7) + rng.normal(0, 0.2, n)
    X[rng.random(X.shape) < 0.1] = np.nan
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    return frame, pd.Series(y, name="y")


def fit_partitioned(make, n_partitions):
    X, y = discrete_frame()
    model = make()
    if isinstance(model, DaskBoostClassifier):
        y = (y > y.median()).astype(int)
    X_parts = dd.from_pandas(X, npartitions=n_partitions)
    assert X_parts.npartitions == n_partitions
    return model.fit(X_parts, dd.from_pandas(y, npartitions=n_partitions))


@pytest.mark.parametrize("make", [
    lambda: DaskBoostRegressor(n_estimators=10, max_depth=5),
    lambda: DaskBoostClassifier(n_estimators=10, max_depth=5),
])
def test_one_versus_seven_partitions_give_the_same_trees(make):
    trees_one = fit_partitioned(make, 1).get_booster().trees
    trees_seven = fit_partitioned(make, 7).get_booster().trees
    assert len(trees_one) == len(trees_seven) == 10
    for a, b in zip(trees_one, trees_seven):
        for name in ("feature", "threshold", "default_left", "left", "right"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        # only the order in which float64 sums are added differs
        np.testing.assert_allclose(a.value, b.value, rtol=1e-9, atol=1e-12)


def saved_model(tmp_path, name, **fit_kwargs):
    X, y = discrete_frame(3)
    model = DaskBoostRegressor(n_estimators=8, max_depth=4).fit(
        dd.from_pandas(X, npartitions=4), dd.from_pandas(y, npartitions=4))
    path = tmp_path / f"{name}.json"
    model.save_model(path)
    return path.read_bytes()


def test_threaded_and_synchronous_schedulers_give_byte_identical_models(tmp_path):
    with dask.config.set(scheduler="threads"):
        threaded = saved_model(tmp_path, "threads")
    with dask.config.set(scheduler="synchronous"):
        synchronous = saved_model(tmp_path, "sync")
    assert threaded == synchronous


@pytest.mark.parametrize("direct_to_workers", [None, False])
def test_distributed_cluster_gives_a_byte_identical_model(tmp_path, cluster, direct_to_workers):
    # None: the client calls the workers' StateHolders directly; False: the calls go
    # through the scheduler, as the Client asks
    import distributed

    from daskboost import cluster as cluster_runtime
    with dask.config.set(scheduler="threads"):
        threaded = saved_model(tmp_path, "threads")
    routes = []
    original = cluster_runtime.ClusterRuntime._rpc

    def recording_rpc(self, address):
        rpc = original(self, address)
        routes.append(type(rpc).__name__)
        return rpc

    with distributed.Client(cluster, direct_to_workers=direct_to_workers) as client, \
            pytest.MonkeyPatch.context() as patch:
        patch.setattr(cluster_runtime.ClusterRuntime, "_rpc", recording_rpc)
        on_cluster = saved_model(tmp_path, "cluster")
        # the fit leaves the workers as they were: its handler for partial sums is gone
        handlers = client.run(lambda dask_worker: "daskboost_sums" in dask_worker.handlers)
    assert on_cluster == threaded
    assert list(handlers.values()) == [False, False]
    expected = "ProxyRPC" if direct_to_workers is False else "PooledRPCCall"
    assert routes == [expected, expected]


def test_partitions_of_both_code_widths_give_the_threaded_model_on_a_cluster(tmp_path,
                                                                            cluster):
    # continuous features without missing values (256 value bins, so the missing code
    # is 256) and a categorical one with missing values in the first partition only:
    # its codes stay uint16, the others' are kept as uint8 (binning.narrowed), on the
    # workers as in the threaded fit
    import distributed
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(8000, 4)), columns=[f"f{i}" for i in range(4)])
    X["c"] = pd.Categorical(rng.choice(["a", "b", "c"], 8000))
    y = pd.Series(X["f0"] + np.sin(2 * X["f1"]) + (X["c"] == "b") + rng.normal(0, 0.2, 8000),
                  name="y")
    X.loc[:499, "c"] = np.nan

    def saved(name):
        model = DaskBoostRegressor(n_estimators=6, max_depth=4).fit(
            dd.from_pandas(X, npartitions=4), dd.from_pandas(y, npartitions=4))
        model.save_model(tmp_path / f"{name}.json")
        return (tmp_path / f"{name}.json").read_bytes()

    from daskboost import binning, partition
    widths = []

    def recording(codes):
        out = binning.narrowed(codes)
        widths.append(out.dtype.itemsize)
        return out
    with dask.config.set(scheduler="threads"), pytest.MonkeyPatch.context() as patch:
        patch.setattr(partition, "narrowed", recording)
        threaded = saved("threads")
    assert sorted(widths) == [1, 1, 1, 2]
    with distributed.Client(cluster):
        on_cluster = saved("cluster")
    assert on_cluster == threaded


@pytest.mark.parametrize("n_workers, threads", [(3, 1), (2, 2)])
def test_other_cluster_shapes_give_the_threaded_model(tmp_path, n_workers, threads):
    # three workers: each sends its partial sums to two peers, and the 4 partitions sit
    # 2 + 1 + 1, so no worker completes the second pair of the reduction tree alone;
    # two threads per worker: a worker's partitions run on its thread pool
    import distributed
    with dask.config.set(scheduler="threads"):
        threaded = saved_model(tmp_path, "threads")
    # (another cluster may hold the default HTTP port: take any free one)
    with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=threads,
                                  processes=True, dashboard_address=":0") as local_cluster, \
            distributed.Client(local_cluster):
        on_cluster = saved_model(tmp_path, "cluster")
    assert on_cluster == threaded


def test_every_pass_kind_gives_the_same_model_on_a_cluster(cluster):
    # eval sets, approx re-sketching and re-binning, lossguide, subsampling, multiclass,
    # sample weights (float64 gradients), adaptive (LAD) leaves, trimming and quantized
    # gradients: threaded and distributed agree bit for bit
    import distributed
    X, y = discrete_frame(5, n=3000)
    classes = pd.Series(np.arange(len(X)) % 3)
    weights = pd.Series(np.arange(len(X)) % 5 * 0.75)
    parts = lambda v: dd.from_pandas(v, npartitions=4)

    def fit_both():
        clf = DaskBoostClassifier(n_estimators=3, tree_method="approx", grow_policy="lossguide",
                                  max_leaves=8, max_depth=0, subsample=0.8, random_state=1)
        clf.fit(parts(X), parts(classes), sample_weight=parts(weights),
                eval_set=[(parts(X), parts(classes))])
        reg = DaskBoostRegressor(n_estimators=3, objective="reg:absoluteerror", trim_fraction=0.1)
        reg.fit(parts(X), parts(y), eval_set=[(parts(X), parts(y))])
        quantized = DaskBoostClassifier(n_estimators=3, quantized_grad=True, subsample=0.8,
                                        random_state=2).fit(parts(X), parts(classes))
        return (clf.predict_proba(X), clf.evals_result(), reg.predict(X), reg.evals_result(),
                quantized.predict_proba(X))

    with dask.config.set(scheduler="threads"):
        threaded = fit_both()
    with distributed.Client(cluster):
        on_cluster = fit_both()
    np.testing.assert_array_equal(on_cluster[0], threaded[0])
    np.testing.assert_array_equal(on_cluster[2], threaded[2])
    np.testing.assert_array_equal(on_cluster[4], threaded[4])
    assert on_cluster[1] == threaded[1] and on_cluster[3] == threaded[3]


def test_repeated_fits_are_byte_identical(tmp_path):
    assert saved_model(tmp_path, "a") == saved_model(tmp_path, "b")
