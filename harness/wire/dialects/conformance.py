"""The codec half of the dialect conformance kit (``xocdia-hil dialects check``): golden vectors, a seeded random
round trip of every message the dialect carries, and a framer fuzz. Pure: no port, no clock, no server.

What "pass" means, for a dialect's :meth:`~harness.wire.dialects.base.Dialect.codec`:

- **golden**: every vector in ``fixtures/protocol/<name>/golden.jsonl`` (when the dialect ships one) decodes to its
  frame and the frame encodes to its bytes;
- **round trip**: ``decode(encode(f))`` gives back ``f``'s sender, message, round tag and event time for random frames
  of every data message the dialect carries (sequence numbers are the dialogue's business, not compared);
- **fuzz**: a decoder fed garbage, every split point of a stream of frames, two frames in one read, or a frame with one
  bit flipped never raises and never yields a frame that was not sent. A dialect that declares no integrity check
  (``Integrity`` none: its medium, e.g. TCP, checks the bytes) is exempt from the bit-flip half of "not sent".
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from harness.wire.dialects.base import Dialect, EndSettings, FrameCodec
from harness.wire.frame_errors import BadFrame, EncodeError
from harness.wire.line_events import Received
from harness.wire.messages import (
    CATALOGUE,
    TAGGABLE,
    BowlOff,
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
    VoidClause,
)

_VALUE_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-"
MAX_DEVICE_MS = 2**32 - 1  # a 32-bit device clock: the widest event time a table is asked to carry


def _value(rng: random.Random, longest: int = 12) -> str:
    return "".join(rng.choice(_VALUE_CHARS) for _ in range(rng.randint(1, longest)))


def _message(cls: type[Message], rng: random.Random) -> Message:
    """A valid instance of ``cls`` with random field values."""
    token = rng.randint(0, 3)
    makers: dict[type[Message], Callable[[], Message]] = {
        Hello: lambda: Hello(_value(rng), 1, _value(rng)),
        BowlOff: lambda: BowlOff(True, token) if rng.random() < 0.5 else BowlOff(False, None),
        Drop: lambda: (
            Drop(DropItem.TOKEN, token)
            if rng.random() < 0.4
            else Drop(rng.choice([DropItem.BOWL, DropItem.PLATE]), None)
        ),
        Result: lambda: Result("".join(rng.choice("RWSU") for _ in range(4)), rng.random() < 0.3),
        ReaderRearranged: lambda: ReaderRearranged("".join(rng.choice("RW") for _ in range(4))),
        Problem: lambda: Problem(rng.choice(list(ProblemReason))),
        LampOpen: lambda: LampOpen(_value(rng), rng.randint(0, 86_400_000)),
        LampClose: lambda: LampClose(_value(rng)),
        LampReshake: lambda: LampReshake(_value(rng), rng.choice(list(ReshakeReason))),
        LampPause: lambda: LampPause(_value(rng)),
        LampResume: lambda: LampResume(_value(rng)),
        LampVoid: lambda: LampVoid(_value(rng), rng.choice(list(VoidClause))),
    }
    make = makers.get(cls)
    return make() if make is not None else cls()


def carried(dialect: Dialect) -> list[tuple[Source, type[Message]]]:
    """Every (sender, data message) the dialect's own lines carry: the reports and HELLO of its devices, and the lamp
    commands when it carries the lamp (a server's own HELLO is the dialogue's business)."""
    roles = dialect.carries
    out = []
    for (src, _t), cls in sorted(CATALOGUE.items(), key=lambda kv: (kv[0][0].value, kv[0][1])):
        if cls.CONTROL:
            continue
        if src in roles or (src is Source.SERVER and Source.LAMP in roles and cls is not Hello):
            out.append((src, cls))
    return out


def random_frames(dialect: Dialect, rng: random.Random, count: int) -> list[Frame]:
    """``count`` random frames of the messages :func:`carried` lists, cycling over them so each appears."""
    kinds = carried(dialect)
    frames = []
    for i in range(count):
        src, cls = kinds[i % len(kinds)]
        tagged = cls in TAGGABLE
        round_tag = _value(rng) if tagged and rng.random() < 0.8 else None
        at = rng.randint(0, MAX_DEVICE_MS) if tagged and rng.random() < 0.8 else None
        frames.append(Frame(seq=(i % 250) + 1, src=src, message=_message(cls, rng), round=round_tag, at=at))
    return frames


def semantic(frame: Frame) -> tuple[Source, Message, str | None, int | None]:
    """What a dialect must carry unchanged: sender, message, round tag, event time."""
    return frame.src, frame.message, frame.round, frame.at


@dataclass
class CheckResult:
    """One check: its name, how many cases ran, and the failures (at most a few kept, with the count)."""

    name: str
    cases: int = 0
    failures: list[str] = field(default_factory=list)
    failed: int = 0
    note: str = ""

    @property
    def passed(self) -> bool:
        return self.failed == 0

    def fail(self, why: str) -> None:
        self.failed += 1
        if len(self.failures) < 5:
            self.failures.append(why)


def _decode_all(codec: FrameCodec, chunks: Iterable[bytes]) -> list[Frame | BadFrame]:
    decoder = codec.decoder()
    out: list[Frame | BadFrame] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    return out


def _frames(items: list[Frame | BadFrame]) -> list[Frame]:
    return [i for i in items if isinstance(i, Frame)]


def check_golden(codec: FrameCodec, vectors: list[tuple[Frame, bytes]]) -> CheckResult:
    """Each golden frame encodes to its bytes and the bytes decode to it (semantically)."""
    result = CheckResult("golden vectors")
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
        if [semantic(f) for f in got] != [semantic(frame)]:
            result.fail(f"{raw.hex()}: decodes to {got}")
    if not vectors:
        result.note = "no golden vectors shipped for this dialect"
    return result


def check_round_trip(dialect: Dialect, seed: int = 0, count: int = 2000) -> CheckResult:
    """decode(encode(f)) == f (semantically) for ``count`` random frames of every carried message."""
    codec = dialect.codec()
    result = CheckResult("round trip")
    for frame in random_frames(dialect, random.Random(f"xocdia-dialect-check/{seed}"), count):
        result.cases += 1
        try:
            raw = codec.encode(frame)
        except EncodeError as exc:
            result.fail(f"{frame}: encode refused: {exc}")
            continue
        try:
            got = _frames(_decode_all(codec, [raw]))
        except Exception as exc:  # a decoder must never raise: report it as a failure, named
            result.fail(f"{raw.hex()}: decoder raised {type(exc).__name__}: {exc}")
            continue
        if [semantic(f) for f in got] != [semantic(frame)]:
            result.fail(f"{frame}: round trip gave {got}")
    return result


def check_fuzz(dialect: Dialect, seed: int = 0, streams: int = 200, integrity: bool = True) -> CheckResult:
    """The framer fuzz: garbage, every split point of a 3-frame stream, two frames in one read, single bit flips.
    ``integrity`` False exempts bit-flipped frames from the "never a false message" half."""
    codec = dialect.codec()
    rng = random.Random(f"xocdia-dialect-fuzz/{seed}")
    result = CheckResult("framer fuzz")
    frames = random_frames(dialect, rng, streams * 3)

    def run(chunks: list[bytes], sent: list[Frame], what: str, exempt: bool = False) -> None:
        result.cases += 1
        try:
            got = _frames(_decode_all(codec, chunks))
        except Exception as exc:
            result.fail(f"{what}: decoder raised {type(exc).__name__}: {exc}")
            return
        allowed = {semantic(f) for f in sent}
        false = [f for f in got if semantic(f) not in allowed]
        if false and not exempt:
            result.fail(f"{what}: yielded a frame that was not sent: {false[0]}")

    for i in range(streams):
        trio = frames[3 * i : 3 * i + 3]
        try:
            raws = [codec.encode(f) for f in trio]
        except EncodeError:
            continue
        stream = b"".join(raws)
        garbage = bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
        run([garbage], [], "garbage")
        run([garbage + stream], trio, "garbage then frames")
        run([raws[0] + raws[1]], trio[:2], "two frames in one read")
        for cut in range(len(stream) + 1) if i < 20 else (rng.randint(0, len(stream)),):
            run([stream[:cut], stream[cut:]], trio, f"split at {cut}")
        flipped = bytearray(raws[0])
        bit = rng.randrange(len(flipped) * 8)
        flipped[bit // 8] ^= 1 << (bit % 8)
        run([bytes(flipped)], [trio[0]], f"bit {bit} flipped", exempt=not integrity)
    if not integrity:
        result.note = "no integrity check declared: bit-flipped frames only checked not to raise"
    return result


def check_dialogue(dialect: Dialect, seed: int = 0, limit_s: float = 60.0) -> CheckResult:
    """Each of the dialect's own lines, device end against server end over a perfect in-memory wire in virtual time:
    every report queued on the device end reaches the server end exactly once and in order per device, and every
    lamp command the server end sends reaches the lamp, within ``limit_s`` virtual seconds."""
    result = CheckResult("dialogue loopback")
    rng = random.Random(f"xocdia-dialect-dialogue/{seed}")
    settings = EndSettings()
    for line in dialect.lines(sorted(dialect.carries, key=lambda s: s.value)):
        if line.dialect is not dialect:
            continue  # a companion's line: that dialect's own check covers it
        device = dialect.device_end(line, settings)
        server = dialect.server_end(line, settings, 0.0)
        device.open(0.0)
        reports: dict[Source, list[Frame]] = {}
        for role in line.roles:
            kinds = [cls for src, cls in carried(dialect) if src is role and cls is not Hello]
            reports[role] = [
                Frame(1, role, _message(cls, rng), round=_value(rng) if cls in TAGGABLE else None,
                      at=rng.randint(0, MAX_DEVICE_MS) if cls in TAGGABLE else None)
                for cls in kinds
            ]  # fmt: skip
        commands = [_message(cls, rng) for src, cls in carried(dialect) if src is Source.SERVER]
        commands = commands if Source.LAMP in line.roles else []
        for role, frames in reports.items():
            for f in frames:
                device.send(role, f.message, 0.0, f.round, f.at)
        for message in commands:
            server.send(message, 0.0)
        got: dict[Source, list[Frame]] = {role: [] for role in line.roles}
        heard: list[Message] = []
        now = 0.0
        for _ in range(200_000):
            for item in server.receive(device.take_output(), now):
                if isinstance(item, Frame) and not isinstance(item.message, Hello) and item.src in got:
                    got[item.src].append(item)
            for _src, event in device.receive(server.take_output(), now):
                if isinstance(event, Received) and not isinstance(event.frame.message, Hello):
                    heard.append(event.frame.message)
            done = all(len(got[r]) >= len(reports[r]) for r in reports) and len(heard) >= len(commands)
            if done or now > limit_s:
                break
            nxt = [t for t in (device.next_deadline(), server.next_deadline()) if t is not None]
            now = max(now, min(nxt)) if nxt else now + 0.01
            device.poll(now)
            server.tick(now)
        for role, frames in reports.items():
            result.cases += len(frames)
            want = [semantic(f) for f in frames]
            have = [semantic(f) for f in got[role]]
            if have != want:
                result.fail(f"line {line.name}: {role.value}: server got {len(have)} of {len(want)} reports"
                            f"{' (out of order or changed)' if len(have) == len(want) else ''}")  # fmt: skip
        result.cases += len(commands)
        if heard != commands:
            result.fail(f"line {line.name}: lamp heard {len(heard)} of {len(commands)} commands")
    return result
