"""Forests of secret ODP+FMPC-ID3 trees (seed 000, App. D): one oblivious majority vote.

Each tree of the forest is trained by ODP+FMPC-ID3 (Algorithm 1, see
:mod:`privet.learners.oblivious_id3.protocol`) on its own subset of the records
and stays secret-shared (a :class:`~privet.learners.oblivious_id3.host.SharedModel`
per tree). Prediction is one MPC run over all ``k`` secret trees:

1. the querier (a party) inputs its one-hot queries once, as secret shares;
2. every tree is evaluated by Algorithm 4 (:func:`~privet.learners.oblivious_id3.protocol.oblivious_predict`), giving a secret one-hot vote per tree and
   query;
3. the ``k`` votes are summed in secret and the winning class is chosen by a
   secure argmax whose ties go to the *lowest* class index
   (:func:`~privet.learners._protocols.common.first_max_keys`), the rule of the
   plaintext forest (``numpy.argmax`` of the vote counts);
4. only that class index is opened, to the querier only. No tree's label and
   no vote count is opened.

The paper (App. D) extends its framework to forests and does not spell out the
vote; the secret majority vote is privet's, with the tie rule of the
reference forest (:class:`privet.learners.DPRandomForestClassifier`).

:func:`predict_oblivious_forest` is the party program (run with
:func:`privet.mpc.launch` or :func:`privet.mpc.run_local`);
:func:`run_oblivious_forest_predict` the host-side runner, which gives every
party its own shares of every tree, as :func:`~privet.learners.oblivious_id3.host.
run_oblivious_predict` does for one tree.
"""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privet.errors import InvalidParameterError
from privet.learners._protocols.common import (
    check_range,
    first_max_keys,
)
from privet.learners._protocols.host import (
    PredictRun,
)
from privet.learners.oblivious_id3.host import SharedModel, launch_prediction
from privet.learners.oblivious_id3.program import predict_secret_trees
from privet.learners.oblivious_id3.protocol import (
    SecretTree,
    oblivious_predict,
)
from privet.mpc._runtime import get_runtime
from privet.mpc.party import PartyContext

mpc = get_runtime()


PROGRAM = "privet.learners.forest.protocol:predict_oblivious_forest"


REVEAL_LABEL = "forest of ODP+FMPC-ID3: majority labels (querier only)"


#: The public shape every tree of one forest must share.
_SHAPE_KEYS = ("n_parties", "threshold", "bit_length", "frac_length", "width", "n_attributes")


def vote_keys_bound(n_trees: int, n_classes: int) -> int:
    """Largest key of the secret argmax: ``k * u + u`` (votes <= k, see ``first_max_keys``)."""
    return int(n_trees) * int(n_classes) + int(n_classes)


@mpc.coroutine
async def oblivious_majority(trees: Sequence[SecretTree], Q: Any) -> asyncio.Future:
    """Secret majority vote of ``k`` secret trees on secret queries (App. D with Alg. 4).

    Parameters
    ----------
    trees : sequence of SecretTree
        The forest's secret trees, all of the same width and attributes.
    Q : secure array, shape (q, m, w)
        Secret one-hot queries padded to w (dummy columns zero).

    Returns
    -------
    secure array, shape (q, u)
        Each query's one-hot majority label, still secret. Ties between classes
        with the same number of votes go to the lowest class index.

    Notes
    -----
    The k tree evaluations (Algorithm 4 each) are started together, so they
    run in the same communication rounds; the sum of their one-hot outputs is
    local, and the argmax costs one secure maximum over ``u`` keys per query.
    """
    if not trees:
        raise InvalidParameterError("a forest needs at least one tree.")
    u = trees[0].n_classes
    pending = [oblivious_predict(tree, Q) for tree in trees]  # Alg. 4 per tree, concurrently
    votes = None
    for future in pending:
        onehot = await future
        votes = onehot if votes is None else votes + onehot
    sectype = type(votes).sectype
    check_range("the forest's vote keys k * u + u", vote_keys_bound(len(trees), u), sectype)
    keys = first_max_keys(votes, np.ones(u, dtype=np.int64))  # ties: lowest class index
    label = mpc.np_argmax(keys, axis=1, arg_unary=True, arg_only=True)
    label.integral = True
    return label


def _load_models(models: Any) -> list[dict[str, Any]]:
    if isinstance(models, str):
        with open(models, "rb") as fh:
            models = pickle.load(fh)
    models = list(models or [])
    if not models:
        raise InvalidParameterError("predict_oblivious_forest needs the shares of >= 1 tree.")
    first = models[0]
    for i, share in enumerate(models[1:], start=1):
        diff = [k for k in (*_SHAPE_KEYS, "n_classes", "pid") if share[k] != first[k]]
        if diff:
            raise InvalidParameterError(
                f"tree {i} of the forest differs from tree 0 in {diff}: every tree must be "
                "trained by the same parties with the same schema and fixed-point type."
            )
    return models


async def predict_oblivious_forest(
    ctx: PartyContext,
    models: Any = None,
    queries: Any = None,
    n_queries: int = 0,
    sizes: Sequence[int] = (),
    querier: int = 0,
) -> dict[str, Any]:
    """Party program: the querier inputs one-hot queries, only it learns the majority labels.

    Parameters
    ----------
    ctx : PartyContext
    models : list of dict or str
        This party's shares of every tree (each from
        :func:`~privet.learners.oblivious_id3.program.train_oblivious_id3`), or the path
        of a pickle of that list.
    queries : array, str or None
        The querier's codes ``(n_queries, m)`` (an array or a path to ``.npz``
        with ``codes``); None in the other parties.
    n_queries : int
        Public number of queries.
    sizes : sequence of int
        Public domain sizes of the attributes.
    querier : int
        The party that inputs the queries and learns the labels.

    Returns
    -------
    dict
        ``labels``: class indices at the querier, None elsewhere; ``reveals``:
        this party's log of openings (one: the labels, to the querier).
    """
    return await predict_secret_trees(
        ctx,
        _load_models(models),
        queries,
        n_queries,
        sizes,
        querier,
        evaluate=oblivious_majority,
        label=REVEAL_LABEL,
    )


@dataclass(frozen=True)
class ForestPredictRun(PredictRun):
    """A :class:`~privet.learners._protocols.host.PredictRun` of a forest, with its reveal log.

    Attributes
    ----------
    labels : ndarray of int
        The majority class index of each query (what the querier learnt).
    querier : int
    stats : RunStats
    others_learnt : tuple
        What the other parties learnt (None each).
    reveals : tuple of dict
        The querier's log of openings during the run.
    n_trees : int
    """

    reveals: tuple[dict[str, Any], ...] = ()
    n_trees: int = 0


def run_oblivious_forest_predict(
    models: Sequence[SharedModel],
    query_codes: np.ndarray,
    sizes: Sequence[int],
    *,
    querier: int = 0,
    backend: str = "mpc",
    timeout: float = 60.0,
    run_timeout: float | None = None,
) -> ForestPredictRun:
    """Majority vote of secret trees on the querier's records, in one MPC run.

    Parameters
    ----------
    models : sequence of SharedModel
        The forest's trees, from :func:`~privet.learners.oblivious_id3.host.run_oblivious_id3`,
        all trained by the same parties (same number, same order): party i
        loads its own shares of every tree and nothing else.
    query_codes : ndarray of shape (q, m)
        The querier's records as integer codes.
    sizes : sequence of int
        Public domain sizes.
    querier : int, default=0
        The party that inputs the queries and alone learns the labels.
    backend : {"mpc", "local"}, default="mpc"
        Real party processes over TCP, or MPyC's one-party runtime in this
        process (only for models trained by one party).
    timeout, run_timeout : float
        As for :func:`privet.mpc.launch`.

    Returns
    -------
    ForestPredictRun
    """
    models = list(models)
    if not models:
        raise InvalidParameterError("run_oblivious_forest_predict needs at least one tree.")
    parties = models[0].n_parties
    if any(model.n_parties != parties for model in models):
        raise InvalidParameterError(
            f"the trees were trained by different numbers of parties "
            f"{[model.n_parties for model in models]}; a forest's trees share their parties."
        )
    shares = [[m.shares[i] for m in models] for i in range(parties)]  # party i: every tree
    args = (query_codes, sizes, querier, backend, timeout, run_timeout)
    result = launch_prediction(PROGRAM, "models", shares, *args)
    reveals = tuple(result.results[querier]["reveals"])
    return ForestPredictRun.from_result(result, querier, reveals=reveals, n_trees=len(models))
