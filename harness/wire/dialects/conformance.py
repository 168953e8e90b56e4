"""The dialect conformance kit (``xocdia-hil dialects check``) without the certification run: golden vectors, a
seeded random round trip of every message the dialect carries, a framer fuzz and a device end ↔ server end loopback.
Pure: no port, no wall clock, no server.

Every check tests exactly what the dialect declares (:attr:`~harness.wire.dialects.base.Dialect.capabilities`): the
random frames carry a round tag only when ``round_tags`` is declared, an event time only when ``event_times`` is,
round ids in the declared ``round_ids`` form, HELLO only with ``identities``, ``CONSOLE TOKENS`` only with
``token_sensor``, a read's per-token confidence only with ``confidence``; a token position, a problem reason, an
OPEN's betting time or a read's confidence that is not declared is not compared. Everything declared is compared.

What "pass" means, for a dialect's :meth:`~harness.wire.dialects.base.Dialect.codec` and line ends:

- **golden**: every vector in ``fixtures/protocol/<name>/golden.jsonl`` (when the dialect ships one) decodes to its
  frame and the frame encodes to its bytes; a dialect that names no golden file is skipped, and said so;
- **round trip**: ``decode(encode(f))`` gives back what :func:`semantic` keeps of ``f`` for random frames of every
  data message the dialect carries (sequence numbers are the dialogue's business, not compared);
- **fuzz**: a decoder fed garbage, every split point of a stream of frames, two frames in one read, or a frame with one
  bit flipped never raises and never yields a frame that was not sent. A dialect that declares no integrity check
  (``integrity_checked = False``: its medium, e.g. TCP, checks the bytes) is exempt from the bit-flip half of "not
  sent";
- **dialogue**: over a perfect in-memory wire in virtual time, every report reaches the server end once and in order,
  every lamp command reaches the lamp, and on a ``poll`` dialogue the device end speaks only when the server end has
  just spoken to it.

Each check runs inside its own guard (:func:`guarded`): an exception becomes that check's failure, naming the
exception's type and message, and a check that ran no case fails.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from harness.wire.dialects.base import (
    MAX_NUMERIC_ROUND_ID,
    DeviceEnd,
    Dialect,
    EndSettings,
    FrameCodec,
    LineSpec,
    ProtocolCapabilities,
    ServerEnd,
)
from harness.wire.frame_errors import BadFrame, EncodeError
from harness.wire.line_events import Received
from harness.wire.messages import (
    CATALOGUE,
    TAGGABLE,
    BowlOff,
    Confidence,
    Drop,
    DropItem,
    Frame,
    Hello,
    LampClose,
    LampOpen,
    LampPause,
    LampReshake,
    LampResume,
    LampVoid,
    Message,
    Problem,
    ProblemReason,
    ReaderRearranged,
    ReshakeReason,
    Result,
    Source,
    TokensPlaced,
    VoidClause,
    default_confidence,
)

_VALUE_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-"
MAX_DEVICE_MS = 2**32 - 1  # a 32-bit device clock: the widest event time a table is asked to carry
#: The longest text round id the kit generates: a protocol value (docs/protocol.md §2) has at most 32 characters.
LONGEST_TEXT_ROUND_ID = 32


def _value(rng: random.Random, longest: int = 12) -> str:
    return "".join(rng.choice(_VALUE_CHARS) for _ in range(rng.randint(1, longest)))


def round_id(rng: random.Random, caps: ProtocolCapabilities) -> str:
    """A random round id in the declared form: 1-32 protocol value characters (``text``), or an unsigned 32-bit
    number in decimal without leading zeros, ``0`` to ``4294967295`` (``numeric``)."""
    if caps.round_ids == "numeric":
        return str(rng.randint(0, MAX_NUMERIC_ROUND_ID))
    return _value(rng, LONGEST_TEXT_ROUND_ID)


def _one_confidence(rng: random.Random) -> float:
    """A random confidence: exactly 0 or 1, three decimals as a camera writes them, or any float 0..1."""
    draw = rng.random()
    if draw < 0.2:
        return 1.0
    if draw < 0.35:
        return 0.0
    if draw < 0.65:
        return rng.randint(0, 1000) / 1000
    return rng.random()


def random_confidence(faces: str, rng: random.Random, unsure: bool = False) -> Confidence:
    """A random per-token confidence for a read of ``faces``: any value 0..1 for a ``U`` token; ``1.0`` for a token
    read (R, W, S), which no threshold 0..1 reads as ``U``, or with ``unsure`` a random value for it too."""
    values = [_one_confidence(rng) if unsure or f == "U" else 1.0 for f in faces]
    return (values[0], values[1], values[2], values[3])


def _message(
    cls: type[Message], rng: random.Random, caps: ProtocolCapabilities | None = None, unsure: bool = False
) -> Message:
    """A valid instance of ``cls`` with random field values; the round id of a lamp command in ``caps``' form; a
    read's confidence (:func:`random_confidence`) only when ``caps`` declares ``confidence``."""
    caps = caps or ProtocolCapabilities()
    token = rng.randint(0, 3)

    def result() -> Result:
        faces = "".join(rng.choice("RWSU") for _ in range(4))
        overlap = rng.random() < 0.3
        return Result(faces, overlap, random_confidence(faces, rng, unsure) if caps.confidence else None)

    def rearranged() -> ReaderRearranged:
        faces = "".join(rng.choice("RW") for _ in range(4))
        return ReaderRearranged(faces, random_confidence(faces, rng, unsure) if caps.confidence else None)

    makers: dict[type[Message], Callable[[], Message]] = {
        Hello: lambda: Hello(_value(rng), 1, _value(rng)),
        BowlOff: lambda: BowlOff(True, token) if rng.random() < 0.5 else BowlOff(False, None),
        Drop: lambda: (
            Drop(DropItem.TOKEN, token)
            if rng.random() < 0.4
            else Drop(rng.choice([DropItem.BOWL, DropItem.PLATE]), None)
        ),
        Result: result,
        ReaderRearranged: rearranged,
        Problem: lambda: Problem(rng.choice(list(ProblemReason))),
        LampOpen: lambda: LampOpen(round_id(rng, caps), rng.randint(0, 86_400_000)),
        LampClose: lambda: LampClose(round_id(rng, caps)),
        LampReshake: lambda: LampReshake(round_id(rng, caps), rng.choice(list(ReshakeReason))),
        LampPause: lambda: LampPause(round_id(rng, caps)),
        LampResume: lambda: LampResume(round_id(rng, caps)),
        LampVoid: lambda: LampVoid(round_id(rng, caps), rng.choice(list(VoidClause))),
    }
    make = makers.get(cls)
    return make() if make is not None else cls()


def carried(dialect: Dialect) -> list[tuple[Source, type[Message]]]:
    """Every (sender, data message) the dialect's own lines carry: the reports of its devices, their HELLO when it
    declares ``identities``, ``CONSOLE TOKENS`` only when it declares ``token_sensor``, and the lamp commands when it
    carries the lamp (a server's own HELLO is the dialogue's business)."""
    roles = dialect.carries
    caps = dialect.capabilities
    out = []
    for (src, _t), cls in sorted(CATALOGUE.items(), key=lambda kv: (kv[0][0].value, kv[0][1])):
        if cls.CONTROL or (cls is Hello and not caps.identities) or (cls is TokensPlaced and not caps.token_sensor):
            continue
        if src in roles or (src is Source.SERVER and Source.LAMP in roles and cls is not Hello):
            out.append((src, cls))
    return out


def random_frame(
    src: Source,
    cls: type[Message],
    rng: random.Random,
    caps: ProtocolCapabilities,
    seq: int = 1,
    always: bool = False,
    unsure: bool = False,
) -> Frame:
    """A random frame of ``cls`` from ``src`` with what ``caps`` declares: a round tag (in the declared round id
    form) only with ``round_tags``, an event time (0 to 2³²−1 ms) only with ``event_times``, each on a taggable
    report, on four frames in five (on every one when ``always``); a read's per-token confidence only with
    ``confidence`` (:func:`random_confidence`, ``unsure`` passed on)."""
    tagged = cls in TAGGABLE
    round_tag = round_id(rng, caps) if caps.round_tags and tagged and (always or rng.random() < 0.8) else None
    at = rng.randint(0, MAX_DEVICE_MS) if caps.event_times and tagged and (always or rng.random() < 0.8) else None
    return Frame(seq=seq, src=src, message=_message(cls, rng, caps, unsure), round=round_tag, at=at)


def random_frames(dialect: Dialect, rng: random.Random, count: int, unsure: bool = False) -> list[Frame]:
    """``count`` random frames (:func:`random_frame`) of the messages :func:`carried` lists, cycling over them so
    each appears; ``unsure``: a read may be unsure of the tokens it reads too (:func:`random_confidence`). Raises
    ValueError when the dialect carries no data message."""
    kinds = carried(dialect)
    if not kinds:
        raise ValueError(f"dialect {dialect.name!r} carries no data message (carries: {sorted(dialect.carries)})")
    caps = dialect.capabilities
    return [random_frame(*kinds[i % len(kinds)], rng, caps, seq=(i % 250) + 1, unsure=unsure) for i in range(count)]


#: What :func:`semantic` keys a frame on: sender, message (undeclared fields blanked), round tag, event time.
Semantic = tuple[Source, Message, str | None, int | None]


def semantic(frame: Frame, caps: ProtocolCapabilities | None = None) -> Semantic:
    """What a dialect declaring ``caps`` (default: everything the ASCII protocol carries) must carry unchanged:
    sender and message, the round tag when it declares ``round_tags``, the event time when it declares
    ``event_times``. Of the message, a token position (``BOWL OFF``, ``SHAKER DROP``), a problem reason or an OPEN's
    betting time is blanked (None) when the dialect does not declare it; a read's confidence is blanked when it does
    not declare ``confidence``, and otherwise always given (a read that gives none means
    :func:`~harness.wire.messages.default_confidence`)."""
    caps = caps or ProtocolCapabilities()
    msg: Message = frame.message
    blank: dict[str, object] = {}
    if isinstance(msg, BowlOff | Drop) and not caps.positions:
        blank["token"] = None
    elif isinstance(msg, Problem) and not caps.problem_reasons:
        blank["reason"] = None
    elif isinstance(msg, LampOpen) and not caps.betting_time_on_open:
        blank["ms"] = None
    elif isinstance(msg, Result | ReaderRearranged):
        if not caps.confidence:
            if msg.confidence is not None:
                blank["confidence"] = None
        elif msg.confidence is None and isinstance(msg.faces, str) and len(msg.faces) == 4:
            blank["confidence"] = default_confidence(msg.faces)
    if blank:
        msg = replace(msg, **blank)
    return (
        frame.src,
        msg,
        frame.round if caps.round_tags else None,
        frame.at if caps.event_times else None,
    )


@dataclass
class CheckResult:
    """One check: its name, how many cases ran, and the failures (at most a few kept, with the count). A check that
    does not apply to the dialect is ``skipped`` (its note says why); one that ran no case and was not skipped has
    not passed."""

    name: str
    cases: int = 0
    failures: list[str] = field(default_factory=list)
    failed: int = 0
    note: str = ""
    skipped: bool = False

    @property
    def passed(self) -> bool:
        """No failure, and at least one case ran (or the check was skipped as not applying)."""
        return self.failed == 0 and (self.cases > 0 or self.skipped)

    @property
    def status(self) -> str:
        """``PASS``, ``FAIL`` or ``SKIP``."""
        if not self.passed:
            return "FAIL"
        return "SKIP" if self.skipped and not self.cases else "PASS"

    def fail(self, why: str) -> None:
        self.failed += 1
        if len(self.failures) < 5:
            self.failures.append(why)

    def abort(self, exc: BaseException) -> None:
        """The check stopped on ``exc``: one failure naming its type and message, listed first."""
        self.failed += 1
        self.failures.insert(0, f"raised {type(exc).__name__}: {exc}")
        del self.failures[5:]


def guarded(result: CheckResult, body: Callable[[CheckResult], object]) -> CheckResult:
    """Run ``body(result)`` so that it cannot escape: an exception becomes ``result``'s failure naming its type and
    message (the cases counted until then are kept), and a check that ran no case and was not skipped fails saying
    so. Returns ``result``; never raises (but for KeyboardInterrupt and SystemExit)."""
    try:
        body(result)
    except Exception as exc:
        result.abort(exc)
        return result
    if not result.cases and not result.skipped and not result.failed:
        result.fail("ran 0 cases: nothing was checked")
    return result


def _decode_all(codec: FrameCodec, chunks: Iterable[bytes]) -> list[Frame | BadFrame]:
    decoder = codec.decoder()
    out: list[Frame | BadFrame] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    return out


def _frames(items: list[Frame | BadFrame]) -> list[Frame]:
    return [i for i in items if isinstance(i, Frame)]


def check_golden(
    codec: FrameCodec, vectors: list[tuple[Frame, bytes]], caps: ProtocolCapabilities | None = None
) -> CheckResult:
    """Each golden frame encodes to its bytes and the bytes decode to it (:func:`semantic` under ``caps``). With no
    vectors the check fails: a dialect that ships none is skipped by :func:`golden_skipped` instead."""

    def body(result: CheckResult) -> None:
        for frame, raw in vectors:
            result.cases += 1
            try:
                encoded = codec.encode(frame)
            except EncodeError as exc:
                result.fail(f"{frame}: encode refused: {exc}")
                continue
            if encoded != raw:
                result.fail(f"{frame}: encodes to {encoded.hex()} not {raw.hex()}")
            got = _frames(_decode_all(codec, [raw]))
            if [semantic(f, caps) for f in got] != [semantic(frame, caps)]:
                result.fail(f"{raw.hex()}: decodes to {got}")

    return guarded(CheckResult("golden vectors"), body)


def golden_skipped() -> CheckResult:
    """The golden check of a dialect that names no golden file: skipped, and said so."""
    return CheckResult("golden vectors", skipped=True, note="no golden vectors shipped for this dialect")


def check_round_trip(dialect: Dialect, seed: int = 0, count: int = 2000) -> CheckResult:
    """decode(encode(f)) keeps everything the dialect declares (:func:`semantic`) for ``count`` random frames of
    every carried message (:func:`random_frames`). An encoder that refuses or raises on a frame within the
    declaration, or a decoder that raises, fails the case, named.

    With ``confidence`` declared, reads carry random confidences, unsure ones included, and the round trip keeps
    each one exactly; a decoder may read a token ``U`` that was sent unsure, and refuse a re-read unsure of a token
    (:func:`_read_trip`), as long as one threshold explains every such decision of the run (one more case: every
    token it read ``U``, or every re-read it refused, less sure than every token it kept)."""
    caps = dialect.capabilities

    def body(result: CheckResult) -> None:
        codec = dialect.codec()
        sure: list[float] = []  # the confidences of the tokens the decoder kept as sent
        unsure: list[float] = []  # the confidences it read U, and the least of each re-read it refused
        rng = random.Random(f"xocdia-dialect-check/{seed}")
        for frame in random_frames(dialect, rng, count, unsure=caps.confidence):
            result.cases += 1
            try:
                raw = codec.encode(frame)
            except EncodeError as exc:
                result.fail(f"{frame}: encode refused: {exc}")
                continue
            except Exception as exc:  # an encoder may only refuse with EncodeError: name what it raised
                result.fail(f"{frame}: encoder raised {type(exc).__name__}: {exc}")
                continue
            try:
                got = _frames(_decode_all(codec, [raw]))
            except Exception as exc:  # a decoder must never raise: report it as a failure, named
                result.fail(f"{raw.hex()}: decoder raised {type(exc).__name__}: {exc}")
                continue
            if caps.confidence and isinstance(frame.message, Result | ReaderRearranged):
                why = _read_trip(frame, got, caps, sure, unsure)
                if why:
                    result.fail(f"{frame}: {why}")
            elif [semantic(f, caps) for f in got] != [semantic(frame, caps)]:
                result.fail(f"{frame}: round trip gave {got}")
        if sure and unsure:
            result.cases += 1
            if max(unsure) >= min(sure):
                result.fail(
                    f"no one threshold explains the reads: a token at confidence {max(unsure)!r} was read U (or"
                    f" refused) while one at {min(sure)!r} was kept"
                )

    return guarded(CheckResult("round trip"), body)


def _read_trip(
    frame: Frame, got: list[Frame], caps: ProtocolCapabilities, sure: list[float], unsure: list[float]
) -> str:
    """Why the decoding ``got`` of a read ``frame`` with a confidence is wrong, or "": the confidence comes back
    exactly, and every face as sent, but that a token read R, W or S may come back ``U`` (a result) or make the
    re-read refused (no frame) when it was sent below full confidence. Adds the confidences of the tokens kept to
    ``sure``, of those read U (and the least of a refused re-read) to ``unsure``."""
    want = semantic(frame, caps)
    sent = want[1]
    assert isinstance(sent, Result | ReaderRearranged) and sent.confidence is not None  # semantic gives it
    confidence = sent.confidence
    if not got and isinstance(sent, ReaderRearranged):
        if min(confidence) >= 1.0:
            return "a re-read sure of every token was refused"
        unsure.append(min(confidence))
        return ""
    if len(got) != 1:
        return f"round trip gave {got}"
    have = semantic(got[0], caps)
    back = have[1]
    if not isinstance(back, type(sent)) or back.confidence != confidence:
        return f"round trip gave {got} (the confidence must come back as sent)"
    kept: list[float] = []
    lost: list[float] = []
    for i, (face, face_back) in enumerate(zip(sent.faces, back.faces, strict=True)):
        if face == "U" or face == face_back:
            kept += [] if face == "U" else [confidence[i]]
        elif face_back == "U" and isinstance(sent, Result) and confidence[i] < 1.0:
            lost.append(confidence[i])
        else:
            return f"round trip gave {got} (token {i}: {face} came back {face_back})"
    if have != (want[0], replace(sent, faces=back.faces), want[2], want[3]):
        return f"round trip gave {got}"
    sure += kept
    unsure += lost
    return ""


def check_fuzz(dialect: Dialect, seed: int = 0, streams: int = 200, integrity: bool | None = None) -> CheckResult:
    """The framer fuzz, on ``streams`` streams of 3 random frames within the declaration: garbage alone and before
    the frames, every split point of the stream (of the first 20 streams; one random split of the others), two frames
    in one read, one bit flipped. Each case passes when the decoder does not raise and yields no frame that was not
    sent (compared by :func:`semantic`), and, but for garbage alone and a flipped bit, yields every frame sent.
    ``integrity`` (default: the dialect's ``integrity_checked``) False exempts bit-flipped frames from the "not sent"
    half. A stream the encoder refuses fails its case: the frames are within what the dialect declares."""
    caps = dialect.capabilities
    checked = dialect.integrity_checked if integrity is None else integrity

    def body(result: CheckResult) -> None:
        codec = dialect.codec()
        rng = random.Random(f"xocdia-dialect-fuzz/{seed}")
        frames = random_frames(dialect, rng, streams * 3)

        def run(chunks: list[bytes], sent: list[Frame], what: str, exempt: bool = False, whole: bool = True) -> None:
            result.cases += 1
            try:
                got = _frames(_decode_all(codec, chunks))
            except Exception as exc:
                result.fail(f"{what}: decoder raised {type(exc).__name__}: {exc}")
                return
            allowed = {semantic(f, caps) for f in sent}
            false = [f for f in got if semantic(f, caps) not in allowed]
            if false and not exempt:
                result.fail(f"{what}: yielded a frame that was not sent: {false[0]}")
            elif whole and [semantic(f, caps) for f in got] != [semantic(f, caps) for f in sent]:
                result.fail(f"{what}: yielded {len(got)} frame(s) of the {len(sent)} sent, or changed them")

        for i in range(streams):
            trio = frames[3 * i : 3 * i + 3]
            try:
                raws = [codec.encode(f) for f in trio]
            except Exception as exc:
                result.cases += 1
                result.fail(f"stream {i}: encode refused a frame within the declaration: {type(exc).__name__}: {exc}")
                continue
            stream = b"".join(raws)
            garbage = bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
            run([garbage], [], "garbage", whole=False)
            run([garbage + stream], trio, "garbage then frames", whole=False)
            run([raws[0] + raws[1]], trio[:2], "two frames in one read")
            for cut in range(len(stream) + 1) if i < 20 else (rng.randint(0, len(stream)),):
                run([stream[:cut], stream[cut:]], trio, f"stream {i} split at {cut}")
            flipped = bytearray(raws[0])
            bit = rng.randrange(len(flipped) * 8)
            flipped[bit // 8] ^= 1 << (bit % 8)
            run([bytes(flipped)], [trio[0]], f"bit {bit} flipped", exempt=not checked, whole=False)
        if not checked:
            result.note = "no integrity check declared: bit-flipped frames only checked not to raise"

    return guarded(CheckResult("framer fuzz"), body)


def check_dialogue(dialect: Dialect, seed: int = 0, limit_s: float = 60.0) -> CheckResult:
    """Each of the dialect's own lines, device end against server end over a perfect in-memory wire in virtual time:
    every report queued on the device end (within the declaration, :func:`random_frame`) reaches the server end
    exactly once and in order per device, and every lamp command the server end sends reaches the lamp, within
    ``limit_s`` virtual seconds (compared by :func:`semantic`). The declared master speaks first: on a ``push``
    dialogue the device end's bytes go first, on a ``poll`` dialogue the server end's, and a device end that writes
    anything but in answer to bytes the server end has just written fails the line. A line end that raises fails
    its line (named, with the exception's type and message) and the other lines still run."""
    caps = dialect.capabilities

    def body(result: CheckResult) -> None:
        rng = random.Random(f"xocdia-dialect-dialogue/{seed}")
        for line in dialect.lines(sorted(dialect.carries, key=lambda s: s.value)):
            if line.dialect is not dialect:
                continue  # a companion's line: that dialect's own check covers it
            try:
                _loopback(dialect, line, rng, caps, limit_s, result)
            except Exception as exc:
                result.fail(f"line {line.name}: raised {type(exc).__name__}: {exc}")

    return guarded(CheckResult("dialogue loopback"), body)


def _loopback(
    dialect: Dialect,
    line: LineSpec,
    rng: random.Random,
    caps: ProtocolCapabilities,
    limit_s: float,
    result: CheckResult,
) -> None:
    settings = EndSettings()
    polled = dialect.dialogue == "poll"
    device = dialect.device_end(line, settings)
    server = dialect.server_end(line, settings, 0.0)
    device.open(0.0)
    reports: dict[Source, list[Frame]] = {
        role: [random_frame(role, cls, rng, caps, always=True) for src, cls in carried(dialect) if src is role]
        for role in line.roles
    }
    for frames in reports.values():
        frames[:] = [f for f in frames if not isinstance(f.message, Hello)]
    commands = [_message(cls, rng, caps) for src, cls in carried(dialect) if src is Source.SERVER]
    commands = commands if Source.LAMP in line.roles else []
    for role, frames in reports.items():
        for f in frames:
            device.send(role, f.message, 0.0, f.round, f.at)
    for message in commands:
        server.send(message, 0.0)
    wire = _Wire(device, server, polled)
    now = 0.0
    for _ in range(200_000):
        wire.exchange(now)
        delivered = all(len(wire.got[r]) >= len(reports[r]) for r in reports if r in wire.got)
        if (delivered and len(wire.heard) >= len(commands)) or now > limit_s:
            break
        nxt = [t for t in (device.next_deadline(), server.next_deadline()) if t is not None]
        now = max(now, min(nxt)) if nxt else now + 0.01
        device.poll(now)
        wire.unasked("its timers ran")
        server.tick(now)
    for role, frames in reports.items():
        result.cases += len(frames)
        want = [semantic(f, caps) for f in frames]
        have = [semantic(f, caps) for f in wire.got.get(role, [])]
        if have != want:
            result.fail(f"line {line.name}: {role.value}: server got {len(have)} of {len(want)} reports"
                        f"{' (out of order or changed)' if len(have) == len(want) else ''}")  # fmt: skip
    result.cases += len(commands)
    heard = [semantic(Frame(0, Source.SERVER, m), caps) for m in wire.heard]
    if heard != [semantic(Frame(0, Source.SERVER, m), caps) for m in commands]:
        result.fail(f"line {line.name}: lamp heard {len(heard)} of {len(commands)} commands"
                    f"{' (out of order or changed)' if len(heard) == len(commands) else ''}")  # fmt: skip
    if wire.unpolled:
        result.fail(f"line {line.name}: poll dialogue, yet the device end spoke unpolled: {wire.unpolled}")


class _Wire:
    """The perfect wire between a device end and a server end, moving bytes in the declared master's order."""

    def __init__(self, device: DeviceEnd, server: ServerEnd, polled: bool) -> None:
        self.device, self.server, self.polled = device, server, polled
        self.got: dict[Source, list[Frame]] = {role: [] for role in device.roles}
        self.heard: list[Message] = []
        self.unpolled = ""  # on a poll dialogue: when the device end first spoke unasked
        self.pending = b""  # device bytes not yet handed to the server end
        self.unasked("it was opened")

    def unasked(self, when: str) -> None:
        """Take what the device end wrote without having just been spoken to; on a poll dialogue that is a fault."""
        data = self.device.take_output()
        if data and self.polled and not self.unpolled:
            self.unpolled = f"{len(data)} byte(s) after {when}"
        self.pending += data

    def _to_server(self, now: float) -> None:
        data, self.pending = self.pending, b""
        for item in self.server.receive(data, now):
            if isinstance(item, Frame) and not isinstance(item.message, Hello) and item.src in self.got:
                self.got[item.src].append(item)

    def _to_device(self, now: float) -> bool:
        data = self.server.take_output()
        for _src, event in self.device.receive(data, now):
            if isinstance(event, Received) and not isinstance(event.frame.message, Hello):
                self.heard.append(event.frame.message)
        return bool(data)

    def exchange(self, now: float) -> None:
        """One round of the dialogue: the master's bytes to the other end, then the answer back."""
        if self.polled:
            if self._to_device(now):
                self.pending += self.device.take_output()  # an answer to what the server end just wrote
            else:
                self.unasked("the server end wrote nothing")
            self._to_server(now)
        else:
            self.pending += self.device.take_output()
            self._to_server(now)
            self._to_device(now)
