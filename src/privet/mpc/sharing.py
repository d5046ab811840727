"""Secret sharing of the data owners' inputs, and the one way to open values.

Input
-----
In seed 000's setting the data owners secret-share their data with the
computing servers. In MPyC every input comes from a party, so a data owner
is a party here (``owners``, by default every party). The owners' arrays are
input with MPyC's numpy-backed secure arrays (``mpc.input(secarray, senders=i)``)
and concatenated:

* :func:`share_horizontal`: each owner holds rows (same columns, disjoint
  individuals); the result stacks the owners' rows in owner order;
* :func:`share_vertical`: each owner holds columns of the same individuals in
  the same order; the result puts the owners' columns side by side.

Shapes are public: every party must know each owner's array shape to receive
its shares. Pass ``shapes`` when they are known, otherwise they are exchanged in the clear by :func:`exchange_shapes_public`
(the only leak: the number of rows or columns each owner holds).

Output
------
:func:`reveal` is the single place where privet opens a secret-shared value.
It calls the registered reveal hooks (where a ledger charges the release)
before anything is opened and logs each opening at debug level. A hook that
raises stops the opening in that party; hooks must therefore decide the same
way in every party (they see the same public arguments), otherwise the other
parties time out waiting for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError
from privet.mpc._runtime import get_runtime

mpc = get_runtime()
logger = logging.getLogger(__name__)

SecureArray = Any


# ------------------------------------------------------------------------ reveal


@dataclass(frozen=True, slots=True)
class RevealEvent:
    """What is about to be opened: passed to every reveal hook.

    Attributes
    ----------
    label : str
        Human-readable name of the released value.
    entry : object or None
        The mechanism (or ledger entry) that justifies the release, e.g. a
        :class:`~privet.mpc.mechanisms.SecureLaplace`; ``None`` for values that
        are public by construction.
    shape : tuple of int
        Shape of the opened array (``()`` for a scalar).
    party : int
        Index of the party calling.
    """

    label: str
    entry: object | None
    shape: tuple[int, ...]
    party: int


RevealHook = Callable[[RevealEvent], None]
_hooks: list[RevealHook] = []


def add_reveal_hook(hook: RevealHook) -> Callable[[], None]:
    """Register ``hook(event)`` to run before every :func:`reveal`.

    Returns
    -------
    callable
        Call it to remove the hook again.
    """
    _hooks.append(hook)

    def remove() -> None:
        if hook in _hooks:
            _hooks.remove(hook)

    return remove


def notify_reveal(label: str, entry: object | None, shape: tuple[int, ...]) -> None:
    """Run the reveal hooks and the debug log for an opening about to happen.

    :func:`reveal` calls it; so does the vector engine (:mod:`privet.mpc.vector`),
    whose openings do not go through MPyC's ``output``, so that every opening of a
    party reaches the same hooks (and a program's :class:`RevealLog`) in order.
    """
    event = RevealEvent(label=label, entry=entry, shape=tuple(shape), party=mpc.pid)
    for hook in list(_hooks):
        hook(event)
    logger.debug("party %s opens %r, shape %s (entry %r)", mpc.pid, label, shape, entry)


async def reveal(
    x: Any,
    *,
    label: str,
    entry: object | None = None,
    receivers: Sequence[int] | None = None,
    raw: bool = False,
) -> Any:
    """Open secret ``x`` to ``receivers`` (default: all parties).

    Parameters
    ----------
    x : secure object, secure array, or list of secure objects
        What to open.
    label : str
        Name of the released value, for hooks and the debug log.
    entry : object or None, default=None
        The mechanism or ledger entry that pays for this release.
    receivers : sequence of int or None, default=None
        Parties that learn the value; the others get ``None``.
    raw : bool, default=False
        Return MPyC's field elements unconverted (exact integers for fixed-point
        values too: ``value * 2**frac_length``).

    Returns
    -------
    numpy.ndarray, float, int or list
        The opened value, as MPyC's ``output`` gives it.
    """
    notify_reveal(label, entry, tuple(getattr(x, "shape", ())))
    rec = None if receivers is None else list(receivers)
    return await mpc.output(x, receivers=rec, raw=raw)


async def reveal_onehot_index(
    onehot: SecureArray, *, label: str, entry: object | None = None
) -> np.ndarray:
    """Open only the index of the 1 in each secret one-hot vector (last axis) of ``onehot``.

    The index is summed in secret (``sum_i i * onehot_i``) and opened with
    :func:`reveal`; the result is an int array of ``onehot``'s shape without its
    last axis (0-d for a single vector).
    """
    d = onehot.shape[-1]
    index = mpc.np_sum(onehot * np.arange(d, dtype=np.int64), axis=len(onehot.shape) - 1)
    opened = await reveal(index, label=label, entry=entry)
    return np.rint(np.asarray(opened, dtype=float)).astype(np.int64)


# ------------------------------------------------------------------------- input


def _sectype_bounds(sectype: type) -> tuple[float, float]:
    f = getattr(sectype, "frac_length", 0)
    half = 2.0 ** (sectype.bit_length - 1 - f)
    return -half, half


def _check_sectype(sectype: Any) -> None:
    if not (
        isinstance(sectype, type) and issubclass(sectype, (mpc.SecureInteger, mpc.SecureFixedPoint))
    ):
        raise InvalidParameterError(
            f"sectype must be an MPyC secure integer or fixed-point type (mpc.SecInt(l), "
            f"privet.mpc.secfxp_type(l)), got {sectype!r}."
        )


def _as_input_array(local: Any, sectype: type, name: str) -> np.ndarray:
    arr = np.asarray(local)
    is_fxp = issubclass(sectype, mpc.SecureFixedPoint)
    if arr.dtype == bool:
        arr = arr.astype(np.int64)
    if np.issubdtype(arr.dtype, np.integer):
        arr = arr.astype(np.int64)
    elif np.issubdtype(arr.dtype, np.floating) and is_fxp:
        if not np.all(np.isfinite(arr)):
            raise InvalidParameterError(f"{name} contains NaN or infinite values; remove them.")
    else:
        kind = "integer, 0/1 or float" if is_fxp else "integer or 0/1"
        raise InvalidParameterError(
            f"{name} must be a numpy array of {kind} values for {sectype.__name__}, "
            f"got dtype {arr.dtype}; encode categories as integers or one-hot 0/1 first."
        )
    lo, hi = _sectype_bounds(sectype)
    if arr.size and (arr.min() < lo or arr.max() >= hi):
        raise InvalidParameterError(
            f"{name} has values in [{arr.min()}, {arr.max()}], outside the range "
            f"[{lo:g}, {hi:g}) of {sectype.__name__}; use a larger bit_length."
        )
    return arr


def share_array(
    local: Any, sectype: type, *, owner: int = 0, shape: Sequence[int] | None = None
) -> SecureArray:
    """Secret-share one owner's numpy array with all parties.

    Parameters
    ----------
    local : array-like or None
        The owner's data (integer, bool, or float for fixed point); ignored in
        the other parties (pass ``None`` there).
    sectype : type
        ``mpc.SecInt(l)`` or a fixed-point type from :func:`privet.mpc.secfxp_type`.
    owner : int, default=0
        Party that inputs the data.
    shape : sequence of int or None, default=None
        The public shape, required in parties other than the owner (the owner
        may omit it).

    Returns
    -------
    secure array
        ``sectype.array`` placeholder holding the shares.
    """
    _check_sectype(sectype)
    m = len(mpc.parties)
    if not 0 <= owner < m:
        raise InvalidParameterError(f"owner must be a party index in [0, {m}), got {owner!r}.")
    if mpc.pid == owner:
        arr = _as_input_array(local, sectype, "local")
        if shape is not None and tuple(shape) != arr.shape:
            raise InvalidParameterError(
                f"local has shape {arr.shape} but shape={tuple(shape)} was announced; "
                "every party must pass the same shape."
            )
    else:
        if shape is None:
            raise InvalidParameterError(
                f"party {mpc.pid} is not the owner ({owner}) and needs the public shape "
                "of the owner's array: pass shape=..."
            )
        arr = np.zeros(tuple(shape), dtype=np.int64)
    return mpc.input(sectype.array(arr), senders=owner)


async def exchange_shapes_public(local: Any, owners: Sequence[int]) -> list[tuple[int, ...] | None]:
    """Tell every party the shape of each owner's array, in the clear.

    This reveals the number of rows and columns each owner holds, nothing else.

    Returns
    -------
    list
        ``shapes[i]`` for party i: its array's shape if i is an owner, else ``None``.
    """
    mine = tuple(np.shape(local)) if (mpc.pid in owners and local is not None) else None
    logger.debug("party %s publishes its input shape %s", mpc.pid, mine)
    shapes = await mpc.transfer(mine)
    return [tuple(s) if s is not None else None for s in shapes]


def _owners(owners: Sequence[int] | None) -> list[int]:
    m = len(mpc.parties)
    result = list(range(m)) if owners is None else [int(o) for o in owners]
    if not result or len(set(result)) != len(result) or not all(0 <= o < m for o in result):
        raise InvalidParameterError(
            f"owners must be distinct party indices in [0, {m}), got {owners!r}."
        )
    return result


async def _owner_shapes(
    local: Any, owner_list: list[int], shapes: Sequence[Sequence[int]] | None
) -> list[tuple[int, ...]]:
    if shapes is None:
        everyone = await exchange_shapes_public(local, owner_list)
        found = [everyone[o] for o in owner_list]
        missing = [o for o, s in zip(owner_list, found, strict=True) if s is None]
        if missing:
            raise InvalidParameterError(
                f"owners {missing} passed no data (local=None); give every owner an array "
                "(possibly empty)."
            )
        return [tuple(s) for s in found if s is not None]
    if len(shapes) != len(owner_list):
        raise InvalidParameterError(
            f"shapes has {len(shapes)} entries for {len(owner_list)} owners; give one public "
            "shape per owner, in owner order."
        )
    return [tuple(int(n) for n in s) for s in shapes]


async def share_horizontal(
    local: Any,
    sectype: type,
    *,
    owners: Sequence[int] | None = None,
    shapes: Sequence[Sequence[int]] | None = None,
) -> SecureArray:
    """Share horizontally partitioned data: each owner inputs its rows.

    Parameters
    ----------
    local : array-like or None
        This party's rows, shape (n_i,) or (n_i, d); ``None`` in non-owners.
    sectype : type
        Secure integer or fixed-point type.
    owners : sequence of int or None, default=None
        Parties that hold data, in stacking order (default: all parties).
    shapes : sequence of shapes or None, default=None
        Public shape of each owner's array (same order as ``owners``). If
        ``None`` the shapes are exchanged in the clear with
        :func:`exchange_shapes_public` (one extra communication round).

    Returns
    -------
    secure array
        All owners' rows stacked in owner order: shape (sum n_i,) or (sum n_i, d).
    """
    _check_sectype(sectype)
    owner_list = _owners(owners)
    owner_shapes = await _owner_shapes(local, owner_list, shapes)
    if len({s[1:] for s in owner_shapes}) != 1:
        raise InvalidParameterError(
            f"horizontal partition needs the same columns at every owner, got shapes "
            f"{dict(zip(owner_list, owner_shapes, strict=True))}; align the schemas first."
        )
    return _stack_owners(local, sectype, owner_list, owner_shapes, axis=0, what="rows")


async def share_vertical(
    local: Any,
    sectype: type,
    *,
    owners: Sequence[int] | None = None,
    shapes: Sequence[Sequence[int]] | None = None,
) -> SecureArray:
    """Share vertically partitioned data: each owner inputs its columns.

    Parameters
    ----------
    local : array-like or None
        This party's columns, shape (n, d_i) (a 1-D array is one column);
        ``None`` in non-owners.
    sectype : type
        Secure integer or fixed-point type.
    owners : sequence of int or None, default=None
        Parties that hold columns, in column order (default: all parties).
    shapes : sequence of shapes or None, default=None
        Public (n, d_i) per owner; if ``None`` exchanged in the clear.

    Returns
    -------
    secure array
        Shape (n, sum d_i): the owners' columns side by side in owner order.
    """
    _check_sectype(sectype)
    owner_list = _owners(owners)
    if local is not None and np.ndim(local) == 1:
        local = np.asarray(local).reshape(-1, 1)
    owner_shapes = await _owner_shapes(local, owner_list, shapes)
    owner_shapes = [s if len(s) == 2 else (s[0], 1) if len(s) == 1 else s for s in owner_shapes]
    if len({s[0] for s in owner_shapes}) != 1 or any(len(s) != 2 for s in owner_shapes):
        raise InvalidParameterError(
            "vertical partition needs the same number of rows (the same individuals in the "
            f"same order) at every owner, got shapes "
            f"{dict(zip(owner_list, owner_shapes, strict=True))}; align the rows first."
        )
    return _stack_owners(local, sectype, owner_list, owner_shapes, axis=1, what="columns")


def _stack_owners(
    local: Any,
    sectype: type,
    owners: list[int],
    shapes: list[tuple[int, ...]],
    *,
    axis: int,
    what: str,
) -> SecureArray:
    """Each owner shares its block; the blocks joined along ``axis`` in owner order."""
    parts = [
        share_array(local if mpc.pid == o else None, sectype, owner=o, shape=s)
        for o, s in zip(owners, shapes, strict=True)
        if s[axis] > 0
    ]
    if not parts:
        raise InvalidParameterError(f"every owner has 0 {what}: nothing to share.")
    if len(parts) == 1:
        return parts[0]
    return mpc.np_concatenate(tuple(parts), axis=axis)


def to_fixed_point(x: SecureArray, sectype: type) -> SecureArray:
    """Convert a secure integer array to the secure fixed-point type ``sectype``.

    Uses MPyC's ``convert`` element by element (MPyC 0.11 has no array
    version), which costs one conversion protocol per entry.
    """
    if isinstance(x, mpc.SecureFixedPointArray):
        if type(x).sectype is not sectype:
            raise InvalidParameterError(
                f"x is a {type(x).__name__} array but {sectype.__name__} is needed; share the "
                "data with that type."
            )
        return x
    if not isinstance(x, mpc.SecureIntegerArray):
        raise InvalidParameterError(
            f"expected an MPyC secure integer or fixed-point array, got {type(x).__name__}."
        )
    shape = x.shape
    converted = mpc.convert(mpc.np_tolist(x.reshape(-1)), sectype)
    return mpc.np_fromlist(converted).reshape(shape)
