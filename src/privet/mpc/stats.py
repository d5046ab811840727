"""Cost of an MPC run: per-party time and traffic, and the run's results.

The traffic counters sit where MPyC sends and receives its messages
(``Runtime._send_message``/``_receive_message``; see :class:`TrafficMeter`).
MPyC frames every message with a 12-byte header (8-byte program counter,
4-byte payload length) in ``mpyc.asyncoro.MessageExchanger`` and keeps its
own ``nbytes_sent`` per peer, which privet checks its count against. The
meters are installed once all parties are connected and stopped before
MPyC's shutdown barrier, so the counts cover the party program only, not the
connection handshake (party id, PRSS keys) nor the barrier. Bytes are MPyC
message bytes (header + payload), not TCP/IP bytes on the wire.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class PartyStats:
    """Cost of a run seen by one party.

    Attributes
    ----------
    party : int
        Party index.
    seconds : float
        Wall time of the party program, from "all parties connected" to the
        program's return (excludes process start, connecting and shutdown).
    connect_seconds : float
        Wall time of ``mpc.start()`` (waiting for and connecting to the others).
    bytes_sent : int
        MPyC message bytes (12-byte header + payload) this party wrote to all
        peers during the program.
    bytes_received : int
        MPyC message bytes this party received from all peers during the program.
    messages_sent : int
        Number of MPyC messages sent (one per peer per communication step).
    message_batches : int
        Number of distinct MPyC program-counter labels among the messages this
        party sent, i.e. communication steps of this party (one ``input``,
        ``output``, reshare, ... each; all messages of one step carry the same
        label). This is an *upper bound* on the number of communication rounds
        (the latency-bound depth): steps that MPyC's asynchronous evaluation
        runs concurrently are counted separately. It equals the round count of
        a program whose steps each depend on the previous one.
    bytes_sent_per_peer : tuple of int
        ``bytes_sent`` split by receiving party (0 for this party itself).
    """

    party: int
    seconds: float
    connect_seconds: float = 0.0
    bytes_sent: int = 0
    bytes_received: int = 0
    messages_sent: int = 0
    message_batches: int = 0
    bytes_sent_per_peer: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of the fields, in field order (for JSON/CSV)."""
        return {**asdict(self), "bytes_sent_per_peer": list(self.bytes_sent_per_peer)}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> PartyStats:
        data = dict(data)
        data["bytes_sent_per_peer"] = tuple(data.get("bytes_sent_per_peer", ()))
        return PartyStats(**data)


@dataclass(frozen=True, slots=True)
class RunStats:
    """Cost of a whole run: one :class:`PartyStats` per party plus launcher time.

    Attributes
    ----------
    parties : tuple of PartyStats
        In party order.
    elapsed_seconds : float
        Launcher wall time from starting the processes to collecting all
        results (includes Python start-up, imports, connecting, shutdown).
    """

    parties: tuple[PartyStats, ...]
    elapsed_seconds: float

    @property
    def seconds(self) -> float:
        """Longest party program time (the run's compute-and-communicate time)."""
        return max((p.seconds for p in self.parties), default=0.0)

    @property
    def bytes_sent(self) -> int:
        """Total MPyC message bytes sent by all parties."""
        return sum(p.bytes_sent for p in self.parties)

    @property
    def bytes_received(self) -> int:
        """Total MPyC message bytes received by all parties."""
        return sum(p.bytes_received for p in self.parties)

    @property
    def message_batches(self) -> int:
        """Largest per-party number of communication steps (upper bound on rounds)."""
        return max((p.message_batches for p in self.parties), default=0)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (for JSON)."""
        return {
            "elapsed_seconds": self.elapsed_seconds,
            "seconds": self.seconds,
            "bytes_sent": self.bytes_sent,
            "bytes_received": self.bytes_received,
            "message_batches": self.message_batches,
            "parties": [p.to_dict() for p in self.parties],
        }


@dataclass(frozen=True, slots=True)
class RunResult:
    """What a run returns: each party's result and the cost.

    Attributes
    ----------
    results : tuple
        The value returned by the party program in each party, in party order.
    stats : RunStats
        Time and traffic.
    """

    results: tuple[Any, ...]
    stats: RunStats = field(repr=False)


# ------------------------------------------------------------------ meters

_HEADER_BYTES = 12  # MPyC message header: 8-byte program counter + 4-byte payload length


class PeerMeter:
    """Traffic with one peer, and when it last sent anything."""

    __slots__ = (
        "bytes_received",
        "bytes_sent",
        "last_received",
        "messages_received",
        "messages_sent",
        "peer",
    )

    def __init__(self, peer: int) -> None:
        self.peer = peer
        self.bytes_sent = 0
        self.bytes_received = 0
        self.messages_sent = 0
        self.messages_received = 0
        self.last_received = time.monotonic()


class TrafficMeter:
    """Counts the MPyC messages a party program sends and receives.

    MPyC routes every message through ``Runtime._send_message(peer, payload)``
    and ``Runtime._receive_message(peer)`` (labelled with the current program
    counter, framed with a 12-byte header by ``MessageExchanger``). The meter
    shadows both on the runtime instance while installed, so it sees exactly
    the program's messages, with their program-counter labels.
    """

    def __init__(self, mpc: Any) -> None:
        self.mpc = mpc
        self.peers = {p.pid: PeerMeter(p.pid) for p in mpc.parties if p.pid != mpc.pid}
        self.pcs: set[int] = set()
        self.counting = False

    def install(self) -> None:
        mpc = self.mpc
        send, receive = mpc._send_message, mpc._receive_message

        def metered_send(peer_pid: int, data: bytes) -> None:
            if self.counting:
                meter = self.peers[peer_pid]
                meter.bytes_sent += _HEADER_BYTES + len(data)
                meter.messages_sent += 1
                self.pcs.add(mpc._program_counter[0])
            send(peer_pid, data)

        def metered_receive(peer_pid: int) -> Any:
            payload = receive(peer_pid)
            if self.counting:
                meter = self.peers[peer_pid]
                meter.messages_received += 1
                if isinstance(payload, bytes | bytearray):
                    meter.bytes_received += _HEADER_BYTES + len(payload)
                else:
                    payload.add_done_callback(lambda fut: self._count_later(meter, fut))
            return payload

        mpc._send_message = metered_send
        mpc._receive_message = metered_receive
        self.counting = True

    @staticmethod
    def _count_later(meter: PeerMeter, fut: Any) -> None:
        if not fut.cancelled() and fut.exception() is None:
            meter.bytes_received += _HEADER_BYTES + len(fut.result())

    def stop(self) -> None:
        """Stop counting (before MPyC's shutdown barrier)."""
        self.counting = False

    def uninstall(self) -> None:
        self.counting = False
        for name in ("_send_message", "_receive_message"):
            self.mpc.__dict__.pop(name, None)

    def party_stats(self, seconds: float, connect_seconds: float) -> PartyStats:
        m = len(self.mpc.parties)
        per_peer = tuple(self.peers[j].bytes_sent if j in self.peers else 0 for j in range(m))
        return PartyStats(
            party=self.mpc.pid,
            seconds=seconds,
            connect_seconds=connect_seconds,
            bytes_sent=sum(per_peer),
            bytes_received=sum(p.bytes_received for p in self.peers.values()),
            messages_sent=sum(p.messages_sent for p in self.peers.values()),
            message_batches=len(self.pcs),
            bytes_sent_per_peer=per_peer,
        )


class LivenessProxy:
    """Protocol proxy between a peer connection's transport and MPyC's MessageExchanger.

    Installed with ``transport.set_protocol``; notes the time of the last data
    from the peer and reports a lost connection to ``on_lost(peer, exc,
    exchanger)``, which decides whether that is a failure.
    """

    __slots__ = ("_meter", "_on_lost", "_protocol")

    def __init__(self, protocol: Any, meter: PeerMeter, on_lost: Any) -> None:
        self._protocol = protocol
        self._meter = meter
        self._on_lost = on_lost

    def connection_made(self, transport: Any) -> None:  # pragma: no cover - already connected
        self._protocol.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self._meter.last_received = time.monotonic()
        self._protocol.data_received(data)

    def eof_received(self) -> bool | None:
        return None  # close the transport; connection_lost follows

    def connection_lost(self, exc: BaseException | None) -> None:
        self._on_lost(self._meter.peer, exc, self._protocol)

    def pause_writing(self) -> None:
        self._protocol.pause_writing()

    def resume_writing(self) -> None:
        self._protocol.resume_writing()
