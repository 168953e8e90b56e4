"""The game-server adapter interface: everything the harness does to or reads from a game server.

A lab with its own server writes one class implementing :class:`GameServerAdapter` and names it in its bench
file (``server.adapter: mypackage.module:MyAdapter``); see ``docs/adapters.md``. The harness never talks to a
server any other way. Money is integer minor units; bet types are the shared names (``four_red`` ... ``small``);
round ids are the server's, as text (the lamp carries the same id to the table). What an adapter may do
besides is declared in :mod:`harness.bench.adapters.capabilities` (:class:`CrashPoints` is importable here too).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import simpy

from harness.bench.adapters.capabilities import CrashPoints
from harness.errors import AdapterError
from harness.records import OPTIONAL_RECORD_FIELDS, BetRecordRow, BetReply, PlayerSpec, RoundEvent
from harness.table_config import TableConfig, reference_refusal
from harness.wire.dialects.base import LineSpec

__all__ = [
    "AdapterError",
    "BetRecordRow",
    "BetReply",
    "CrashPoints",
    "GameServerAdapter",
    "PlayerSpec",
    "RoundEvent",
    "ServerSetup",
]


@dataclass(frozen=True, slots=True)
class ServerSetup:
    """What the bench hands an adapter at start.

    ``devices`` maps each line name (``bowl``, ``shaker``, ``reader``, ``lamp``, ``console`` with the default dialect;
    a dialect may name others, e.g. one ``bus`` for several devices) to the server's end of that line: a pyserial
    URL/path (text) for a server process, or a transport object for an in-process server. ``lines`` says, per line
    name, which devices it carries and in which dialect (:class:`~harness.wire.dialects.base.LineSpec`; its
    ``dialect.name`` is what a server is told). ``env`` is the bench's SimPy environment (virtual or real time); an
    in-process server runs on it. ``auto_open``: the server opens rounds on its own timer (the bench's
    ``server.opens_rounds: server``) instead of waiting for ``supervise("open")``; an adapter that starts the server
    configures it so, one attached to a running server takes it as it is. ``table``: the bench's table configuration
    (docs/table-configuration.md: chip unit, table limits, re-shake cap and how it counts, timeouts); an adapter that
    starts its server configures it with what it supports. ``pause_timeout_s``, ``reshake_cap`` and
    ``result_timeout_s`` are the same choices, resolved (``result_timeout_s`` None: the round waits for the result
    for ever).
    """

    players: tuple[PlayerSpec, ...]
    devices: Mapping[str, Any]
    env: simpy.Environment
    workdir: Path
    betting_s: float
    round_gap_s: float
    pause_timeout_s: float
    reshake_cap: int
    result_timeout_s: float | None
    heartbeat_s: float
    lines: Mapping[str, LineSpec] = field(default_factory=dict)
    auto_open: bool = False
    table: TableConfig = field(default_factory=TableConfig)

    def reference_engine(self) -> dict[str, Any]:
        """The reference server's engine settings for this setup (docs/server.md): timings, the re-shake cap, the
        timeouts, the chip unit and the table limits.

        Raises:
            AdapterError: ``bad_setup`` naming the table field the reference server cannot follow
                (:func:`harness.table_config.reference_refusal`).
        """
        why = reference_refusal(self.table)
        if why or self.result_timeout_s is None:
            raise AdapterError("bad_setup", why or "table.result_timeout_s: the reference server cannot wait for ever")
        return {
            "betting_s": self.betting_s,
            "round_gap_s": self.round_gap_s,
            "auto_open": self.auto_open,
            "reshake_cap": self.reshake_cap,
            "pause_timeout_s": self.pause_timeout_s,
            "result_timeout_s": self.result_timeout_s,
            "chip_unit": self.table.chip_unit,
            "min_stake": self.table.min_stake,
            "max_stake": self.table.max_stake,
        }


class GameServerAdapter(ABC):
    """How the harness drives and reads one game server. Implementations must be safe to call from the bench's
    single thread only; every call returns within the bench's step timeout or raises :class:`AdapterError`.

    Construction takes the bench file's ``server.options`` mapping (plus ``url``/``command`` from the bench).
    An adapter is a context manager: ``with adapter:`` calls :meth:`stop` on the way out (start it inside).
    """

    #: True when :attr:`RoundEvent.at` is the bench's simulation time (a server running on the bench's own SimPy
    #: environment). The oracle then knows when the server closed betting on the table's clock and judges an early
    #: lift (SH-4b) against that close rather than against the lamp, which shows it late when its line is slow.
    clock_is_sim_time: bool = False
    #: With :attr:`clock_is_sim_time`: the step (sim seconds) on which the bench runs the server, so on which what
    #: falls due on the server's clock (a close, a pause timeout) is recorded: the judge's tolerance for the
    #: server's deadlines (docs/judge.md). 0 when the server is not stepped by the bench.
    service_step_s: float = 0.0
    #: The optional bet-record fields (:data:`~harness.records.OPTIONAL_RECORD_FIELDS`: ``balance_before``,
    #: ``balance_after``) that the server serves in :meth:`bet_record`; those it does not serve are None in every row,
    #: and the bet record's check (REC-1) compares only the served ones. Default: all of them.
    bet_record_fields: frozenset[str] = frozenset(OPTIONAL_RECORD_FIELDS)

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.options = dict(options)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    @abstractmethod
    def start(self, setup: ServerSetup) -> None:
        """Bring the server up (or attach to it) with these players and devices. Raises AdapterError."""

    def provision_players(self, players: tuple[PlayerSpec, ...]) -> None:
        """Make the scenario's players exist on the server with exactly these opening balances: create or fund
        test wallets. The bench calls it right after :meth:`start`, once per rig (so once per scenario), with the
        same players as ``setup.players``. Default: nothing (a server the adapter starts gets its players in
        :meth:`start`). Raises AdapterError when the server refuses."""
        return

    @abstractmethod
    def stop(self) -> None:
        """Release everything started; idempotent, never raises."""

    @abstractmethod
    def connect(self, player_id: str) -> None:
        """Open the player's session (e.g. its event stream). Raises AdapterError."""

    @abstractmethod
    def disconnect(self, player_id: str) -> None:
        """Drop the player's connection abruptly (no goodbye)."""

    @abstractmethod
    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, *, lose_reply: bool = False
    ) -> BetReply:
        """Send a bet for the round taking bets. ``lose_reply``: the connection drops right after the request
        is sent, so the player never sees the answer (the reply then has ``confirmed=False``). Rejections are
        replies, not exceptions; AdapterError only when the server cannot be reached."""

    def place_bet_for_round(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, round_id: str
    ) -> BetReply:
        """Optional: a bet that names the round it is for (``round_id``, as the server's round events name rounds);
        the server takes it only when that round is the one taking bets. Rejections are replies, as for
        :meth:`place_bet`. Default: ``AdapterError("not_supported")``, which a scenario reports as not applicable on
        the bench (a server whose bets name no round)."""
        raise AdapterError("not_supported", f"{type(self).__name__} cannot send a bet that names its round")

    @abstractmethod
    def supervise(self, action: str, reason: str = "") -> None:
        """A supervisor action: ``open`` (a round), ``pause``, ``resume``, ``cancel``. Raises AdapterError with
        the server's code when refused."""

    def correct(self, round_id: str, faces: str) -> None:
        """A supervisor's correction of a misread outcome (GLI-19 §4.18.4, manual mode): re-settle the settled round
        ``round_id`` on ``faces`` (4 of R/W, token 0 first). Default: ``AdapterError("not_supported")``, which a
        scenario reports as not applicable on the bench. Raises AdapterError with the server's code when refused."""
        raise AdapterError("not_supported", f"{type(self).__name__} cannot correct a round's outcome")

    @abstractmethod
    def round_events(self) -> list[RoundEvent]:
        """Every round event the server has published since start, in order (cumulative)."""

    def round_events_since(self, n: int) -> list[RoundEvent]:
        """The round events after the first ``n`` (``round_events()[n:]``), for a reader that keeps up with the log:
        an adapter that holds its events in a list overrides this to return only the new ones, without copying the
        rest. Default: built on :meth:`round_events`."""
        return self.round_events()[n:]

    @abstractmethod
    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        """The player's bet record, as the player (or recall) sees it."""

    @abstractmethod
    def balance(self, player_id: str) -> int:
        """The player's current balance in minor units."""

    def evidence(self) -> dict[str, str]:
        """Extra evidence to attach to a scenario (name → text), e.g. the server's own serial trace."""
        return {}
