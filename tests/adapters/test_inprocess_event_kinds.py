"""The in-process adapter skips the engine's events whose kind is not a round kind: none of those may be a round
event or call for a lamp command (else a lamp would miss a command, or the rig a round event)."""

from __future__ import annotations

from gameserver.events import Event, EventKind
from gameserver.gateway import lamp_command
from harness.bench.adapters.reference_events import round_event
from harness.bench.adapters.reference_inprocess import _ROUND_KINDS

DATA = {"closes_at": 1.0, "reason": "token_standing", "clause": "SH-3", "faces": "RRWW"}


def test_every_kind_left_out_is_neither_a_round_event_nor_a_lamp_command() -> None:
    for kind in EventKind:
        event = Event(1, 0.5, kind, 7, dict(DATA))
        if kind not in _ROUND_KINDS:
            assert lamp_command(event) is None, kind
            assert round_event(event.to_json()) is None, kind
        else:
            assert round_event(event.to_json()) is not None, kind


def test_the_lamp_commands_come_from_round_kinds() -> None:
    commanding = {kind for kind in EventKind if lamp_command(Event(1, 0.5, kind, 7, dict(DATA))) is not None}
    assert commanding and commanding <= _ROUND_KINDS
