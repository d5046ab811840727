"""Pairwise masks of the private sum (seed 003, Alg. 1), from the ``cryptography`` package.

Alg. 1 needs keys ``S_kj`` with ``S_kj + S_jk = 0 mod R``. Every pair of
parties (k, j) agrees a 32-byte secret by X25519 Diffie-Hellman (RFC 7748;
the public keys travel over the parties' MPyC channels) and derives a pair
key with HKDF-SHA256 (RFC 5869, ``info`` naming the pair). For the sum
number ``r`` the pair key is expanded by ChaCha20 (RFC 8439, nonce = r) into
one 64-bit word per vector entry: the mask ``m_kj(r)`` (block counter from 0,
nonce r: no keystream is reused across sums). Party k adds
``sum_{j > k} m_kj(r) - sum_{j < k} m_jk(r)`` mod 2^64 to its encoded vector;
over all parties the masks cancel, so the aggregator's sum is the sum of the
vectors, while each single masked vector is uniform on Z_{2^64} to anyone
who lacks one of its pair keys (ChaCha20 as a PRF).

Semi-honest parties; no dropout recovery (a party that leaves ends the round
with an error naming it, through privet's launcher).
"""

from __future__ import annotations

import numpy as np
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from privet.errors import MPCError

_INFO = b"privet seed003 pairwise mask v1"


class PairwiseMasker:
    """One party's side of Alg. 1's masks.

    Parameters
    ----------
    pid : int
        This party's index.
    parties : int
        K.
    """

    def __init__(self, pid: int, parties: int) -> None:
        self.pid = int(pid)
        self.parties = int(parties)
        self._secret = X25519PrivateKey.generate()
        self._keys: dict[int, bytes] = {}

    def public_bytes(self) -> bytes:
        """The 32-byte X25519 public key to send to every other party."""
        return self._secret.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    def agree(self, publics: list[bytes]) -> None:
        """Derive the pair keys from every party's public key (index = party)."""
        if len(publics) != self.parties:
            raise MPCError(
                f"Party {self.pid} got {len(publics)} public keys for {self.parties} parties."
            )
        for j, pub in enumerate(publics):
            if j == self.pid:
                continue
            if not isinstance(pub, bytes) or len(pub) != 32:
                raise MPCError(f"Party {j} sent a malformed X25519 public key to party {self.pid}.")
            shared = self._secret.exchange(X25519PublicKey.from_public_bytes(pub))
            lo, hi = sorted((self.pid, j))
            self._keys[j] = HKDF(
                algorithm=hashes.SHA256(),
                length=32,
                salt=None,
                info=_INFO + f" {lo}-{hi}".encode(),
            ).derive(shared)

    @staticmethod
    def _stream(key: bytes, round_: int, n_words: int) -> np.ndarray:
        # cryptography's 16-byte ChaCha20 nonce is a 4-byte block counter (0 here)
        # followed by the 12-byte nonce proper: the round number, so no two rounds
        # share keystream.
        nonce = bytes(4) + int(round_).to_bytes(12, "little")
        enc = Cipher(algorithms.ChaCha20(key, nonce), mode=None).encryptor()
        return np.frombuffer(enc.update(bytes(8 * n_words)), dtype="<u8").astype(np.uint64)

    def mask(self, round_: int, n_words: int) -> np.ndarray:
        """This party's total mask for sum number ``round_`` (uint64, wraps mod 2^64)."""
        if len(self._keys) != self.parties - 1:
            raise MPCError(f"Party {self.pid} has not agreed its pair keys yet; call agree().")
        total = np.zeros(n_words, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for j, key in self._keys.items():
                stream = self._stream(key, round_, n_words)
                total = total + stream if self.pid < j else total - stream
        return total


__all__ = ["PairwiseMasker"]
