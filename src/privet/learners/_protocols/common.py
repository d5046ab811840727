"""Building blocks shared by the ID3 protocols of seed 000.

All functions work on MPyC secure arrays of one type (secure integers, or
secure fixed-point numbers holding integral values, whose products MPyC then
computes without truncation).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError
from privet.mpc._runtime import get_runtime
from privet.mpc.discrete import SecureReportNoisyMax
from privet.mpc.sharing import reveal, reveal_onehot_index

mpc = get_runtime()

SecureArray = Any
Path = tuple[int, ...]


def offsets(sizes: Sequence[int]) -> np.ndarray:
    """Start column of each attribute in the flat one-hot layout of real widths."""
    return np.concatenate(([0], np.cumsum(np.asarray(sizes, dtype=np.int64))))


def segment_matrix(sizes: Sequence[int]) -> np.ndarray:
    """Public (S, m) 0/1 matrix summing the S = sum(sizes) columns per attribute."""
    starts = offsets(sizes)
    seg = np.zeros((int(starts[-1]), len(sizes)), dtype=np.int64)
    for a, size in enumerate(sizes):
        seg[starts[a] : starts[a] + size, a] = 1
    return seg


def flat_one_hot(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """(n, sum(sizes)) one-hot of integer codes, no dummy columns (tree revealed)."""
    codes = np.asarray(codes, dtype=np.int64).reshape(-1, len(sizes))
    starts = offsets(sizes)
    out = np.zeros((codes.shape[0], int(starts[-1])), dtype=np.int64)
    rows = np.arange(codes.shape[0])
    for a in range(len(sizes)):
        out[rows, starts[a] + codes[:, a]] = 1
    return out


def class_products(D: SecureArray, C: SecureArray) -> SecureArray:
    """``DC[r, s, k] = D[r, s] * C[r, k]``, flattened to (n, S * u)."""
    n, s = D.shape
    u = C.shape[1]
    return (D.reshape(n, s, 1) * C.reshape(n, 1, u)).reshape(n, s * u)


class ContingencyTables:
    """Contingency tables of many nodes at once: Alg. 2's dot products ``D_ij · (T × C_k)``.

    For N nodes with secret partition vectors T (N, n), the tables are
    ``table[j, s, k] = sum_r T[j, r] D[r, s] C[r, k]`` (N, S, u). Two ways:

    * ``(T × C)`` then a product with ``D^T``: N * n * u secure products per
      call (free at the root, where T is all ones);
    * ``T @ DC`` with ``DC = D × C`` computed once (n * S * u products) and
      kept for the rest of the tree: N * S * u values to reshare per call.

    The first is used while the nodes processed so far are fewer than S (the
    precomputation would not yet have paid off), the second afterwards.
    """

    def __init__(self, D: SecureArray, C: SecureArray) -> None:
        self.D, self.C = D, C
        self.n, self.width = D.shape
        self.u = C.shape[1]
        self.DC: SecureArray | None = None
        self.nodes_so_far = 0

    def __call__(self, T: SecureArray | None) -> SecureArray:
        n, width, u = self.n, self.width, self.u
        if T is None:  # the root: all records
            return (self.D.T @ self.C).reshape(1, width, u)
        N = T.shape[0]
        if self.DC is None and self.nodes_so_far + N <= width:
            self.nodes_so_far += N
            TC = (T.reshape(N, n, 1) * self.C.reshape(1, n, u)).transpose(1, 0, 2)
            table = self.D.T @ TC.reshape(n, N * u)  # (S, N * u)
            return table.reshape(width, N, u).transpose(1, 0, 2)
        if self.DC is None:
            self.DC = class_products(self.D, self.C)
        return (T @ self.DC).reshape(N, width, u)


class OwnerTables:
    """Contingency tables of public paths from each owner's local counts, summed on shares.

    For the trees whose splits are opened (MPC-ID3, CDP+PMPC), the path to a
    node, i.e. which attribute takes which value, is public. Each data owner
    holding rows in the clear (a horizontal partition, one owner per party, as
    privet runs these protocols) can then count its *own* rows of every node
    of a level locally, ``local[j, s, k] = #{own rows r in node j : D[r, s] = 1,
    class k}``, and secret-share that table; the sum of the owners' shares is
    exactly :class:`ContingencyTables`' result ``sum_r T[j, r] D[r, s] C[r, k]``
    on the stacked data. Every later step (scores, stop tests, noise, argmax,
    openings) is unchanged and sees the same secret values, so the same values
    are opened and charged; each party still learns nothing but its own rows
    and the openings (the other owners' tables reach it as random shares).
    What changes is the cost: a level costs N * S * u inputs per owner and no
    secure product, instead of N * n partition-vector products, n * S * u class
    products and an (N, n) x (n, S u) product of shares (the cost that grows
    with the rows).

    Parameters
    ----------
    codes, y : this owner's rows (integer codes (n_i, m), classes (n_i,)); n_i may be 0.
    sizes : public domain sizes.
    n_classes : u.
    sectype : secure type of the tables.
    """

    def __init__(
        self, codes: np.ndarray, y: np.ndarray, sizes: Sequence[int], n_classes: int, sectype: type
    ) -> None:
        self.codes = np.asarray(codes, dtype=np.int64).reshape(-1, len(sizes))
        self.y = np.asarray(y, dtype=np.int64).reshape(-1)
        self.sizes = [int(v) for v in sizes]
        self.u = int(n_classes)
        self.sectype = sectype
        self.starts = offsets(self.sizes)
        self.width = int(self.starts[-1])
        # flat column (s * u + k) of each (row, attribute): the row's value of a, its class
        self._columns = (self.starts[:-1] + self.codes) * self.u + self.y[:, None]

    def local(self, conditions: Sequence[Sequence[tuple[int, int]]]) -> np.ndarray:
        """This owner's plaintext tables (N, S * u) of the nodes given by their paths.

        ``conditions[j]`` lists the (attribute, value) pairs on node j's path;
        the nodes must be disjoint (nodes of one level of a tree).
        """
        N, width = len(conditions), self.width * self.u
        node = np.full(self.codes.shape[0], -1, dtype=np.int64)
        for j, path in enumerate(conditions):
            inside = np.ones(self.codes.shape[0], dtype=bool)
            for a, v in path:
                inside &= self.codes[:, int(a)] == int(v)
            if (node[inside] >= 0).any():
                raise InvalidParameterError(
                    f"the paths {conditions[int(node[inside].max())]} and {path} overlap; "
                    "OwnerTables counts disjoint nodes (one level of a tree) at a time."
                )
            node[inside] = j
        rows = node >= 0
        flat = (node[rows, None] * width + self._columns[rows]).reshape(-1)
        return np.bincount(flat, minlength=N * width).reshape(N, width).astype(np.int64)

    def __call__(self, conditions: Sequence[Sequence[tuple[int, int]]]) -> SecureArray:
        """Secret (N, S, u) tables: every owner inputs its local tables; the shares are summed."""
        N = len(conditions)
        local = self.local(conditions)
        senders = list(range(len(mpc.parties)))
        shared = mpc.input(self.sectype.array(local), senders=senders)
        if not isinstance(shared, list):
            shared = [shared]
        total = shared[0]
        for part in shared[1:]:
            total = total + part
        if getattr(self.sectype, "frac_length", 0):
            total.integral = True
        return total.reshape(N, self.width, self.u)


def path_conditions(nodes: dict[Path, dict[str, Any]], path: Path) -> list[tuple[int, int]]:
    """(attribute, value) pairs on the path to a node, from its ancestors' opened splits."""
    return [(int(nodes[path[:i]]["split"]), int(path[i])) for i in range(len(path))]


def split_frontier(
    paths: Sequence[Path],
    attrs: Sequence[tuple[int, ...]],
    splits: Sequence[tuple[int, int]],
    sizes: Sequence[int],
) -> tuple[list[Path], list[tuple[int, ...]], np.ndarray, np.ndarray]:
    """The next level of an opened tree, when node ``i`` splits on attribute ``a`` for each ``(i, a)``.

    Node ``i`` of the current level has path ``paths[i]`` and the attributes
    ``attrs[i]`` still available. Its children, one per value ``v`` of ``a``,
    get the path ``(*paths[i], v)`` and ``attrs[i]`` without ``a``. Returns the
    children's paths and attributes, then for each child the position of its
    parent in ``splits`` (the row of the parent in this level's tables) and its
    column of the flat one-hot data ``offsets(sizes)[a] + v`` (MPC-Partition:
    the child's records are the parent's times that column).
    """
    starts = offsets(sizes)
    new_paths, new_attrs, node_rows, columns = [], [], [], []
    for row, (i, a) in enumerate(splits):
        rest = tuple(x for x in attrs[i] if x != a)
        for v in range(sizes[a]):
            new_paths.append((*paths[i], v))
            new_attrs.append(rest)
            node_rows.append(row)
            columns.append(int(starts[a]) + v)
    return (
        new_paths,
        new_attrs,
        np.asarray(node_rows, dtype=np.int64),
        np.asarray(columns, dtype=np.int64),
    )


def first_max_keys(values: SecureArray, mask: Any) -> SecureArray:
    """Keys whose unique maximum is the *first* maximum of ``values`` among ``mask``.

    ``key_i = mask_i * (values_i * d + (d - i))`` for d = values.shape[-1]:
    with values_i >= 0, every allowed key is at least 1 and every masked one is
    0, and equal values are ordered by index, lowest first. This fixes the
    tie-breaking of every secure argmax to numpy's ``argmax`` (first maximum),
    whatever order MPyC's tournament compares in. ``mask`` may be public or
    secret (0/1 entries).
    """
    d = values.shape[-1]
    rank = np.arange(d, 0, -1, dtype=np.int64)  # d - i
    if isinstance(mask, np.ndarray):
        return values * (mask * d) + mask * rank
    return mask * (values * d + rank)


async def public_zero_test(x: SecureArray, *, label: str, entry: object) -> np.ndarray:
    """Open only whether each entry of secret ``x`` is zero, via :func:`reveal`.

    Opens ``r * x`` for a secret random field element ``r`` per entry: zero iff
    x is zero (r is nonzero with probability 1 - 1/p), and uniformly random
    otherwise (MPyC's ``is_zero_public`` does the same, but does not pass
    through :func:`reveal`).
    """
    sectype = type(x).sectype
    n = int(np.prod(x.shape)) if x.shape else 1
    r = mpc._np_randoms(sectype.field, n)
    if isinstance(r, asyncio.Future):  # without PRSS the randoms arrive later
        r = await r
    masked = x * sectype.array(r).reshape(x.shape)
    opened = await reveal(masked, label=label, entry=entry)
    return np.asarray(opened).astype(float) == 0


async def reveal_index(onehot: SecureArray, *, label: str, entry: object) -> np.ndarray:
    """Open the index of the 1 in each row of a secret one-hot array, as a flat array."""
    return (await reveal_onehot_index(onehot, label=label, entry=entry)).reshape(-1)


def bits_needed(largest: float) -> int:
    """Smallest secure-integer bit length whose comparisons handle values up to ``largest``."""
    return max(8, math.ceil(math.log2(largest + 1)) + 1)


def check_range(what: str, largest: float, sectype: type) -> None:
    """Refuse values that would overflow the comparisons of ``sectype``."""
    f = getattr(sectype, "frac_length", 0)
    limit = 2.0 ** (sectype.bit_length - f - 1)
    if largest >= limit:
        raise InvalidParameterError(
            f"{what} can reach {largest:g}, but {sectype.__name__} compares values below "
            f"{limit:g} only; use a larger bit_length (seed 000 uses 50 for Adult)."
        )


def expand_rows(x: SecureArray, repeats: int) -> SecureArray:
    """Repeat each row of secret ``x`` (N, ...) ``repeats`` times: (N * repeats, ...)."""
    first, *rest = x.shape
    ones = np.ones((1, repeats, *([1] * len(rest))), dtype=np.int64)
    return (x.reshape((first, 1, *rest)) * ones).reshape((first * repeats, *rest))


def digits(index: int, base: int, length: int) -> Path:
    """Path (branch indices from the root) of node ``index`` of a complete tree level."""
    out = []
    for _ in range(length):
        out.append(index % base)
        index //= base
    return tuple(reversed(out))


def split_penalty(mechanism: Any, n_records: int, n_candidates: int = 1) -> int:
    """Score offset that keeps attributes already used on a path from being chosen.

    Split scores are ``R (y + P)``: 0 for a used attribute, at least ``P`` for
    an available one (scores y >= 0).

    * Exponential mechanism: weights are ``2**-((max - q) log2(e) / scale)``
      and come out exactly 0 once below ``2**-(f+1)``
      (:func:`privet.mpc.fixedpoint.exp2_neg`), so ``P = ceil((f + 2) ln 2 *
      scale)`` gives used attributes weight exactly 0.
    * Report-noisy-max (:class:`~privet.mpc.discrete.SecureReportNoisyMax`):
      no penalty (0): the used attributes are masked out of the argmax
      (``mask=R``), which costs no integer range.
    """
    if isinstance(mechanism, SecureReportNoisyMax):
        bound = int(mechanism.noise_bound)
        check_range("the noisy split keys", n_records + 2 * bound + 2, mechanism.sectype)
        return 0
    f = mechanism.sectype.frac_length
    penalty = math.ceil((f + 2) * math.log(2.0) * mechanism.scale)
    check_range("the penalised split scores", penalty + 1, mechanism.sectype)
    if n_records + penalty >= mechanism.max_score_gap:
        raise InvalidParameterError(
            f"The exponential-mechanism split needs score gaps up to {n_records + penalty} "
            f"(n + the penalty for used attributes) at scale {mechanism.scale:g}, but "
            f"{mechanism.sectype.__name__} handles gaps below {mechanism.max_score_gap:g}; "
            "use a larger bit_length or a larger split budget."
        )
    return int(penalty)
