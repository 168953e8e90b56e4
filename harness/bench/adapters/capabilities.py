"""What a game-server adapter may optionally do, beyond :class:`~harness.bench.adapters.base.GameServerAdapter`.

Each capability is a small :func:`~typing.runtime_checkable` protocol; the harness asks ``isinstance(adapter, X)``
and, where an adapter lacks one, does without it (the scenario that needs it is reported not applicable, a fault
that needs it is refused, or a watcher polls instead: docs/adapters.md, "Optional capabilities"). An adapter offers
a capability by having its members; it need not inherit from the protocol. ``isinstance`` checks only that the
members are there: a capability that can be present but off says so in a member (:attr:`Restartable.can_restart`),
and the harness reads it.

Two optional calls are not here, because the interface itself declares them with a default that refuses:
:meth:`~harness.bench.adapters.base.GameServerAdapter.place_bet_for_round` and
:meth:`~harness.bench.adapters.base.GameServerAdapter.correct` raise ``AdapterError("not_supported")`` unless an
adapter overrides them. Per-player fault proxies (``ProxiedPlayers``) belong to fault injection and are declared in
:mod:`harness.faults.fault_adapters`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from harness.judge.access import AccessAnswer, AccessRequest
from harness.records import BetRecordRow
from harness.wire.transports.faults import FaultyTransport

__all__ = [
    "CrashPoints",
    "EventWatching",
    "Faultable",
    "ForgetsRoundEvents",
    "Identifying",
    "NoiseReporting",
    "Principals",
    "Restartable",
    "RoundRecords",
]


@runtime_checkable
class Restartable(Protocol):
    """The adapter can kill its server as a kill -9 would and start it again on the same durable state.

    The harness uses it only when :attr:`can_restart` is True as well (``isinstance(a, Restartable) and
    a.can_restart``): the certification steps that restart the server mid-scenario (IDEM-2, ATOM-1) and fault
    injection's ``server_kill``.
    """

    def kill_server(self) -> None:
        """Kill the server abruptly (no shutdown); every player and supervisor call fails until
        :meth:`restart_server`."""

    def restart_server(self) -> None:
        """Start the server again on the same durable state. Raises AdapterError if it does not come up."""

    @property
    def server_up(self) -> bool:
        """False between a kill and the restart."""

    @property
    def can_restart(self) -> bool:
        """Whether :meth:`kill_server` and :meth:`restart_server` really kill and restart the server. False for an
        adapter attached to a server it did not start (e.g. by URL): both are then no-ops, :attr:`server_up` stays
        True, and the harness neither kills nor restarts it."""


@runtime_checkable
class Faultable(Restartable, Protocol):
    """What fault injection needs from a server adapter besides the adapter interface: kill and restart
    (:class:`Restartable`) and the server end of each device line, for serial faults."""

    def serial_port(self, device: str) -> FaultyTransport | None:
        """The server end of a device line, wrapped for serial faults; None when the adapter has no such end (a
        server that opens its own ports): the injector then faults the line at its device end, which the rig
        wraps (:attr:`harness.bench.rig.Rig.serial_ports`), or refuses the fault when that is not wrapped either."""


@runtime_checkable
class CrashPoints(Protocol):
    """The adapter can make its server die, as a kill -9 would, between two statements of the ledger write that
    ends a round (ATOM-1; docs/adapters.md, "Crash points"). The step that uses it also needs :class:`Restartable`
    (it kills and restarts the server around the crash)."""

    def arm_crash(self, round_id: str, after: int) -> None:
        """Die just before statement ``after + 1`` of the write that records the end of ``round_id`` (or a
        correction of it); a write of ``after`` statements or fewer completes and spends the point.

        Raises:
            AdapterError: ``not_supported`` when this server, as configured, has no such points.
        """

    @property
    def crash_armed(self) -> bool:
        """True while an armed point waits for its write (False once the server died at it or the write passed)."""

    @property
    def server_up(self) -> bool:
        """False between a kill (or the crash) and the restart."""


@runtime_checkable
class NoiseReporting(Protocol):
    """The adapter reads the server's own counts of ignored device input and of its event log (DEV-3: noise on a
    line is counted and does not grow the log frame by frame)."""

    def ignored_device_frames(self) -> int:
        """Device frames and reports the server refused or ignored since it started, as it counts them."""
        ...

    def event_log_size(self) -> int:
        """Entries in the server's permanent event log (any monotonic measure whose growth is the entries added)."""
        ...


@runtime_checkable
class EventWatching(Protocol):
    """The adapter announces new server events, so a reader of its round events need not poll.

    After the server recorded new events, the adapter calls every callable in :attr:`event_watchers` once, with no
    arguments, on the bench's thread, once those events can be read (``round_events_since``). A call may bring no
    new round event (the server recorded only others, e.g. a bet). Readers append to the list and never remove; the
    adapter keeps the same list for its lifetime (across a kill and restart).
    """

    event_watchers: list[Callable[[], None]]


@runtime_checkable
class Principals(Protocol):
    """The adapter can act as another principal (ACC-1..ACC-4, ``fixtures/rules/ACCESS.md``): make a request with
    chosen credentials (a player's own, a player's on another player's account or on a supervisor action, the
    supervisor's, none at all, or credentials the server never issued) and report what the server answered.

    The harness uses it only when :attr:`checks_credentials` is True as well: an adapter that reaches its server
    past its authentication (the in-process adapter with ``api: direct``) has no credentials to choose.
    """

    #: Every answer :meth:`request_as` returned since the adapter was made, in order (the judge reads them all).
    access_log: list[AccessAnswer]

    @property
    def checks_credentials(self) -> bool:
        """Whether the server sees the credentials of this adapter's requests (False: :meth:`request_as` cannot
        choose any, and the access scenarios are not applicable)."""

    def request_as(self, request: AccessRequest) -> AccessAnswer:
        """Send ``request`` with its credentials, append the answer to :attr:`access_log` and return it: accepted
        (an accepted bet with the server's bet id and round id), denied for its credentials, or refused for another
        reason, with the server's code. A bet naming another player's account names it as the server's own
        clients would name an account, were they allowed to (for the reference server: a ``player_id`` field in
        the bet's body). An accepted session (``connect``) is closed again at once.

        Raises:
            AdapterError: the server cannot be reached (``unreachable``), or the request cannot be made on this
                adapter (``not_supported``).
        """


@runtime_checkable
class Identifying(Protocol):
    """The adapter asks the system under test what it is (GLI-19 §2.3.2: every critical component identified by a
    digest; docs/adapters.md, "Identifying the system"). ``harness.evidence.identity`` records the answer at the
    start and the end of a certify run; without this capability the run says "not identified by the system"."""

    def identify(self) -> Mapping[str, Any]:
        """What the system reports about itself, now, as a mapping: ``name`` and ``version`` (text), ``build`` (a
        digest of the whole build), ``components`` (component name -> digest, e.g. ``{"gameserver/engine.py":
        "sha256:...", "config": "sha256:..."}``) and optionally ``extra`` (text -> text, shown as it is). Each digest
        is ``sha256:<64 hex>`` (or ``sha384:``/``sha512:`` with 96/128 hex digits), lower case. Called on a started
        adapter, from the bench's thread.

        Raises:
            AdapterError: ``not_supported`` when this system, as configured, reports no identity (then recorded as
                not identified, with the message); ``unreachable`` and others when it cannot be asked.
        """


@runtime_checkable
class RoundRecords(Protocol):
    """The adapter reads one round's bets, every player's, as the server recorded them (for the reference server,
    the supervisor's game recall ``GET /v1/rounds/{id}``). A run judged round by round (``Rig.stream_judging``)
    then reads each round's rows once, after the round ended, instead of every observed player's whole bet record
    again and again: what it reads and holds stays flat in the run's length."""

    def round_bet_record(self, round_id: str) -> list[BetRecordRow]:
        """Every bet the server recorded in round ``round_id``, every player's, in bet-id order, each row as
        :meth:`~harness.bench.adapters.base.GameServerAdapter.bet_record` gives it for its player; ``[]`` for a
        round the server does not know.

        Raises:
            AdapterError: the server cannot be read (with its code).
        """


@runtime_checkable
class ForgetsRoundEvents(Protocol):
    """The adapter can forget the round events its readers are done with, so that a long run judged round by round
    (``Rig.stream_judging`` with ``drop``) holds only the events not judged yet. Positions stay absolute:
    :meth:`~harness.bench.adapters.base.GameServerAdapter.round_events_since` ``(n)`` still gives the events after
    the ``n``-th ever read, and :meth:`~harness.bench.adapters.base.GameServerAdapter.round_events` then gives the
    events from the first not forgotten."""

    def forget_round_events(self, n: int) -> None:
        """Forget the round events before the ``n``-th (clamped to the events read). Reading from a forgotten
        position afterwards raises ValueError."""
