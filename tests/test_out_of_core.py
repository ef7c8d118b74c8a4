"""Training with binned blocks spilled to disk: same model, bounded memory, no leftovers."""

import functools
import os
import select
import signal
import subprocess
import sys
import textwrap

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import daskboost.blockstore as blockstore
import daskboost.sklearn
from daskboost import DaskBoostClassifier, DaskBoostRegressor


def frame(n=4000, seed=11):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * (X[:, 2] > 0) + rng.normal(0, 0.3, n)
    X[rng.random(X.shape) < 0.05] = np.nan
    return pd.DataFrame(X, columns=[f"f{i}" for i in range(5)]), pd.Series(y, name="y")


def fit(model, n_partitions=3, eval_set=True):
    X, y = frame()
    if isinstance(model, DaskBoostClassifier):
        y = np.digitize(y, np.quantile(y, [0.33, 0.66]))  # three classes
        y = pd.Series(y, name="y")
    Xd, yd = dd.from_pandas(X, npartitions=n_partitions), dd.from_pandas(y, npartitions=n_partitions)
    return model.fit(Xd, yd, eval_set=[(Xd, yd)] if eval_set else None)


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 128 rows, so that every partition streams several blocks."""
    small = functools.partial(blockstore.StoreConfig, block_rows=128)
    monkeypatch.setattr(daskboost.sklearn, "StoreConfig", small)  # what fit() builds
    monkeypatch.setattr(blockstore, "StoreConfig", small)


def leftovers(directory):
    return [name for name in os.listdir(directory) if name.startswith("daskboost-cache-")]


MODELS = [
    lambda **kw: DaskBoostRegressor(n_estimators=6, max_depth=4, **kw),
    lambda **kw: DaskBoostClassifier(n_estimators=4, max_depth=3, subsample=0.8, **kw),
    lambda **kw: DaskBoostRegressor(n_estimators=4, max_depth=3, tree_method="approx",
                                    objective="reg:absoluteerror", **kw),
    # every pass kind on a state held in row blocks (issue 17)
    lambda **kw: DaskBoostRegressor(n_estimators=4, grow_policy="lossguide", max_leaves=6,
                                    max_depth=0, quantized_grad=True, **kw),
    lambda **kw: DaskBoostClassifier(n_estimators=3, max_depth=3, quantized_grad=True,
                                     colsample_bynode=0.8, **kw),
    # (quantized, held in row blocks: a round's second pass computes the first pass's
    # gradients again, row subsampling included)
    lambda **kw: DaskBoostClassifier(n_estimators=3, max_depth=3, quantized_grad=True,
                                     subsample=0.7, **kw),
    # ... and before the passes that read the float gradients or the leaves' rows
    lambda **kw: DaskBoostRegressor(n_estimators=3, max_depth=3, tree_method="approx",
                                    trim_fraction=0.1, quantized_grad=True, **kw),
    lambda **kw: DaskBoostRegressor(n_estimators=3, max_depth=3, quantized_grad=True,
                                    objective="reg:absoluteerror", **kw),
    # several quantile levels: each output's leaves refit from its own residuals
    lambda **kw: DaskBoostRegressor(n_estimators=3, max_depth=3, objective="reg:quantileerror",
                                    quantile_alpha=[0.2, 0.8], **kw),
    lambda **kw: DaskBoostRegressor(n_estimators=3, max_depth=3, trim_fraction=0.1,
                                    objective="reg:pseudohubererror", **kw),
]


@pytest.mark.parametrize("make", MODELS)
@pytest.mark.parametrize("budget", [0, 20_000])  # everything on disk; some blocks in memory
def test_spilled_blocks_give_the_same_model(tmp_path, small_blocks, make, budget):
    in_memory = fit(make())
    spilled = fit(make(memory_budget=budget, cache_dir=str(tmp_path)))
    assert spilled.get_booster().to_dict() == in_memory.get_booster().to_dict()
    assert spilled.evals_result() == in_memory.evals_result()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("budget", [0, 20_000])
def test_blocks_of_both_code_widths_give_the_same_model(tmp_path, small_blocks, monkeypatch,
                                                        budget):
    """Missing values in the first rows only: those blocks keep uint16 codes, the others
    are narrowed to uint8 (``binning.narrowed``), in memory and on disk alike.  The
    numeric features have no missing value (256 value bins: code 256 is the missing
    one); a categorical feature has them."""
    X, y = frame()
    rng = np.random.default_rng(3)
    X[:] = rng.normal(size=X.shape)
    X["c"] = pd.Categorical(rng.choice(["a", "b", "c"], len(X)))
    X.loc[X.index[:300], "c"] = np.nan
    widths = set()
    spiller = blockstore.BlockStore._array_spiller

    def spying(self):
        spill = spiller(self)

        def spying_spill(block):  # a block of codes
            widths.add(block.dtype.itemsize)
            return spill(block)
        return spying_spill
    monkeypatch.setattr(blockstore.BlockStore, "_array_spiller", spying)
    models = []
    for kw in ({}, {"memory_budget": budget, "cache_dir": str(tmp_path)}):
        Xd, yd = dd.from_pandas(X, npartitions=3), dd.from_pandas(y, npartitions=3)
        models.append(DaskBoostRegressor(n_estimators=4, max_depth=3, **kw).fit(
            Xd, yd, eval_set=[(Xd, yd)]))
    assert models[1].get_booster().to_dict() == models[0].get_booster().to_dict()
    assert models[1].evals_result() == models[0].evals_result()
    if budget == 0:
        assert widths == {1, 2}
    assert leftovers(tmp_path) == []


def test_blocks_really_go_to_disk(tmp_path, small_blocks, monkeypatch):
    """Spy on the store: with budget 0 every block of the codes and of the per-row state
    is written; the codes once, the node ids at every pass; all read back per pass."""
    writes, reads = [], []
    spill, read = blockstore.BlockStore._spill, blockstore.BlockStore._read
    monkeypatch.setattr(blockstore.BlockStore, "_spill",
                        lambda self, block, **kw: writes.append(block) or spill(self, block, **kw))
    monkeypatch.setattr(blockstore.BlockStore, "_read",
                        lambda self, disk: reads.append(disk.path) or read(self, disk))
    fit(DaskBoostRegressor(n_estimators=2, max_depth=2, memory_budget="0MB",
                           cache_dir=str(tmp_path)), eval_set=False)
    n_blocks = sum(-(-rows // 128) for rows in (1334, 1333, 1333))
    passes = 2 * 2  # 2 rounds of 2 passes (the root's, then its children's)
    codes = [b for b in writes if b.ndim == 2 and b.shape[1] == 5]
    labels = [b for b in writes if b.ndim == 1]
    node_ids = [b for b in writes if b.dtype == np.uint8 and b.ndim == 2 and b.shape[0] == 1]
    margins = [b for b in writes if b.dtype == np.float64 and b.ndim == 2]
    gradients = [b for b in writes if b.dtype == np.float32 and b.ndim == 2]
    assert len(codes) == len(labels) == n_blocks
    assert len(node_ids) == passes * n_blocks
    assert len(margins) == 2 * n_blocks  # at binning; the first round's trees added
    assert len(gradients) == 2 * 2 * n_blocks  # g and h, each round
    assert len(reads) >= passes * 2 * n_blocks  # codes and node ids at least, every pass
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("quantized", [False, True])
def test_node_ids_and_gradients_take_the_budget_before_the_codes(tmp_path, small_blocks,
                                                                 monkeypatch, quantized):
    """A budget that holds every row's node ids and the gradients its passes read (1 +
    4 + 4 bytes a row, or 1 + 2 packed when quantized: 36,000 or 12,000 bytes for
    these 4,000 rows) but not the codes keeps those in memory: the codes and margins go to
    disk, no node id or gradient a pass reads is ever written; a quantized fit's float
    gradients are not stored at all (its second pass computes them again from the
    margins); the same model as in memory."""
    writes = []
    spill = blockstore.BlockStore._spill
    monkeypatch.setattr(blockstore.BlockStore, "_spill",
                        lambda self, block, **kw: writes.append(block) or spill(self, block, **kw))
    make = functools.partial(DaskBoostRegressor, n_estimators=3, max_depth=3,
                             quantized_grad=quantized)
    budget = 20_000 if quantized else 40_000  # (codes: 20,000 bytes)
    spilled = fit(make(memory_budget=budget, cache_dir=str(tmp_path)), eval_set=False)
    per_row = [b for b in writes if b.ndim == 2 and b.shape[0] == 1]
    assert [b for b in writes if b.ndim == 2 and b.shape[1] == 5]  # codes on disk
    assert [b for b in per_row if b.dtype == np.float64]  # margins on disk
    assert not [b for b in per_row if b.dtype in (np.uint8, np.int16, np.float32)]
    in_memory = fit(make(), eval_set=False)
    assert spilled.get_booster().to_dict() == in_memory.get_booster().to_dict()
    assert leftovers(tmp_path) == []


def test_a_fits_row_blocks_are_sized_from_the_codes_width(tmp_path, monkeypatch):
    """Without ``block_rows`` set, training sizes the blocks of its store from a row's
    codes (``blockstore.block_rows_for``): 5 one-byte codes, the largest blocks."""
    sizes = []
    init = blockstore.BlockStore.__init__

    def spy(self, fit_id, config):
        init(self, fit_id, config)
        sizes.append(self.config.block_rows)
    monkeypatch.setattr(blockstore.BlockStore, "__init__", spy)
    fit(DaskBoostRegressor(n_estimators=2, max_depth=2, memory_budget=0,
                           cache_dir=str(tmp_path)), eval_set=False)
    assert sizes == [blockstore.block_rows_for(5)] == [blockstore.MAX_BLOCK_ROWS]


def test_several_cache_dirs_share_the_blocks(tmp_path, small_blocks, monkeypatch):
    seen = set()
    spill = blockstore.BlockStore._spill

    def spy(self, block, **kw):
        out = spill(self, block, **kw)
        seen.add(os.path.dirname(os.path.dirname(out.path)))
        return out

    monkeypatch.setattr(blockstore.BlockStore, "_spill", spy)
    dirs = [str(tmp_path / "disk1"), str(tmp_path / "disk2")]
    model = fit(DaskBoostRegressor(n_estimators=2, max_depth=2, memory_budget=0, cache_dir=dirs),
                eval_set=False)
    assert seen == set(dirs)
    assert model.get_booster().to_dict() == fit(
        DaskBoostRegressor(n_estimators=2, max_depth=2), eval_set=False).get_booster().to_dict()
    assert leftovers(dirs[0]) == leftovers(dirs[1]) == []


def test_cache_is_removed_when_training_fails(tmp_path):
    X, y = frame()
    y = y.copy()
    y.iloc[-1] = np.inf  # found by the scan pass of the last partition
    model = DaskBoostRegressor(n_estimators=2, memory_budget=0, cache_dir=str(tmp_path))
    with pytest.raises(ValueError, match="inf"):
        model.fit(dd.from_pandas(X, npartitions=3), dd.from_pandas(y, npartitions=3))
    assert leftovers(tmp_path) == []

    def fail_after_first_round(*args):
        raise RuntimeError("stop here")

    import daskboost.sklearn
    original = daskboost.sklearn.reporter_for
    daskboost.sklearn.reporter_for = lambda verbose: fail_after_first_round
    try:
        with pytest.raises(RuntimeError, match="stop here"):
            fit(DaskBoostRegressor(n_estimators=3, memory_budget=0, cache_dir=str(tmp_path),
                                   verbose=True))
    finally:
        daskboost.sklearn.reporter_for = original
    assert leftovers(tmp_path) == []


INTERRUPTED_FIT = textwrap.dedent("""
    import sys
    import numpy as np
    from daskboost import DaskBoostRegressor

    def say_ready(done, total, evals):
        if done == 1:
            print("ready", flush=True)

    import daskboost.sklearn
    daskboost.sklearn.reporter_for = lambda verbose: say_ready
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200_000, 8))
    y = X[:, 0] + rng.normal(size=200_000)
    DaskBoostRegressor(n_estimators=100_000, max_depth=6, memory_budget=0,
                       cache_dir=sys.argv[1], verbose=True).fit(X, y)
""")


def test_cache_is_removed_on_ctrl_c(tmp_path):
    process = subprocess.Popen([sys.executable, "-c", INTERRUPTED_FIT, str(tmp_path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # (bounded: a fit that never reports its first round fails here, not hangs CI)
        readable, _, _ = select.select([process.stdout], [], [], 180)
        assert readable, "the fit did not report its first round within 180 s"
        assert process.stdout.readline().strip() == "ready"
        assert leftovers(tmp_path) != []  # blocks are on disk while it trains
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert "KeyboardInterrupt" in err
    assert leftovers(tmp_path) == []


FULL_DISK_FIT = textwrap.dedent("""
    import resource, signal, sys
    import numpy as np
    from daskboost import DaskBoostRegressor
    from daskboost.blockstore import CacheFullError
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300_000, 8))
    y = X[:, 0] + rng.normal(size=300_000)
    try:
        DaskBoostRegressor(n_estimators=2, memory_budget=0, cache_dir=sys.argv[1],
                           cache_compression=None).fit(X, y)
    except CacheFullError as err:
        print(err)
""")


def test_a_full_cache_dir_is_a_clear_error_and_leaves_nothing(tmp_path):
    out = subprocess.run([sys.executable, "-c", FULL_DISK_FIT, str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert f"cache_dir {str(tmp_path)!r} is full" in out.stdout, out.stderr[-2000:]
    assert leftovers(tmp_path) == []


def test_bad_cache_settings_are_refused_before_any_work(tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    X, y = frame(200)
    with pytest.raises(ValueError, match="cache_dir.*file"):
        DaskBoostRegressor(cache_dir=str(not_a_dir / "sub")).fit(X, y)
    with pytest.raises(ValueError, match="memory_budget.*'lots'"):
        DaskBoostRegressor(memory_budget="lots").fit(X, y)
    with pytest.raises(ValueError, match="cache_compression.*'gzip'"):
        DaskBoostRegressor(cache_compression="gzip").fit(X, y)
    assert os.listdir(tmp_path) == ["file"]


def test_spilled_fit_on_a_cluster_equals_the_threaded_fit(tmp_path, small_blocks):
    distributed = pytest.importorskip("distributed")
    make = MODELS[0]
    with dask.config.set(scheduler="threads"):
        threaded = fit(make())
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        on_cluster = fit(make(memory_budget=0, cache_dir=str(tmp_path)))
    assert on_cluster.get_booster().to_dict() == threaded.get_booster().to_dict()
    assert leftovers(tmp_path) == []


def test_a_block_file_damaged_during_the_fit_stops_it_clearly(tmp_path, small_blocks):
    """A block file changed between passes (disk fault, another process): the next pass
    that reads it raises CacheCorruptError naming it; the cache is removed."""
    from daskboost import TrainingCallback

    class Damage(TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            if epoch == 1:
                cache = [os.path.join(root, name) for root, _, names in os.walk(tmp_path)
                         for name in names if name.endswith(".blk")]
                with open(sorted(cache)[0], "r+b") as f:
                    first = f.read(1)
                    f.seek(0)
                    f.write(bytes([first[0] ^ 0xFF]))
            return False

    model = DaskBoostRegressor(n_estimators=4, max_depth=2, memory_budget=0,
                               cache_dir=str(tmp_path))
    with pytest.raises(blockstore.CacheCorruptError, match=r"cache block .*\.blk"):
        model.fit(*(dd.from_pandas(part, npartitions=3) for part in frame()),
                  callbacks=[Damage()])
    assert leftovers(tmp_path) == []
