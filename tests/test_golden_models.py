"""Golden model files: the fits of ``tests/golden_models.py`` write the same bytes as the
files kept under ``tests/data/`` (written by the code before the Dask layer was
restructured). A deliberate change of what a fit learns rewrites them with
``python tests/golden_models.py`` and says so in its commit."""

import os

import dask
import pytest

from golden_models import DATA_DIR, cluster_fit, fits

distributed = pytest.importorskip("distributed")


@pytest.mark.parametrize("name", sorted(fits()))
def test_fit_writes_the_golden_bytes(tmp_path, name):
    model, fit = fits()[name]
    with dask.config.set(scheduler="threads"):
        fit(model).save_model(tmp_path / "model.json")
    expected = os.path.join(DATA_DIR, f"golden_{name}.json")
    assert (tmp_path / "model.json").read_bytes() == open(expected, "rb").read()


def test_cluster_fit_writes_the_golden_bytes(tmp_path):
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        model, fit = cluster_fit()
        fit(model).save_model(tmp_path / "model.json")
    expected = os.path.join(DATA_DIR, "golden_cluster_binary.json")
    assert (tmp_path / "model.json").read_bytes() == open(expected, "rb").read()
