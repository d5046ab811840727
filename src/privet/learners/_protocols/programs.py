"""What the party programs of the seed-000 protocols share (each system's ``program`` module holds its own), for :func:`privet.mpc.launch` / ``run_local``.

Each data owner is a party holding some rows (horizontal partition): it reads
its own rows (integer codes under the public schema), one-hot encodes them
locally with the public domain sizes and inputs them as secret shares
(seed 000, App. C.1, Algorithm 11: the servers stack the owners' encodings).
A party without rows inputs nothing. The public arguments are the schema's
domain sizes, the number of classes and each owner's number of rows.

``data`` is a path to the owner's ``.npz`` file (``codes`` (n_i, m) and ``y``
(n_i,)), or a dict of the same arrays (in-process runs), or None.

Run by hand on three hosts, e.g.::

    python -m privet.mpc.party privet.learners.mpc_id3.program:train_mpc_id3 \\
        --args '{"data": "mine.npz", "rows": [600, 600, 528], "sizes": [4,4,4,3,3,3],
                 "n_classes": 4, "depth": 3}' -P a:11365 -P b:11365 -P c:11365 -I 0

``_testing_noise`` (an int seed) replaces the privacy noise by public noise
for agreement tests; it is refused unless the party's environment allows it
(see :mod:`privet.learners._protocols.noise`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from privet.data import one_hot, one_hot_target
from privet.errors import InvalidParameterError
from privet.learners._protocols.common import (
    OwnerTables,
    check_range,
    flat_one_hot,
    split_penalty,
)
from privet.learners._protocols.grouped import SortedTable
from privet.learners._protocols.host import OWNER_DIR_PREFIX
from privet.learners._protocols.numbers import SecureNumbers
from privet.learners._trees.accounting import NoiseAccounting, laplace_sensitivity
from privet.ledger import NeighbouringRelation
from privet.mpc import field61 as F
from privet.mpc.discrete import secure_bernoulli
from privet.mpc.party import PartyContext
from privet.mpc.sharing import add_reveal_hook, share_horizontal
from privet.mpc.vector import Engine


def load_rows(data: Any, n_attributes: int) -> tuple[np.ndarray, np.ndarray]:
    """This owner's (codes, y), from a path, a dict of arrays, or None (no rows).

    A file the host wrote for this run (in its private ``privet-owners-*`` folder, mode
    0700) is deleted as soon as it is read, so the rows do not outlive the run even if
    the host is killed; a file the owner passed by hand is left alone.
    """
    if data is None:
        return np.zeros((0, n_attributes), dtype=np.int64), np.zeros(0, dtype=np.int64)
    if isinstance(data, dict):
        codes, y = data["codes"], data["y"]
    else:
        path = Path(data)
        with np.load(path) as f:
            codes, y = f["codes"], f["y"]
        if path.parent.name.startswith(OWNER_DIR_PREFIX):
            path.unlink(missing_ok=True)
    codes = np.asarray(codes, dtype=np.int64).reshape(-1, n_attributes)
    return codes, np.asarray(y, dtype=np.int64).reshape(-1)


def load_announced_rows(
    ctx: PartyContext, data: Any, rows: Sequence[int], n_attributes: int
) -> tuple[list[int], np.ndarray, np.ndarray]:
    """This owner's (codes, y) (:func:`load_rows`), checked against the announced ``rows``.

    ``rows`` must announce one row count per party, and this party must hold as
    many rows as announced for it. Returns the announced counts as ints, then
    the codes and classes.
    """
    rows = [int(r) for r in rows]
    if len(rows) != ctx.n_parties:
        raise InvalidParameterError(
            f"rows must give the number of rows of each of the {ctx.n_parties} parties, got {rows}."
        )
    codes, y = load_rows(data, n_attributes)
    if codes.shape[0] != rows[ctx.pid]:
        raise InvalidParameterError(
            f"party {ctx.pid} holds {codes.shape[0]} rows but rows[{ctx.pid}] = "
            f"{rows[ctx.pid]} was announced."
        )
    return rows, codes, y


async def share_training_data(
    ctx: PartyContext,
    data: Any,
    rows: Sequence[int],
    sizes: Sequence[int],
    n_classes: int,
    sectype: type,
    *,
    width: int | None = None,
    sample_rate: float | None = None,
) -> tuple[Any, Any]:
    """Input every owner's one-hot rows; return secret (D, C).

    ``width=None``: D is (n, sum(sizes)), real widths (trees that are opened);
    otherwise D is (n, m, width) with zero dummy columns (App. C.1).

    ``sample_rate=g``: a Poisson subsample drawn inside MPC (App. D.1 forests).
    Each record's class vector is multiplied by a secret Bernoulli coin
    (probability floor(g 2**40) / 2**40 <= g), so an unsampled record adds
    nothing to any count or score; nobody learns which records, or how many,
    were sampled, which is what the amplification argument assumes.
    """
    m = len(sizes)
    rows, codes, y = load_announced_rows(ctx, data, rows, m)
    if width is None:
        D_local = flat_one_hot(codes, sizes)
    else:
        D_local = one_hot(codes, list(sizes), width=width, flat=True, dtype=np.int64)
    C_local = one_hot_target(y, n_classes, dtype=np.int64)
    local = np.hstack([D_local, C_local])
    cols = local.shape[1]
    shared = await share_horizontal(local, sectype, shapes=[(r, cols) for r in rows])
    n = sum(rows)
    split = cols - n_classes
    D = shared[:, :split]
    if width is not None:
        D = D.reshape(n, m, width)
    C = shared[:, split:]
    if sample_rate is not None:
        C = C * secure_bernoulli(sectype, (n, 1), float(sample_rate))
        C.integral = True
    return D, C


async def input_training_data(
    ctx: PartyContext,
    data: Any,
    rows: Sequence[int],
    sizes: Sequence[int],
    n_classes: int,
    sectype: type,
    *,
    owner_tables: bool = False,
    sample_rate: float | None = None,
) -> tuple[Any, Any, OwnerTables | None]:
    """The training input of a tree-opening protocol: ``(D, C, None)`` or ``(None, None, tables)``.

    By default every owner's one-hot rows are shared (:func:`share_training_data`,
    real widths). With ``owner_tables=True`` nothing is shared yet: this owner's
    rows, checked against the announced ``rows`` (:func:`load_announced_rows`), become
    an :class:`OwnerTables` (tables of public paths); ``sample_rate`` is then ignored
    (the caller refuses it: a secret subsample cannot be counted in the clear).
    """
    if not owner_tables:
        D, C = await share_training_data(
            ctx, data, rows, sizes, n_classes, sectype, sample_rate=sample_rate
        )
        return D, C, None
    _, codes, y = load_announced_rows(ctx, data, rows, len(sizes))
    if codes.size and ((codes < 0).any() or (codes >= np.asarray(sizes, dtype=np.int64)).any()):
        raise InvalidParameterError(
            "a code lies outside its attribute's domain (the schema's sizes)."
        )
    if y.size and ((y < 0).any() or (y >= n_classes).any()):
        raise InvalidParameterError(f"a class code lies outside [0, {n_classes}).")
    return None, None, OwnerTables(codes, y, sizes, n_classes, sectype)


async def share_sorted_table(
    ctx: PartyContext,
    data: Any,
    rows: Sequence[int],
    sizes: Sequence[int],
    n_classes: int,
    depth: int,
    sectype: type,
) -> tuple[Engine, SortedTable | None, Any]:
    """Every owner's rows shared in the vector engine, as a :class:`SortedTable` for ``depth`` levels.

    Each owner one-hot encodes its rows (real widths) and its classes and inputs
    them (App. C.1: the servers hold shares of the stacked encodings, nothing
    else); the servers multiply them into the (attribute value, class) columns
    of the table. Returns the engine, the table (None for ``depth = 0``) and,
    for ``depth = 0``, the root's class counts as an MPyC array (else None).
    """
    m = len(sizes)
    rows, codes, y = load_announced_rows(ctx, data, rows, m)
    if codes.size and ((codes < 0).any() or (codes >= np.asarray(sizes, dtype=np.int64)).any()):
        raise InvalidParameterError(
            "a code lies outside its attribute's domain (the schema's sizes)."
        )
    if y.size and ((y < 0).any() or (y >= n_classes).any()):
        raise InvalidParameterError(f"a class code lies outside [0, {n_classes}).")
    eng = Engine()
    S = sum(int(s) for s in sizes)
    u = int(n_classes)
    local = np.hstack([flat_one_hot(codes, sizes), one_hot_target(y, u, dtype=np.int64)])
    blocks = []
    for owner, count in enumerate(rows):
        mine = F.encode(local) if owner == ctx.pid else None
        blocks.append(await eng.input(mine, owner, (count, S + u)))
    stacked = np.vstack(blocks) if blocks else np.zeros((0, S + u), dtype=np.uint64)
    n = stacked.shape[0]
    if depth == 0:
        totals = F.sum(stacked[:, S:], axis=0).reshape(1, u)
        root = await eng.to_mpyc(totals, sectype, lower=0, upper=n, label="root class counts")
        return eng, None, root.reshape(1, u)
    onehot = await eng.mul(stacked[:, :S, None], stacked[:, None, S:])  # (n, S, u)
    return eng, SortedTable(eng, onehot.reshape(n, S * u), sizes, u, depth), None


def sorted_table_fits(
    n_rows: int,
    numbers: SecureNumbers,
    n_candidates: int,
    *,
    n_classes: int,
    parties: int,
    **run: Any,
) -> bool:
    """Whether the engine's comparisons hold the run's widest key with at least 30 masking bits.

    The widest key is a noisy-max key, (n + 2 bound + 1) 2**k with k the rank bits of
    the candidates of a split (``n_candidates`` attributes) or of a leaf
    (``n_classes`` classes), or the exact split's (n + 2) m + m; the masking room also
    shrinks with the number of ``parties`` (:func:`privet.mpc.vector.comparison_kappa`).
    """
    from privet.mpc.vector import comparison_kappa

    split_mech, leaf_mech = numbers.mechanisms(
        run.get("leaf", "laplace"), run.get("split_epsilon"), run["leaf_epsilon"]
    )
    bound = max(int(getattr(m, "noise_bound", 0)) for m in (split_mech, leaf_mech) if m)
    k = max(1, math.ceil(math.log2(max(n_candidates, n_classes) + 1)))
    widest = max((n_rows + 2 * bound + 1) << k, (n_rows + 2) * n_candidates + n_candidates)
    try:
        comparison_kappa(widest.bit_length() + 1, parties)
    except InvalidParameterError:
        return False
    return True


def use_sorted_table(
    data_path: str,
    *,
    mpc_noise: str,
    depth: int,
    owner_tables: bool = False,
    sample_rate: float | None = None,
    fits: bool = True,
) -> bool:
    """Whether a learner's run takes the sorted-table path (``data_path`` "auto", "sorted", "partition").

    "auto" takes it where it applies: the discrete samplers, depth >= 1, no owner
    tables, no secret subsample, and keys narrow enough for the engine's
    comparisons (``fits``, :func:`sorted_table_fits`). "sorted" where it does not
    apply is refused here, on the host, before anything is launched or charged.
    """
    applies = mpc_noise == "discrete" and depth >= 1 and not owner_tables and sample_rate is None
    if data_path == "sorted" and not (applies and fits):
        raise InvalidParameterError(
            "data_path='sorted' needs the discrete samplers (noise='discrete'), depth >= 1, "
            "no owner tables, no secret subsample, and keys below 2**25 (rows plus twice the "
            "noise bound, times the candidates' rank bits); use data_path='partition' or 'auto'."
        )
    return data_path == "sorted" or (data_path == "auto" and applies and fits)


class RevealLog:
    """Records every opening (label, shape, entry) of this party: the audit trail.

    Use it as a context manager around a program's protocol: it records until
    the block exits (on every path); ``events`` then holds the log.
    """

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._remove = add_reveal_hook(self._record)

    def _record(self, event: Any) -> None:
        entry = event.entry
        self.events.append(
            {
                "label": event.label,
                "shape": list(event.shape),
                "entry": None if entry is None else type(entry).__name__,
                "entry_repr": None if entry is None else repr(entry),
            }
        )

    def __enter__(self) -> RevealLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self._remove()


#: Secure-integer lengths tried, smallest first, when the host sizes a run.
BIT_LENGTHS = (32, 40, 48, 56, 64, 80, 96, 128)


def check_run_sizes(
    n_rows: int,
    numbers: SecureNumbers | None = None,
    *,
    split_epsilon: float | None,
    leaf_epsilon: float,
    leaf: str = "laplace",
    oblivious: bool = False,
    n_attributes: int | None = None,
) -> None:
    """Every range check a tree run makes on its secure types, done from public sizes.

    The parties make the same checks (a party must not trust the host), but the
    host calls this before launch, so that a run that cannot fit is refused
    before anything is opened (and so before anything is charged). Raises
    :class:`~privet.errors.InvalidParameterError` naming what overflows.
    """
    numbers = numbers if numbers is not None else SecureNumbers()
    split_mech, leaf_mech = numbers.mechanisms(leaf, split_epsilon, leaf_epsilon)
    sectype = leaf_mech.sectype
    check_range("the class counts", n_rows + 1, sectype)
    bounds = [m.noise_bound for m in (split_mech, leaf_mech) if hasattr(m, "noise_bound")]
    if numbers.mpc_noise == "discrete" and bounds:
        check_range("the noisy-max keys", n_rows + 2 * max(bounds) + 2, sectype)
    if oblivious and split_mech is not None:
        split_penalty(split_mech, n_rows)
    if oblivious and split_mech is None and n_attributes is not None:  # the exact split's keys
        m = int(n_attributes)
        check_range("the split keys (n + 1) * m + m", (n_rows + 1) * m + m, sectype)


def choose_bit_length(n_rows: int, numbers: SecureNumbers | None = None, **run: Any) -> int:
    """The smallest of :data:`BIT_LENGTHS` for which :func:`check_run_sizes` passes.

    ``numbers``' own ``bit_length`` is ignored. Comparisons cost about one secret
    random bit per bit of length, so the smallest length that holds the counts
    and the noise is the fastest run.
    """
    numbers = numbers if numbers is not None else SecureNumbers()
    last: InvalidParameterError | None = None
    for bits in BIT_LENGTHS:
        try:
            check_run_sizes(n_rows, numbers.replace(bit_length=bits), **run)
        except InvalidParameterError as exc:
            last = exc
            continue
        return bits
    raise InvalidParameterError(
        f"No secure-integer length up to {BIT_LENGTHS[-1]} bits holds this run ({n_rows} rows, "
        f"split epsilon {run.get('split_epsilon')}, leaf epsilon {run.get('leaf_epsilon')}): "
        f"{last} Use a larger epsilon (the noise grows as 1/epsilon) or fewer levels."
    )


def sized_numbers(
    accounting: NoiseAccounting, relation: NeighbouringRelation, n_rows: int, **run: Any
) -> SecureNumbers:
    """A learner's run format: its accounting's samplers and their form (monotone
    report-noisy-max), the relation's leaf sensitivity, and the smallest bit length
    that holds the run (:func:`choose_bit_length`; raises before launch when none does)."""
    numbers = SecureNumbers(
        laplace_sensitivity=laplace_sensitivity(relation),
        mpc_noise=accounting.mpc_noise,
        security_bits=accounting.security_bits,
        monotone=accounting.monotone,
    )
    return numbers.replace(bit_length=choose_bit_length(n_rows, numbers, **run))
