"""Party programs of ODP+FMPC-ID3 (seed 000, Alg. 1-4): training and oblivious prediction."""

from __future__ import annotations

import pickle
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from privet.data import one_hot
from privet.errors import InvalidParameterError
from privet.learners._protocols.noise import VectorNoise, make_noise
from privet.learners._protocols.numbers import SecureNumbers
from privet.learners._protocols.programs import (
    RevealLog,
    share_sorted_table,
    share_training_data,
)
from privet.learners.oblivious_id3.protocol import (
    SecretTree,
    export_shares,
    import_shares,
    oblivious_id3,
    oblivious_id3_sorted,
    oblivious_predict,
    oblivious_predict_sorted,
    reveal_predictions,
)
from privet.mpc import field61 as F
from privet.mpc.fixedpoint import secfxp_type
from privet.mpc.party import PartyContext
from privet.mpc.sharing import share_array
from privet.mpc.vector import Engine


async def train_oblivious_id3(
    ctx: PartyContext,
    data: Any = None,
    rows: Sequence[int] = (),
    sizes: Sequence[int] = (),
    n_classes: int = 2,
    depth: int = 3,
    width: int | None = None,
    split: str = "exact",
    split_epsilon: float | None = None,
    leaf_epsilon: float = 1.0,
    leaf: str = "laplace",
    sample_rate: float | None = None,
    model_out: str | None = None,
    sorted_table: bool = False,
    _testing_noise: int | None = None,
    **numbers: Any,
) -> dict[str, Any]:
    """ODP+FMPC-ID3 (Alg. 1): train the secret tree; return (or store) this party's shares.

    ``sorted_table=True``: the outsourced rows are kept secretly sorted by node in the
    vector engine and every step runs there
    (:func:`~privet.learners.oblivious_id3.protocol.oblivious_id3_sorted`): the same
    secret tree at a cost linear in the rows; discrete samplers only, depth >= 1,
    no secret subsample.

    ``numbers``: the keys of a :class:`~privet.learners._protocols.numbers.SecureNumbers`.
    With ``model_out`` the shares are written (pickled) to that path of this
    party and not returned: each server keeps its own.
    """
    noise = make_noise(_testing_noise)
    width = max(int(s) for s in sizes) if width is None else int(width)
    split_mech, leaf_mech = SecureNumbers.from_args(numbers).mechanisms(
        leaf, split_epsilon if split == "exponential" else None, leaf_epsilon
    )
    fmt = SecureNumbers.from_args(numbers)
    if sorted_table and (sample_rate is not None or depth < 1 or fmt.mpc_noise != "discrete"):
        raise InvalidParameterError(
            "sorted_table=True needs depth >= 1, mpc_noise='discrete' and no secret subsample "
            "(sample_rate); use the partition-vector path for those."
        )
    if sorted_table:
        with RevealLog() as log:
            eng, table, _ = await share_sorted_table(
                ctx, data, rows, sizes, n_classes, depth, leaf_mech.sectype
            )
            if not noise.testing:
                noise = VectorNoise(eng)
            model = await oblivious_id3_sorted(
                table,
                sum(int(r) for r in rows),
                depth,
                sectype=leaf_mech.sectype,
                split=split,
                split_mechanism=split_mech,
                leaf_mechanism=leaf_mech,
                leaf=leaf,
                noise=noise,
            )
            shares = await export_shares(model)
        return _finish(shares, log, noise, model_out)
    with RevealLog() as log:
        D, C = await share_training_data(
            ctx,
            data,
            rows,
            sizes,
            n_classes,
            leaf_mech.sectype,
            width=width,
            sample_rate=sample_rate,
        )
        model = await oblivious_id3(
            D,
            C,
            depth,
            split=split,
            split_mechanism=split_mech,
            leaf_mechanism=leaf_mech,
            leaf=leaf,
            noise=noise,
        )
        shares = await export_shares(model)
    return _finish(shares, log, noise, model_out)


def _finish(shares: dict[str, Any], log: RevealLog, noise: Any, model_out: str | None) -> dict:
    """A training program's result: this party's shares (or where they are stored), its log."""
    shares["testing_noise"] = noise.testing
    if model_out is not None:
        with open(model_out, "wb") as fh:
            pickle.dump(shares, fh, protocol=pickle.HIGHEST_PROTOCOL)
        shares = {"stored": model_out}
    return {"shares": shares, "reveals": log.events, "testing_noise": noise.testing}


def share_queries(
    ctx: PartyContext,
    queries: Any,
    n_queries: int,
    sizes: Sequence[int],
    querier: int,
    tree: SecretTree,
    sectype: type,
) -> Any:
    """The querier's codes as secret one-hot queries ``(n_queries, m, w)`` (Alg. 4's input).

    ``queries`` is an array of codes ``(n_queries, m)`` or the path of an
    ``.npz`` with ``codes`` at the querier, None at the other parties; the
    number of queries is public.
    """
    m, w = tree.n_attributes, tree.width
    local = None
    if ctx.pid == querier:
        codes = queries
        if isinstance(queries, str):
            with np.load(Path(queries)) as f:
                codes = f["codes"]
        codes = np.asarray(codes, dtype=np.int64).reshape(-1, m)
        if codes.shape[0] != n_queries:
            raise InvalidParameterError(
                f"the querier holds {codes.shape[0]} queries but n_queries={n_queries}."
            )
        local = one_hot(codes, list(sizes), width=w, dtype=np.int64)
    return share_array(local, sectype, owner=querier, shape=(n_queries, m, w))


async def predict_oblivious_id3(
    ctx: PartyContext,
    model: Any = None,
    queries: Any = None,
    n_queries: int = 0,
    sizes: Sequence[int] = (),
    querier: int = 0,
    method: str = "sorted",
) -> dict[str, Any]:
    """Algorithm 4: the querier inputs one-hot queries, only it learns the labels.

    ``method="sorted"`` (default): path evaluation on a secretly sorted table in the
    vector engine (:func:`~privet.learners.oblivious_id3.protocol.oblivious_predict_sorted`),
    whose cost does not grow with the number of leaves; ``"leaves"``: Alg. 4
    unrolled, every leaf for every query (MPyC). The same labels.

    ``model`` is this party's shares (a dict from :func:`train_oblivious_id3`
    or the path of its pickle); ``queries`` the querier's codes (n_queries, m)
    (a path to ``.npz`` with ``codes``, an array, or None in the other parties).
    """
    if isinstance(model, str):
        with open(model, "rb") as fh:
            model = pickle.load(fh)
    if method not in ("sorted", "leaves"):
        raise InvalidParameterError(f"method must be 'sorted' or 'leaves', got {method!r}.")
    if method == "sorted":
        return await predict_sorted(ctx, model, queries, n_queries, sizes, querier)
    return await predict_secret_trees(
        ctx,
        [model],
        queries,
        n_queries,
        sizes,
        querier,
        evaluate=lambda trees, Q: oblivious_predict(trees[0], Q),
        label="ODP+FMPC-ID3: predicted labels (querier only)",
    )


async def predict_secret_trees(
    ctx: PartyContext,
    shares: Sequence[dict[str, Any]],
    queries: Any,
    n_queries: int,
    sizes: Sequence[int],
    querier: int,
    *,
    evaluate: Callable[[list[SecretTree], Any], Awaitable[Any]],
    label: str,
) -> dict[str, Any]:
    """The body of a prediction program: only the querier learns ``evaluate``'s labels.

    ``shares`` is this party's shares of each secret tree (the first one's
    fixed-point type is theirs); the querier inputs its one-hot queries
    (:func:`share_queries`), ``evaluate(trees, Q)`` gives the secret one-hot
    labels, which are opened to the querier alone under ``label``. Returns the
    labels (None at the other parties) and this party's log of openings.
    """
    sectype = secfxp_type(int(shares[0]["bit_length"]), int(shares[0]["frac_length"]))
    trees = [import_shares(s, sectype) for s in shares]
    with RevealLog() as log:
        Q = share_queries(ctx, queries, n_queries, sizes, querier, trees[0], sectype)
        onehot = await evaluate(trees, Q)
        labels = await reveal_predictions(onehot, querier=querier, label=label)
    return {"labels": labels, "reveals": log.events}


async def predict_sorted(
    ctx: PartyContext,
    shares: dict[str, Any],
    queries: Any,
    n_queries: int,
    sizes: Sequence[int],
    querier: int,
) -> dict[str, Any]:
    """Algorithm 4 by path evaluation in the vector engine; only the querier learns the labels."""
    sectype = secfxp_type(int(shares["bit_length"]), int(shares["frac_length"]))
    tree = import_shares(shares, sectype)
    m, w = tree.n_attributes, tree.width
    eng = Engine()
    with RevealLog() as log:
        local = None
        if ctx.pid == querier:
            codes = queries
            if isinstance(queries, str):
                with np.load(Path(queries)) as f:
                    codes = f["codes"]
            codes = np.asarray(codes, dtype=np.int64).reshape(-1, m)
            if codes.shape[0] != n_queries:
                raise InvalidParameterError(
                    f"the querier holds {codes.shape[0]} queries but n_queries={n_queries}."
                )
            if codes.size and (
                (codes < 0).any() or (codes >= np.asarray(sizes, dtype=np.int64)).any()
            ):
                raise InvalidParameterError(
                    "a query code lies outside its attribute's domain (the schema's sizes)."
                )
            local = F.encode(one_hot(codes, list(sizes), width=w, dtype=np.int64))
        Q = await eng.input(local, querier, (int(n_queries), m, w))
        labels = await oblivious_predict_sorted(
            eng, tree, Q, querier=querier, label="ODP+FMPC-ID3: predicted labels (querier only)"
        )
    return {"labels": None if labels is None else labels, "reveals": log.events}
