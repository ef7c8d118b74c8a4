"""LambdaMART's gradients and the ranking metrics, one query group at a time (numba).

Learning to rank boosts the pairwise loss of Burges' LambdaRank / LambdaMART (C. J. C.
Burges, "From RankNet to LambdaRank to LambdaMART: An Overview", MSR-TR-2010-82): within
a query, a pair of documents with labels ``y_i > y_j`` and scores ``s_i, s_j`` adds

    lambda_ij = (sigma(s_i - s_j) - 1) * |Delta Z_ij|            (Burges eq. 3 and 11)

to ``g_i`` (and ``-lambda_ij`` to ``g_j``), and ``2 * sigma (1 - sigma) |Delta Z_ij|`` to
both hessians, where ``Delta Z_ij`` is the change of the query's metric when the two
swap places in the ranking by score: 1 for ``rank:pairwise`` (RankNet), the change of
NDCG for ``rank:ndcg``, of average precision for ``rank:map``.  Every detail follows
xgboost 3.2's ``lambdarank_obj.cc`` (CPU) so that the models agree with xgboost's:

- the ranking by score is a stable sort, descending (ties keep the rows' order); scores
  are the float32 margins, and ``s_i - s_j`` is taken in float32;
- ``lambdarank_pair_method="topk"``: the pairs of a document among the first
  ``lambdarank_num_pair_per_sample`` (k, 32 by default) by score with every document
  below it; ``"mean"``: for each document, ``k`` (1 by default) partners drawn at random
  among the documents of another label (``std::minstd_rand`` seeded by the round and
  the query's index, as xgboost's, so the draws are xgboost's);
- NDCG's ideal DCG is truncated at k for ``topk``; gains are ``2^y - 1``
  (``ndcg_exp_gain``, labels whole numbers <= 31) or ``y``;
- ``lambdarank_score_normalization``: ``|Delta Z|`` divided by ``|s_i - s_j| + 0.01``
  (unless every score of the query is the same);
- ``lambdarank_normalization``: a query's gradients scaled by ``log2(1 + L) / L``,
  ``L = sum |2 lambda_ij|`` (``topk``), or by ``1 / k`` (``mean``);
- weights are per query; every gradient of a query is multiplied by its weight and by
  ``n_queries / sum of the weights`` (over all the data: the caller passes it).

The metrics (``ndcg``, ``map``, ``pre``, each ``@k`` and with ``-``) are xgboost's
``rank_metric.cc``: a value per query, averaged over the queries weighted by their
weights; a query with no relevant document scores 1 (0 with ``-``), for ``ndcg`` not
multiplied by its weight (xgboost's).
"""

import math

import numba
import numpy as np

# xgboost's LambdaRankParam::DefaultK (topk's k, and a metric's k without "@k") and
# DefaultSamplePairs (mean's pairs per document)
DEFAULT_TOP_K = 32
DEFAULT_MEAN_PAIRS = 1
_EPS64 = 1e-16
_SCORE_GAP = 0.01     # score normalisation: |Delta Z| / (|s_i - s_j| + 0.01)
_MINSTD_M = 2147483647
PAIRWISE, NDCG, MAP = 0, 1, 2
TOPK, MEAN = 0, 1


@numba.njit(nogil=True, cache=True)
def _stable_order_desc(values):
    """Indices sorting ``values`` descending; ties in their order (a stable sort)."""
    return np.argsort(-values, kind="mergesort")


@numba.njit(nogil=True, cache=True, inline="always")
def _gain(label, exp_gain):
    if exp_gain:
        return float((np.uint64(1) << np.uint64(np.uint32(label))) - np.uint64(1))
    return float(label)


@numba.njit(nogil=True, cache=True)
def _top_order_desc(values, top_k, out):
    """The indices of the first ``min(len(values), top_k)`` of ``values`` in
    ``_stable_order_desc``'s order, into ``out`` (room for them); returns their number.
    For a metric at ``top_k`` below a query's size: an insertion into the first k kept
    in order, each value compared with the smallest kept (a later value equal to a kept
    one ranks after it, as in a stable sort), instead of sorting the whole query; the
    whole sort where the query is no longer than k or holds a NaN (sorted last there)."""
    n = len(values)
    if n <= top_k:
        order = _stable_order_desc(values)
        out[:n] = order
        return n
    kept = 0
    for i in range(n):
        v = values[i]
        if v != v:  # NaN: the whole sort's order
            order = _stable_order_desc(values)
            out[:top_k] = order[:top_k]
            return top_k
        if kept == top_k and not v > values[out[kept - 1]]:
            continue
        j = kept if kept < top_k else top_k - 1
        while j > 0 and v > values[out[j - 1]]:
            out[j] = out[j - 1]
            j -= 1
        out[j] = i
        if kept < top_k:
            kept += 1
    return kept


@numba.njit(nogil=True, cache=True)
def _inverse_ideal_dcg(labels, top_k, exp_gain, discounts, order):
    """1 / DCG of the labels in the ideal order, the first ``top_k`` of them (0 where
    that DCG is 0: no relevant document); ``discounts``: ``discount_table``'s;
    ``order``: room for ``top_k`` indices."""
    dcg = 0.0
    for i in range(_top_order_desc(labels, top_k, order)):
        dcg += discounts[i] * _gain(labels[order[i]], exp_gain)
    return 0.0 if dcg == 0.0 else 1.0 / dcg


@numba.njit(nogil=True, cache=True, inline="always")
def _sigmoid32(x):
    """xgboost's float sigmoid: 1 / (exp(min(-x, 88.7)) + 1 + 1e-16), in float32."""
    e = np.float32(math.exp(min(-x, np.float32(88.7))))
    return np.float32(1.0) / ((e + np.float32(1.0)) + np.float32(1e-16))


@numba.njit(nogil=True, cache=True, inline="always")
def _minstd_next(state):
    return (48271 * state) % _MINSTD_M


@numba.njit(nogil=True, cache=True, inline="always")
def _delta_map(y_rank, relevant, precision_sums, top, bottom):
    """|change of average precision| when the documents at ranks ``top < bottom`` swap
    (xgboost's DeltaMAP): ``relevant[i]``, relevant documents in ranks 0..i;
    ``precision_sums[i]``, sum of ``y_t / (t + 1)`` over them."""
    n_relevant = relevant[len(relevant) - 1]
    r_top, r_bottom = top + 1.0, bottom + 1.0
    m, n = relevant[bottom], relevant[top]
    between = precision_sums[bottom - 1] - precision_sums[top]
    if y_rank[top] < y_rank[bottom]:
        return ((m / r_bottom - (n + 1.0) / r_top) - between) / n_relevant
    return ((n / r_top - m / r_bottom) + between) / n_relevant


@numba.njit(nogil=True, cache=True, inline="always")
def _pairwise_delta(y_rank, gains, discounts, hi, lo, inv_idcg, relevant, precision_sums):
    """RankNet's: every pair counts 1."""
    return 1.0


@numba.njit(nogil=True, cache=True, inline="always")
def _ndcg_delta(y_rank, gains, discounts, hi, lo, inv_idcg, relevant, precision_sums):
    """The change of NDCG when the documents at ranks ``hi`` and ``lo`` swap."""
    g_hi, g_lo = gains[hi], gains[lo]
    d_hi, d_lo = discounts[hi], discounts[lo]
    return ((g_hi * d_hi + g_lo * d_lo) - (g_lo * d_hi + g_hi * d_lo)) * inv_idcg


@numba.njit(nogil=True, cache=True, inline="always")
def _map_delta(y_rank, gains, discounts, hi, lo, inv_idcg, relevant, precision_sums):
    """The change of average precision when the documents at ranks ``hi``, ``lo`` swap."""
    return _delta_map(y_rank, relevant, precision_sums, min(hi, lo), max(hi, lo))


@numba.njit(nogil=True, cache=True, inline="always")
def _pair_lambda(delta_of, score_norm, s_rank, y_rank, gains, discounts, hi, lo, inv_idcg,
                 relevant, precision_sums, same_scores):
    """``(lambda, hessian)`` (float32) of the pair at ranks ``hi`` (the larger label) and
    ``lo``: ``lambda`` goes to ``hi``'s gradient and ``-lambda`` to ``lo``'s, the
    hessian to both.  ``delta_of``: the metric's change (a function argument, so that
    each metric's loop is compiled on its own: a branch on the metric in the loop made it
    4x slower)."""
    delta = abs(delta_of(y_rank, gains, discounts, hi, lo, inv_idcg, relevant,
                         precision_sums))
    diff = s_rank[hi] - s_rank[lo]  # (float32)
    sig = float(_sigmoid32(diff))
    if score_norm and not same_scores:
        delta = delta / (abs(float(diff)) + _SCORE_GAP)
    lam = np.float32((sig - 1.0) * delta)
    h = np.float32(max(sig * (1.0 - sig), _EPS64) * delta * 2.0)
    return lam, h


@numba.njit(nogil=True, cache=True)
def group_gradients(metric, delta_of, pair_method, n_pairs, exp_gain, score_norm, normalize,
                    scores, labels, group_index, n_groups, iteration, weight, weight_norm,
                    discounts, grad, hess):
    """One query's float32 ``grad`` and ``hess``, its rows' ``scores`` (float32 margins)
    and ``labels`` (float32): ``delta_of`` is ``metric``'s change of a swapped pair
    (``DELTA_OF``); ``n_pairs`` is k; ``group_index``/``n_groups``, the
    query's place among all the data's queries and their number (``mean``'s random
    draws); ``weight``: the query's weight, ``weight_norm``: ``n_queries / sum of the
    weights`` (both 1.0 unweighted); ``discounts[r] = 1 / log2(r + 2)``, long enough."""
    n = len(scores)
    if n == 0:
        return
    rank = _stable_order_desc(scores)
    s_rank = scores[rank]
    y_rank = labels[rank]
    g_rank = np.zeros(n, dtype=np.float32)
    h_rank = np.zeros(n, dtype=np.float32)
    same_scores = s_rank[0] == s_rank[n - 1]
    top_k = n_pairs if pair_method == TOPK else n
    inv_idcg = 0.0
    gains = np.empty(0)
    if metric == NDCG:
        inv_idcg = _inverse_ideal_dcg(labels, top_k, exp_gain, discounts,
                                      np.empty(min(n, top_k), dtype=np.int64))
        gains = np.empty(n)
        for t in range(n):
            gains[t] = _gain(y_rank[t], exp_gain)
    relevant = np.empty(0)
    precision_sums = np.empty(0)
    if metric == MAP:
        relevant = np.empty(n)
        precision_sums = np.empty(n)
        hits, acc = 0.0, 0.0
        for t in range(n):
            hits += y_rank[t]
            acc += y_rank[t] / (t + 1.0)
            relevant[t], precision_sums[t] = hits, acc
    # the gradients in rank order, each document's additions in xgboost's pair order
    lambda_sum = 0.0
    if pair_method == TOPK:
        for a in range(min(n, n_pairs)):
            y_a = y_rank[a]
            # document a's sums in registers through its pairs (a, b): the same additions
            # in the same order, without a store and reload between them
            g_a, h_a = g_rank[a], h_rank[a]
            for b in range(a + 1, n):
                y_b = y_rank[b]
                if y_a == y_b:
                    continue
                hi, lo = (a, b) if y_a > y_b else (b, a)
                lam, h = _pair_lambda(delta_of, score_norm, s_rank, y_rank, gains, discounts,
                                      hi, lo, inv_idcg, relevant, precision_sums,
                                      same_scores)
                if hi == a:
                    g_a += lam
                    g_rank[b] -= lam
                else:
                    g_rank[b] += lam
                    g_a -= lam
                h_a += h
                h_rank[b] += h
                lambda_sum += -2.0 * float(lam)
            g_rank[a], h_rank[a] = g_a, h_a
    else:
        # each document, by label (descending, stable), draws n_pairs partners among the
        # documents of the other labels: xgboost's minstd_rand, seeded per round and query
        by_label = _stable_order_desc(y_rank)
        y_sorted = y_rank[by_label]
        state = (((iteration + 1) * n_groups + group_index) & 0xFFFFFFFF) % _MINSTD_M
        if state == 0:
            state = 1
        a = 0
        while a < n:
            b = a + 1
            while b < n and y_sorted[a] == y_sorted[b]:
                b += 1
            n_left, n_right = a, n - b
            if n_left + n_right > 0:
                # std::uniform_int_distribution's downscaling of minstd's range
                span = n_left + n_right
                scaling = (_MINSTD_M - 2) // span
                past = span * scaling
                for _ in range(n_pairs):
                    for p in range(a, b):
                        while True:
                            state = _minstd_next(state)
                            r = state - 1
                            if r < past:
                                break
                        r = r // scaling
                        if r >= n_left:
                            r = r - a + b
                        x, z = by_label[p], by_label[r]
                        if y_rank[x] == y_rank[z]:
                            continue
                        hi, lo = (x, z) if y_rank[x] > y_rank[z] else (z, x)
                        lam, h = _pair_lambda(delta_of, score_norm, s_rank, y_rank, gains,
                                              discounts, hi, lo, inv_idcg, relevant,
                                              precision_sums, same_scores)
                        g_rank[hi] += lam
                        g_rank[lo] -= lam
                        h_rank[hi] += h
                        h_rank[lo] += h
                        lambda_sum += -2.0 * float(lam)
            a = b
    norm = 1.0
    if normalize:
        if pair_method == MEAN:
            norm = 1.0 / n_pairs
        elif lambda_sum > 0.0:
            norm = math.log2(1.0 + lambda_sum) / lambda_sum
    scale = np.float32(norm)
    w, w_norm = np.float32(weight), np.float32(weight_norm)
    weighted = weight != 1.0 or weight_norm != 1.0
    for t in range(n):
        g, h = g_rank[t], h_rank[t]
        if norm != 1.0:
            g, h = g * scale, h * scale
        if weighted:
            g, h = (g * w) * w_norm, (h * w) * w_norm
        grad[rank[t]], hess[rank[t]] = g, h


@numba.njit(nogil=True, cache=True)
def _longest(group_ptr):
    """The most rows a query of ``group_ptr`` has."""
    longest = 0
    for g in range(len(group_ptr) - 1):
        longest = max(longest, group_ptr[g + 1] - group_ptr[g])
    return longest


@numba.njit(nogil=True, cache=True)
def discount_table(n):
    """``1 / log2(r + 2)`` for the ranks ``r < n`` (DCG's discounts)."""
    out = np.empty(max(n, 1))
    for r in range(len(out)):
        out[r] = 1.0 / math.log2(r + 2.0)
    return out


def lambda_gradients(metric, pair_method, n_pairs, exp_gain, score_norm, normalize,
                     margin, labels, group_ptr, group_offset, n_groups, iteration,
                     group_weights, weight_norm, grad, hess):
    """A partition's gradients, query by query (``group_gradients``): ``margin`` (n,)
    float64, ``group_ptr`` its queries' bounds, ``group_offset`` the index of its first
    query among all the data's; ``group_weights`` the weight of each query (float32;
    empty: 1), ``weight_norm`` the number of queries over the sum of their weights."""
    _lambda_gradients(metric, DELTA_OF[metric], pair_method, n_pairs, exp_gain, score_norm,
                      normalize, margin, labels, group_ptr, group_offset, n_groups,
                      iteration, group_weights, weight_norm, grad, hess)


@numba.njit(nogil=True, cache=True)
def _lambda_gradients(metric, delta_of, pair_method, n_pairs, exp_gain, score_norm,
                      normalize, margin, labels, group_ptr, group_offset, n_groups,
                      iteration, group_weights, weight_norm, grad, hess):
    scores = margin.astype(np.float32)
    grad[:] = 0
    hess[:] = 0
    discounts = discount_table(_longest(group_ptr))
    for g in range(len(group_ptr) - 1):
        s, e = group_ptr[g], group_ptr[g + 1]
        weight = group_weights[g] if len(group_weights) else np.float32(1.0)
        group_gradients(metric, delta_of, pair_method, n_pairs, exp_gain, score_norm,
                        normalize, scores[s:e], labels[s:e], group_offset + g, n_groups,
                        iteration, weight, weight_norm, discounts, grad[s:e], hess[s:e])


# each metric's change of a swapped pair, by metric (``group_gradients``' ``delta_of``)
DELTA_OF = {PAIRWISE: _pairwise_delta, NDCG: _ndcg_delta, MAP: _map_delta}


# ---- metrics -------------------------------------------------------------------------

@numba.njit(nogil=True, cache=True)
def ranking_metric_sums(metric, top_k, minus, exp_gain, margin, labels, group_ptr,
                        group_weights):
    """``(sum over queries of weight * value, sum of the weights)`` of xgboost's
    ``ndcg`` (``metric`` NDCG), ``map`` (MAP) or ``pre`` (PAIRWISE stands for it) at
    ``top_k``: a query's rows ranked by score (float32, stable, descending)."""
    scores = margin.astype(np.float32)
    total, weight_sum = 0.0, 0.0
    longest = _longest(group_ptr)
    discounts = discount_table(longest)
    # a query's first top_k rows by score (``_top_order_desc``), and by label (NDCG's IDCG)
    order = np.empty(min(longest, top_k), dtype=np.int64)
    ideal = np.empty(min(longest, top_k), dtype=np.int64)
    y_rank = np.empty(min(longest, top_k), dtype=labels.dtype)
    for g in range(len(group_ptr) - 1):
        s, e = group_ptr[g], group_ptr[g + 1]
        w = group_weights[g] if len(group_weights) else 1.0
        weight_sum += w
        labels_g = labels[s:e]
        n = _top_order_desc(scores[s:e], top_k, order)
        for i in range(n):
            y_rank[i] = labels_g[order[i]]
        if metric == NDCG:
            inv_idcg = _inverse_ideal_dcg(labels_g, top_k, exp_gain, discounts, ideal)
            if inv_idcg <= 0.0:
                total += 0.0 if minus else 1.0  # (xgboost: not weighted)
                continue
            dcg = 0.0
            for i in range(n):
                dcg += discounts[i] * _gain(y_rank[i], exp_gain) * inv_idcg
            total += dcg * w
        elif metric == MAP:
            hits, acc = 0.0, 0.0
            for i in range(n):
                hits += y_rank[i]
                acc += hits / (i + 1.0) * y_rank[i]
            hits = 0.0  # every relevant document, in any order (0/1 labels: exact sums)
            for i in range(e - s):
                hits += labels_g[i]
            if hits > 0.0:
                total += acc / min(hits, float(top_k)) * w
            else:
                total += (0.0 if minus else 1.0) * w
        else:
            hits = 0.0
            for i in range(n):
                hits += float(np.float32(y_rank[i] * np.float32(w)))
            total += hits / n if n else 0.0
    return total, weight_sum
