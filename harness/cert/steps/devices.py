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
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from pytest_bdd import parsers, then, when

from harness.bench import forge
from harness.bench.adapters.capabilities import NoiseReporting as NoiseReporting
from harness.bench.rig import BenchTimeout, Rig
from harness.cert.steps.context import CertContext, lose_reports, needs, not_applicable
from harness.cert.steps.params import FACES, typed
from harness.records import RoundEventKind
from harness.wire.dialects.capabilities import Muting, NoiseKind, Redialing
from harness.wire.frame_errors import EncodeError
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
from simulator.events import BettingClosed, BowlLifted, Event, Revealed, ShakeStarted

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
    bowl is off would apply it at the lift), the second one before the reader's own read. On a polled bus that
    carries the reader too, the device's line is its address: the result goes in that device's reply, under its
    address (:func:`~harness.bench.forge.write_in_reply`). Not applicable where a push line carries the reader too
    (a result on it is the reader's), where the bus's device end cannot put a frame in another device's reply, or
    where the line's dialect cannot carry a reader's result on that line (:func:`~harness.bench.forge.inexpressible`:
    the reason names the dialect and what it cannot carry).

    Example: When a READER RESULT of r r r r for this round arrives on the console line after the close
    """
    rig = _rig(cert)
    if device.upper() == Source.READER.value:
        raise AssertionError(f"the {device} line is the reader's: name another device's line")
    name = _line(rig, device)
    spec = forge.spec_of(rig, name)
    via = Source(device.upper()) if device.upper() in (r.value for r in spec.roles) else None
    if Source.READER in spec.roles and (spec.dialect.dialogue != "poll" or via is None):
        not_applicable(
            f"the {device} line of bench {rig.bench.name} is its {name} line, which carries the reader too: a result "
            "on it is the reader's"
        )
    if Source.READER in spec.roles:
        try:
            forge.address_forgeable(rig, name)
        except forge.CannotForge as exc:
            not_applicable(str(exc))
    read = Result(result, False)

    def frame() -> Frame:
        return Frame(0, Source.READER, read, round=forge.current_tag(rig), at=forge.device_time(rig))

    why = forge.inexpressible(rig, name, frame())
    if why:
        not_applicable(why)

    def fire() -> None:
        try:
            if Source.READER in spec.roles and via is not None:
                forge.write_in_reply(rig, name, via, frame())
            else:
                forge.write_frames(rig, name, [frame()])
        except EncodeError as exc:  # armed on a frame the line could carry: only its time or tag can differ now
            rig.note("harness", "forged result not sent", f"the {name} line ({spec.dialect.name}): {exc}")

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
        needs(cert, "round_tags", "the replayed result carries the round it was read in", Source.READER)
    else:
        needs(cert, "round_tags", "only where reads carry their round is an untagged one refused", Source.READER)
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
    needs(cert, "round_tags", "the result carries the round it was read in", Source.READER)
    message, tag = Result(result, False), cert.round_id(k)

    def fire() -> None:
        try:
            forge.queue_report(rig, Source.READER, message, tag, forge.device_time(rig))
        except forge.CannotForge as exc:
            rig.note("harness", "result not sent", str(exc))

    forge.at_lift(rig, fire)


def _noise(rig: Rig, name: str, device: str) -> tuple[list[Frame | forge.Noise], int]:
    """One cycle of noise for line ``name`` (the line of ``device``): reports of its own devices for a round not in
    play (only where the line's dialect declares ``round_tags``: on a line whose reports carry no round, such a
    report is the device's own report of the round in play), an untagged round-deciding report, a report of a device
    the line does not carry for the current round (each where the line's dialect can express it), then frames with a
    valid check that the dialect refuses (an unknown type, a bad field, a missing field: those its end can make),
    claiming to come from ``device``. Returns the items and how many of them (the first ones) are well formed: every
    report, a polled line's reply from an address its master does not poll included (counted as from another line,
    as a push line's frame from another device)."""
    spec = forge.spec_of(rig, name)
    roles = spec.roles
    now, tag = forge.device_time(rig), forge.current_tag(rig)
    other = _NO_ROUND + (tag or "0")
    tagged = spec.dialect.capabilities.round_tags
    own: dict[Source, list[Message]] = {
        Source.READER: [Result("RRRR", False), ReaderRearranged("WWWW")],
        Source.BOWL: [BowlOff(True, 0)],
        Source.SHAKER: [Drop(DropItem.TOKEN, 1), ShakeStart()],
        Source.CONSOLE: [Problem(ProblemReason.EQUIPMENT)],
    }
    frames: list[Frame] = []
    for role in roles if tagged else ():
        for message in own.get(role, []):
            frames.append(Frame(0, role, message, round=other, at=now))
    if Source.READER in roles:
        frames.append(Frame(0, Source.READER, Result("WWWW", False), at=now))  # untagged
        if Source.BOWL not in roles:  # a report of a device the line does not carry
            frames.append(Frame(0, Source.BOWL, BowlOff(True, 2), round=tag, at=now))
    else:
        frames.append(Frame(0, Source.READER, Result("RRRR", False), round=tag, at=now))
    items: list[Frame | forge.Noise] = [f for f in frames if forge.expressible(rig, name, f)]
    well_formed = len(items)
    src = Source(device.upper()) if device.upper() in (r.value for r in roles) else roles[0]
    made = forge.noise_kinds(rig, name)
    items += [forge.Noise(kind, src) for kind in NoiseKind if kind in made]
    return items, well_formed


@when(parsers.parse("{count:d} noise frames arrive on the {device} line as the bowl comes off"))
def noise(cert: CertContext, injections: Injections, count: int, device: str) -> None:
    """Frames with a valid check that are irrelevant or malformed, ``count`` of them in one burst, on this line
    right after the table lifts the bowl (DEV-3), in the line's dialect: reports for a round not in play (where the
    line's reports carry their round), an untagged result, another device's report, and frames the dialect refuses
    (unknown type, bad or missing field) where the line's device end can make them.

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


# --- the device link: damaged checks, lost acknowledgements, silence, the sequence wrap -----------------------------
#: The devices a link step names, and the reports a lost-acknowledgement step names (by the word a scenario uses).
_DEVICES = {"reader": Source.READER, "bowl": Source.BOWL, "shaker": Source.SHAKER, "console": Source.CONSOLE}
_REPORTS: dict[str, type[Message]] = {"drop": Drop, "result": Result, "start": ShakeStart, "lift": BowlOff}
_DEVICE_RE = "|".join(_DEVICES)
_REPORT_RE = "|".join(_REPORTS)
#: The moments a line may go silent at, each as the table event after which it does.
_PHASES: dict[str, type[Event]] = {
    "while the dealer shakes": ShakeStarted,
    "after the close": BettingClosed,
    "at the read": BowlLifted,
}
_PHASE_RE = "|".join(_PHASES)
#: What a silence limit may be overrun by on the bench: the server's service step and the bench's wake-ups.
SILENCE_SLACK_S = 0.25


@dataclass
class LinkFaults:
    """What a scenario did to its device links: when it silenced a line (bench time), and which line."""

    silenced_at: float | None = None
    silenced_line: str = ""


@pytest.fixture
def link_faults() -> LinkFaults:
    return LinkFaults()


def _link_step(action: Callable[[], object]) -> None:
    """Run a link fault's arming, the scenario not applicable when the bench cannot do it."""
    try:
        action()
    except forge.CannotForge as exc:
        not_applicable(str(exc))


@when(parsers.re(rf"the (?P<device>{_DEVICE_RE})'s next report goes out with one bit of its check flipped"))
def check_flipped(cert: CertContext, device: str) -> None:
    """The device's next report goes out once with one bit of its integrity check flipped, its body intact; the
    device sends it again, intact, when the server does not take it (its dialogue's retransmission or the master's
    repeated poll). Not applicable where the device's dialect carries no integrity check (``integrity_checked``
    false) or its device end cannot damage one (it lacks ``CheckFlipping``).

    Example: When the reader's next report goes out with one bit of its check flipped
    """
    rig = _rig(cert)
    _link_step(lambda: forge.flip_check(rig, _DEVICES[device]))


# EQ-3: the outcome is the faces the reader saw; a frame whose check fails may carry any faces, so the server must
# refuse it whatever it says, and take the report only from the copy whose check holds.
@then(parsers.re(rf"the server refused the damaged (?P<device>{_DEVICE_RE}) report and took it when sent again"))
def damaged_refused(cert: CertContext, device: str) -> None:
    """The report sent with a damaged check was not acknowledged: the device had to send it again, and the copy
    whose check holds was acknowledged (EQ-3). A server that does not check the integrity of its frames takes the
    damaged copy, so the device sends it once.

    Example: Then the server refused the damaged reader report and took it when sent again
    """
    rig = cert.running()
    flips = forge.check_flips(rig, _DEVICES[device])
    assert flips, f"no report of the {device} went out damaged (the report was never sent?)"
    rid = rig.current_round()
    for flip in flips:
        what = f"the {device}'s report seq {flip.seq} with a damaged check: sent {flip.sends} time(s)"
        what += ", acknowledged" if flip.delivered else ", never acknowledged"
        what += "; expected refused, then the copy sent again taken"
        cert.check("EQ-3", flip.delivered and flip.sends >= 2, what, rid)


@when(
    parsers.re(rf"the acknowledgement of the (?P<device>{_DEVICE_RE})'s next (?P<report>{_REPORT_RE}) report is lost")
)
def ack_lost(cert: CertContext, device: str, report: str) -> None:
    """The server's first acknowledgement of the device's next report of this kind is lost on the way: the device
    sends the same report again (same sequence number, same bytes), which the server must take for a duplicate. Not
    applicable where the device's end cannot lose one (it lacks ``AckLosing``) or expects none.

    Example: When the acknowledgement of the shaker's next drop report is lost
    """
    rig = _rig(cert)
    _link_step(lambda: forge.lose_ack(rig, _DEVICES[device], _REPORTS[report]))


@then(parsers.re(rf"the (?P<device>{_DEVICE_RE}) sent its (?P<report>{_REPORT_RE}) report again and it was taken"))
def sent_again(cert: CertContext, device: str, report: str) -> None:
    """The fault took effect: the acknowledgement was lost, the device sent the report again, and the server
    acknowledged the copy (what the server made of it, the scenario's other Then steps decide).

    Example: Then the shaker sent its drop report again and it was taken
    """
    lost = forge.acks_lost(cert.running(), _DEVICES[device])
    assert lost, f"no acknowledgement of the {device}'s {report} report was lost (the report was never sent?)"
    assert all(a.delivered for a in lost), f"the {device}'s report sent again was never acknowledged: {lost}"


@when(parsers.re(rf"the (?P<device>{_DEVICE_RE}) line goes silent (?P<phase>{_PHASE_RE})"))
def line_silent(cert: CertContext, link_faults: LinkFaults, device: str, phase: str) -> None:
    """The device's line goes quiet (no byte, no error, the port open) for the rest of the scenario, from the moment
    the table starts shaking, sees betting close, or reports the lift (before the reader's read of it): a line of its
    own once the server has acknowledged what it reported until then, the device's address on a bus at once, the
    other devices of the bus going on (:func:`~harness.bench.forge.silence`). Not applicable on a shared line whose
    end cannot mute one device.

    Example: When the reader line goes silent after the close
    """
    rig = _rig(cert)
    src = _DEVICES[device]
    try:
        name = forge.line_of(rig, device)
    except forge.CannotForge as exc:
        not_applicable(str(exc))
    if len(forge.spec_of(rig, name).roles) > 1 and not isinstance(rig.emulated.hub.ports[name].end, Muting):
        not_applicable(f"the {name} line carries other devices too, and its device end cannot mute the {device}")

    def began(t: float) -> None:
        link_faults.silenced_at, link_faults.silenced_line = t, f"{device} ({name})"

    forge.on_table(rig, _PHASES[phase], lambda: forge.silence(rig, src, began))


# ERR-1: a device line that goes quiet is an unexpected problem of the system; the server can know of it only by its
# silence limit, and must then pause the round rather than wait for a report that will not come.
@then(parsers.parse("the server paused round {n:d} within its silence limit of the line going silent"))
def paused_on_silence(cert: CertContext, link_faults: LinkFaults, n: int) -> None:
    """The server paused round n after the line went silent, and, on a server whose events are stamped with the
    bench's clock, within the bench's silence limit (``timing.heartbeat_s``) plus :data:`SILENCE_SLACK_S` of it
    (ERR-1).

    Example: Then the server paused round 1 within its silence limit of the line going silent
    """
    rig = cert.running()
    rid = cert.round_id(n)
    t0 = link_faults.silenced_at
    assert t0 is not None, "no line went silent (the table never reached the moment?)"
    limit = rig.bench.timing.heartbeat_s
    events = [e for e in rig.adapter.round_events() if e.round_id == rid]
    pauses = [e for e in events if e.kind == RoundEventKind.PAUSED]
    if not rig.adapter.clock_is_sim_time:
        what = f"round {n}: the {link_faults.silenced_line} line went silent; the server paused it: {len(pauses)}"
        cert.check("ERR-1", bool(pauses), what, rid)
        return
    late = [e.at - t0 for e in pauses if e.at >= t0 - SILENCE_SLACK_S]
    within = any(d <= limit + SILENCE_SLACK_S for d in late)
    seen = ", ".join(f"{d:.3f} s" for d in late) or "never"
    what = f"round {n}: the {link_faults.silenced_line} line went silent at {t0:.3f}; expected a pause within "
    what += f"{limit:g} s, the server paused it after {seen}"
    cert.check("ERR-1", within, what, rid)


@when(parsers.re(rf"the (?P<device>{_DEVICE_RE})'s next report is numbered last before its numbering wraps"))
def numbered_last(cert: CertContext, device: str) -> None:
    """The device's next report gets the last number of its line's sequence space and the one after it the first
    (65,535 then 1 on a push link, 255 then 1 on a polled bus): a report after the wrap is a new report, never a
    replay. Not applicable where the device's end cannot move its numbering (it lacks ``Renumbering``).

    Example: When the reader's next report is numbered last before its numbering wraps
    """
    rig = _rig(cert)
    _link_step(lambda: forge.number_last(rig, _DEVICES[device]))


def _redialing(rig: Rig, cert: CertContext, device: str) -> tuple[str, Redialing]:
    """The line of ``device`` and its device end, when the line's dialect resends after a reconnect and the end can
    drop and make its connection (else the scenario is not applicable)."""
    src = _DEVICES[device]
    why = "a report sent again after a reconnect is a new report there, not a copy the server can know"
    needs(cert, "resend_after_reconnect", why, src)
    try:
        name = forge.line_of(rig, device)
    except forge.CannotForge as exc:
        not_applicable(str(exc))
    end = rig.emulated.hub.ports[name].end
    if not isinstance(end, Redialing):
        dialect = forge.spec_of(rig, name).dialect.name
        not_applicable(
            f"the {name} line speaks {dialect}, whose device end ({type(end).__name__}) lacks the capability "
            "Redialing (harness.wire.dialects.capabilities): its connection cannot be dropped before an "
            "acknowledgement"
        )
    return name, end


@when(
    parsers.re(
        rf"the (?P<device>{_DEVICE_RE})'s connection drops before its next (?P<report>{_REPORT_RE}) report is "
        r"acknowledged, until it has another"
    )
)
def drops_before_ack(cert: CertContext, device: str, report: str) -> None:
    """The device's connection drops right after its next report of this kind went out, before the server's
    acknowledgement of it came back; the device connects again when it next has a report to send, and then, as its
    dialogue says, sends the unacknowledged report again under its own sequence number before the new one: the
    server must take the copy for the report it already has (delivered once). Only on a line whose dialect declares
    ``resend_after_reconnect`` (not applicable elsewhere, with the reason) and whose device end can drop its
    connection (``Redialing``).

    Example: When the reader's connection drops before its next result report is acknowledged, until it has another
    """
    rig = _rig(cert)
    name, end = _redialing(rig, cert, device)
    try:
        end.redial_after(_DEVICES[device], _REPORTS[report])
    except ValueError as exc:
        not_applicable(f"the {name} line: {exc}")
    rig.note("harness", "connection drops", f"after the {device}'s next {report} report, before its acknowledgement")


@then(
    parsers.re(
        rf"the (?P<device>{_DEVICE_RE}) sent its (?P<report>{_REPORT_RE}) report again on its new connection and it "
        r"was acknowledged"
    )
)
def resent_after_reconnect(cert: CertContext, device: str, report: str) -> None:
    """The fault took effect: the connection dropped after the report, the device connected again and sent the
    report again under its number, and the server acknowledged the copy (what the server made of it, the
    scenario's other Then steps decide).

    Example: Then the reader sent its result report again on its new connection and it was acknowledged
    """
    rig = cert.running()
    _name, end = _redialing(rig, cert, device)
    redials = [r for r in end.redials() if r.src is _DEVICES[device]]
    assert redials, f"the {device}'s connection never dropped after a {report} report (the report was never sent?)"
    assert all(r.resent and r.delivered for r in redials), (
        f"the {device}'s report was not sent again and acknowledged: {redials}"
    )
