"""Owner bookkeeping shared by the base learners: groups of rows per data owner."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class OwnerGroup:
    """The rows of one group H_m of data owners, sorted by owner.

    ``rows``: row indices sorted by owner; ``starts``: where each owner's rows
    begin in ``rows``; ``counts``: N^l per owner (public: the data user knows how
    many records each owner holds, as in the paper's equal trunks).
    """

    owners: np.ndarray
    rows: np.ndarray
    starts: np.ndarray
    counts: np.ndarray

    @property
    def n_owners(self) -> int:
        return int(self.owners.size)

    def owner_of_row(self) -> np.ndarray:
        """For each entry of ``rows``, the owner's position 0..n_owners-1."""
        return np.repeat(np.arange(self.n_owners), self.counts)

    def owner_mean(self, per_row: np.ndarray) -> np.ndarray:
        """Each owner's mean over its rows of ``per_row`` (aligned with ``rows``)."""
        sums = np.add.reduceat(per_row, self.starts, axis=0)
        return sums / self.counts.reshape((-1,) + (1,) * (per_row.ndim - 1))


def make_group(owner_codes: np.ndarray, owners: np.ndarray) -> OwnerGroup:
    """Group of the given owners (codes into ``owner_codes``), rows sorted by owner."""
    owners = np.sort(np.asarray(owners, dtype=np.int64))
    mask = np.isin(owner_codes, owners)
    rows = np.flatnonzero(mask)
    order = np.argsort(owner_codes[rows], kind="stable")
    rows = rows[order]
    _, starts, counts = np.unique(owner_codes[rows], return_index=True, return_counts=True)
    return OwnerGroup(owners=owners, rows=rows, starts=starts, counts=counts)


def assign_groups(
    n_owners: int, n_rounds: int, per_round: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """Alg. 2 line 9: the data user draws a fresh group of owners for every round.

    A uniformly random permutation of the owners is cut into ``n_rounds``
    disjoint groups of ``per_round``; no owner takes part in two rounds. The
    draw is public randomness, independent of the data.
    """
    perm = rng.permutation(n_owners)
    return [np.sort(perm[m * per_round : (m + 1) * per_round]) for m in range(n_rounds)]


__all__ = ["OwnerGroup", "assign_groups", "make_group"]
