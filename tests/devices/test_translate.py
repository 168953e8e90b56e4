"""What each device reports for each ground-truth event (the table in harness/bench/devices/translate.py and
docs/protocol.md §6), written out by hand."""

from __future__ import annotations

import random

import pytest

from harness.bench.devices.translate import EventTranslator
from harness.wire.messages import (
    BowlOff,
    BowlOn,
    ConsoleRearranged,
    Drop,
    DropItem,
    Message,
    Problem,
    ProblemReason,
    ReaderRearranged,
    Reassembled,
    Resolved,
    Result,
    ShakeEnd,
    ShakeStart,
    Source,
    TokensPlaced,
)
from simulator import events as ev

CASES: list[tuple[ev.Event, list[tuple[Source, Message]]]] = [
    (ev.TokensPlaced(1.0, 3), [(Source.CONSOLE, TokensPlaced())]),
    (ev.BowlPlaced(1.0, 3), [(Source.BOWL, BowlOn())]),
    (ev.ShakeStarted(1.0, 3, 1), [(Source.SHAKER, ShakeStart())]),
    (ev.ShakeEnded(1.0, 3, 1), [(Source.SHAKER, ShakeEnd())]),
    (ev.ShakeSkipped(1.0, 3), []),  # SH-4a: silence is the report
    (ev.Dropped(1.0, 3, 1, ev.DropItem.TOKEN, 2), [(Source.SHAKER, Drop(DropItem.TOKEN, 2))]),
    (ev.Dropped(1.0, 3, 1, ev.DropItem.PLATE, None), [(Source.SHAKER, Drop(DropItem.PLATE, None))]),
    (ev.Dropped(1.0, 3, 1, ev.DropItem.BOWL, None), [(Source.SHAKER, Drop(DropItem.BOWL, None))]),
    (ev.Reassembled(1.0, 3), [(Source.CONSOLE, Reassembled())]),
    (ev.Reshake(1.0, 3, ev.ReshakeReason.DROP, 1), []),
    (ev.BowlLifted(1.0, 3, False, False, None), [(Source.BOWL, BowlOff(False, None))]),
    (ev.BowlLifted(1.0, 3, True, False, None), [(Source.BOWL, BowlOff(False, None))]),  # early: server's call
    (ev.BowlLifted(1.0, 3, False, True, 3), [(Source.BOWL, BowlOff(True, 3))]),
    (ev.Revealed(1.0, 3, "RWSR", False), [(Source.READER, Result("RWSR", False))]),
    (
        ev.Rearranged(1.0, 3, "RRWW"),
        [(Source.CONSOLE, ConsoleRearranged()), (Source.READER, ReaderRearranged("RRWW"))],
    ),
    (ev.Paused(1.0, 3, ev.PauseReason.EQUIPMENT), [(Source.CONSOLE, Problem(ProblemReason.EQUIPMENT))]),
    (ev.Paused(1.0, 3, ev.PauseReason.RESHAKE_CAP), [(Source.CONSOLE, Problem(ProblemReason.RESHAKE_CAP))]),
    (ev.Resumed(1.0, 3), [(Source.CONSOLE, Resolved())]),
    (ev.RoundOpened(1.0, 3, 16.0), []),
    (ev.BettingClosed(1.0, 3), []),
    (ev.RoundEnded(1.0, 3, ev.RoundStatus.SETTLED, None, "RRWW", 2, 0), []),
]


@pytest.mark.parametrize(("event", "reports"), CASES, ids=[type(e).__name__ for e, _r in CASES])
def test_event_becomes_the_documented_device_reports(event: ev.Event, reports: list[object]) -> None:
    assert EventTranslator(random.Random(0))(event) == reports


def test_overlap_hides_exactly_one_token_from_the_camera_and_keeps_the_rest() -> None:
    translate = EventTranslator(random.Random(0))
    hidden = set()
    for _ in range(40):
        [(src, msg)] = translate(ev.Revealed(1.0, 1, "RWRW", True))
        assert src is Source.READER and isinstance(msg, Result) and msg.overlap
        assert msg.faces.count("U") == 1
        i = msg.faces.index("U")
        assert msg.faces[:i] + "RWRW"[i] + msg.faces[i + 1 :] == "RWRW"
        hidden.add(i)
    assert hidden == {0, 1, 2, 3}


def test_overlap_never_hides_a_standing_token() -> None:  # SH-3 must stay visible to the server
    translate = EventTranslator(random.Random(0))
    hidden = set()
    for _ in range(40):
        [(_src, msg)] = translate(ev.Revealed(1.0, 1, "RSWS", True))
        assert isinstance(msg, Result) and msg.faces.count("U") == 1 and msg.faces.count("S") == 2
        hidden.add(msg.faces.index("U"))
    assert hidden == {0, 2}


def test_a_touch_without_a_token_is_refused_rather_than_reported_as_no_touch() -> None:
    with pytest.raises(ValueError, match="a touch without the token touched"):
        EventTranslator(random.Random(0))(ev.BowlLifted(1.0, 3, False, True, None))
