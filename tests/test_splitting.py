"""Split finding: hand-computed answers and a brute-force reference."""

import numpy as np
import pytest

from daskboost import splitting
from daskboost.splitting import MIN_SPLIT_GAIN, leaf_weight
from histograms import as_cells


def find_node_split(hist, n_bins, missing_code, *args):
    """``splitting.find_node_split`` on a per-feature histogram (see ``histograms``)."""
    return splitting.find_node_split(*as_cells(hist, n_bins, missing_code), *args)


def find_splits(hists, sums, n_bins, missing_code, *args):
    cells, offsets = as_cells(hists, n_bins, missing_code)
    return splitting.find_splits(cells, sums, offsets, *args)

ALL = np.ones(1, bool)


def REG(lam, alpha=0.0, mds=0.0):
    return (lam, alpha, mds)


def score(g, h, lam, alpha=0.0, mds=0.0):
    """xgboost's leaf score: (soft-thresholded G)^2 / (H + lambda), or with clipping the
    second-order reduction at the clipped weight (xgboost leaves L1 out of that branch)."""
    t = np.sign(g) * max(abs(g) - alpha, 0.0)
    if mds == 0:
        return t * t / (h + lam)
    w = float(np.clip(-t / (h + lam), -mds, mds))
    return -(2 * g * w + (h + lam) * w * w)


def brute_force(hist, n_bins, missing_code, lam, mcw, gamma, alpha=0.0, mds=0.0, mask=None):
    """Every (feature, bin, direction) candidate evaluated from scratch."""
    G, H = hist[0].sum(axis=0)
    best = (0.0, -1, -1, False)
    for f in range(hist.shape[0]):
        if mask is not None and not mask[f]:
            continue
        miss = hist[f, missing_code]
        for default_left in (False, True):
            if default_left and miss[1] <= 0:
                continue
            last = n_bins[f] - (1 if default_left else 0)
            for b in range(last):
                left = hist[f, :b + 1].sum(axis=0) + (miss if default_left else 0.0)
                right = np.array([G, H]) - left
                if min(left[1], right[1]) < mcw or min(left[1], right[1]) <= 0:
                    continue
                reg = (lam, alpha, mds)
                gain = score(*left, *reg) + score(*right, *reg) - score(G, H, *reg)
                if gain > best[0] + 1e-12:
                    best = (gain, f, b, default_left)
    if best[1] >= 0 and (best[0] <= MIN_SPLIT_GAIN or best[0] < gamma):
        return (0.0, -1, -1, False)
    return best


def random_hist(rng, n_features=4, n_bins=6, missing=True):
    n_codes = n_bins + 1
    hist = np.zeros((n_features, n_codes, 2))
    hist[:, :n_bins, 0] = rng.normal(size=(n_features, n_bins)) * 5
    hist[:, :n_bins, 1] = rng.uniform(0.5, 3, size=(n_features, n_bins))
    if missing:
        hist[:, n_bins, 0] = rng.normal(size=n_features) * 5
        hist[:, n_bins, 1] = rng.uniform(0.5, 3, size=n_features)
    # every feature must see the same node totals: put the difference in bin 0
    totals = hist[0].sum(axis=0)
    for f in range(1, n_features):
        hist[f, 0] += totals - hist[f].sum(axis=0)
        hist[f, 0, 1] = max(hist[f, 0, 1], 0.1)
    totals = hist[0].sum(axis=0)
    for f in range(n_features):
        hist[f, 0] += totals - hist[f].sum(axis=0)
    return hist


def test_hand_computed_split():
    # one feature, 3 bins, no missing: g = [-4, -4, 6], h = [2, 2, 2], lambda = 1
    hist = np.zeros((1, 4, 2))
    hist[0, :3, 0] = [-4, -4, 6]
    hist[0, :3, 1] = [2, 2, 2]
    gain, f, b, dl, lg, lh = find_node_split(hist, np.array([3]), 3, -2.0, 6.0, ALL, *REG(1.0), 0.0, 0.0)
    # best: {0,1} | {2}: 64/5 + 36/3 - 4/7
    assert (f, b, dl) == (0, 1, False)
    assert gain == pytest.approx(64 / 5 + 36 / 3 - 4 / 7, rel=1e-12)
    assert (lg, lh) == (-8.0, 4.0)


def test_missing_values_learn_their_direction():
    # missing rows look like bin 0 (negative gradients): they should go left with it
    hist = np.zeros((1, 4, 2))
    hist[0, :3, 0] = [-5, 5, 5]
    hist[0, :3, 1] = [1, 1, 1]
    hist[0, 3] = [-5, 1]
    G, H = hist[0].sum(axis=0)
    gain, f, b, dl, lg, lh = find_node_split(hist, np.array([3]), 3, G, H, ALL, *REG(1.0), 0.0, 0.0)
    assert (f, b, dl) == (0, 0, True)
    assert (lg, lh) == (-10.0, 2.0)


def test_missing_only_split_is_possible():
    # one value bin; the only possible split separates present from missing rows
    hist = np.zeros((1, 2, 2))
    hist[0, 0] = [10, 3]
    hist[0, 1] = [-10, 3]
    gain, f, b, dl, lg, lh = find_node_split(hist, np.array([1]), 1, 0.0, 6.0, ALL, *REG(1.0), 0.0, 0.0)
    assert (f, b, dl) == (0, 0, False)
    assert gain == pytest.approx(2 * 100 / 4, rel=1e-12)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("lam,mcw,gamma,alpha,mds", [
    (1.0, 1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0, 0.0), (5.0, 3.0, 2.0, 0.0, 0.0),
    (1.0, 1.0, 0.0, 2.0, 0.0), (1.0, 1.0, 0.0, 0.0, 0.3), (2.0, 0.5, 0.1, 1.5, 0.5)])
def test_matches_brute_force(seed, lam, mcw, gamma, alpha, mds):
    rng = np.random.default_rng(seed)
    hist = random_hist(rng, missing=seed % 2 == 0)
    n_bins = np.full(hist.shape[0], hist.shape[1] - 1, dtype=np.int32)
    mask = np.ones(hist.shape[0], bool) if seed % 3 else rng.random(hist.shape[0]) < 0.6
    G, H = hist[0].sum(axis=0)
    got = find_node_split(hist, n_bins, hist.shape[1] - 1, G, H, mask, lam, alpha, mds, mcw, gamma)
    want = brute_force(hist, n_bins, hist.shape[1] - 1, lam, mcw, gamma, alpha, mds, mask)
    assert got[1:4] == want[1:4]
    assert got[0] == pytest.approx(want[0], rel=1e-9, abs=1e-12)


def test_constraints_forbid_splits():
    hist = np.zeros((1, 3, 2))
    hist[0, :2, 0] = [-3, 3]
    hist[0, :2, 1] = [1, 1]
    args = (np.array([2]), 2, 0.0, 2.0, ALL, *REG(1.0))
    assert find_node_split(hist, *args, 0.0, 0.0)[1] == 0
    assert find_node_split(hist, *args, 1.5, 0.0)[1] == -1  # min_child_weight
    gain = find_node_split(hist, *args, 0.0, 0.0)[0]
    assert find_node_split(hist, *args, 0.0, gain + 1e-9)[1] == -1  # gamma above gain
    assert find_node_split(hist, *args, 0.0, gain - 1e-9)[1] == 0   # gamma below gain
    # masked out feature: no split
    assert find_node_split(hist, np.array([2]), 2, 0.0, 2.0, np.zeros(1, bool), *REG(1.0),
                           0.0, 0.0)[1] == -1


def test_ties_prefer_the_lower_feature():
    hist = np.zeros((2, 3, 2))
    for f in range(2):
        hist[f, :2, 0] = [-3, 3]
        hist[f, :2, 1] = [1, 1]
    assert find_node_split(hist, np.array([2, 2]), 2, 0.0, 2.0, np.ones(2, bool), *REG(1.0),
                           0.0, 0.0)[1] == 0


def test_find_splits_batches_nodes():
    rng = np.random.default_rng(7)
    hists = np.stack([random_hist(rng) for _ in range(5)])
    sums = hists[:, 0].sum(axis=1)
    n_bins = np.full(4, 6, np.int32)
    masks = rng.random((5, 4)) < 0.7
    gain, feature, bin_, dl, left = find_splits(hists, sums, n_bins, 6, masks, *REG(1.0), 1.0, 0.0)
    for i in range(5):
        one = find_node_split(hists[i], n_bins, 6, sums[i, 0], sums[i, 1], masks[i], *REG(1.0),
                              1.0, 0.0)
        assert (gain[i], feature[i], bin_[i], dl[i], left[i, 0], left[i, 1]) == one


def test_leaf_weight_is_newton_step():
    assert leaf_weight(-6.0, 2.0, 1.0) == pytest.approx(2.0)
    assert leaf_weight(4.0, 3.0, 0.0) == pytest.approx(-4 / 3)


def test_leaf_weight_with_l1_and_clipping():
    assert leaf_weight(-6.0, 2.0, 1.0, 1.5) == pytest.approx(4.5 / 3)   # soft threshold
    assert leaf_weight(1.0, 2.0, 1.0, 1.5) == 0.0                      # |G| <= alpha
    assert leaf_weight(-6.0, 2.0, 1.0, 0.0, 0.5) == 0.5                # clipped
    assert leaf_weight(6.0, 2.0, 1.0, 0.0, 0.5) == -0.5


def sequential_l2_scan(hist, n_bins, G, H, lam, mcw):
    """The default (L2-only) split search written as the plain sequential scans, in the
    same float operations: keep the first strictly better candidate, scan 1 (missing
    right) then scan 2 (missing left, sums from the top), feature after feature."""
    parent = G * G / (H + lam)
    best = (0.0, -1, -1, False, 0.0, 0.0)

    def gain(ag, ah):
        bg, bh = G - ag, H - ah
        if not (ah >= mcw and bh >= mcw and ah > 0 and bh > 0):
            return -1.0
        return ag * ag / (ah + lam) + bg * bg / (bh + lam) - parent

    for f in range(hist.shape[0]):
        k = n_bins[f]
        lg = lh = 0.0
        for b in range(k):
            lg += hist[f, b, 0]
            lh += hist[f, b, 1]
            g = gain(lg, lh)
            if g > best[0]:
                best = (g, f, b, False, lg, lh)
        if hist[f, k, 1] <= 0:
            continue
        rg = rh = 0.0
        for j in range(k - 1):
            rg += hist[f, k - 1 - j, 0]
            rh += hist[f, k - 1 - j, 1]
            g = gain(rg, rh)
            if g > best[0]:
                best = (g, f, k - 2 - j, True, G - rg, H - rh)
    return best


@pytest.mark.parametrize("seed", range(20))
def test_default_scan_is_the_sequential_scan_bit_for_bit(seed):
    # small integer sums, empty bins and repeated bins: many exactly tied candidates,
    # so the first-best rule and the order of the scans decide
    rng = np.random.default_rng(seed)
    n_features, n_bins = 3, int(rng.integers(1, 40))
    hist = np.zeros((n_features, n_bins + 1, 2))
    hist[0, :, 0] = rng.integers(-3, 4, size=n_bins + 1)
    hist[0, :, 1] = rng.integers(0, 3, size=n_bins + 1) * (rng.random(n_bins + 1) < 0.7)
    if seed % 3 == 0:
        hist[0, n_bins] = 0.0  # no missing rows: scan 2 is skipped
    G, H = hist[0].sum(axis=0)
    for f in range(1, n_features):  # the other features: the same rows, reordered bins
        hist[f, :n_bins] = hist[0, rng.permutation(n_bins)]
        hist[f, n_bins] = hist[0, n_bins]
    sizes = np.full(n_features, n_bins, dtype=np.int32)
    for lam, mcw in ((1.0, 1.0), (0.0, 0.0), (2.0, 0.5)):
        got = find_node_split(hist, sizes, n_bins, G, H, np.ones(n_features, bool), lam, 0.0,
                              0.0, mcw, 0.0)
        want = sequential_l2_scan(hist, sizes, G, H, lam, mcw)
        if want[1] >= 0 and want[0] <= MIN_SPLIT_GAIN:
            want = (want[0], -1) + want[2:]
        assert got[1] == want[1]
        if want[1] >= 0:
            assert got == want


def first_strictly_better(gains, n, best_gain):
    """The scan ``_first_best`` replaces: the first candidate strictly better than all
    before it and than ``best_gain``."""
    best = -1
    for b in range(n):
        if gains[b] > best_gain:
            best_gain, best = gains[b], b
    return best


@pytest.mark.parametrize("seed", range(10))
def test_first_best_is_the_first_strictly_better_candidate(seed):
    # ties (the first must win), -1 for invalid candidates, +0.0 and -0.0, and
    # ranges whose length is not a multiple of the search's eight-wide steps
    rng = np.random.default_rng(seed)
    for _ in range(200):
        n = int(rng.integers(0, 70))
        gains = np.round(rng.normal(size=n + 3) * 3) / 2
        gains[rng.random(n + 3) < 0.3] = -1.0
        gains[rng.random(n + 3) < 0.1] = -0.0
        gains[rng.random(n + 3) < 0.1] = 0.0
        if n and rng.random() < 0.3:
            gains[rng.integers(0, n, 4)] = gains[:n].max()
        for best_gain in (0.0, 0.5, 1.0, float(gains[:n].max(initial=0.0))):
            assert (splitting._first_best(gains, n, best_gain)
                    == first_strictly_better(gains, n, best_gain)), (gains[:n], best_gain)
