"""Steps for ``features/devices.feature``: frames the table did not send, put on its device lines through the bench's
own seam (:mod:`harness.bench.forge`): a result forged on another device's line, a replay of an earlier round's
result, noise, a read that contradicts what the camera saw. Registered by the xocdia pytest plugin
(``STEP_MODULES``).

Each injection is armed on the running rig and fires when the table lifts the bowl (or reads overlapping tokens) in
the round opened last: the moment a report decides a round. Forged frames are hostile input, so a bench with
``faults_allowed: false`` (a shared staging target) does not get them: the scenario is not applicable there, as it is
where the line's device end cannot forge (it lacks :class:`~harness.wire.dialects.capabilities.Forging`) and, for a
result on another device's line, where that line carries the reader too (one bus for every device).

The noise check reads two optional members of the server's adapter (the capability
:class:`~harness.bench.adapters.capabilities.NoiseReporting`, importable here); an adapter without them makes that
step not applicable.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import pytest
from pytest_bdd import parsers, then, when

from harness.bench import forge
from harness.bench.adapters.capabilities import NoiseReporting as NoiseReporting
from harness.bench.rig import BenchTimeout, Rig
from harness.cert.steps.context import CertContext, lose_reports, not_applicable
from harness.cert.steps.params import FACES, typed
from harness.wire.dialects.capabilities import NoiseKind
from harness.wire.messages import (
    BowlOff,
    BowlOn,
    Drop,
    DropItem,
    Frame,
    Message,
    Problem,
    ProblemReason,
    ReaderRearranged,
    Result,
    ShakeStart,
    Source,
)
from simulator.events import BettingClosed, Event, Revealed

#: A round tag no server is playing: prefixed so that it never names a real round (round ids are §2 values).
_NO_ROUND = "X"
#: What the harness notes in the rig's actions when it arms a contradicting read (:func:`contradicting_read`): a
#: pause of that round then decides PROC-1.
CONTRADICTING_READ = "contradicting read"


@dataclass
class Injections:
    """What a scenario injected: the well-formed noise frames, and the server's counts before the noise."""

    noise: int = 0
    before: tuple[int, int] | None = None
    notes: list[str] = field(default_factory=list)


@pytest.fixture
def injections() -> Injections:
    return Injections()


def _rig(cert: CertContext) -> Rig:
    """The running rig, when its bench takes forged frames (else the scenario is not applicable)."""
    rig = cert.running()
    if not rig.bench.faults_allowed:
        not_applicable(
            f"bench {rig.bench.name} forbids faults (faults_allowed: false): no forged device frames are "
            "injected into its server"
        )
    return rig


def _line(rig: Rig, device: str) -> str:
    """The name of the line that carries ``device``, when its device end can forge (else not applicable)."""
    try:
        name = forge.line_of(rig, device)
        forge.forgeable(rig, name)
    except forge.CannotForge as exc:
        not_applicable(str(exc))
    return name


@when(
    parsers.parse("a READER RESULT of {result} for this round arrives on the {device} line after the close"),
    converters=typed(result=FACES),
)
def forged_result(cert: CertContext, result: str, device: str) -> None:
    """A valid READER RESULT with these faces, tagged with the current round, is written on another device's line
    when the table sees betting close, and again right after it lifts the bowl (DEV-1): the line's device did not
    make it, so it must not count. The first one arrives before the lift (a server that keeps a read until the
    bowl is off would apply it at the lift), the second one before the reader's own read. Not applicable where the
    device's line carries the reader too (one bus for every device: a result on it is the reader's).

    Example: When a READER RESULT of r r r r for this round arrives on the console line after the close
    """
    rig = _rig(cert)
    if device.upper() == Source.READER.value:
        raise AssertionError(f"the {device} line is the reader's: name another device's line")
    name = _line(rig, device)
    if Source.READER in forge.spec_of(rig, name).roles:
        not_applicable(
            f"the {device} line of bench {rig.bench.name} is its {name} line, which carries the reader too: a result "
            "on it is the reader's"
        )
    read = Result(result, False)

    def fire() -> None:
        frame = Frame(0, Source.READER, read, round=forge.current_tag(rig), at=forge.device_time(rig))
        forge.write_frames(rig, name, [frame])

    forge.on_table(rig, BettingClosed, fire)
    forge.at_lift(rig, fire)


def _earlier_read(cert: CertContext, rig: Rig, k: int) -> Revealed:
    """The table's (last) read of round k, as its reader made it."""
    number = rig.driver.rounds[cert.round_id(k)]
    reads = [e for e in rig.truth if isinstance(e, Revealed) and e.round == number and not e.overlap]
    if not reads:
        raise AssertionError(f"round {k} has no read to replay")
    return reads[-1]


def _replay(cert: CertContext, k: int, tagged: bool) -> None:
    rig = _rig(cert)
    read = _earlier_read(cert, rig, k)
    if tagged and not rig.emulated.round_tags:
        not_applicable(f"the devices of bench {rig.bench.name} send no round tags")
    if tagged:
        from harness.cert.steps.context import needs

        needs(cert, "round_tags", "the replayed result carries the round it was read in", Source.READER)
    tag = cert.round_id(k) if tagged else None
    message = Result(read.faces, False)
    at = forge.device_time(rig, read.t)  # a replay carries the frame as it was, its event time included

    def fire() -> None:
        try:
            forge.queue_report(rig, Source.READER, message, tag, at)
        except forge.CannotForge as exc:
            rig.note("harness", "replay not sent", str(exc))

    forge.at_lift(rig, fire)


@when(parsers.parse("the reader sends round {k:d}'s result again untagged as the bowl comes off"))
def replay_untagged(cert: CertContext, k: int) -> None:
    """The reader sends its read of round k again, without a round tag and with a fresh sequence number, right
    after the table lifts the bowl in the current round (DEV-2).

    Example: When the reader sends round 1's result again untagged as the bowl comes off
    """
    _replay(cert, k, tagged=False)


@when(parsers.parse("the reader sends round {k:d}'s result again as the bowl comes off"))
def replay_tagged(cert: CertContext, k: int) -> None:
    """The reader sends its read of round k again, still tagged with round k (a decided round), right after the
    table lifts the bowl in the current round (DEV-2).

    Example: When the reader sends round 1's result again as the bowl comes off
    """
    _replay(cert, k, tagged=True)


@when(
    parsers.parse("the reader sends a result {result} tagged with round {k:d} as the bowl comes off"),
    converters=typed(result=FACES),
)
def result_for_round(cert: CertContext, result: str, k: int) -> None:
    """Right after the table lifts the bowl in the current round, the reader sends a result with these faces tagged
    with round k (a round already decided: settled, void, or cancelled by a restart), on its own line and with a
    fresh sequence number: what a reader that missed the server's restart sends (DEV-2). Not applicable on a bench
    whose devices send no round tags.

    Example: When the reader sends a result r r r r tagged with round 1 as the bowl comes off
    """
    rig = _rig(cert)
    if not rig.emulated.round_tags:
        not_applicable(f"the devices of bench {rig.bench.name} send no round tags")
    message, tag = Result(result, False), cert.round_id(k)

    def fire() -> None:
        try:
            forge.queue_report(rig, Source.READER, message, tag, forge.device_time(rig))
        except forge.CannotForge as exc:
            rig.note("harness", "result not sent", str(exc))

    forge.at_lift(rig, fire)


def _noise(rig: Rig, name: str, device: str) -> tuple[list[Frame | forge.Noise], int]:
    """One cycle of noise for line ``name`` (the line of ``device``): reports of its own devices for a round not in
    play, an untagged round-deciding report, a report of a device the line does not carry for the current round (each
    where the line's dialect can express it), then frames with a valid check that the dialect refuses (an unknown
    type, a bad field, a missing field: those its end can make), claiming to come from ``device``. Returns the items
    and how many of them (the first ones) are well formed: on a polled line a frame from a device the line does not
    carry is a reply from an address its master does not poll, an error of the dialogue like the malformed frames
    (docs/dialects/xocdia-bus.md §6), so it is not among them."""
    spec = forge.spec_of(rig, name)
    roles = spec.roles
    now, tag = forge.device_time(rig), forge.current_tag(rig)
    other = _NO_ROUND + (tag or "0")
    own: dict[Source, list[Message]] = {
        Source.READER: [Result("RRRR", False), ReaderRearranged("WWWW")],
        Source.BOWL: [BowlOff(True, 0)],
        Source.SHAKER: [Drop(DropItem.TOKEN, 1), ShakeStart()],
        Source.CONSOLE: [Problem(ProblemReason.EQUIPMENT)],
    }
    frames: list[Frame] = []
    for role in roles:
        for message in own.get(role, []):
            frames.append(Frame(0, role, message, round=other, at=now))
    strangers: list[Frame] = []  # reports of a device the line does not carry
    if Source.READER in roles:
        frames.append(Frame(0, Source.READER, Result("WWWW", False), at=now))  # untagged
        if Source.BOWL not in roles:
            strangers.append(Frame(0, Source.BOWL, BowlOff(True, 2), round=tag, at=now))
    else:
        strangers.append(Frame(0, Source.READER, Result("RRRR", False), round=tag, at=now))
    if spec.dialect.dialogue != "poll":
        frames, strangers = frames + strangers, []
    items: list[Frame | forge.Noise] = [f for f in frames if forge.expressible(rig, name, f)]
    well_formed = len(items)
    items += [f for f in strangers if forge.expressible(rig, name, f)]
    src = Source(device.upper()) if device.upper() in (r.value for r in roles) else roles[0]
    made = forge.noise_kinds(rig, name)
    items += [forge.Noise(kind, src) for kind in NoiseKind if kind in made]
    return items, well_formed


@when(parsers.parse("{count:d} noise frames arrive on the {device} line as the bowl comes off"))
def noise(cert: CertContext, injections: Injections, count: int, device: str) -> None:
    """Frames with a valid check that are irrelevant or malformed, ``count`` of them in one burst, on this line
    right after the table lifts the bowl (DEV-3), in the line's dialect: reports for a round not in play, an untagged
    result, another device's report, and frames the dialect refuses (unknown type, bad or missing field) where the
    line's device end can make them.

    Example: When 300 noise frames arrive on the reader line as the bowl comes off
    """
    rig = _rig(cert)
    name = _line(rig, device)
    adapter = rig.adapter
    if isinstance(adapter, NoiseReporting):
        injections.before = (adapter.ignored_device_frames(), adapter.event_log_size())

    def fire() -> None:
        cycle, well_formed = _noise(rig, name, device)
        if not cycle:
            raise AssertionError(f"the dialect of the {name} line can express none of the noise frames")
        items = [cycle[i % len(cycle)] for i in range(count)]
        injections.noise = sum(1 for i in range(count) if i % len(cycle) < well_formed)
        forge.write_frames(rig, name, items)

    forge.at_lift(rig, fire)


@when(
    parsers.parse("the reader reads the overlapping tokens again as {result} before they are spread"),
    converters=typed(result=FACES),
)
def contradicting_read(cert: CertContext, result: str) -> None:
    """Right after the reader's read of overlapping tokens in the current round, the reader reports a read of them
    with these faces (a token turned, or a misread) before the dealer has spread them (PROC-1).

    Example: When the reader reads the overlapping tokens again as w w w r before they are spread
    """
    rig = _rig(cert)
    number = rig.driver.rounds.get(rig.current_round())
    message = ReaderRearranged(result)
    rig.note("harness", CONTRADICTING_READ, f"round {rig.current_round()}: {message.faces} before the spread")
    done = False

    def watch(event: Event) -> None:
        nonlocal done
        if not done and isinstance(event, Revealed) and event.round == number and event.overlap:
            done = True
            forge.queue_report(rig, Source.READER, message, forge.current_tag(rig), forge.device_time(rig))

    rig.emulated.watchers.append(watch)


@when(parsers.parse("the bowl sensor does not report the bowl put on in this round"))
def bowl_never_on(cert: CertContext) -> None:
    """From now on in the current round the bowl sensor does not send ``BOWL ON`` (the dealer covers the plate, but
    for the server the bowl was never put on): its lift reaches the server with no ``BOWL ON`` before it (PROC-2).

    Example: When the bowl sensor does not report the bowl put on in this round
    """
    rig = _rig(cert)
    lose_reports(rig, Source.BOWL, BowlOn)


@when(parsers.parse("the reader sends round {k:d}'s result again untagged before the next round opens"))
def replay_between_rounds(cert: CertContext, k: int) -> None:
    """The reader sends its read of round k again, without a round tag and with a fresh sequence number, now, while
    no round is in play (after round k ended, before the next one opens), and the step waits 0.2 s for it to reach
    the server (DEV-2: a line's refused frame when no round is in play).

    The step checks DEV-2 once it has waited: the replay ended no round and changed no round's end, round k's
    included (what it must not do to the next round, that round's own settlement shows).

    Example: When the reader sends round 1's result again untagged before the next round opens
    """
    rig = _rig(cert)
    read = _earlier_read(cert, rig, k)
    rid = cert.round_id(k)
    if rig.server_end(rid) is None:
        raise AssertionError(f"round {k} has not ended: play it to the end first")
    before = _round_ends(rig)
    try:
        forge.queue_report(rig, Source.READER, Result(read.faces, False), None, forge.device_time(rig, read.t))
    except forge.CannotForge as exc:
        not_applicable(str(exc))
    rig.run_for(0.2)
    after = _round_ends(rig)
    what = f"round {k}'s result replayed untagged between rounds: expected no round end changed, server {before}"
    what += " unchanged" if after == before else f" became {after}"
    cert.check("DEV-2", after == before, what, rid)


def _round_ends(rig: Rig) -> list[tuple[str, str, str, str]]:
    """Every round end the server reported: (round id, kind, clause, faces), in its order."""
    return [(e.round_id, str(e.kind), e.clause, e.faces) for e in rig.adapter.round_events() if e.ends_round]


@when("the bowl sensor reports the bowl put back on right after the lift")
def bowl_back_on(cert: CertContext) -> None:
    """Right after the table's bowl sensor reports the next lift of the bowl in the current round, it reports the
    bowl put on the plate again (``BOWL ON``), on its own line: the dealer covers the plate once the tokens are
    revealed. The reveal has happened; a read of it still decides the round.

    Example: When the bowl sensor reports the bowl put back on right after the lift
    """
    rig = _rig(cert)
    if Source.BOWL not in rig.emulated.hub.roles:
        not_applicable(f"bench {rig.bench.name} has no bowl sensor")
    forge.at_lift(
        rig, lambda: forge.queue_report(rig, Source.BOWL, BowlOn(), forge.current_tag(rig), forge.device_time(rig))
    )


@then(parsers.parse("the server counted the noise and its event log grew by at most {most:d} entries"))
def noise_counted(cert: CertContext, injections: Injections, most: int) -> None:
    """The server counts every well-formed noise frame it refused or ignored (none is silently lost), and its
    permanent event log did not grow frame by frame: at most ``most`` entries were added since the noise was armed,
    the round's own events included (DEV-3). Needs an adapter with the optional members ``ignored_device_frames``
    and ``event_log_size`` (docs/adapters.md).

    Example: Then the server counted the noise and its event log grew by at most 40 entries
    """
    rig = cert.running()
    adapter = rig.adapter
    if not isinstance(adapter, NoiseReporting) or injections.before is None:
        not_applicable(
            f"adapter {type(adapter).__name__} does not report the server's ignored device frames and event log "
            "size (ignored_device_frames, event_log_size: docs/adapters.md)"
        )
    assert injections.noise > 0, "no noise was sent (the table never lifted the bowl?)"
    before = injections.before
    with contextlib.suppress(BenchTimeout):  # a slow line may still be carrying the burst: wait for the count
        rig.run_until(lambda: adapter.ignored_device_frames() - before[0] >= injections.noise, "the noise counted")
    ignored = adapter.ignored_device_frames() - before[0]
    grown = adapter.event_log_size() - before[1]
    rid = rig.current_round()
    what = f"the server counted {ignored} of {injections.noise} noise frames, expected every one"
    cert.check("DEV-3", ignored >= injections.noise, what, rid)
    what = f"the event log grew by {grown} entries for {injections.noise} noise frames, expected at most {most}"
    cert.check("DEV-3", grown <= most, what, rid)
