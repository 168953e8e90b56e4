"""The judge and the simulated table follow the bench's table configuration: the re-shake cap and how it counts
(``Timing.max_reshakes``, ``Timing.reshake_count``), on hand-built observations and on the table model itself.

A re-shake past the cap is an unexpected problem (ERR-1): the server must pause before it asks for another re-shake
or ends the round. With a cap of 3 the 4th re-shake is past it; with a cap of 4 it is not."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from harness.judge import Observation, judge
from harness.judge.timeline import Timing
from harness.records import RoundEvent, RoundEventKind
from harness.table_config import TableConfig, table_profile
from simulator.events import (
    BettingClosed,
    Event,
    Paused,
    PauseReason,
    Resumed,
    RoundEnded,
    RoundStatus,
    ShakeEnded,
    ShakeStarted,
)
from tests.simulator.sim_helpers import profile_of, quiet_data, run_table


def _obs(events: Sequence[RoundEvent], timing: Timing, truth: Sequence[Event] = ()) -> Observation:
    settled = RoundEnded(9.0, 1, RoundStatus.SETTLED, None, "RRWW", 2, 4)
    base: dict[str, Any] = {
        "truth": (*truth, settled),
        "rounds": {"1": 1},
        "server_events": tuple(events),
        "records": {},
        "balances": {},
        "opening": {},
        "server_clock_is_sim": True,
        "timing": timing,
    }
    return Observation(**base)


def _reshakes(n: int, start: float = 1.0) -> list[RoundEvent]:
    return [RoundEvent("1", RoundEventKind.RESHAKE, start + k) for k in range(n)]


def _cap_checks(obs: Observation) -> list[tuple[str, bool]]:
    return [(c.what, c.passed) for c in judge(obs).checks if "past the cap" in c.what]


def test_a_fourth_reshake_without_a_pause_is_flagged_with_a_cap_of_3_and_not_with_a_cap_of_4() -> None:
    events = [
        RoundEvent("1", RoundEventKind.OPENED, 0.0),
        *_reshakes(4),
        RoundEvent("1", RoundEventKind.SETTLED, 9.0, faces="RRWW"),
    ]
    three = _obs(events, Timing(1.0, 2.0, 5.0, 3))
    verdict = judge(three)
    flagged = [d for d in verdict.differences if d.what == "re-shake 4 past the cap"]
    assert [(d.clause, d.expected, d.actual) for d in flagged] == [
        ("ERR-1", "a pause after it", "round settled at 9.000 without a pause")
    ]
    assert _cap_checks(three) == [
        ("round 1: re-shake 4, past the cap of 3 (since it opened or resumed), pauses the round", False)
    ]
    four = _obs(events, Timing(1.0, 2.0, 5.0, 4))
    assert _cap_checks(four) == []
    assert not [d for d in judge(four).differences if "past the cap" in d.what]
    # a 5th re-shake asked for without a pause is flagged under a cap of 4, at the re-shake that follows it
    more = [
        RoundEvent("1", RoundEventKind.OPENED, 0.0),
        *_reshakes(6),
        RoundEvent("1", RoundEventKind.SETTLED, 9.0, faces="RRWW"),
    ]
    actual = [d.actual for d in judge(_obs(more, Timing(1.0, 2.0, 5.0, 4))).differences if "past the cap" in d.what]
    assert actual == ["re-shake 6 asked for at 6.000 without a pause", "round settled at 9.000 without a pause"]


def test_a_pause_after_the_reshake_past_the_cap_holds() -> None:
    events = [
        RoundEvent("1", RoundEventKind.OPENED, 0.0),
        *_reshakes(4),
        RoundEvent("1", RoundEventKind.PAUSED, 4.0),
        RoundEvent("1", RoundEventKind.RESUMED, 4.5),
        RoundEvent("1", RoundEventKind.SETTLED, 9.0, faces="RRWW"),
    ]
    assert _cap_checks(_obs(events, Timing(1.0, 2.0, 5.0, 3))) == [
        ("round 1: re-shake 4, past the cap of 3 (since it opened or resumed), pauses the round", True)
    ]
    assert _cap_checks(_obs(events, Timing(1.0, 2.0, 5.0, None))) == []  # the cap unknown: nothing judged


def test_how_the_count_goes_decides_after_a_resume() -> None:
    # cap 1: re-shake 2 is past it, the round pauses and resumes; re-shake 3 is the first of a new count when the
    # count restarts at a resume, but past the cap when it is counted since the round opened
    events = [
        RoundEvent("1", RoundEventKind.OPENED, 0.0),
        *_reshakes(2),
        RoundEvent("1", RoundEventKind.PAUSED, 2.1),
        RoundEvent("1", RoundEventKind.RESUMED, 2.5),
        RoundEvent("1", RoundEventKind.RESHAKE, 3.0),
        RoundEvent("1", RoundEventKind.SETTLED, 9.0, faces="RRWW"),
    ]
    resume = _obs(events, Timing(1.0, 2.0, 5.0, 1, reshake_count="since_resume"))
    assert [ok for _, ok in _cap_checks(resume)] == [True]
    since_open = _obs(events, Timing(1.0, 2.0, 5.0, 1, reshake_count="since_open"))
    assert [ok for _, ok in _cap_checks(since_open)] == [True, False]
    (flagged,) = [d for d in judge(since_open).differences if "past the cap" in d.what]
    assert (flagged.what, flagged.clause) == ("re-shake 3 past the cap", "ERR-1")


def test_a_cancelled_round_is_not_judged_on_the_cap() -> None:
    events = [
        RoundEvent("1", RoundEventKind.OPENED, 0.0),
        *_reshakes(4),
        RoundEvent("1", RoundEventKind.CANCELLED, 9.0, clause="ERR-3"),
    ]
    assert _cap_checks(_obs(events, Timing(1.0, 2.0, 5.0, 3))) == []


def test_the_table_model_counts_reshakes_as_the_configuration_says() -> None:
    # the table stands a token on five shakes with a cap of 1 and the supervisor resolving each cap pause: counted
    # since the last resume the table pauses at re-shakes 2 and 4; counted since the round opened, at every
    # re-shake past the first
    script = [{"round": 1, "shake": k, "standing": [2]} for k in range(1, 6)] + [
        {"round": 1, "shake": 6, "faces": "w w w w"}
    ]
    base = profile_of(quiet_data(), table__max_reshakes=1)

    def pauses(count: str) -> tuple[int, int]:
        profile = table_profile(base, TableConfig(max_reshakes=1, reshake_count=count))
        events = [e for e in run_table(profile, seed=5, rounds=2, script=script) if getattr(e, "round", 0) == 1]
        return sum(isinstance(e, Paused) for e in events), sum(isinstance(e, Resumed) for e in events)

    assert pauses("since_resume") == (2, 2)
    assert pauses("since_open") == (4, 4)


def test_counted_since_open_the_pause_for_a_reshake_reported_after_the_resume_has_its_cause() -> None:
    # the table paused once for the 5th re-shake it needed (cap 4); its report reached the server after the resume,
    # and a server counting since the round opened pauses again for it: due under since_open, unjustified (ERR-2)
    # where a resume restarts the count
    events = [
        RoundEvent("1", RoundEventKind.OPENED, 0.0),
        *_reshakes(4),
        RoundEvent("1", RoundEventKind.PAUSED, 5.0),
        RoundEvent("1", RoundEventKind.RESUMED, 5.3),
        RoundEvent("1", RoundEventKind.RESHAKE, 5.31),
        RoundEvent("1", RoundEventKind.PAUSED, 5.31),
        RoundEvent("1", RoundEventKind.CANCELLED, 6.31, clause="ERR-3"),
    ]
    truth = [Paused(5.0, 1, PauseReason.RESHAKE_CAP), Resumed(5.3, 1)]
    cancelled = RoundEnded(6.31, 1, RoundStatus.CANCELLED, "ERR-3", None, None, 5)

    def found(count: str) -> list[str]:
        obs = replace(_obs(events, Timing(1.0, 1.0, 5.0, 4, reshake_count=count), truth), truth=(*truth, cancelled))
        return [d.clause for d in judge(obs).differences if d.what == "pause 2"]

    assert found("since_open") == []
    assert found("since_resume") == ["ERR-2"]


def test_a_round_shaken_only_while_paused_is_void_where_such_shakes_are_ignored() -> None:
    # the supervisor paused the round at 0.2 and resumed it at 0.8; the only shake started at 0.5, during the pause
    truth = [ShakeStarted(0.5, 1, 1), ShakeEnded(0.9, 1, 1), BettingClosed(1.6, 1)]
    paused = [
        RoundEvent("1", RoundEventKind.OPENED, 0.0),
        RoundEvent("1", RoundEventKind.PAUSED, 0.2),
        RoundEvent("1", RoundEventKind.RESUMED, 0.8),
    ]
    settled = [*paused, RoundEvent("1", RoundEventKind.SETTLED, 9.0, faces="RRWW")]
    void = [*paused, RoundEvent("1", RoundEventKind.VOID, 9.0, clause="SH-4a")]

    def expected(during_pause: str, events: Sequence[RoundEvent]) -> tuple[str, list[str]]:
        obs = _obs(events, Timing(1.0, 2.0, 5.0, 3, shakes_during_pause=during_pause), truth)
        obs = replace(obs, supervisor_paused=("1",))
        verdict = judge(obs)
        return verdict.expected["1"].status, [d.clause for d in verdict.differences if d.what == "round status"]

    assert expected("count", settled) == (RoundStatus.SETTLED, [])
    assert expected("ignored", void)[0] == RoundStatus.VOID
    assert expected("ignored", settled)[0] == RoundStatus.VOID
    assert judge(_obs(settled, Timing(1.0, shakes_during_pause="ignored"), truth)).differences
    # a shake started before the pause is the round's own: settled either way
    early = [ShakeStarted(0.1, 1, 1), ShakeEnded(0.5, 1, 1), BettingClosed(1.6, 1)]
    obs = _obs(settled, Timing(1.0, 2.0, 5.0, 3, shakes_during_pause="ignored"), early)
    assert judge(obs).expected["1"].status == RoundStatus.SETTLED
