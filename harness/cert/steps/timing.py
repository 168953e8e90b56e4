"""Steps for what a round's deadlines must survive and what a server must refuse outright: reports that reach the
server late (a shake reported after the close, a read lost and read again after the result timeout or a re-shake),
pauses that give time back (ERR-2), a correction to something that is no outcome (COR-1). Reports go through the
bench's own device seam (:mod:`harness.bench.forge`) on the device's own line; waits are bench seconds (wall
seconds on a real-time bench). Registered by the xocdia pytest plugin (``STEP_MODULES``).
"""

from __future__ import annotations

from collections.abc import Callable

from pytest_bdd import parsers, then, when

from harness.bench import forge
from harness.bench.devices.translate import Report
from harness.bench.forge import MissedReport
from harness.bench.rig import Rig
from harness.cert.steps.context import CertContext, lose_reports, not_applicable
from harness.cert.steps.money import check_refused_correction
from harness.records import RoundEventKind
from harness.wire.protocol.messages import BowlOff, Message, Result, ShakeEnd, ShakeStart, Source
from simulator.events import BettingClosed, BowlLifted, Event, Revealed, RoundOpened, ShakeEnded, ShakeStarted


@when(parsers.parse("the round's first close is {seconds:g} seconds past"))
def first_close_past(cert: CertContext, seconds: float) -> None:
    """Let the bench run until ``seconds`` after the close the table's lamp first announced for the current round
    (the deadline of its first betting-open, before any pause moved it): a time that is after the close whatever the
    bench's betting period. Fails when the table has not seen the current round open.

    Example: When the round's first close is 0.5 seconds past
    """
    rig = cert.running()
    number = rig.driver.rounds.get(rig.current_round())
    opened = [e for e in rig.truth if isinstance(e, RoundOpened) and e.round == number]
    if not opened:
        raise AssertionError(f"the table has not seen round {rig.current_round() or '(none)'} open")
    wait = opened[0].deadline + seconds - rig.now
    if wait > 0:  # already past (a pause outlasted it): nothing to wait for
        rig.run_for(wait)


@when("the reader's read of this round is lost")
def reader_read_lost(cert: CertContext) -> None:
    """From now on in the current round the reader's ``RESULT`` reports never reach the server (the camera read the
    tokens, the line lost the report): the bowl is off and the server waits for a result it does not get (ERR-1
    once its time to reveal is over). Not applicable on a bench whose table has no reader device of its own.

    Example: When the reader's read of this round is lost
    """
    rig = cert.running()
    lose_reports(rig, Source.READER, Result)


class _DecidingReadMissed(MissedReport):
    """The table's event translator, except that the reader never reports, in simulator round ``number``, a read
    with no standing token and no overlap: the read that would decide the round is lost; a read that asks for a
    re-shake (SH-3) or shows overlapping tokens (SH-1) still reaches the server."""

    def __call__(self, event: Event) -> list[Report]:
        reports = self.inner(event)
        if getattr(event, "round", None) != self.number:
            return reports
        return [(s, m) for s, m in reports if not (s is Source.READER and _deciding(m))]


def _deciding(message: Message) -> bool:
    return isinstance(message, Result) and not message.overlap and "S" not in message.faces


@when("the reader's deciding read of this round is lost")
def deciding_read_lost(cert: CertContext) -> None:
    """From now on in the current round the reader's reads that would settle it (no standing token, no overlap)
    never reach the server, while its reads of a standing token do (the server asks for the re-shakes SH-3 needs).
    Not applicable on a bench whose table has no reader device of its own.

    Example: When the reader's deciding read of this round is lost
    """
    rig = cert.running()
    table = rig.emulated
    if Source.READER not in table.hub.roles:
        not_applicable(f"bench {rig.bench.name} has no reader device")
    number = rig.driver.rounds[rig.current_round()]
    rig.note("harness", "sensor misses", "READER deciding RESULT in this round")
    rig.alter("miss", Source.READER.value, "deciding Result")
    table.translator = _DecidingReadMissed(table.translator, Source.READER, Result, number)  # type: ignore[assignment]


@when("the reader reads the tokens of this round again")
def reader_reads_again(cert: CertContext) -> None:
    """The reader reports, on its own line and now, a read of the tokens the table revealed last in the current
    round (its last read, as the camera saw it): what a reader does when asked to read again while the bowl is off.
    Fails when the table has revealed nothing in the round yet.

    Example: When the reader reads the tokens of this round again
    """
    rig = cert.running()
    number = rig.driver.rounds[rig.current_round()]
    reads = [e for e in rig.truth if isinstance(e, Revealed) and e.round == number and not e.overlap]
    if not reads:
        raise AssertionError("the table has revealed nothing in this round: there is nothing to read again")
    tag = forge.current_tag(rig)
    try:
        forge.queue_report(rig, Source.READER, Result(reads[-1].faces, False), tag, forge.device_time(rig))
    except forge.CannotForge as exc:
        not_applicable(str(exc))


@when("the shaker's reports of this round reach the server only when betting closes")
def shaker_reports_late(cert: CertContext) -> None:
    """From now on in the current round the shaker's ``START`` and ``END`` reports are held back, and sent on the
    shaker's own line, in order and each with the device time of the moment it happened, when the table sees betting
    close: a shake made during betting whose reports reach the server late (docs/server.md, SH-4a at the close: a
    ``SHAKER START`` dated before the close, arriving within ``reorder_grace_s`` of it, counts as the shake). Not
    applicable on a bench whose devices send no event times (protocol 1.2 ``at``) or whose table has no shaker.

    Example: When the shaker's reports of this round reach the server only when betting closes
    """
    _shaker_late(cert, 0.0)


@when(
    parsers.parse("the shaker's reports of this round reach the server only {seconds:g} seconds after betting closes")
)
def shaker_reports_later(cert: CertContext, seconds: float) -> None:
    """As "the shaker's reports of this round reach the server only when betting closes", but they are sent
    ``seconds`` after the table sees betting close (within the server's ``reorder_grace_s`` of the close, 0.5 s on
    the reference server): another line's report made after the close, a console ``PROBLEM``, can reach the server
    before them. Not applicable on a bench whose devices send no event times or whose table has no shaker.

    Example: When the shaker's reports of this round reach the server only 0.2 seconds after betting closes
    """
    _shaker_late(cert, seconds)


def _shaker_late(cert: CertContext, delay: float) -> None:
    rig = cert.running()
    if Source.SHAKER not in rig.emulated.hub.roles:
        not_applicable(f"bench {rig.bench.name} has no shaker device")
    if forge.device_time(rig) is None:
        not_applicable(f"the devices of bench {rig.bench.name} send no event times (protocol 1.2 at)")
    number = rig.driver.rounds[rig.current_round()]
    forge.miss(rig, Source.SHAKER, ShakeStart)
    forge.miss(rig, Source.SHAKER, ShakeEnd)

    def send() -> None:
        tag = forge.current_tag(rig)
        for e in rig.truth:
            if isinstance(e, ShakeStarted | ShakeEnded) and e.round == number:
                message = ShakeStart() if isinstance(e, ShakeStarted) else ShakeEnd()
                forge.queue_report(rig, Source.SHAKER, message, tag, forge.device_time(rig, e.t))

    forge.on_table(rig, BettingClosed, send if delay <= 0 else lambda: _after(rig, delay, send))


def _after(rig: Rig, seconds: float, action: Callable[[], None]) -> None:
    """Run ``action`` once, ``seconds`` bench seconds from now."""
    rig.env.timeout(seconds).callbacks.append(lambda _event: action())


@when("the shaker's END report of this round is lost")
def shaker_end_lost(cert: CertContext) -> None:
    """From now on in the current round the shaker's ``END`` reports never reach the server (the dealer finished the
    shake, the line lost the report): for the server the shake it saw start never ended, so when the bowl is lifted
    the round has had no complete shake (SH-4a), once the server has waited its ``reorder_grace_s`` for an ``END``
    that might only be late. Not applicable on a bench whose table has no shaker.

    Example: When the shaker's END report of this round is lost
    """
    rig = cert.running()
    lose_reports(rig, Source.SHAKER, ShakeEnd)


@when(parsers.parse("the bowl sensor reports the lift of this round only {seconds:g} seconds after the bowl comes off"))
def lift_reported_late(cert: CertContext, seconds: float) -> None:
    """From now on in the current round the bowl sensor's ``OFF`` report of each lift is held back and sent on its own
    line ``seconds`` after the lift, with the device time of the lift: the reader's read of the revealed tokens
    reaches the server first, and the server must keep it until the lift it follows arrives (within its
    ``reorder_grace_s``, 0.5 s on the reference server; choose ``seconds`` below it, above the bench's reader
    latency). Not applicable on a bench whose table has no bowl sensor.

    Example: When the bowl sensor reports the lift of this round only 0.3 seconds after the bowl comes off
    """
    rig = cert.running()
    lose_reports(rig, Source.BOWL, BowlOff)
    number = rig.driver.rounds[rig.current_round()]

    def watch(event: Event) -> None:
        if isinstance(event, BowlLifted) and event.round == number:
            tag = forge.current_tag(rig)
            message = BowlOff(event.touched, event.token if event.touched else None)
            at = forge.device_time(rig, event.t)
            _after(rig, seconds, lambda: forge.queue_report(rig, Source.BOWL, message, tag, at))

    rig.emulated.watchers.append(watch)


@when(parsers.parse("the shaker reports a shake that starts {seconds:g} seconds after betting closes"))
def shake_after_close(cert: CertContext, seconds: float) -> None:
    """``seconds`` after the table sees betting close in the current round, the shaker reports on its own line a shake
    (``START``, then ``END``) with the device time of that moment: a dealer who shakes only once betting is over, which
    is no shake of the betting period (GP-2, SH-4a), however soon after the close its reports arrive. Script the round
    with "the dealer forgets to shake" (the table's own shake is the one after the close). Not applicable on a bench
    whose devices send no event times (protocol 1.2 ``at``) or whose table has no shaker.

    Example: When the shaker reports a shake that starts 0.02 seconds after betting closes
    """
    _shaker_after_close(cert, seconds, (ShakeStart(), ShakeEnd()))


@when(parsers.parse("the shaker reports a shake start {seconds:g} seconds after betting closes and never its end"))
def shake_start_after_close(cert: CertContext, seconds: float) -> None:
    """``seconds`` after the table sees betting close in the current round, the shaker reports on its own line a
    ``START`` with the device time of that moment, and never an ``END``: a stray start once the round's shake is over
    (the dealer nudged the shaker before lifting the bowl). The bowl is lifted as usual; the server may wait a while
    for an ``END`` that never comes, but the outcome is the one revealed by the lift (GP-3). Not applicable on a bench
    whose devices send no event times (protocol 1.2 ``at``) or whose table has no shaker.

    Example: When the shaker reports a shake start 0.02 seconds after betting closes and never its end
    """
    _shaker_after_close(cert, seconds, (ShakeStart(),))


def _shaker_after_close(cert: CertContext, seconds: float, messages: tuple[Message, ...]) -> None:
    rig = cert.running()
    if Source.SHAKER not in rig.emulated.hub.roles:
        not_applicable(f"bench {rig.bench.name} has no shaker device")
    if forge.device_time(rig) is None:
        not_applicable(f"the devices of bench {rig.bench.name} send no event times (protocol 1.2 at)")

    def send() -> None:
        tag, at = forge.current_tag(rig), forge.device_time(rig)
        for message in messages:
            forge.queue_report(rig, Source.SHAKER, message, tag, at)

    forge.on_table(rig, BettingClosed, lambda: _after(rig, seconds, send))


@when("the bowl sensor's report of the lift of this round is lost")
def lift_report_lost(cert: CertContext) -> None:
    """From now on in the current round the bowl sensor's ``OFF`` reports never reach the server (the dealer lifted
    the bowl, the line lost the report): the server must decide the round on what else it knows, by its own
    deadlines. Not applicable on a bench whose table has no bowl sensor.

    Example: When the bowl sensor's report of the lift of this round is lost
    """
    rig = cert.running()
    lose_reports(rig, Source.BOWL, BowlOff)


#: How late after its round gap a server that opens rounds itself may open the next one: its own timer's latency,
#: not a second wait (the bench's service steps are 5 ms apart; a real-time server wakes within milliseconds).
GAP_LATE_S = 0.25


@then(parsers.parse("the server opened round {m:d} its round gap after it ended round {n:d}"))
def opened_after_gap(cert: CertContext, m: int, n: int) -> None:
    """On the server's own clock (its round events' time stamps), round m opened the round gap the bench configured
    the server with (``timing.round_gap_s``) after round n ended: never sooner (a server that opens rounds on its own
    timer leaves the players that gap to see the outcome and their settlement before it takes bets again) and at most
    0.25 s later (its timer, not another event, opens the round). Not applicable on a bench attached by URL (the
    harness does not configure that server's gap).

    The checks decide GP-3: a round ends once its outcome is revealed and its bets settled, and the gap is the time
    the players have to see that settlement before the next round takes bets (no RULES.md clause names the gap).

    Example: Then the server opened round 2 its round gap after it ended round 1
    """
    rig = cert.running()
    if rig.bench.server.kind == "url":
        not_applicable(f"bench {rig.bench.name} is attached by URL: the harness does not set that server's round gap")
    ended_rid, rid = cert.round_id(n), cert.round_id(m)
    ended = rig.server_end(ended_rid)
    cert.check("GP-3", ended is not None, f"round {n}: expected ended, the server has not ended it", ended_rid)
    assert ended is not None
    opened = [e for e in rig.adapter.round_events() if e.round_id == rid and e.kind == RoundEventKind.OPENED]
    cert.check("GP-3", bool(opened), f"round {m}: expected opened, the server has not opened it", rid)
    gap = rig.bench.timing.round_gap_s
    waited = opened[0].at - ended.at
    what = (
        f"round {m} opened {waited:.6f} s after round {n} ended; expected the server's round gap of {gap} s "
        f"(at most {GAP_LATE_S} s late)"
    )
    cert.check("GP-3", gap - 1e-9 <= waited <= gap + GAP_LATE_S, what, rid)


@then(parsers.parse("the supervisor's correction of round {n:d} to the faces {text} is refused"))
def correction_refused(cert: CertContext, n: int, text: str) -> None:
    """The supervisor asks the server to correct round n to ``text`` as it stands (upper-cased, spaces removed,
    not checked by the harness): a string that is not four faces of R/W is no outcome of the four tokens (GP-1), so
    the server must refuse it, whatever its code. A later step checks that nothing changed. Not applicable on an
    adapter without corrections.

    The check decides COR-1 (a correction is only ever to other faces of the four tokens).

    Example: Then the supervisor's correction of round 1 to the faces r r r is refused
    """
    check_refused_correction(cert, n, "".join(text.upper().split()))
