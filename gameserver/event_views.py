"""One engine event as each WebSocket reader of ``/v1/stream`` may see it, as the JSON text sent.

A supervisor sees every event whole; a player sees the public events only (:data:`~gameserver.events.PUBLIC`), with
the settlement lines of other players' bets removed. The text of each view is made once per event and shared by
every stream it goes to: a public event without bet lines is one text for every player, and a settlement is one text
for every player with no line in it and one for each player with lines."""

from __future__ import annotations

import json
from typing import Any

from gameserver.events import PUBLIC, Event


def json_text(body: Any) -> str:
    """``body`` as the text of a WebSocket message: the compact, non-ASCII-preserving JSON that Starlette's
    ``send_json`` sends."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def player_view(event: Event, player_id: str) -> dict[str, Any]:
    """``event`` as ``player_id`` may see it: settlement lines of other players' bets removed."""
    body = event.to_json()
    lines = body["data"].get("bets")
    if isinstance(lines, list):
        body["data"] = {**body["data"], "bets": [line for line in lines if line.get("player_id") == player_id]}
    return body


class EventViews:
    """The views of one event, each made when a stream first asks for it (the event is not changed)."""

    __slots__ = ("_bettors", "_event", "_full", "_others", "_public")

    def __init__(self, event: Event) -> None:
        self._event = event
        self._public = event.kind in PUBLIC
        self._full: str | None = None
        self._others: str | None = None  # a player with no line in the event (every player when it has none)
        lines = event.data.get("bets")
        self._bettors: frozenset[Any] = (
            frozenset(line.get("player_id") for line in lines if isinstance(line, dict))
            if isinstance(lines, list)
            else frozenset()
        )

    @property
    def public(self) -> bool:
        """Whether players see the event (a supervisor sees every event)."""
        return self._public

    def supervisor(self) -> str:
        """The whole event's text."""
        if self._full is None:
            self._full = json_text(self._event.to_json())
        return self._full

    def player(self, player_id: str) -> str | None:
        """The text ``player_id`` is sent, or None when the event is not public."""
        if not self._public:
            return None
        if player_id in self._bettors:
            return json_text(player_view(self._event, player_id))
        if self._others is None:
            self._others = json_text(player_view(self._event, player_id))
        return self._others
