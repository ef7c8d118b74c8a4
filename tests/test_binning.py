"""BinMapper: code semantics, missing values, infinities, code width."""

import numpy as np
import pytest

from daskboost.binning import BinMapper, narrowed
from daskboost.sketch import cut_points, summarize_block


def mapper_for(X, max_bin, size=4096):
    return BinMapper.from_summaries(summarize_block(X, None, size), max_bin)


def test_codes_count_the_cuts_below_the_value():
    mapper = BinMapper([np.array([1.0, 2.0, 5.0])])
    X = np.array([[-np.inf], [0.0], [1.0], [1.5], [2.0], [4.9], [5.0], [7.0], [np.inf], [np.nan]])
    codes = mapper.transform(X)[:, 0]
    np.testing.assert_array_equal(codes, [0, 0, 0, 1, 1, 2, 2, 3, 3, mapper.missing_code])
    assert mapper.missing_code == 4


def test_split_thresholds_agree_with_codes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 3))
    mapper = mapper_for(X, max_bin=16)
    codes = mapper.transform(X)
    for f in range(3):
        for b in range(mapper.n_bins[f]):
            np.testing.assert_array_equal(codes[:, f] <= b, X[:, f] <= mapper.thresholds([f], [b])[0])


def test_thresholds_of_leaves_categorical_and_all_right_splits():
    mapper = BinMapper([np.array([1.0, 2.0, 5.0]), np.empty(0), np.array([0.5])],
                       categories={1: ["a", "b", "c"]})
    got = mapper.thresholds(np.array([0, 0, 0, -1, 1, 2, 2]), np.array([1, 3, -1, 0, -2, 0, 1]))
    # a value cut; past the last cut; bin -1 (every present value right); a leaf; a
    # categorical split; a second feature's cut and past it
    np.testing.assert_array_equal(got, [2.0, np.inf, -np.inf, 0.0, 0.0, 0.5, np.inf])


def test_every_distinct_value_gets_a_bin_up_to_max_bin():
    rng = np.random.default_rng(1)
    values = np.sort(rng.choice(np.linspace(-3, 3, 1000), size=40, replace=False))
    X = rng.choice(values, size=(3000, 1))
    mapper = mapper_for(X, max_bin=40)
    present = np.unique(X)
    assert mapper.n_bins[0] == len(present)
    codes = mapper.transform(present[:, None])[:, 0]
    np.testing.assert_array_equal(codes, np.arange(len(present)))


def test_code_width_follows_the_number_of_codes():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20000, 2))
    assert mapper_for(X, max_bin=255).dtype == np.uint8
    assert mapper_for(X, max_bin=256).dtype == np.uint16   # 256 value bins + missing
    wide = mapper_for(X, max_bin=1000)
    assert wide.dtype == np.uint16 and wide.n_bins.max() == 1000
    assert wide.transform(X).max() < 1000


def test_missing_values_at_max_bin_256_leave_255_value_bins_and_one_byte_codes():
    # LightGBM's count: at max_bin=256 the missing code takes the 256th code, so codes
    # fit in uint8; any numeric feature's missing value decides it for every feature
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20000, 2))
    X[17, 1] = np.nan
    mapper = mapper_for(X, max_bin=256)
    np.testing.assert_array_equal(mapper.n_bins, [255, 255])
    assert mapper.missing_code == 255 and mapper.dtype == np.uint8
    codes = mapper.transform(X)
    assert codes.dtype == np.uint8 and codes[17, 1] == 255 and codes[:, 0].max() == 254
    # the cuts are those max_bin=255 picks
    for f, summary in enumerate(summarize_block(X, None, 4096)):
        np.testing.assert_array_equal(mapper.cuts[f], cut_points(summary, 255))
    # other max_bin values: as many value bins as asked
    assert mapper_for(X, max_bin=1000).n_bins.max() == 1000
    assert mapper_for(X, max_bin=255).n_bins.max() == 255
    assert mapper_for(X, max_bin=100).n_bins.max() == 100


def test_the_missing_flag_survives_merging_and_sparse_blocks():
    from scipy import sparse

    from daskboost.sketch import merge_blocks
    from daskboost.sparse import summarize as summarize_sparse
    rng = np.random.default_rng(3)
    X = rng.normal(size=(4000, 2))
    with_nan = X.copy()
    with_nan[5, 0] = np.nan
    clean, dirty = summarize_block(X, None, 512), summarize_block(with_nan, None, 512)
    assert [s.missing for s in clean] == [False, False]
    assert [s.missing for s in dirty] == [True, False]
    weighted = summarize_block(with_nan, np.where(np.arange(4000) == 5, 0.0, 1.0), 512)
    assert [s.missing for s in weighted] == [True, False]  # whatever the row's weight
    for a, b in ((clean, dirty), (dirty, clean)):
        merged = merge_blocks(a, b, 512)
        assert [s.missing for s in merged] == [True, False]
        assert BinMapper.from_summaries(merged, 256).dtype == np.uint8
    assert BinMapper.from_summaries(merge_blocks(clean, clean, 512), 256).n_bins.max() == 256
    # sparse: an entry not stored is missing
    dense = rng.normal(size=(300, 2))
    dense[::3, 1] = 0.0
    stored = sparse.csr_matrix(dense)
    assert [s.missing for s in summarize_sparse(stored, None, 512)] == [False, True]


def test_missing_categories_alone_keep_256_value_bins():
    # the rule looks at the numeric features: a categorical feature's missing values
    # take the missing code past its own categories whatever max_bin is
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(size=5000), np.full(5000, np.nan)])
    summaries = summarize_block(X, None, 4096)  # (a categorical column sketches as NaN)
    mapper = BinMapper.from_summaries(summaries, 256, categories={1: ["a", "b", "c"]})
    assert mapper.n_bins[0] == 256 and mapper.missing_code == 256


def test_exact_greedy_with_many_distinct_values():
    # more than 255 distinct values: uint16 codes, still one bin per value
    X = np.arange(3000, dtype=np.float64)[:, None] % 700
    mapper = mapper_for(X, max_bin=700, size=2048)
    assert mapper.n_bins[0] == 700 and mapper.dtype == np.uint16
    np.testing.assert_array_equal(mapper.transform(X)[:, 0], X[:, 0].astype(int))


def test_constant_and_all_missing_features():
    X = np.column_stack([np.full(100, 3.0), np.full(100, np.nan)])
    mapper = mapper_for(X, max_bin=256)
    np.testing.assert_array_equal(mapper.n_bins, [1, 1])
    codes = mapper.transform(X)
    assert (codes[:, 0] == 0).all() and (codes[:, 1] == mapper.missing_code).all()
    assert mapper.thresholds([0], [0])[0] == np.inf


@pytest.mark.parametrize("order", ["C", "F"])
def test_transform_accepts_any_memory_order(order):
    rng = np.random.default_rng(3)
    X = np.asarray(rng.normal(size=(100, 4)), order=order)
    mapper = mapper_for(X, max_bin=8)
    np.testing.assert_array_equal(mapper.transform(X), mapper.transform(np.ascontiguousarray(X)))


@pytest.mark.parametrize("n_cuts", [0, 1, 2, 3, 4, 7, 8, 9, 255, 256, 1000])
def test_search_equals_searchsorted_for_every_table_size(n_cuts):
    rng = np.random.default_rng(n_cuts)
    cuts = np.unique(rng.normal(size=n_cuts * 2 + 5))[:n_cuts]
    probes = np.concatenate([cuts, np.nextafter(cuts, np.inf), np.nextafter(cuts, -np.inf),
                             rng.normal(size=500) * 3, [-np.inf, np.inf, np.nan]])
    mapper = BinMapper([cuts])
    codes = mapper.transform(probes[:, None])[:, 0].astype(np.int64)
    expected = np.searchsorted(cuts, probes, side="left")
    expected[np.isnan(probes)] = mapper.missing_code
    np.testing.assert_array_equal(codes, expected)


@pytest.mark.parametrize("n_rows", range(10))
def test_special_values_at_every_position_of_the_four_row_search(n_rows):
    # the kernel searches four rows at a time, then the remaining rows one by one: NaN,
    # +-inf and values exactly on a cut must be coded right in every lane and in the tail
    cuts = np.array([-1.0, 0.0, 0.5, 2.0, 3.0])
    specials = np.array([np.nan, -np.inf, np.inf, 0.0, 2.0, -1.0, 3.0, 0.25, 9.0, -7.0])
    mapper = BinMapper([cuts, cuts[:2]])
    for shift in range(len(specials)):
        column = np.roll(specials, shift)[:n_rows]
        X = np.column_stack([column, column[::-1]])
        for f in range(2):
            expected = np.searchsorted(mapper.cuts[f], X[:, f], side="left")
            expected[np.isnan(X[:, f])] = mapper.missing_code
            np.testing.assert_array_equal(mapper.transform(X)[:, f], expected)


def test_codes_without_missing_values_are_narrowed_to_uint8():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 3))
    mapper = mapper_for(X, 256)
    codes = mapper.transform(X)
    assert codes.dtype == np.uint16 and mapper.missing_code == 256  # 256 value bins
    narrow = narrowed(codes)
    assert narrow.dtype == np.uint8 and np.array_equal(narrow, codes)
    X[4999, 2] = np.nan  # one missing value, in the last row: code 256 needs uint16
    codes = mapper.transform(X)
    assert narrowed(codes) is codes
    empty = codes[:0]
    assert narrowed(empty) is empty


def test_narrowed_codes_give_the_same_model(monkeypatch, tmp_path):
    from daskboost import DaskBoostRegressor, partition
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 4))
    y = X[:, 0] + np.sin(3 * X[:, 1]) + rng.normal(scale=0.1, size=3000)
    seen = []

    def counting(codes):
        out = narrowed(codes)
        seen.append(out.dtype)
        return out
    monkeypatch.setattr(partition, "narrowed", counting)
    narrow = DaskBoostRegressor(n_estimators=5, max_depth=4).fit(X, y)
    assert seen and set(seen) == {np.dtype(np.uint8)}
    monkeypatch.setattr(partition, "narrowed", lambda codes: codes)
    wide = DaskBoostRegressor(n_estimators=5, max_depth=4).fit(X, y)
    narrow.save_model(tmp_path / "narrow.json")
    wide.save_model(tmp_path / "wide.json")
    assert (tmp_path / "narrow.json").read_bytes() == (tmp_path / "wide.json").read_bytes()
