"""Cross-validation folds (daskboost.folds): balanced, keyed, partition-independent."""

import numpy as np
import pytest

from daskboost import cv_folds
from daskboost.folds import FoldLayout, _half_bits, _permuted


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 17, 64, 65, 1000])
def test_the_keyed_permutation_is_a_permutation(n):
    bits = _half_bits(n)
    assert 4 ** bits >= n and (bits == 1 or 4 ** (bits - 1) < n)
    for key in (0, 12345, 2 ** 63 + 7):
        positions = [_permuted(i, n, bits, np.uint64(key)) for i in range(n)]
        assert sorted(positions) == list(range(n))


@pytest.mark.parametrize("n, nfold", [(10, 3), (1003, 5), (12, 12), (7, 2)])
def test_folds_have_array_split_sizes(n, nfold):
    folds = cv_folds(n, nfold, seed=3)
    expected = [len(piece) for piece in np.array_split(np.arange(n), nfold)]
    assert np.bincount(folds, minlength=nfold).tolist() == expected


def test_unshuffled_folds_are_contiguous_like_kfold():
    from sklearn.model_selection import KFold
    folds = cv_folds(23, 4, shuffle=False)
    for f, (_, test) in enumerate(KFold(4).split(np.zeros(23))):
        assert np.flatnonzero(folds == f).tolist() == test.tolist()


def test_the_seed_keys_the_folds():
    a, b, again = cv_folds(1000, 5, seed=1), cv_folds(1000, 5, seed=2), cv_folds(1000, 5, seed=1)
    assert (a == again).all()
    assert 0.1 < (a == b).mean() < 0.3  # independent draws agree on ~1/5 of the rows
    assert not (np.diff(a) == 0).all() and len(set(a[:50])) == 5  # shuffled


def test_a_partition_needs_only_its_offset():
    layout = FoldLayout(5, 9, True, 1003)
    bounds = [0, 1, 400, 401, 1003]
    parts = [layout.of_partition(i, lo, hi - lo) for i, (lo, hi) in
             enumerate(zip(bounds[:-1], bounds[1:]))]
    assert (np.concatenate(parts) == cv_folds(1003, 5, seed=9)).all()


def test_stratified_folds_spread_every_class_evenly():
    rng = np.random.default_rng(0)
    y = rng.choice(["a", "b", "c", "d"], size=203, p=[0.6, 0.25, 0.1, 0.05])
    folds = cv_folds(203, 5, seed=4, stratify=y)
    for label in np.unique(y):
        counts = np.bincount(folds[y == label], minlength=5)
        assert counts.max() - counts.min() <= 1, (label, counts)
    sizes = np.bincount(folds, minlength=5)
    assert sizes.max() - sizes.min() <= 1


def test_stratified_partitions_need_the_class_counts_before_them():
    rng = np.random.default_rng(1)
    classes = rng.integers(0, 3, size=500)
    bounds = [0, 120, 121, 330, 500]
    counts = np.array([np.bincount(classes[lo:hi], minlength=3)
                       for lo, hi in zip(bounds[:-1], bounds[1:])])
    layout = FoldLayout(4, 2, True, 500, counts)
    parts = [layout.of_partition(i, lo, classes[lo:hi])
             for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:]))]
    assert (np.concatenate(parts) == cv_folds(500, 4, seed=2, stratify=classes)).all()


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match=r"nfold=1 must be >= 2"):
        cv_folds(10, 1)
    with pytest.raises(ValueError, match=r"nfold=11 is more than the 10 rows"):
        cv_folds(10, 11)
    with pytest.raises(TypeError, match=r"nfold=2.5 must be an integer"):
        cv_folds(10, 2.5)
    with pytest.raises(ValueError, match=r"stratify has shape \(9,\)"):
        cv_folds(10, 2, stratify=np.zeros(9))
