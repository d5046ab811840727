"""The PLD accountant over a scope tree or a privacy plan.

Each scope's releases are summarised by a pair of privacy loss distributions
(:mod:`privet.ledger.pld`), composed with the same rules as the ledger's other
views (:mod:`privet.ledger.composition`), now on whole dominating pairs:

* ``single`` is the pair of the releases that see one record added to or removed
  from the scope: a *remove* PMF (the pair M(D), M(D - x)) and an *add* PMF
  (M(D), M(D + x)); ``double`` (replace-one only) is the pair when a replaced
  record leaves one part of a partition and its replacement enters another.
  Under replace-one every entry states its sensitivity for a changed record,
  which also bounds an added or removed one (the assumption of
  :mod:`~privet.ledger.composition`), and its curve is symmetric, so both of its
  PMFs are one.
* Charges in one scope compose by convolution, identical ones by repeated
  squaring (:func:`~privet.ledger.pld.self_compose`).
* A partition: a record lies in one part, so ``single`` is the
  :func:`~privet.ledger.pld.maximum` over the parts, direction by direction.
  Under replace-one, a replaced record x may leave part i (its remove pair) while
  its replacement enters part j != i (its add pair), so ``double`` is the maximum
  of every part's own ``double`` and, for each part i, of part i's remove PMF
  composed with the maximum of the other parts' add PMFs (and the reverse); past
  eight distinct parts, of the maximum over all parts composed with itself. A
  stable partition never splits a replaced pair.
* A Poisson subsample at rate q (add/remove): the remove PMF becomes (qP + (1-q)Q,
  Q), the add PMF (P, (1-q)P + qQ) (Zhu, Dong & Wang 2022, Thm. 11), applied to
  the whole subtree's pair. A sample of m of n without replacement (replace-one),
  q = m/n: the maximum of both forms, (qP + (1-q)Q, Q) and (P, (1-q)P + qQ), of the
  subtree's ``double`` (one pair of neighbours can meet either form in different
  samples, and the first dominates at alpha >= 1 only; found by review); its
  ``single`` (a record that leaves or enters the scope above it swaps places with
  another record anywhere in the sample) amplifies two single chains, as the other
  views do.

Every scope's pair is identified by a digest of its content (the multiset of
its entries and of its groups' digests), so identical subtrees (a forest's trees,
a DP-SGD run's batches, a decision tree's nodes) are composed once, and the
composition order (sorted by digest) never depends on the order of the charges:
a ledger reopened from its store reproduces the live ledger's figures to the bit.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from privet.ledger import pld
from privet.ledger.entries import Entry
from privet.ledger.pld import IDENTITY, NON_PRIVATE, LossPMF, PLDTooLargeError
from privet.ledger.relation import NeighbouringRelation

Direction = tuple[LossPMF, LossPMF]  # (remove, add)


@dataclass(frozen=True, slots=True)
class PLDPair:
    """(single, double) of a scope: each a (remove, add) pair of grid PMFs."""

    single: Direction
    double: Direction

    def nbytes(self) -> int:
        seen = {id(p): p for d in (self.single, self.double) for p in d}
        return sum(p.nbytes() for p in seen.values())


_ZERO_DIR: Direction = (IDENTITY, IDENTITY)
ZERO_PAIR = PLDPair(_ZERO_DIR, _ZERO_DIR)
EMPTY = b"empty"


def _digest(*parts: object) -> bytes:
    return hashlib.blake2b(repr(parts).encode(), digest_size=16).digest()


@functools.lru_cache(maxsize=8192)
def entry_digest(entry: Entry) -> bytes:
    """A digest of an entry's content (its stored form)."""
    return _digest("entry", json.dumps(entry.to_dict(), sort_keys=True))


@functools.lru_cache(maxsize=1024)
def entry_pmf(entry: Entry) -> LossPMF:
    """The grid PMF of one release (:meth:`Entry.privacy_curve`); an entry with no curve
    and no finite epsilon is a release in the clear."""
    curve = entry.privacy_curve()
    if curve is None:
        return NON_PRIVATE
    return curve.pmf()


@functools.lru_cache(maxsize=1024)
def approx_pmf(epsilon: float, delta: float) -> LossPMF:
    """The grid PMF of an (epsilon, delta) release (a reservation's rest)."""
    return pld.RandomisedResponse(epsilon, delta).pmf()


@dataclass(frozen=True, slots=True)
class Item:
    """Something composed sequentially in a scope: a release, or a group below it."""

    digest: bytes
    count: int = 1


class PLDComposer:
    """Composes content digests into PLD pairs, with a cache of the pairs by digest.

    A node's content is a sorted list of :class:`Item`; the composer is told how to
    build the pair of an item it has not seen (:meth:`remember`).
    """

    def __init__(self, relation: NeighbouringRelation, max_bytes: int = 256 << 20) -> None:
        self.relation = relation
        self.max_bytes = max_bytes
        self._pairs: OrderedDict[bytes, PLDPair] = OrderedDict()
        self._bytes = 0
        self._powers: dict[tuple[int, int], tuple[LossPMF, LossPMF]] = {}

    # ------------------------------------------------------------------ cache
    def get(self, digest: bytes) -> PLDPair | None:
        pair = self._pairs.get(digest)
        if pair is not None:
            self._pairs.move_to_end(digest)
        return pair

    def remember(self, digest: bytes, pair: PLDPair) -> PLDPair:
        if digest in self._pairs:
            return self._pairs[digest]
        self._pairs[digest] = pair
        self._bytes += pair.nbytes()
        while self._bytes > self.max_bytes and len(self._pairs) > 1:
            _, old = self._pairs.popitem(last=False)
            self._bytes -= old.nbytes()
        return pair

    # ------------------------------------------------------------------ leaves
    def release(self, pmf: LossPMF) -> PLDPair:
        d = (pmf, pmf)
        return PLDPair(d, d)

    def entry(self, entry: Entry) -> tuple[bytes, PLDPair]:
        digest = entry_digest(entry)
        pair = self.get(digest)
        if pair is None:
            pair = self.remember(digest, self.release(entry_pmf(entry)))
        return digest, pair

    def approx(self, epsilon: float, delta: float) -> tuple[bytes, PLDPair]:
        digest = _digest("approx", repr(epsilon), repr(delta))
        pair = self.get(digest)
        if pair is None:
            pair = self.remember(digest, self.release(approx_pmf(epsilon, delta)))
        return digest, pair

    # -------------------------------------------------------------- sequential
    def sequence(self, items: dict[bytes, tuple[PLDPair, int]]) -> tuple[bytes, PLDPair]:
        """The composition of ``items`` (digest -> (pair, count)) in one scope."""
        items = {d: v for d, v in items.items() if d != EMPTY and v[1] > 0}
        if not items:
            return EMPTY, ZERO_PAIR
        order = sorted(items)
        digest = _digest("seq", [(d, items[d][1]) for d in order])
        cached = self.get(digest)
        if cached is not None:
            return digest, cached
        if len(order) == 1 and items[order[0]][1] == 1:
            return digest, self.remember(digest, items[order[0]][0])
        single = self._fold([(items[d][0].single, items[d][1]) for d in order])
        if self.relation is NeighbouringRelation.ADD_REMOVE:
            double = single
        else:
            double = self._fold([(items[d][0].double, items[d][1]) for d in order])
        return digest, self.remember(digest, PLDPair(single, double))

    def _power(self, pmf: LossPMF, count: int) -> LossPMF:
        """``count`` compositions of ``pmf``, kept for the next call (a run's counts grow
        one charge at a time, and each figure recomposes its scopes)."""
        if count == 1:
            return pmf
        key = (id(pmf), count)
        hit = self._powers.get(key)
        if hit is not None and hit[0] is pmf:
            return hit[1]
        out = pld.self_compose(pmf, count)
        self._powers[key] = (pmf, out)
        while len(self._powers) > 64:
            self._powers.pop(next(iter(self._powers)))
        return out

    def _fold(self, parts: Sequence[tuple[Direction, int]]) -> Direction:
        rem, add = IDENTITY, IDENTITY
        for (r, a), count in parts:
            r_k = self._power(r, count)
            a_k = r_k if a is r else self._power(a, count)
            if rem is add and r_k is a_k:
                rem = add = pld.compose(rem, r_k)
            else:
                rem, add = pld.compose(rem, r_k), pld.compose(add, a_k)
        return rem, add

    def then(self, first: PLDPair, second: PLDPair) -> PLDPair:
        """``first`` then ``second`` in one scope (not cached: a check's running pair)."""
        single = self._fold([(first.single, 1), (second.single, 1)])
        if self.relation is NeighbouringRelation.ADD_REMOVE:
            return PLDPair(single, single)
        return PLDPair(single, self._fold([(first.double, 1), (second.double, 1)]))

    # --------------------------------------------------------------- groups
    def partition(
        self, members: Counter[bytes], pairs: dict[bytes, PLDPair], size: int, stable: bool
    ) -> tuple[bytes, PLDPair]:
        """A partition of ``size`` parts whose charged parts have the digests ``members``
        (a multiset; every other part is empty)."""
        members = Counter({d: c for d, c in members.items() if d != EMPTY and c > 0})
        if not members:
            return EMPTY, ZERO_PAIR
        cross = self.relation is NeighbouringRelation.REPLACE_ONE and not stable and size >= 2
        # how many parts share a digest matters only as one or several (the cross term):
        # a part catching up with another must not reorder, so recompose, its scope
        key = sorted((d, min(c, 2) if cross else 1) for d, c in members.items())
        digest = _digest("partition", key, cross)
        cached = self.get(digest)
        if cached is not None:
            return digest, cached
        order = [d for d, _ in key]
        rem = pld.maximum([pairs[d].single[0] for d in order])
        symmetric = all(pairs[d].single[0] is pairs[d].single[1] for d in order)
        add = rem if symmetric else pld.maximum([pairs[d].single[1] for d in order])
        single = (rem, add)
        if self.relation is NeighbouringRelation.ADD_REMOVE:
            return digest, self.remember(digest, PLDPair(single, single))
        doubles = [pairs[d].double[0] for d in order]
        if cross:
            doubles += self._moves(members, pairs, order)
        double = pld.maximum(doubles)
        return digest, self.remember(digest, PLDPair(single, (double, double)))

    def _moves(
        self, members: Counter[bytes], pairs: dict[bytes, PLDPair], order: list[bytes]
    ) -> list[LossPMF]:
        """Pairs of a record leaving part i and another entering part j != i: for each
        distinct part i, its remove PMF with the maximum of the others' add PMFs (and
        the reverse); with many distinct parts, the maximum composed with itself."""
        if len(order) > 8:
            m_rem = pld.maximum([pairs[d].single[0] for d in order])
            m_add = pld.maximum([pairs[d].single[1] for d in order])
            return [pld.compose(m_rem, m_add)]
        out = []
        for i in order:
            others = [d for d in order if d != i or members[d] >= 2]
            if not others:  # one charged part: its record can move to an empty one
                out.append(pairs[i].single[0])
                continue
            r_add = pld.maximum([pairs[d].single[1] for d in others])
            out.append(pld.compose(pairs[i].single[0], r_add))
            if pairs[i].single[0] is not pairs[i].single[1]:
                r_rem = pld.maximum([pairs[d].single[0] for d in others])
                out.append(pld.compose(r_rem, pairs[i].single[1]))
        return out

    def subsample(
        self, child_digest: bytes, child: PLDPair, rate: float, method: str
    ) -> tuple[bytes, PLDPair]:
        if child_digest == EMPTY:
            return EMPTY, ZERO_PAIR
        digest = _digest("subsample", child_digest, repr(float(rate)), method)
        cached = self.get(digest)
        if cached is not None:
            return digest, cached
        if rate >= 1.0:
            return digest, self.remember(digest, child)
        if method == "poisson":  # add/remove only (check_sampling)
            rem = pld.subsample_remove(child.single[0], rate)
            add = pld.subsample_add(child.single[1], rate)
            pair = PLDPair((rem, add), (rem, add))
        else:  # m of n without replacement, replace-one
            # A replaced record sits in the sample or not: with (D, D') = (x + rest,
            # x' + rest), a release that cannot tell x' from the rest sees the remove
            # form (qP + (1-q)Q, Q), one that cannot tell x from it the add form (P,
            # (1-q)P + qQ); one pair (D, D') can meet both in different samples, and
            # the remove form dominates at alpha >= 1 only. The pair whose curve is
            # the maximum of both (symmetric) dominates either at every alpha.
            two = pld.compose(child.single[0], child.single[1])
            single = _both_forms(two, rate)
            double = _both_forms(child.double[0], rate)
            pair = PLDPair((single, single), (double, double))
        return digest, self.remember(digest, pair)

    # --------------------------------------------------------------- figures
    def epsilon(self, pair: PLDPair, delta: float) -> float:
        """The pair's epsilon at ``delta`` under the composer's relation."""
        if self.relation is NeighbouringRelation.ADD_REMOVE:
            rem, add = pair.single
            return max(rem.epsilon(delta), add.epsilon(delta) if add is not rem else 0.0)
        rem, add = pair.double
        return max(rem.epsilon(delta), add.epsilon(delta) if add is not rem else 0.0)


def _both_forms(pmf: LossPMF, rate: float) -> LossPMF:
    """A symmetric pair dominating both forms of a sample of m of n (rate = m/n) drawn
    for a release whose (symmetric) pair is ``pmf``: the maximum of their curves."""
    return pld.maximum([pld.subsample_remove(pmf, rate), pld.subsample_add(pmf, rate)])


def plan_pair(composer: PLDComposer, plan: object) -> tuple[bytes, PLDPair]:
    """The PLD pair of a privacy plan (:class:`~privet.ledger.plan.PlanNode`), by the
    same rules as a scope tree: a partition of ``count`` parts that follow one plan
    node is ``count`` identical parts."""
    items: dict[bytes, tuple[PLDPair, int]] = {}

    def add(digest: bytes, pair: PLDPair, count: int = 1) -> None:
        if digest == EMPTY:
            return
        old = items.get(digest)
        items[digest] = (pair, count + (old[1] if old else 0))

    for charge in plan.charges:  # type: ignore[attr-defined]
        add(*composer.entry(charge.entry))
    for child, count, stable in plan.groups:  # type: ignore[attr-defined]
        d, p = plan_pair(composer, child)
        add(*composer.partition(Counter({d: count}), {d: p}, count, stable))
    for child, rate, method in plan.subsamples:  # type: ignore[attr-defined]
        d, p = plan_pair(composer, child)
        add(*composer.subsample(d, p, rate, method))
    return composer.sequence(items)


def safe_epsilon(composer: PLDComposer, build: Iterable[object] | object, delta: float) -> float:
    """``composer.epsilon`` of what ``build()`` returns, or inf when the PLD cannot be
    formed (too many grid points) or delta is out of its range."""
    try:
        _, pair = build()  # type: ignore[operator]
    except PLDTooLargeError:
        return math.inf
    return composer.epsilon(pair, delta)
