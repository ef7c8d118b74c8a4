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


@numba.njit(nogil=True, cache=True)
def _gain(label, exp_gain):
    if exp_gain:
        return float((np.uint64(1) << np.uint64(np.uint32(label))) - np.uint64(1))
    return float(label)


@numba.njit(nogil=True, cache=True)
def _discount(position):
    return 1.0 / math.log2(position + 2.0)


@numba.njit(nogil=True, cache=True)
def _inverse_ideal_dcg(labels, top_k, exp_gain):
    """1 / DCG of the labels in the ideal order, the first ``top_k`` of them (0 where
    that DCG is 0: no relevant document)."""
    ordered = labels[_stable_order_desc(labels)]
    dcg = 0.0
    for i in range(min(len(ordered), top_k)):
        dcg += _discount(i) * _gain(ordered[i], exp_gain)
    return 0.0 if dcg == 0.0 else 1.0 / dcg


@numba.njit(nogil=True, cache=True)
def _sigmoid32(x):
    """xgboost's float sigmoid: 1 / (exp(min(-x, 88.7)) + 1 + 1e-16), in float32."""
    e = np.float32(math.exp(min(-x, np.float32(88.7))))
    return np.float32(1.0) / ((e + np.float32(1.0)) + np.float32(1e-16))


@numba.njit(nogil=True, cache=True)
def _minstd_next(state):
    return (48271 * state) % _MINSTD_M


@numba.njit(nogil=True, cache=True)
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


@numba.njit(nogil=True, cache=True)
def _add_pair(metric, exp_gain, score_norm, scores, labels, rank, y_rank, hi, lo,
              inv_idcg, relevant, precision_sums, same_scores, grad, hess):
    """Add the pair at ranks ``hi`` (the larger label) and ``lo`` to the group's
    gradients; returns ``|2 lambda|`` (float64)."""
    i, j = rank[hi], rank[lo]
    if metric == PAIRWISE:
        delta = 1.0
    elif metric == NDCG:
        g_hi, g_lo = _gain(labels[i], exp_gain), _gain(labels[j], exp_gain)
        d_hi, d_lo = _discount(hi), _discount(lo)
        delta = ((g_hi * d_hi + g_lo * d_lo) - (g_lo * d_hi + g_hi * d_lo)) * inv_idcg
    else:
        delta = _delta_map(y_rank, relevant, precision_sums, min(hi, lo), max(hi, lo))
    delta = abs(delta)
    diff = scores[i] - scores[j]  # (float32)
    sig = float(_sigmoid32(diff))
    if score_norm and not same_scores:
        delta = delta / (abs(float(diff)) + _SCORE_GAP)
    lam = np.float32((sig - 1.0) * delta)
    h = np.float32(max(sig * (1.0 - sig), _EPS64) * delta * 2.0)
    grad[i] += lam
    grad[j] -= lam
    hess[i] += h
    hess[j] += h
    return -2.0 * float(lam)


@numba.njit(nogil=True, cache=True)
def group_gradients(metric, pair_method, n_pairs, exp_gain, score_norm, normalize,
                    scores, labels, group_index, n_groups, iteration, weight, weight_norm,
                    grad, hess):
    """One query's float32 ``grad`` and ``hess`` (zeroed by the caller), its rows'
    ``scores`` (float32 margins) and ``labels`` (float32): ``n_pairs`` is k;
    ``group_index``/``n_groups``, the query's place among all the data's queries and
    their number (``mean``'s random draws); ``weight``: the query's weight,
    ``weight_norm``: ``n_queries / sum of the weights`` (both 1.0 unweighted)."""
    n = len(scores)
    if n == 0:
        return
    rank = _stable_order_desc(scores)
    y_rank = labels[rank]
    same_scores = scores[rank[0]] == scores[rank[n - 1]]
    top_k = n_pairs if pair_method == TOPK else n
    inv_idcg = _inverse_ideal_dcg(labels, top_k, exp_gain) if metric == NDCG else 0.0
    relevant = np.zeros(n)
    precision_sums = np.zeros(n)
    if metric == MAP:
        hits, acc = 0.0, 0.0
        for t in range(n):
            hits += y_rank[t]
            acc += y_rank[t] / (t + 1.0)
            relevant[t], precision_sums[t] = hits, acc
    lambda_sum = 0.0
    if pair_method == TOPK:
        for a in range(min(n, n_pairs)):
            for b in range(a + 1, n):
                if y_rank[a] == y_rank[b]:
                    continue
                hi, lo = (a, b) if y_rank[a] > y_rank[b] else (b, a)
                lambda_sum += _add_pair(metric, exp_gain, score_norm, scores, labels, rank,
                                        y_rank, hi, lo, inv_idcg, relevant, precision_sums,
                                        same_scores, grad, hess)
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
                        lambda_sum += _add_pair(metric, exp_gain, score_norm, scores, labels,
                                                rank, y_rank, hi, lo, inv_idcg, relevant,
                                                precision_sums, same_scores, grad, hess)
            a = b
    if normalize:
        norm = 1.0
        if pair_method == MEAN:
            norm = 1.0 / n_pairs
        elif lambda_sum > 0.0:
            norm = math.log2(1.0 + lambda_sum) / lambda_sum
        if norm != 1.0:
            scale = np.float32(norm)
            for t in range(n):
                grad[t] *= scale
                hess[t] *= scale
    if weight != 1.0 or weight_norm != 1.0:
        w, w_norm = np.float32(weight), np.float32(weight_norm)
        for t in range(n):
            grad[t] = (grad[t] * w) * w_norm
            hess[t] = (hess[t] * w) * w_norm


@numba.njit(nogil=True, cache=True)
def lambda_gradients(metric, pair_method, n_pairs, exp_gain, score_norm, normalize,
                     margin, labels, group_ptr, group_offset, n_groups, iteration,
                     group_weights, weight_norm, grad, hess):
    """A partition's gradients, query by query (``group_gradients``): ``margin`` (n,)
    float64, ``group_ptr`` its queries' bounds, ``group_offset`` the index of its first
    query among all the data's; ``group_weights`` the weight of each query (float32;
    empty: 1), ``weight_norm`` the number of queries over the sum of their weights."""
    scores = margin.astype(np.float32)
    grad[:] = 0
    hess[:] = 0
    for g in range(len(group_ptr) - 1):
        s, e = group_ptr[g], group_ptr[g + 1]
        weight = group_weights[g] if len(group_weights) else np.float32(1.0)
        group_gradients(metric, pair_method, n_pairs, exp_gain, score_norm, normalize,
                        scores[s:e], labels[s:e], group_offset + g, n_groups, iteration,
                        weight, weight_norm, grad[s:e], hess[s:e])


# ---- metrics -------------------------------------------------------------------------

@numba.njit(nogil=True, cache=True)
def ranking_metric_sums(metric, top_k, minus, exp_gain, margin, labels, group_ptr,
                        group_weights):
    """``(sum over queries of weight * value, sum of the weights)`` of xgboost's
    ``ndcg`` (``metric`` NDCG), ``map`` (MAP) or ``pre`` (PAIRWISE stands for it) at
    ``top_k``: a query's rows ranked by score (float32, stable, descending)."""
    scores = margin.astype(np.float32)
    total, weight_sum = 0.0, 0.0
    for g in range(len(group_ptr) - 1):
        s, e = group_ptr[g], group_ptr[g + 1]
        w = group_weights[g] if len(group_weights) else 1.0
        weight_sum += w
        labels_g = labels[s:e]
        y_rank = labels_g[_stable_order_desc(scores[s:e])]
        n = min(e - s, top_k)
        if metric == NDCG:
            inv_idcg = _inverse_ideal_dcg(labels_g, top_k, exp_gain)
            if inv_idcg <= 0.0:
                total += 0.0 if minus else 1.0  # (xgboost: not weighted)
                continue
            dcg = 0.0
            for i in range(n):
                dcg += _discount(i) * _gain(y_rank[i], exp_gain) * inv_idcg
            total += dcg * w
        elif metric == MAP:
            hits, acc = 0.0, 0.0
            for i in range(n):
                hits += y_rank[i]
                acc += hits / (i + 1.0) * y_rank[i]
            for i in range(n, e - s):
                hits += y_rank[i]
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
