"""What the server does for a player besides the game: their connections (sessions) and their bet record.

Both the HTTP API (``gameserver/api.py``) and an in-process host of the engine (the harness's in-process adapter)
go through this module, so a connection's end and a bet-record read run the same server code on every bench:

- :class:`Sessions` counts each player's open connections (a player's WebSocket event stream over HTTP).
  Opening or closing one runs on the engine (over HTTP: as an engine command, on the engine thread) and changes
  nothing in the game: a player who disconnects does not stop the round (DC-1), and every bet confirmed before
  the disconnection stays in it and is settled when the round ends (DC-2).
- :func:`bet_record` is the player's bet record as ``GET /v1/players/{id}/bets`` serves it (DC-3).
"""

from __future__ import annotations

from typing import Any

from gameserver.engine import RoundEngine
from gameserver.ledger import Ledger


class Sessions:
    """Each player's open connections, counted (a player may hold several at once)."""

    def __init__(self) -> None:
        self._open: dict[str, int] = {}

    def opened(self, engine: RoundEngine, player_id: str) -> None:
        """One more connection of ``player_id``. Changes nothing in ``engine``: a player's bets, balance and
        rounds are the same connected or not."""
        self._open[player_id] = self._open.get(player_id, 0) + 1

    def closed(self, engine: RoundEngine, player_id: str) -> None:
        """One connection of ``player_id`` ended, with or without a goodbye (a lost network, a crash). Changes
        nothing in ``engine``: the round in progress runs on (DC-1) and every bet the player confirmed stays in it
        and is settled, voided or cancelled with it like any other (DC-2). Closing a connection that was never
        opened is a no-op."""
        left = self._open.get(player_id, 0) - 1
        if left > 0:
            self._open[player_id] = left
        else:
            self._open.pop(player_id, None)

    def connected(self, player_id: str) -> bool:
        """Whether ``player_id`` holds at least one open connection."""
        return player_id in self._open

    def players(self) -> list[str]:
        """The players holding an open connection, sorted."""
        return sorted(self._open)


def bet_record(ledger: Ledger, player_id: str | None, round_id: int | None = None) -> list[dict[str, Any]]:
    """The bet record as the API serves it: every bet of ``player_id`` (every player's when None), optionally of
    one round only, in bet-id order, each as the BETS.csv record joined with its round
    (:meth:`gameserver.ledger.BetRow.record`; JSON-compatible). Raises what the ledger raises."""
    return [bet.record(rnd) for bet, rnd in ledger.bets(player_id, round_id)]
