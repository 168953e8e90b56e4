"""Lotus Tables' device protocols as a kit-side dialect (docs/dialects/README.md): ``LotusDialect``.

A Lotus table has two TCP lines, both dialled by the game server (README.md, "Device protocols"):

- ``controller``: the table controller, carrying the bowl sensor, the shaker, the dealer's desk and the lamp on one
  connection. One ASCII line per frame, ``;``-separated fields, roulette-controller style::

      *X;EVT;<seq>;<DEV>;<CODE>[;<arg>...];<round|->;<ms|->;<CK>\\r\\n     a device event (DEV: BOWL, SHAKE, DESK)
      *X;CMD;<seq>;LAMP;<CODE>[;<arg>...];<CK>\\r\\n                       a lamp command from the server
      *X;ACK;<seq>;<SRV|CTL>;<CK>\\r\\n                                    an acknowledgement (of an EVT / a CMD)
      *X;HB;<SRV|CTL>;<CK>\\r\\n                                           a heartbeat

  ``CK`` is the byte sum of everything between ``*`` and ``CK`` modulo 256, two upper-case hex digits.
- ``camera``: the result camera, one JSON object per line: ``{"seq": 7, "type": "read", "faces": "RRWW",
  "overlap": false, "confidence": 0.97, "round": 12, "ts": 5000}`` (``type`` ``spread`` for the re-read after the
  dealer spread overlapping tokens); the server answers ``{"ack": 7}``; ``{"type": "hb"}`` either way.

The dialogue on both lines: every data frame is acknowledged by its ``seq``; a device end keeps what is not yet
acknowledged and sends it again every second and on every new connection (the receiver drops copies by ``seq``);
both ends send a heartbeat when quiet for ``heartbeat_s`` and report the line down after ``silence_s`` of silence.
"""

from __future__ import annotations

import json
import math
import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from harness.lab import (
    Ack,
    BadFrame,
    BowlOff,
    BowlOn,
    ConsoleRearranged,
    Delivered,
    DeviceEnd,
    Dialect,
    DialectError,
    Drop,
    DropItem,
    EncodeError,
    EndSettings,
    ErrorReason,
    Frame,
    FrameCodec,
    Heartbeat,
    LampClose,
    LampOpen,
    LampPause,
    LampReshake,
    LampResume,
    LampVoid,
    LineSpec,
    LinkChanged,
    LinkEvent,
    Message,
    NoiseKind,
    Problem,
    ProblemReason,
    ProtocolCapabilities,
    ReaderRearranged,
    Reassembled,
    Received,
    Rejected,
    ReshakeReason,
    Resolved,
    Result,
    RoleEvent,
    ServerEnd,
    ShakeEnd,
    ShakeStart,
    Source,
    StreamDecoder,
    TokensPlaced,
    VoidClause,
)

MAX_LINE = 256  # bytes, CR LF included: a longer run without LF is refused as too_long
MAX_SEQ = 99_999
MAX_MS = 2**32 - 1
RETRY_S = 1.0
_NUMBER = re.compile(r"0|[1-9][0-9]{0,9}")
_CONTROLLER_ROLES = (Source.BOWL, Source.SHAKER, Source.LAMP, Source.CONSOLE)

# --- the controller's frames -------------------------------------------------------------------------------------

_DEV = {Source.BOWL: "BOWL", Source.SHAKER: "SHAKE", Source.CONSOLE: "DESK"}
_SRC = {v: k for k, v in _DEV.items()}
_DROP = {DropItem.BOWL: "BOWL", DropItem.PLATE: "PLATE", DropItem.TOKEN: "TOKEN"}
_PROBLEM = {ProblemReason.EQUIPMENT: "EQUIP", ProblemReason.RESHAKE_CAP: "CAP"}
_RESHAKE = {ReshakeReason.DROP: "DROP", ReshakeReason.STANDING: "STAND"}
_VOID = {VoidClause.SH_4A: "4A", VoidClause.SH_4B: "4B", VoidClause.SH_5: "5", VoidClause.ERR_3: "ERR3"}
_SIMPLE: dict[tuple[str, str], type[Message]] = {
    ("BOWL", "ON"): BowlOn,
    ("SHAKE", "START"): ShakeStart,
    ("SHAKE", "END"): ShakeEnd,
    ("DESK", "TOKENS"): TokensPlaced,
    ("DESK", "REASM"): Reassembled,
    ("DESK", "SPREAD"): ConsoleRearranged,
    ("DESK", "OK"): Resolved,
}
_SIMPLE_CODE = {cls: key for key, cls in _SIMPLE.items()}


def checksum(text: str) -> str:
    """The controller's check: the byte sum of ``text`` modulo 256, two upper-case hex digits."""
    return f"{sum(text.encode('ascii')) % 256:02X}"


def _number(value: str, what: str, highest: int) -> int:
    """A decimal field without sign or leading zeros, at most ``highest``; raises ValueError naming ``what``."""
    if not _NUMBER.fullmatch(value) or int(value) > highest:
        raise ValueError(f"{what}: must be a decimal number 0..{highest} without leading zeros; got {value!r}")
    return int(value)


def _round_text(round_id: str | None, what: str) -> str:
    """A round id on the wire (``-`` for none). Raises EncodeError: Lotus rounds are numbers 0..2³²−1."""
    if round_id is None:
        return "-"
    if not _NUMBER.fullmatch(round_id) or int(round_id) > MAX_MS:
        raise EncodeError(f"{what}: Lotus round ids are decimal numbers 0..{MAX_MS}; got {round_id!r}")
    return round_id


def _token(token: int | None) -> str:
    return "-" if token is None else str(token)


def _parse_token(value: str) -> int | None:
    if value == "-":
        return None
    if value not in ("0", "1", "2", "3"):
        raise ValueError(f"token: must be 0-3 or -; got {value!r}")
    return int(value)


def _device_args(message: Message) -> tuple[str, str, list[str]]:
    """(DEV, CODE, args) of a device report; raises EncodeError for a message the controller does not carry."""
    if isinstance(message, BowlOff):
        return "BOWL", "OFF", ["1" if message.touch else "0", _token(message.token)]
    if isinstance(message, Drop):
        return "SHAKE", "DROP", [_DROP[message.item], _token(message.token)]
    if isinstance(message, Problem):
        return "DESK", "PROB", [_PROBLEM[message.reason]]
    key = _SIMPLE_CODE.get(type(message))
    if key is None:
        raise EncodeError(f"message: the Lotus controller does not carry {type(message).__name__}")
    return key[0], key[1], []


def _lamp_args(message: Message) -> list[str]:
    if isinstance(message, LampOpen):
        if not 0 <= message.ms <= MAX_MS:
            raise EncodeError(f"ms: must be 0..{MAX_MS}; got {message.ms}")
        return ["OPEN", _round_text(message.round, "round"), str(message.ms)]
    if isinstance(message, LampReshake):
        return ["RESHAKE", _round_text(message.round, "round"), _RESHAKE[message.reason]]
    if isinstance(message, LampVoid):
        return ["VOID", _round_text(message.round, "round"), _VOID[message.clause]]
    for cls, code in ((LampClose, "CLOSE"), (LampPause, "PAUSE"), (LampResume, "RESUME")):
        if isinstance(message, cls):
            return [code, _round_text(message.round, "round")]
    raise EncodeError(f"message: the Lotus lamp takes no {type(message).__name__}")


def _who(src: Source) -> str:
    return "SRV" if src is Source.SERVER else "CTL"


class ControllerCodec(FrameCodec):
    """Frames of the controller line ↔ ``*X;...;CK`` lines."""

    def encode(self, frame: Frame) -> bytes:
        message = frame.message
        if isinstance(message, Ack):
            fields = ["X", "ACK", str(message.of), _who(frame.src)]
        elif isinstance(message, Heartbeat):
            fields = ["X", "HB", _who(frame.src)]
        elif frame.src is Source.SERVER:
            fields = ["X", "CMD", str(frame.seq), "LAMP", *_lamp_args(message)]
        elif frame.src in _DEV:
            if not 0 <= frame.seq <= MAX_SEQ:
                raise EncodeError(f"seq: must be 0..{MAX_SEQ}; got {frame.seq}")
            if frame.at is not None and not 0 <= frame.at <= MAX_MS:
                raise EncodeError(f"at: must be 0..{MAX_MS} ms; got {frame.at}")
            dev, code, args = _device_args(message)
            if dev != _DEV[frame.src]:
                raise EncodeError(f"src: {frame.src.value} does not send {type(message).__name__} on the controller")
            at = "-" if frame.at is None else str(frame.at)
            fields = ["X", "EVT", str(frame.seq), dev, code, *args, _round_text(frame.round, "round tag"), at]
        else:
            raise EncodeError(f"src: the controller line carries BOWL, SHAKER, CONSOLE and LAMP, not {frame.src.value}")
        body = ";".join(fields) + ";"
        return f"*{body}{checksum(body)}\r\n".encode("ascii")

    def decoder(self) -> StreamDecoder:
        return _LineDecoder(_decode_controller)


def _decode_controller(raw: bytes) -> Frame | BadFrame:
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return BadFrame(ErrorReason.SYNTAX, raw, "not ASCII")
    line = text[:-2] if text.endswith("\r\n") else text[:-1]
    if not line.startswith("*") or len(line) < 4:
        return BadFrame(ErrorReason.SYNTAX, raw, "a line starts with * and ends with ;CK CR LF")
    body, ck = line[1:-2], line[-2:]
    if not body.endswith(";") or not text.endswith("\r\n"):
        return BadFrame(ErrorReason.SYNTAX, raw, "a line ends with ;CK CR LF")
    if checksum(body) != ck:
        return BadFrame(ErrorReason.CRC, raw, f"checksum {ck!r}, expected {checksum(body)}")
    f = body[:-1].split(";")
    try:
        return _controller_frame(f, raw)
    except (ValueError, KeyError, IndexError) as exc:
        return BadFrame(ErrorReason.FIELD, raw, str(exc))


def _controller_frame(f: list[str], raw: bytes) -> Frame | BadFrame:
    if len(f) < 3 or f[0] != "X":
        return BadFrame(ErrorReason.SYNTAX, raw, "a frame starts with X;TYPE")
    kind = f[1]
    if kind in ("ACK", "HB"):
        who = f[-1]
        if who not in ("SRV", "CTL") or len(f) != (4 if kind == "ACK" else 3):
            raise ValueError(f"{kind}: fields X;{kind}[;seq];SRV|CTL")
        src = Source.SERVER if who == "SRV" else Source.LAMP
        if kind == "HB":
            return Frame(0, src, Heartbeat())
        return Frame(0, src, Ack(_number(f[2], "seq", MAX_SEQ)))
    seq = _number(f[2], "seq", MAX_SEQ)
    if kind == "CMD":
        if len(f) < 6 or f[3] != "LAMP":
            raise ValueError("CMD: fields X;CMD;seq;LAMP;CODE;round[;arg]")
        code, rid, args = f[4], str(_number(f[5], "round", MAX_MS)), f[6:]
        message: Message
        if code == "OPEN" and len(args) == 1:
            message = LampOpen(rid, _number(args[0], "ms", MAX_MS))
        elif code == "RESHAKE" and len(args) == 1:
            message = LampReshake(rid, {v: k for k, v in _RESHAKE.items()}[args[0]])
        elif code == "VOID" and len(args) == 1:
            message = LampVoid(rid, {v: k for k, v in _VOID.items()}[args[0]])
        elif code in ("CLOSE", "PAUSE", "RESUME") and not args:
            message = {"CLOSE": LampClose, "PAUSE": LampPause, "RESUME": LampResume}[code](rid)
        else:
            return BadFrame(ErrorReason.TYPE, raw, f"unknown lamp command {code!r} with {len(args)} argument(s)")
        return Frame(seq, Source.SERVER, message)
    if kind != "EVT" or len(f) < 7:
        return BadFrame(ErrorReason.TYPE, raw, f"unknown frame type {kind!r}")
    dev, code, args, tag, at = f[3], f[4], f[5:-2], f[-2], f[-1]
    device = _SRC.get(dev)
    if device is None:
        return BadFrame(ErrorReason.TYPE, raw, f"unknown device {dev!r}")
    src = device
    simple = _SIMPLE.get((dev, code))
    if simple is not None and not args:
        message = simple()
    elif (dev, code) == ("BOWL", "OFF") and len(args) == 2 and args[0] in ("0", "1"):
        message = BowlOff(args[0] == "1", _parse_token(args[1]))
    elif (dev, code) == ("SHAKE", "DROP") and len(args) == 2:
        message = Drop({v: k for k, v in _DROP.items()}[args[0]], _parse_token(args[1]))
    elif (dev, code) == ("DESK", "PROB") and len(args) == 1:
        message = Problem({v: k for k, v in _PROBLEM.items()}[args[0]])
    else:
        return BadFrame(ErrorReason.TYPE, raw, f"unknown event {dev};{code} with {len(args)} argument(s)", seq, src)
    round_tag = None if tag == "-" else str(_number(tag, "round tag", MAX_MS))
    at_ms = None if at == "-" else _number(at, "ms", MAX_MS)
    return Frame(seq, src, message, round=round_tag, at=at_ms)


# --- the camera's frames -----------------------------------------------------------------------------------------


class CameraCodec(FrameCodec):
    """Frames of the camera line ↔ JSON lines; every read is sent with the camera's ``confidence``."""

    def __init__(self, confidence: float) -> None:
        self.confidence = confidence

    def encode(self, frame: Frame) -> bytes:
        message = frame.message
        obj: dict[str, Any]
        if isinstance(message, Heartbeat):
            obj = {"type": "hb"} if frame.src is not Source.SERVER else {"type": "hb", "from": "server"}
        elif isinstance(message, Ack):
            obj = {"ack": message.of}
        elif isinstance(message, Result | ReaderRearranged) and frame.src is Source.READER:
            if not 0 <= frame.seq <= MAX_SEQ:
                raise EncodeError(f"seq: must be 0..{MAX_SEQ}; got {frame.seq}")
            if frame.at is not None and not 0 <= frame.at <= MAX_MS:
                raise EncodeError(f"at: must be 0..{MAX_MS} ms; got {frame.at}")
            overlap = message.overlap if isinstance(message, Result) else False
            kind = "read" if isinstance(message, Result) else "spread"
            obj = {"seq": frame.seq, "type": kind, "faces": message.faces, "overlap": overlap}
            obj["confidence"] = self.confidence
            if frame.round is not None:
                obj["round"] = int(_round_text(frame.round, "round tag"))
            if frame.at is not None:
                obj["ts"] = frame.at
        else:
            raise EncodeError(f"message: the camera line carries READER reads, not {frame.src.value} {message.TYPE}")
        return json.dumps(obj, separators=(",", ":")).encode() + b"\n"

    def decoder(self) -> StreamDecoder:
        return _LineDecoder(_decode_camera)


def _decode_camera(raw: bytes) -> Frame | BadFrame:
    try:
        obj = json.loads(raw)
    except ValueError:
        return BadFrame(ErrorReason.SYNTAX, raw, "not a JSON object")
    if not isinstance(obj, dict):
        return BadFrame(ErrorReason.SYNTAX, raw, "not a JSON object")
    if obj.get("type") == "hb" and set(obj) <= {"type", "from"}:
        return Frame(0, Source.SERVER if obj.get("from") == "server" else Source.READER, Heartbeat())
    if set(obj) == {"ack"}:
        of = obj["ack"]
        if type(of) is not int or not 0 <= of <= MAX_SEQ:
            return BadFrame(ErrorReason.FIELD, raw, f"ack: must be 0..{MAX_SEQ}")
        return Frame(0, Source.SERVER, Ack(of))
    kind, seq, faces, overlap = obj.get("type", "read"), obj.get("seq"), obj.get("faces"), obj.get("overlap", False)
    if kind not in ("read", "spread"):
        return BadFrame(ErrorReason.TYPE, raw, f"type: must be read, spread or hb; got {kind!r}")
    if not set(obj) <= {"seq", "type", "faces", "overlap", "confidence", "round", "ts"}:
        return BadFrame(ErrorReason.FIELD, raw, f"unknown field(s) {sorted(set(obj) - {'seq', 'type'})}")
    if type(seq) is not int or not 0 <= seq <= MAX_SEQ:
        return BadFrame(ErrorReason.FIELD, raw, f"seq: must be 0..{MAX_SEQ}")
    allowed = "RWSU" if kind == "read" else "RW"
    if not (isinstance(faces, str) and len(faces) == 4 and set(faces) <= set(allowed)):
        return BadFrame(ErrorReason.FIELD, raw, f"faces: 4 of {allowed}", seq, Source.READER)
    conf = obj.get("confidence")
    if not isinstance(conf, int | float) or isinstance(conf, bool) or not 0.0 <= conf <= 1.0:
        return BadFrame(ErrorReason.FIELD, raw, "confidence: must be a number 0..1", seq, Source.READER)
    if type(overlap) is not bool or (kind == "spread" and overlap):
        return BadFrame(ErrorReason.FIELD, raw, "overlap: true or false (false on a spread)", seq, Source.READER)
    rid, ts = obj.get("round"), obj.get("ts")
    if rid is not None and (type(rid) is not int or not 0 <= rid <= MAX_MS):
        return BadFrame(ErrorReason.FIELD, raw, f"round: a whole number 0..{MAX_MS}", seq, Source.READER)
    if ts is not None and (type(ts) is not int or not 0 <= ts <= MAX_MS):
        return BadFrame(ErrorReason.FIELD, raw, f"ts: a whole number of ms 0..{MAX_MS}", seq, Source.READER)
    message: Message = Result(faces, overlap) if kind == "read" else ReaderRearranged(faces)
    return Frame(seq, Source.READER, message, round=None if rid is None else str(rid), at=ts)


class _LineDecoder:
    """Splits a stream on LF; a line over :data:`MAX_LINE` bytes is refused (``too_long``) up to its LF. Never
    raises."""

    def __init__(self, decode: Any) -> None:
        self.decode = decode
        self.buf = bytearray()
        self.overflow = False

    def feed(self, data: bytes) -> list[Frame | BadFrame]:
        out: list[Frame | BadFrame] = []
        self.buf += data
        while True:
            end = self.buf.find(b"\n")
            if end < 0:
                if len(self.buf) > MAX_LINE:
                    out.append(BadFrame(ErrorReason.TOO_LONG, bytes(self.buf[:64]), f"no LF within {MAX_LINE} bytes"))
                    self.buf.clear()
                    self.overflow = True
                return out
            raw = bytes(self.buf[: end + 1])
            del self.buf[: end + 1]
            if self.overflow:
                self.overflow = False
                out.append(BadFrame(ErrorReason.TOO_LONG, raw[:64], "the rest of a line that was too long"))
                continue
            stripped = raw.strip()
            if not stripped:
                continue  # a bare CR LF between frames
            try:
                out.append(self.decode(raw.lstrip(b"\r\n \t")))
            except Exception as exc:  # the decoders refuse by value; nothing may escape a feed
                out.append(BadFrame(ErrorReason.SYNTAX, raw, f"{type(exc).__name__}: {exc}"))


# --- the dialogue ------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Unacked:
    seq: int
    raw: bytes
    message: Message
    src: Source
    sent: float


class LotusDeviceEnd(DeviceEnd):
    """The devices' end of a Lotus line: numbers its data frames once per run, keeps each until the server
    acknowledges it (sent again every :data:`RETRY_S` and on every new connection), acknowledges and delivers each
    lamp command once per connection, sends heartbeats when quiet and reports silence."""

    def __init__(
        self,
        codec: FrameCodec,
        roles: tuple[Source, ...],
        settings: EndSettings,
        forge_codec: FrameCodec | None = None,
    ) -> None:
        self.codec, self.roles = codec, roles
        self.forge_codec = forge_codec or codec  # a forged frame goes out in its sender's own format
        self.settings = settings
        self.decoder = codec.decoder()
        self.unacked: dict[int, _Unacked] = {}
        self.seq = 0
        self.opened = self.up = False
        self.seen: deque[int] = deque(maxlen=256)
        self._out = bytearray()
        self._events: list[RoleEvent] = []
        self._last_tx = self._last_rx = 0.0
        self._me = Source.LAMP if Source.LAMP in roles else roles[0]
        self.forged = MAX_SEQ + 1

    def _all(self, event: LinkEvent) -> None:
        self._events += [(role, event) for role in self.roles]

    def _emit(self, raw: bytes, now: float) -> None:
        if self.opened:
            self._out += raw
            self._last_tx = now

    def open(self, now: float) -> None:
        self.opened, self.decoder, self._last_rx = True, self.codec.decoder(), now
        self.seen.clear()
        for item in self.unacked.values():
            item.sent = now
            self._emit(item.raw, now)
        if not self.unacked:
            self._emit(self.codec.encode(Frame(0, self._me, Heartbeat())), now)

    def close(self) -> None:
        self.opened = False
        if self.up:
            self.up = False
            self._all(LinkChanged(False, "connection closed"))

    def send(self, src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> None:
        if src not in self.roles or src is Source.LAMP:
            raise ValueError(f"this Lotus line carries reports of {', '.join(r.value for r in self.roles)}, not {src}")
        self.seq = self.seq % MAX_SEQ + 1
        raw = self.codec.encode(Frame(self.seq, src, message, round=round, at=at))
        self.unacked[self.seq] = _Unacked(self.seq, raw, message, src, now)
        self._emit(raw, now)

    def receive(self, data: bytes, now: float) -> list[RoleEvent]:
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                self._events.append((self._me, Rejected(item)))
                continue
            self._last_rx = now
            if not self.up:
                self.up = True
                self._all(LinkChanged(True, "frame from the server"))
            msg = item.message
            if isinstance(msg, Ack):
                done = self.unacked.pop(msg.of, None)
                if done is not None:
                    self._events.append((done.src, Delivered(done.seq, done.message)))
            elif item.src is Source.SERVER and not isinstance(msg, Heartbeat):
                if Source.LAMP not in self.roles:
                    self._events.append((self._me, Rejected(BadFrame(ErrorReason.TYPE, b"", "no lamp on this line"))))
                    continue
                self._emit(self.codec.encode(Frame(0, Source.LAMP, Ack(item.seq))), now)
                if item.seq not in self.seen:
                    self.seen.append(item.seq)
                    self._events.append((Source.LAMP, Received(item)))
        return self.take_events()

    def poll(self, now: float) -> list[RoleEvent]:
        if self.opened:
            for item in self.unacked.values():
                if now >= item.sent + RETRY_S:
                    item.sent = now
                    self._emit(item.raw, now)
            if now >= self._last_tx + self.settings.heartbeat_s:
                self._emit(self.codec.encode(Frame(0, self._me, Heartbeat())), now)
        if self.up and now >= self._last_rx + self.settings.silence_s:
            self.up = False
            self._all(LinkChanged(False, f"nothing received for {self.settings.silence_s:g} s"))
        return self.take_events()

    def next_deadline(self) -> float | None:
        if not self.opened:
            return None
        times = [self._last_tx + self.settings.heartbeat_s]
        times += [item.sent + RETRY_S for item in self.unacked.values()]
        if self.up:
            times.append(self._last_rx + self.settings.silence_s)
        soonest = min(times)
        return None if math.isinf(soonest) else soonest

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    def take_events(self) -> list[RoleEvent]:
        events, self._events = self._events, []
        return events

    def pending(self) -> int:
        return len(self.unacked)

    # Forging (harness.wire.dialects.capabilities): forged frames are numbered down from MAX_SEQ, far from the
    # devices' own numbers (which count up from 1), written unasked and never sent again.
    def _forged_seq(self) -> int:
        self.forged -= 1
        if self.forged <= self.seq + 1000:
            self.forged = MAX_SEQ
        return self.forged

    def forge(self, frame: Frame, now: float) -> int:
        """Write ``frame`` as if device ``frame.src`` sent it, under a forged number, in that device's own format (a
        reader's read on the controller line is a camera JSON line there); returns the number. Raises EncodeError
        for what neither Lotus format can express, ValueError for a control message."""
        if isinstance(frame.message, Ack | Heartbeat):
            raise ValueError("a forged frame carries a device's data message, not the dialogue's own")
        seq = self._forged_seq()
        self._emit(self.forged_bytes(replace(frame, seq=seq)), now)
        return seq

    def forged_bytes(self, frame: Frame) -> bytes:
        """The bytes :meth:`forge` writes for ``frame``, numbered ``frame.seq``, in its sender's own format
        (ForgeEncoding: harness.wire.dialects.capabilities); writes nothing. Raises EncodeError for what neither
        Lotus format can express."""
        return self.forge_codec.encode(Frame(frame.seq, frame.src, frame.message, round=frame.round, at=frame.at))

    def noise_kinds(self) -> frozenset[NoiseKind]:
        """Every kind: an unknown code, a bad field value, a missing field."""
        return frozenset(NoiseKind)

    def forge_noise(self, kind: NoiseKind, src: Source, now: float) -> int:
        """Write one frame of ``kind`` as if ``src`` sent it; its check (on the controller) holds. Returns its
        number. Raises EncodeError for a device this line does not carry."""
        if src not in self.roles or src is Source.LAMP:
            raise EncodeError(f"src: this line carries {', '.join(r.value for r in self.roles)}, not {src.value}")
        seq = self._forged_seq()
        if src is Source.READER:
            obj: dict[str, Any] = {"seq": seq, "type": "read", "faces": "RRWW", "overlap": False, "confidence": 0.97}
            if kind is NoiseKind.UNKNOWN_TYPE:
                obj["type"] = "glare"
            elif kind is NoiseKind.BAD_FIELD:
                obj["faces"] = "RRXW"
            else:
                del obj["faces"]
            self._emit(json.dumps(obj, separators=(",", ":")).encode() + b"\n", now)
            return seq
        dev = _DEV[src]
        body = {
            NoiseKind.UNKNOWN_TYPE: [dev, "WOBBLE"],
            NoiseKind.BAD_FIELD: ["BOWL", "OFF", "7", "-"] if src is Source.BOWL else [dev, "DROP", "LID", "-"],
            NoiseKind.MISSING_FIELD: ["BOWL", "OFF"] if src is Source.BOWL else [dev, "DROP"],
        }[kind]
        if src is Source.CONSOLE and kind is not NoiseKind.UNKNOWN_TYPE:
            body = ["DESK", "PROB", "FIRE"] if kind is NoiseKind.BAD_FIELD else ["DESK", "PROB"]
        text = ";".join(["X", "EVT", str(seq), *body, "-", "-"]) + ";"
        self._emit(f"*{text}{checksum(text)}\r\n".encode("ascii"), now)
        return seq


class LotusServerEnd(ServerEnd):
    """A server's end of a Lotus line: acknowledges every device data frame and delivers each once per run of the
    devices' numbering, numbers and sends lamp commands, heartbeats when quiet, reports silence."""

    def __init__(self, codec: FrameCodec, roles: tuple[Source, ...], settings: EndSettings, now: float) -> None:
        self.codec, self.roles, self.settings = codec, roles, settings
        self.decoder = codec.decoder()
        self.seen: deque[int] = deque(maxlen=256)
        self.seq = 0
        self.up = True
        self._last_rx = self._last_tx = now
        self._out = bytearray()

    def receive(self, data: bytes, now: float) -> list[Frame | BadFrame]:
        out: list[Frame | BadFrame] = []
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                out.append(item)
                continue
            self._last_rx, self.up = now, True
            if isinstance(item.message, Heartbeat | Ack) or item.src is Source.SERVER:
                continue
            if item.src not in self.roles:
                out.append(BadFrame(ErrorReason.TYPE, b"", f"{item.src.value} reports on another device's line"))
                continue
            self._out += self.codec.encode(Frame(0, Source.SERVER, Ack(item.seq)))
            self._last_tx = now
            if item.seq in self.seen:
                continue
            self.seen.append(item.seq)
            out.append(item)
        return out

    def send(self, message: Message, now: float) -> None:
        if Source.LAMP not in self.roles:
            raise ValueError(f"this Lotus line has no lamp for {message.TYPE}")
        self.seq = self.seq % MAX_SEQ + 1
        self._out += self.codec.encode(Frame(self.seq, Source.SERVER, message))
        self._last_tx = now

    def tick(self, now: float) -> list[Source]:
        silent: list[Source] = []
        if self.up and now >= self._last_rx + self.settings.silence_s:
            self.up = False
            silent = list(self.roles)
        if now >= self._last_tx + self.settings.heartbeat_s:
            self._out += self.codec.encode(Frame(0, Source.SERVER, Heartbeat()))
            self._last_tx = now
        return silent

    def next_deadline(self) -> float | None:
        due = self._last_tx + self.settings.heartbeat_s
        if self.up:
            due = min(due, self._last_rx + self.settings.silence_s)
        return None if math.isinf(due) else due

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out


# --- the dialect -------------------------------------------------------------------------------------------------


class LotusDialect(Dialect):
    """Lotus Tables: the controller's ``;`` lines (bowl, shaker, desk, lamp) and the camera's JSON lines, two TCP
    lines the server dials."""

    name = "lotus"
    summary = "Lotus Tables: ;-field controller lines with a byte-sum check (bowl, shaker, desk, lamp) + JSON camera"
    dialogue = "push"
    integrity_checked = False  # the camera's JSON lines carry no check (TCP checks the bytes); the controller's do
    capabilities: ClassVar[ProtocolCapabilities] = ProtocolCapabilities(
        identities=False,  # no HELLO: the controller and the camera say nothing of who they are
        confidence=False,  # a read has one confidence for the four tokens, not one per token
        round_ids="numeric",
    )
    defaults: ClassVar[Mapping[str, Any]] = {"camera_confidence": 0.97}

    def configure(self, options: Mapping[str, Any]) -> None:
        level = options["camera_confidence"]
        if type(level) not in (int, float) or not 0.0 <= level <= 1.0:
            raise DialectError(f"devices.options.camera_confidence: must be a number 0..1; got {level!r}")
        self.controller_codec = ControllerCodec()
        self.camera_codec = CameraCodec(float(level))

    def lines(self, roles: Sequence[Source]) -> list[LineSpec]:
        """``controller`` (BOWL, SHAKER, LAMP, CONSOLE) and ``camera`` (READER), both TCP."""
        ctl = tuple(r for r in _CONTROLLER_ROLES if r in roles)
        out = [LineSpec("controller", ctl, "tcp", self)] if ctl else []
        if Source.READER in roles:
            out.append(LineSpec("camera", (Source.READER,), "tcp", self))
        return out

    def codec(self) -> FrameCodec:
        return _BothCodec(self.controller_codec, self.camera_codec)

    def _line_codec(self, line: LineSpec) -> FrameCodec:
        return self.camera_codec if line.roles == (Source.READER,) else self.controller_codec

    def device_end(self, line: LineSpec, settings: EndSettings) -> DeviceEnd:
        return LotusDeviceEnd(self._line_codec(line), line.roles, settings, forge_codec=self.codec())

    def server_end(self, line: LineSpec, settings: EndSettings, now: float) -> ServerEnd:
        return LotusServerEnd(self._line_codec(line), line.roles, settings, now)


class _BothCodec(FrameCodec):
    """The dialect's codec as the kit sees it: a reader's frame on the camera's JSON lines, every other frame on the
    controller's lines; the decoder tells them apart by their first byte (``{`` or ``*``)."""

    def __init__(self, controller: ControllerCodec, camera: CameraCodec) -> None:
        self.controller, self.camera = controller, camera

    def encode(self, frame: Frame) -> bytes:
        if frame.src is Source.READER:
            return self.camera.encode(frame)
        return self.controller.encode(frame)

    def decoder(self) -> StreamDecoder:
        return _LineDecoder(lambda raw: _decode_camera(raw) if raw[:1] == b"{" else _decode_controller(raw))
