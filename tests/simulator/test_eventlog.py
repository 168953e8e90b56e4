"""The event log keeps records and builds typed events on read: what readers see must not depend on that."""

from __future__ import annotations

import io

import pytest

from simulator import Table
from simulator.bets import BetType
from simulator.eventlog import EventLog, record_of
from simulator.events import (
    BetSent,
    BowlLifted,
    DropItem,
    Dropped,
    Event,
    RoundEnded,
    RoundOpened,
    RoundStatus,
    TokensPlaced,
)
from simulator.profile import profile_from_mapping
from simulator.summary import summarize
from tests.simulator.sim_helpers import shipped


def _chaotic(listeners: bool, rounds: int = 150) -> Table:
    seen: list[Event] = []
    table = Table(
        profile_from_mapping(shipped("chaotic")), seed=11, players=6, listeners=[seen.append] if listeners else ()
    )
    table.run(rounds)
    if listeners:
        assert seen == table.log.events  # listeners saw every fact, typed, in order
    return table


def test_a_run_reads_back_the_same_whether_built_at_once_or_on_read() -> None:
    lazy, eager = _chaotic(listeners=False), _chaotic(listeners=True)
    assert len(lazy.log) == len(eager.log) > 1000
    assert lazy.log.records == eager.log.records
    assert list(lazy.log) == list(eager.log)
    # Every record is its event's class and fields, in declaration order; a bet's record holds the player's bet
    # number where the event has its id, "<player>-<number>".
    for record, event in zip(lazy.log.records, lazy.log, strict=True):
        if isinstance(event, BetSent):
            assert isinstance(record[4], int) and event.bet_id == f"{event.player}-{record[4]}"
            assert record[:4] + record[5:] == record_of(event)[:4] + record_of(event)[5:]
        else:
            assert record == record_of(event)
    kinds = {type(e) for e in lazy.log}
    assert {Dropped, BowlLifted, RoundEnded, BetSent} <= kinds


def test_events_are_built_once_and_kept() -> None:
    log = _chaotic(listeners=False, rounds=20).log
    first = log.events
    again = list(log)
    assert all(a is b for a, b in zip(first, again, strict=True))
    ended = log.of(RoundEnded)
    assert all(any(e is f for f in first) for e in ended)  # after a full read, `of` returns the kept objects


def test_of_and_counts_before_any_read_build_only_what_they_are_asked_for() -> None:
    log = _chaotic(listeners=False, rounds=30).log
    ended = log.of(RoundEnded)
    assert len(ended) == 30 and all(type(e) is RoundEnded for e in ended)
    mixed = log.of(Dropped, RoundEnded)
    assert [type(e) for e in mixed] == [r[0] for r in log.records if r[0] in (Dropped, RoundEnded)]
    assert log.counts()[RoundEnded] == 30
    assert sum(log.counts().values()) == len(log)
    assert log.of(Dropped) == [e for e in log if type(e) is Dropped]  # the same events as a full read builds


def test_the_summary_of_a_log_equals_the_summary_of_its_events() -> None:
    log = _chaotic(listeners=False).log
    from_records = summarize(log)
    from_events = summarize(list(log))  # a plain list of typed events goes the other way
    assert from_records == from_events
    assert from_records.rounds == 150


def test_jsonl_from_records_is_byte_identical_to_jsonl_from_typed_events() -> None:
    table = _chaotic(listeners=False, rounds=40)
    direct = io.StringIO()
    table.log.write_jsonl(direct)
    rebuilt = EventLog()
    rebuilt.extend(list(table.log))  # typed events appended one by one
    via_events = io.StringIO()
    rebuilt.write_jsonl(via_events)
    assert direct.getvalue() == via_events.getvalue()


def test_a_record_with_wrong_fields_is_named_when_read() -> None:
    log = EventLog()
    log.records.append((TokensPlaced, 1.0, 1))
    log.records.append((RoundOpened, 2.0, 2))  # the deadline is missing
    with pytest.raises(TypeError, match="bad RoundOpened record"):
        log.events  # noqa: B018
    with pytest.raises(TypeError, match="bad BetSent record"):
        log.add((BetSent, 1.0, 1, "p01.1"))
    assert len(log) == 2  # a record refused by add is not appended


def test_appended_typed_events_keep_their_identity_and_order() -> None:
    log = EventLog()
    opened = RoundOpened(0.0, 1, 15.0)
    bet = BetSent(1.5, 1, "p01.1", "p01.1-1", BetType.BIG, 100, 1.56)
    log.append(opened)
    log.records.append((Dropped, 2.0, 1, 1, DropItem.BOWL, None))
    log.append(bet)
    ended = log.add((RoundEnded, 9.0, 1, RoundStatus.VOID, "SH-5", None, None, 1))
    events = log.events
    assert events[0] is opened and events[3] is ended
    assert events[1] == Dropped(2.0, 1, 1, DropItem.BOWL, None)
    assert events[2] == bet


def test_bet_ids_are_formed_from_each_players_bet_number() -> None:
    log = _chaotic(listeners=False, rounds=60).log
    bets = [e for e in log if isinstance(e, BetSent)]
    assert len(bets) > 100
    by_player: dict[str, list[str]] = {}
    for bet in bets:
        by_player.setdefault(bet.player, []).append(bet.bet_id)
    for player, ids in by_player.items():  # each player's bets are numbered 1, 2, 3, ... in the order sent
        assert ids == [f"{player}-{n}" for n in range(1, len(ids) + 1)]
    assert len({b.bet_id for b in bets}) == len(bets)  # unique in the run
    out = io.StringIO()
    log.write_jsonl(out)
    assert f'"bet_id":"{bets[0].bet_id}"' in out.getvalue()


def test_a_bet_record_may_hold_its_id_or_its_number() -> None:
    log = EventLog()
    log.records.append((BetSent, 1.0, 1, "p02.1", 7, BetType.ODD, 500, 1.05))
    log.append(BetSent(2.0, 1, "p02.1", "lab-chosen-id", BetType.EVEN, 100, 2.05))
    first, second = log.events
    assert isinstance(first, BetSent) and first.bet_id == "p02.1-7"
    assert isinstance(second, BetSent) and second.bet_id == "lab-chosen-id"


@pytest.mark.parametrize("built", [False, True])
def test_positions_stay_absolute_after_forget_and_take(built: bool) -> None:
    whole = _chaotic(listeners=False, rounds=40).log.events
    log = EventLog()
    log.records.extend(record_of(e) for e in whole[:300])
    if built:
        log.events  # noqa: B018 - typed events built before the forget: they go with their records
    log.forget(120)
    assert (log.end, len(log.events)) == (300, 180)
    assert log.since(120) == whole[120:300] and log.since(250) == whole[250:300] and log.since(300) == []
    for gone in (0, 119, 301):
        with pytest.raises(ValueError, match=f"position {gone} is not held: it holds 120 to 300"):
            log.since(gone)
    log.forget(50)  # already forgotten: nothing
    assert log.end == 300 and log.since(120) == whole[120:300]
    log.records.extend(record_of(e) for e in whole[300:400])  # the table appends to the same list
    assert log.since(350) == whole[350:400]
    taken = log.take()
    assert taken.since(120) == whole[120:400] and taken.end == 400
    assert log.end == 400 and log.since(400) == []
    log.records.extend(record_of(e) for e in whole[400:])
    assert log.since(400) == whole[400:]
    log.forget(10**9)  # clamped to the end
    assert log.end == len(whole) and log.events == []
