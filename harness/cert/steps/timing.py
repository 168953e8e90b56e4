"""Timing steps: what a round's deadlines (the time the table has to reveal) must survive, such as a read the
server waits for past its result timeout and gets after a resume. Reports go through the bench's own device seam
(:mod:`harness.bench.forge`) on the reader's own line.

Waits are bench seconds (wall seconds on a real-time bench).
"""

from __future__ import annotations

from pytest_bdd import when

from harness.bench import forge
from harness.bench.devices.translate import Report
from harness.bench.forge import MissedReport
from harness.cert.steps.context import CertContext, not_applicable
from harness.wire.protocol.messages import Message, Result, Source
from simulator.events import Event, Revealed


@when("the reader's read of this round is lost")
def reader_read_lost(cert: CertContext) -> None:
    """From now on in the current round the reader's ``RESULT`` reports never reach the server (the camera read the
    tokens, the line lost the report): the bowl is off and the server waits for a result it does not get (ERR-1
    once its time to reveal is over). Not applicable on a bench whose table has no reader device of its own.

    Example: When the reader's read of this round is lost
    """
    rig = cert.running()
    try:
        forge.miss(rig, Source.READER, Result)
    except forge.CannotForge as exc:
        not_applicable(str(exc))


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
