"""ODP+FMPC-ID3 (seed 000, Sec. 3, Algorithms 1-4): a secret tree with DP leaves.

Training (:func:`oblivious_id3`, Algorithm 1 with Algorithms 2 and 3) builds a
*complete* w-ary tree of depth h on one-hot data padded to the common width
w (App. C.1, dummy columns all zero). Nothing is opened (the sorted-table variant,
:func:`oblivious_id3_sorted`, opens only data-independent values): each internal node
holds a secret attribute indicator vector (one-hot over the m attributes),
each leaf a secret one-hot label, and every record's membership of every
node is a secret 0/1 vector. The model stays secret-shared; only a querier
learns a prediction (:func:`oblivious_predict`, Algorithm 4).

Split selection
    ``split="exact"`` is the paper: the secure argmax of the max-operator
    scores of the attributes still available on the path (Alg. 1 steps
    12-16). It is not randomised, and every released prediction depends on
    it: no DP guarantee (see :class:`~privet.learners.ObliviousID3Classifier`).
    ``split="exponential"`` is the sound variant: a DP selection draws the
    split from the same scores and its one-hot output is the secret indicator
    vector. The selection is the MPC exponential mechanism (Algorithm 13) or,
    with discrete noise, report-noisy-max with exact discrete Laplace noise
    (:class:`~privet.mpc.discrete.SecureReportNoisyMax`). Attributes already
    used on the path can never win (:func:`split_penalty`), which is the
    reference's selection over the available attributes only.

Leaves
    The class sizes of each leaf get secure Laplace noise (Algorithm 12, or
    exact discrete Laplace, the full leaf budget) and the leaf keeps the
    one-hot argmax (with discrete noise the first maximum: integer noisy
    counts tie), or a label drawn by the selection mechanism. Only leaves need noisy counts, so the
    internal nodes' noise of Alg. 1 step 8 (never used) is not drawn.

Cost
    Level by level: the contingency tables of the w**l nodes of level l are
    one product ``T @ DC``; Alg. 2 (MAX) is a batched maximum and sum; the
    argmax (Alg. 1 step 15) returns the one-hot indicator directly (MPyC's
    unary argmax: Alg. 3's conversion comes for free); ``X = K @ D`` gives each
    node's chosen attribute encoding (Alg. 1 steps 17-19) and ``T x X`` the
    children's partition vectors (step 21). The leaves' counts are read off
    the last level's tables with the indicator, so the w**h leaf partition
    vectors are never formed. Asymptotically O(w**h * m * n * w * u) secure
    products as in the paper's Sec. 3.1.3, in O(h) rounds of batches.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError, MPCError
from privet.learners._protocols.common import (
    ContingencyTables,
    check_range,
    digits,
    expand_rows,
    first_max_keys,
    split_penalty,
)
from privet.learners._protocols.noise import SecureNoise
from privet.mpc._runtime import get_runtime
from privet.mpc.discrete import SecureDiscreteLaplace, SecureReportNoisyMax, argmax_first
from privet.mpc.progress import mark_step
from privet.mpc.sharing import reveal

mpc = get_runtime()

SPLITS = ("exact", "exponential")
LEAVES = ("laplace", "exponential")


@dataclass
class SecretTree:
    """A complete w-ary tree held as secret shares (the model of Algorithm 1).

    Attributes
    ----------
    indicators : list of secure arrays
        ``indicators[l]`` has shape (w**l, m): the attribute indicator vector
        (one-hot) of each node of level l, nodes in base-w order of their
        paths (node j's children are w*j, ..., w*j + w - 1).
    leaves : secure array, shape (w**h, u)
        One-hot label of each leaf.
    width, n_attributes, n_classes : int
    """

    indicators: list[Any]
    leaves: Any
    width: int
    n_attributes: int
    n_classes: int

    @property
    def depth(self) -> int:
        return len(self.indicators)

    def arrays(self) -> list[Any]:
        """All secret arrays, levels first, leaves last (the order of export)."""
        return [*self.indicators, self.leaves]


@mpc.coroutine
async def oblivious_id3(
    D: Any,
    C: Any,
    depth: int,
    *,
    split: str = "exact",
    split_mechanism: Any = None,
    leaf_mechanism: Any,
    leaf: str = "laplace",
    noise: SecureNoise | None = None,
) -> asyncio.Future:
    """Algorithm 1 (ODP+FMPC-ID3): train a secret complete w-ary tree.

    Parameters
    ----------
    D : secure fixed-point array, shape (n, m, w)
        One-hot attribute values padded with zero dummy columns to the common
        width w (App. C.1), integral values of ``leaf_mechanism.sectype``.
    C : secure fixed-point array, shape (n, u)
        One-hot classes (the vectors C_i of Alg. 1 step 6).
    depth : int
        Depth h of the complete tree (1 <= h <= m in the paper; 0 gives one leaf).
    split : {"exact", "exponential"}, default="exact"
        Paper-faithful exact argmax, or the sound exponential-mechanism split.
    split_mechanism : SecureExponentialMechanism or None
        Required for ``split="exponential"``.
    leaf_mechanism : SecureLaplace or SecureExponentialMechanism
        MPC-LM (Alg. 1 step 8, the full leaf budget) or MPC-EM for the leaves.
    leaf : {"laplace", "exponential"}, default="laplace"
    noise : SecureNoise or None
        ``None``: the mechanisms' own secret noise; tests pass a
        :class:`~privet.learners._protocols.noise.FixedNoise`.

    Returns
    -------
    SecretTree
        Secret-shared; nothing about it has been opened.
    """
    if split not in SPLITS or leaf not in LEAVES:
        raise InvalidParameterError(
            f"split must be one of {SPLITS} and leaf one of {LEAVES}, got {split!r}, {leaf!r}."
        )
    if split == "exponential" and split_mechanism is None:
        raise InvalidParameterError("split='exponential' needs a split_mechanism.")
    noise = SecureNoise() if noise is None else noise
    n, m, w = D.shape
    u = C.shape[1]
    if not 0 <= depth <= m:
        raise InvalidParameterError(f"depth must be in [0, {m}] (the attributes), got {depth}.")
    sectype = type(D).sectype
    if split == "exact":  # the exact argmax's keys; the DP splits check their own range
        check_range("the split keys (n + 1) * m + m", (n + 1) * m + m, sectype)
    penalty = split_penalty(split_mechanism, n, m) if split == "exponential" else 0
    contingency = ContingencyTables(D.reshape(n, m * w), C)
    D_by_attribute = D.transpose(1, 0, 2).reshape(m, n * w)  # row a: [D_a,r,v] over (r, v)
    R = sectype.array(np.ones((1, m), dtype=np.int64))  # Alg. 1: available attributes
    T = None  # partition vectors of the current level (None: the root, all records)
    indicators = []
    counts = None
    for level in range(depth):
        N = w**level
        table = contingency(T).reshape(N, m, w, u)
        y = mpc.np_sum(mpc.np_amax(table, axis=(3,)), axis=2)  # steps 12-13: MAX (Alg. 2)
        if split == "exact":  # steps 14-16: y x R, argmax, indicator vector
            keys = first_max_keys(y + 1, R)
            K = mpc.np_argmax(keys, axis=1, arg_unary=True, arg_only=True)
        else:  # the sound variant: a DP selection over the available attributes, kept secret
            paths = [digits(j, w, level) for j in range(N)]
            if isinstance(split_mechanism, SecureReportNoisyMax):
                K = noise.select(split_mechanism, y, paths, kind="split", mask=R)
            else:
                q = R * (y + penalty)  # used attributes 0, available ones >= penalty
                K = noise.select(split_mechanism, q, paths, kind="split")
        K.integral = True  # exact 0/1: products with it need no truncation
        indicators.append(K)
        mark_step(K, f"ODP+FMPC-ID3 depth {level}: split indicators (kept secret)")
        R = expand_rows(R - K, w)  # step 22: R - k, the same for all w children
        if level + 1 < depth:  # steps 17-21: X = encoding of A_k, T_i = T x X_i
            X = (K @ D_by_attribute).reshape(N, n, w)
            TX = X if T is None else T.reshape(N, n, 1) * X
            T = TX.transpose(0, 2, 1).reshape(N * w, n)
        else:  # the children are the leaves: class sizes z_{j,v,k} = sum_a k_a table_{a,v,k}
            counts = mpc.np_sum(K.reshape(N, m, 1, 1) * table, axis=1).reshape(N * w, u)
    if depth == 0:
        counts = mpc.np_sum(C, axis=0).reshape(1, u)
    leaf_paths = [digits(j, w, depth) for j in range(w**depth)]
    if leaf == "laplace":  # steps 5-11: MPC-LM on the class sizes, argmax kept secret
        noisy = noise.laplace(leaf_mechanism, counts, leaf_paths)
        if isinstance(leaf_mechanism, SecureDiscreteLaplace):  # integer noise: ties happen
            labels = argmax_first(noisy, leaf_mechanism.noise_bound)
        else:
            labels = mpc.np_argmax(noisy, axis=1, arg_unary=True, arg_only=True)
    else:
        labels = noise.select(leaf_mechanism, counts, leaf_paths, kind="leaf")
    labels.integral = True
    mark_step(labels, "ODP+FMPC-ID3: leaf labels (kept secret)")
    return SecretTree(indicators=indicators, leaves=labels, width=w, n_attributes=m, n_classes=u)


@mpc.coroutine
async def oblivious_predict(model: SecretTree, Q: Any) -> asyncio.Future:
    """Algorithm 4 (Predict) for a batch of secret queries: secret one-hot labels.

    Parameters
    ----------
    model : SecretTree
        The secret complete tree.
    Q : secure array, shape (q, m, w)
        Secret one-hot queries padded to w (dummy columns zero).

    Returns
    -------
    secure array, shape (q, u)
        Each query's one-hot label, still secret.

    Notes
    -----
    Bottom-up, as the recursion of Algorithm 4 unrolled by level: at a node
    with indicator vector I the flags of its branches are ``f_v = t_v · I``
    (step 5), and the node's value is ``sum_v f_v c_v`` over its children's
    values (steps 6-8). Only one root-to-leaf path has all flags 1 (dummy
    columns are 0 in every query), so the root's value is the label of the
    query's leaf. Costs q * w**h * u secure products plus the flags.
    """
    q, m, w = Q.shape
    u = model.n_classes
    Q_by_attribute = Q.transpose(1, 0, 2).reshape(m, q * w)  # row a: [t_a,v] over (query, v)
    value = None  # (w**l, q, u) values of the nodes of level l
    for level in range(model.depth - 1, -1, -1):
        N = w**level
        flags = (model.indicators[level] @ Q_by_attribute).reshape(N, q, w)  # step 5
        if value is None:  # children are the leaves, the same for every query
            children = model.leaves.reshape(N, 1, w, u)
        else:
            children = value.reshape(N, w, q, u).transpose(0, 2, 1, 3)
        value = mpc.np_sum(flags.reshape(N, q, w, 1) * children, axis=2)  # steps 6-8
        mark_step(value, f"oblivious prediction of {q} queries: depth {level} (kept secret)")
    if value is None:  # depth 0: one leaf
        return expand_rows(model.leaves, q)
    return value.reshape(q, u)


async def reveal_predictions(onehot: Any, *, querier: int, label: str) -> np.ndarray | None:
    """Open the predicted class indices to the querier only (None elsewhere)."""
    u = onehot.shape[-1]
    index = mpc.np_sum(onehot * np.arange(u, dtype=np.int64), axis=1)
    opened = await reveal(index, label=label, receivers=[querier])
    if opened is None or (isinstance(opened, list) and opened and opened[0] is None):
        return None
    return np.rint(np.asarray(opened, dtype=float)).astype(np.int64).reshape(-1)


# ------------------------------------------------------------ shares in and out


async def export_shares(model: SecretTree) -> dict[str, Any]:
    """This party's shares of the model, as plain Python ints (to store at the server).

    Shamir shares on MPyC's evaluation point ``pid + 1``; anybody holding the
    shares of ``threshold + 1`` parties can reconstruct the model, so each
    server stores its own and nothing else.
    """
    arrays = model.arrays()
    fields = await mpc.gather(*arrays) if len(arrays) > 1 else [await mpc.gather(arrays[0])]
    sectype = type(model.leaves).sectype
    return {
        "pid": mpc.pid,
        "n_parties": len(mpc.parties),
        "threshold": mpc.threshold,
        "bit_length": sectype.bit_length,
        "frac_length": sectype.frac_length,
        "modulus": int(sectype.field.modulus),
        "width": model.width,
        "n_attributes": model.n_attributes,
        "n_classes": model.n_classes,
        "arrays": [np.asarray(f.value, dtype=object).astype(object) for f in fields],
    }


def import_shares(shares: dict[str, Any], sectype: type) -> SecretTree:
    """Rebuild this party's secret model from :func:`export_shares` output."""
    if (
        shares["pid"] != mpc.pid
        or shares["n_parties"] != len(mpc.parties)
        or shares["threshold"] != mpc.threshold
    ):
        raise InvalidParameterError(
            f"these model shares belong to party {shares['pid']} of {shares['n_parties']} "
            f"(threshold {shares['threshold']}), but this is party {mpc.pid} of "
            f"{len(mpc.parties)} (threshold {mpc.threshold}); give each party its own shares."
        )
    if int(sectype.field.modulus) != shares["modulus"]:
        raise InvalidParameterError(
            f"the model was shared with bit_length={shares['bit_length']}, "
            f"frac_length={shares['frac_length']}; use the same secure type to load it."
        )
    arrays = [
        sectype.array(sectype.field.array(np.asarray(a, dtype=object))) for a in shares["arrays"]
    ]
    for a in arrays:
        a.integral = True
    return SecretTree(
        indicators=arrays[:-1],
        leaves=arrays[-1],
        width=int(shares["width"]),
        n_attributes=int(shares["n_attributes"]),
        n_classes=int(shares["n_classes"]),
    )


def reconstruct(shares: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Recombine the model from every party's exported shares: for tests only.

    Lagrange interpolation at 0 over the parties' points ``pid + 1``; whoever
    runs this learns the whole model, which the protocol exists to prevent.

    Returns
    -------
    dict
        ``{"indicators": [int arrays (w**l, m)], "leaves": int array (w**h, u)}``.
    """
    shares = sorted(shares, key=lambda s: s["pid"])
    p = int(shares[0]["modulus"])
    f = int(shares[0]["frac_length"])
    points = [s["pid"] + 1 for s in shares]
    coefficients = []
    for i, xi in enumerate(points):
        c = 1
        for j, xj in enumerate(points):
            if j != i:
                c = c * xj * pow(xj - xi, -1, p) % p
        coefficients.append(c)
    opened = []
    for k in range(len(shares[0]["arrays"])):
        total = (
            sum(
                (
                    c * np.asarray(s["arrays"][k], dtype=object)
                    for c, s in zip(coefficients, shares, strict=True)
                )
            )
            % p
        )
        signed = np.where(total > p // 2, total - p, total).astype(object)
        opened.append(np.rint(signed.astype(float) / 2**f).astype(np.int64))
    return {"indicators": opened[:-1], "leaves": opened[-1]}


# ------------------------------------------------------------ prediction on a sorted table


def _model_index(key: np.ndarray, width: int, level: int) -> np.ndarray:
    """Index j (root digit most significant) of the nodes with sorted-table key g (root digit least)."""
    out = np.zeros_like(key)
    rest = key.copy()
    for i in range(level):
        out += (rest % width) * width ** (level - 1 - i)
        rest //= width
    return out


async def oblivious_predict_sorted(
    eng: Any, model: SecretTree, queries: np.ndarray, *, querier: int, label: str
) -> np.ndarray | None:
    """Algorithm 4 for a batch of secret queries by path evaluation on a sorted table.

    Instead of evaluating every one of the w**h leaves for every query (Alg. 4
    unrolled), each query follows its own path: the queries and w**(h-1) dummy
    rows (:func:`~privet.learners._protocols.grouped.dummy_digits`) are kept
    secretly sorted by the node they have reached (the group key of
    :mod:`privet.learners._protocols.grouped`), a level's secret attribute
    indicators reach the queries as prefix sums of the differences between
    consecutive nodes' indicators, written on each node's first dummy (dummy g
    is the first row of group g at every level), and a query's next branch is
    its one-hot value of that attribute (one product per one-hot column). At the
    last level the query multiplies its branch into its node's w leaf labels.
    A level costs O((q + w**(h-1)) m w) products and one shuffle, whatever the
    number of leaves.

    ``eng`` is the vector engine; ``model`` the secret tree (MPyC shares, moved
    into the engine by masked conversions); ``queries`` this engine's shares of
    the querier's padded one-hot queries, (q, m, w). Only ``querier`` learns the
    labels (class indices, in the order of the queries); the other parties get
    None. Besides the labels, only data-independent values are opened (shuffled
    destinations, the shuffled positions of the queries).
    """
    from privet.learners._protocols.grouped import dummy_digits
    from privet.mpc import field61 as F
    from privet.mpc.vector import DATA_INDEPENDENT

    q, m, w = queries.shape
    u, h = model.n_classes, model.depth
    if h == 0:
        leaf = await eng.from_mpyc(model.leaves, lower=0, upper=1, label=f"{label}: leaf")
        index = F.sum(F.mul(leaf, np.arange(u, dtype=np.uint64)), axis=1)  # (1,)
        labels = np.broadcast_to(index, (q,)).copy()
        return await eng.open(labels, label=label, receivers=[querier])
    indicators = [
        await eng.from_mpyc(K, lower=0, upper=1, label=f"{label}: indicators, depth {lvl}")
        for lvl, K in enumerate(model.indicators)
    ]
    leaves = await eng.from_mpyc(model.leaves, lower=0, upper=1, label=f"{label}: leaf labels")
    digits = dummy_digits(w, h - 1)
    d = digits.shape[0]
    # payload per row: queries (m w) | position | dummy digits (h-1) w | per level: m | leaves w u
    cols_q, cols_d = m * w, (h - 1) * w
    parts = [np.zeros((d, cols_q + 1), dtype=np.uint64)]
    dummy_onehot = np.zeros((d, cols_d), dtype=np.uint64)
    for i in range(h - 1):
        dummy_onehot[np.arange(d), i * w + digits[:, i]] = 1
    parts.append(dummy_onehot)
    for lvl in range(h):  # the first dummies of each group carry the deltas of its indicator
        groups = w**lvl
        per_group = indicators[lvl][_model_index(np.arange(groups), w, lvl)]  # by key
        delta = F.sub(per_group, np.vstack([np.zeros((1, m), np.uint64), per_group[:-1]]))
        block = np.zeros((d, m), dtype=np.uint64)
        block[:groups] = delta
        parts.append(block)
    groups = w ** (h - 1)
    base = _model_index(np.arange(groups), w, h - 1) * w
    blocks = leaves[(base[:, None] + np.arange(w)[None, :]).reshape(-1)].reshape(groups, w * u)
    delta = F.sub(blocks, np.vstack([np.zeros((1, w * u), np.uint64), blocks[:-1]]))
    leaf_block = np.zeros((d, w * u), dtype=np.uint64)
    leaf_block[:groups] = delta
    parts.append(leaf_block)
    dummies = np.hstack(parts)
    records = np.hstack(
        [
            np.asarray(queries, dtype=np.uint64).reshape(q, cols_q),
            np.arange(q, dtype=np.uint64)[:, None],
            np.zeros((q, dummies.shape[1] - cols_q - 1), dtype=np.uint64),
        ]
    )
    rows = np.vstack([dummies, records])
    is_query = np.concatenate([np.zeros(d, np.uint64), np.ones(q, np.uint64)])
    rows = np.hstack([rows, is_query[:, None]])
    n_rows = rows.shape[0]
    first_level = cols_q + 1 + cols_d
    for lvl in range(h):
        K = F.cumsum(rows[:, first_level + lvl * m : first_level + (lvl + 1) * m], axis=0)
        Q = rows[:, :cols_q].reshape(n_rows, m, w)
        X = await eng.reshare(F.sum(F.mul(K[:, :, None], Q), axis=1))  # (n', w)
        if lvl == h - 1:
            start = first_level + h * m
            L = F.cumsum(rows[:, start : start + w * u], axis=0).reshape(n_rows, w, u)
            onehot = await eng.reshare(F.sum(F.mul(X[:, :, None], L), axis=1))  # (n', u)
            break
        X = F.add(X, rows[:, cols_q + 1 + lvl * w : cols_q + 1 + (lvl + 1) * w])
        running = F.cumsum(X, axis=0)
        totals = running[-1]
        before = F.sub(F.cumsum(totals), totals)
        target = F.sub(F.add(running, before[None, :]), F.const(1))
        dest = await eng.reshare(F.sum(F.mul(X, target), axis=1))
        shuffled, _ = await eng.shuffle(np.hstack([rows, dest[:, None]]))
        places = await eng.open(
            shuffled[:, -1],
            label=f"{label}: depth {lvl} shuffled sort destinations {DATA_INDEPENDENT}",
        )
        assert places is not None
        if not np.array_equal(np.sort(places), np.arange(n_rows)):
            raise MPCError(f"{label}: the opened destinations are not a permutation.")
        out = np.empty_like(rows)
        out[places] = shuffled[:, :-1]
        rows = out
        mark_step(None, f"oblivious prediction of {q} queries: depth {lvl} (kept secret)")
    index = F.sum(F.mul(onehot, np.arange(u, dtype=np.uint64)[None, :]), axis=1)
    final, _ = await eng.shuffle(np.stack([index, rows[:, cols_q], rows[:, -1]], axis=1))
    flags = await eng.open(
        final[:, 2], label=f"{label}: shuffled query positions {DATA_INDEPENDENT}"
    )
    assert flags is not None
    where = np.flatnonzero(flags == 1)
    if where.size != q:
        raise MPCError(f"{label}: {where.size} query rows where {q} were expected.")
    opened = await eng.open(final[where][:, :2], label=label, receivers=[querier])
    if opened is None:
        return None
    labels = np.empty(q, dtype=np.int64)
    labels[opened[:, 1]] = opened[:, 0]
    return labels


# ------------------------------------------------------------ training on a sorted table


def _rank_keys_bits(top: int, d: int) -> tuple[int, int]:
    """(k, bits): ranks need k fractional bits for d candidates; keys below (top + 1) 2**k need bits."""
    k = max(1, math.ceil(math.log2(d + 1)))
    return k, ((int(top) + 1) << k).bit_length() + 1


async def oblivious_id3_sorted(
    table: Any,
    n_records: int,
    depth: int,
    *,
    sectype: type,
    split: str = "exact",
    split_mechanism: Any = None,
    leaf_mechanism: Any,
    leaf: str = "laplace",
    noise: SecureNoise | None = None,
) -> SecretTree:
    """Algorithm 1 (ODP+FMPC-ID3) on a secretly sorted table, entirely in the vector engine.

    The same secret tree as :func:`oblivious_id3` (the same scores, the same
    selections with the same tie rules, the same noise distributions), with the
    level's contingency tables of all w**l nodes from a
    :class:`~privet.learners._protocols.grouped.SortedTable` (cost linear in the
    rows) and the comparisons of Alg. 2 (MAX), of the split selection and of the
    leaf labels done in the engine (:func:`privet.mpc.vector.maximum`,
    :func:`~privet.mpc.vector.argmax_onehot`). The hidden split of each node
    reaches its rows through :meth:`SortedTable.gather`. Only data-independent
    values are opened (shuffled group starts and destinations, masked
    comparisons and conversions). The model is returned as MPyC shares
    (:class:`SecretTree`), as :func:`oblivious_id3` returns it.

    Only the discrete samplers (``mpc_noise="discrete"``) and the exact split.
    """
    from privet.learners._protocols.noise import SecureNoise as _Base
    from privet.mpc import field61 as F
    from privet.mpc.vector import argmax_onehot, maximum

    if split not in SPLITS or leaf not in LEAVES:
        raise InvalidParameterError(
            f"split must be one of {SPLITS} and leaf one of {LEAVES}, got {split!r}, {leaf!r}."
        )
    if split == "exponential" and not isinstance(split_mechanism, SecureReportNoisyMax):
        raise InvalidParameterError(
            "the sorted-table ODP+FMPC-ID3 draws its hidden splits by report-noisy-max with "
            "discrete noise (mpc_noise='discrete'); the fixed-point exponential mechanism runs "
            "on the partition-vector path."
        )
    if not isinstance(leaf_mechanism, SecureDiscreteLaplace | SecureReportNoisyMax):
        raise InvalidParameterError(
            "the sorted-table ODP+FMPC-ID3 needs the discrete leaf samplers (mpc_noise='discrete')."
        )
    noise = _Base() if noise is None else noise
    eng = table.eng
    m, w, u, S = table.m, table.width, table.u, table.S
    attribute_of = table.column_attribute
    column_value = table.column_value
    R = np.ones((1, m), dtype=np.uint64)  # Alg. 1: available attributes (public at the root)
    indicators = []
    counts = None
    count_bits = int(n_records + 1).bit_length() + 1
    for level in range(depth):
        N = w**level
        label = f"ODP+FMPC-ID3 depth {level}"
        every, view = await table.counts(label=label)  # by group key g
        j_of_g = _model_index(np.arange(N, dtype=np.int64), w, level)
        g_of_j = np.argsort(j_of_g)
        T = every[g_of_j].reshape(N, S, u)  # node order j (root digit most significant)
        best = await maximum(eng, T, count_bits, label=f"{label}: MAX")  # (N, S)
        y = np.zeros((N, m), dtype=np.uint64)
        for a in range(m):  # Alg. 2: sum over the attribute's values of the class maximum
            y[:, a] = F.sum(best[:, attribute_of == a], axis=1)
        rank = np.arange(m, 0, -1, dtype=np.uint64)  # first maximum wins
        if split == "exact":  # keys R ((y + 1) m + (m - i)), as first_max_keys
            k, bits = 0, int((n_records + 2) * m + m).bit_length() + 1
            raw = F.add(F.mul(F.add(y, F.const(1)), F.const(m)), rank)
        else:
            paths = [digits(j, w, level) for j in range(N)]
            bound = int(split_mechanism.noise_bound)
            z = await noise.engine_values(eng, split_mechanism, paths, "split", m)
            k, bits = _rank_keys_bits(n_records + 2 * bound, m)
            shifted = F.add(F.add(y, z), F.const(bound))  # noisy scores + bound >= 0
            raw = F.add(F.mul(shifted, F.const(1 << k)), rank)
        keys = await eng.mul(np.broadcast_to(R, raw.shape), raw)  # used attributes: key 0
        K = await argmax_onehot(eng, keys, bits, label=f"{label}: split")  # (N, m), order j
        indicators.append(K)
        mark_step(None, f"{label}: split indicators (kept secret)")
        R = np.repeat(F.sub(np.broadcast_to(R, K.shape), K), w, axis=0)  # step 22, children w j + v
        if level + 1 < depth:
            await table.advance(await table.gather(view, K[j_of_g]), label=label)
        else:  # the leaves' class sizes z_{j,v,k} = sum_a K_{j,a} table_{j,a,v,k}
            padded = np.zeros((N, m, w, u), dtype=np.uint64)
            padded[:, attribute_of, column_value, :] = T
            local = F.sum(F.mul(K[:, :, None, None], padded), axis=1)  # (N, w, u)
            counts = (await eng.reshare(local)).reshape(N * w, u)
    if counts is None:
        raise InvalidParameterError("the sorted-table ODP+FMPC-ID3 needs depth >= 1.")
    leaf_paths = [digits(j, w, depth) for j in range(w**depth)]
    bound = int(leaf_mechanism.noise_bound)
    kind = "laplace" if leaf == "laplace" else "leaf"
    z = await noise.engine_values(eng, leaf_mechanism, leaf_paths, kind, u)
    k, bits = _rank_keys_bits(n_records + 2 * bound, u)
    rank = np.arange(u, 0, -1, dtype=np.uint64)
    keys = F.add(F.mul(F.add(F.add(counts, z), F.const(bound)), F.const(1 << k)), rank)
    labels = await argmax_onehot(eng, keys, bits, label="ODP+FMPC-ID3: leaf labels")
    mark_step(None, "ODP+FMPC-ID3: leaf labels (kept secret)")
    out = []
    for level, K in enumerate(indicators):
        out.append(await eng.to_mpyc(K, sectype, lower=0, upper=1, label=f"model, depth {level}"))
    leaves = await eng.to_mpyc(labels, sectype, lower=0, upper=1, label="model, leaves")
    return SecretTree(indicators=out, leaves=leaves, width=w, n_attributes=m, n_classes=u)
