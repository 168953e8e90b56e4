"""``xocdia-jsonl``: the result reader (camera) on a TCP line, one JSON object per line (docs/dialects/xocdia-jsonl.md),
written for the server from that document and its golden vectors alone.

The reader pushes ``hello``, ``result`` and ``rearranged`` objects numbered by ``seq`` within its run (power-up to
power-down, not per connection) and ``hb`` when quiet; the server answers each data object with ``ack`` (a copy
again, without acting on it), refuses one it cannot accept with ``nak`` and sends ``hb`` when quiet. A token read with
a confidence below the line's ``min_confidence`` (default :data:`MIN_CONFIDENCE`) is ``U``. The reader's ``ts`` (its
clock, ms) becomes the frame's ``at``.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Mapping
from typing import Any, ClassVar

from gameserver.dialects.base import LineConfigError, LineOption, ServerLine
from gameserver.protocol import BadFrame, Frame

MAX_LINE = 4096  # bytes, the '\n' included
MAX_SEQ = 2147483647
MAX_TS = 9007199254740991
MIN_CONFIDENCE = 0.5
HEARTBEAT_S = 1.0
REMEMBER = 64  # data seqs of the reader's run kept to recognise copies

_VALUE = re.compile(r"[A-Za-z0-9._:-]{1,32}")
_SENDER = {"hello": "READER", "result": "READER", "rearranged": "READER", "ack": "SRV", "nak": "SRV"}
_REQUIRED = {
    "hello": {"seq", "id", "proto", "fw"},
    "result": {"seq", "faces", "overlap", "confidence"},
    "rearranged": {"seq", "faces", "confidence"},
    "hb": set(),
    "ack": {"of"},
    "nak": {"of", "reason"},
}
_OPTIONAL = {"result": {"round", "ts"}, "rearranged": {"round", "ts"}}
_NAK_REASONS = ("version", "type", "field", "state")


class _Refused(Exception):
    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def _whole(value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _Refused("field")
    return value


def _word(value: Any) -> str:
    if not isinstance(value, str) or not _VALUE.fullmatch(value):
        raise _Refused("field")
    return value


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("duplicate key")
    return obj


def _reject_constant(_name: str) -> Any:
    raise ValueError("NaN and Infinity are not JSON")


def parse(line: bytes, min_confidence: float = MIN_CONFIDENCE) -> Frame | BadFrame:
    """One line (without its ``\\n``) → the frame it stands for, in the ASCII protocol's terms (``READER RESULT`` with
    ``faces``, ``overlap``, then ``round`` and ``at`` when given; a token below ``min_confidence`` read ``U``), or a
    BadFrame (``syntax``, ``version``, ``type``, ``field``; ``nak``/``seq`` set when the object's ``seq`` can be
    answered). Never raises."""
    try:
        obj = json.loads(line.decode("utf-8"), object_pairs_hook=_pairs, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return BadFrame("syntax", line)
    if not isinstance(obj, dict):
        return BadFrame("syntax", line)
    type_, src, seq = obj.get("type"), obj.get("src"), obj.get("seq")
    answerable = (
        src == "READER"
        and not isinstance(seq, bool)
        and isinstance(seq, int)
        and 1 <= seq <= MAX_SEQ
        and type_ not in ("hb", "ack", "nak")
    )
    try:
        return _object(obj, type_, src, min_confidence)
    except _Refused as refused:
        if answerable:
            return BadFrame(refused.kind, line, refused.kind, seq)
        return BadFrame(refused.kind, line)


def _object(obj: dict[str, Any], type_: Any, src: Any, min_confidence: float) -> Frame:
    version = obj.get("v")
    if isinstance(version, bool) or not isinstance(version, int):
        raise _Refused("field")
    if not isinstance(type_, str) or not isinstance(src, str):
        raise _Refused("field")
    if version != 1:
        raise _Refused("version")
    if src not in ("READER", "SRV") or type_ not in _REQUIRED:
        raise _Refused("type")
    if _SENDER.get(type_, src) != src:
        raise _Refused("type")
    keys = set(obj) - {"v", "src", "type"}
    required = _REQUIRED[type_]
    if not required <= keys or keys - required - _OPTIONAL.get(type_, set()):
        raise _Refused("field")
    if type_ == "hb":
        return Frame(0, src, "HB")
    if type_ == "ack":
        return Frame(0, src, "ACK", (("of", str(_whole(obj["of"], 1, MAX_SEQ))),))
    if type_ == "nak":
        of = _whole(obj["of"], 1, MAX_SEQ)
        if obj["reason"] not in _NAK_REASONS:
            raise _Refused("field")
        return Frame(0, src, "NAK", (("of", str(of)), ("reason", obj["reason"])))
    seq = _whole(obj["seq"], 1, MAX_SEQ)
    if type_ == "hello":
        fields = (("id", _word(obj["id"])), ("proto", str(_whole(obj["proto"], 0, 65535))), ("fw", _word(obj["fw"])))
        return Frame(seq, src, "HELLO", fields)
    faces = obj["faces"]
    alphabet = "RWSU" if type_ == "result" else "RW"
    if not isinstance(faces, str) or len(faces) != 4 or any(f not in alphabet for f in faces):
        raise _Refused("field")
    confidence = obj["confidence"]
    if not isinstance(confidence, list) or len(confidence) != 4:
        raise _Refused("field")
    for c in confidence:
        if isinstance(c, bool) or not isinstance(c, int | float) or not 0 <= c <= 1:
            raise _Refused("field")
    unsure = [i for i in range(4) if confidence[i] < min_confidence and faces[i] != "U"]
    if unsure and type_ == "rearranged":
        raise _Refused("field")  # a re-read the reader is not sure of settles nothing
    faces = "".join("U" if i in unsure else faces[i] for i in range(4))
    out: list[tuple[str, str]] = [("faces", faces)]
    if type_ == "result":
        if not isinstance(obj["overlap"], bool):
            raise _Refused("field")
        out.append(("overlap", "1" if obj["overlap"] else "0"))
    if "round" in obj:
        out.append(("round", _word(obj["round"])))
    if "ts" in obj:
        out.append(("at", str(_whole(obj["ts"], 0, MAX_TS))))
    return Frame(seq, src, "RESULT" if type_ == "result" else "REARRANGED", tuple(out))


def encode(type_: str, fields: tuple[tuple[str, str], ...] = ()) -> bytes:
    """The server's own objects, exact bytes with the ``\\n``: ``ACK`` (``of``), ``NAK`` (``of``, ``reason``), ``HB``.
    Raises ValueError for anything else."""
    given = dict(fields)
    if type_ == "ACK" and set(given) == {"of"}:
        body = f'{{"v":1,"src":"SRV","type":"ack","of":{_whole(int(given["of"]), 1, MAX_SEQ)}}}'
    elif type_ == "NAK" and set(given) == {"of", "reason"} and given["reason"] in _NAK_REASONS:
        of = _whole(int(given["of"]), 1, MAX_SEQ)
        body = f'{{"v":1,"src":"SRV","type":"nak","of":{of},"reason":"{given["reason"]}"}}'
    elif type_ == "HB" and not given:
        body = '{"v":1,"src":"SRV","type":"hb"}'
    else:
        raise ValueError(f"the server sends ACK, NAK and HB on a reader line, not {type_} {fields!r}")
    return body.encode("ascii") + b"\n"


class _Lines:
    """Splits a byte stream into lines of at most :data:`MAX_LINE` bytes; empty lines are keepalives."""

    def __init__(self) -> None:
        self.buf = b""
        self.skipping = False  # inside a line already reported too long

    def feed(self, data: bytes) -> list[bytes | BadFrame]:
        out: list[bytes | BadFrame] = []
        *lines, rest = (self.buf + data).split(b"\n")
        for line in lines:
            if self.skipping:
                self.skipping = False
            elif len(line) >= MAX_LINE:
                out.append(BadFrame("too_long", line[:MAX_LINE]))
            elif line not in (b"", b"\r"):
                out.append(line)
        if self.skipping:
            rest = b""
        elif len(rest) >= MAX_LINE:
            out.append(BadFrame("too_long", rest[:MAX_LINE]))
            self.skipping, rest = True, b""
        self.buf = rest
        return out


class JsonlLine(ServerLine):
    """The reader's TCP line. Data objects are acknowledged and each new one delivered once; a copy (its ``seq`` seen
    in the reader's run) is acknowledged and dropped. A ``hello`` is delivered (so the line's device clock restarts)
    only when it starts a run (``seq`` 1); a hello that continues a run announces a reconnect and changes nothing."""

    dialect = "xocdia-jsonl"
    #: docs/dialects/xocdia-jsonl.md §1, §4
    OPTIONS: ClassVar[Mapping[str, LineOption]] = {"min_confidence": LineOption(MIN_CONFIDENCE, 0, 1)}

    def __init__(
        self, name: str, roles: tuple[str, ...], now: float, silence_s: float, min_confidence: float = MIN_CONFIDENCE
    ) -> None:
        if roles and roles != ("READER",):
            raise LineConfigError(f"device {name}: roles: xocdia-jsonl carries only READER; got {', '.join(roles)}")
        super().__init__(name, ("READER",), now, silence_s)
        self.min_confidence = min_confidence
        self._lines = _Lines()
        self._seen: deque[int] = deque(maxlen=REMEMBER)
        self._hello_last: int | None = None  # the seq of the hello accepted last, nothing accepted since
        self._up = True  # expected up: a reader silent from the start is reported
        self._peer: str | None = None
        self._last_rx = now
        self._last_tx = now
        self._out = bytearray()

    def _write(self, type_: str, fields: tuple[tuple[str, str], ...], now: float) -> None:
        self._out += encode(type_, fields)
        self._last_tx = now

    def feed(self, data: bytes, now: float) -> list[Frame | BadFrame]:
        out: list[Frame | BadFrame] = []
        for item in self._lines.feed(data):
            frame = parse(item, self.min_confidence) if isinstance(item, bytes) else item
            if isinstance(frame, BadFrame):
                out.append(frame)
                if frame.nak is not None and frame.seq is not None:
                    self._write("NAK", (("of", str(frame.seq)), ("reason", frame.nak)), now)
                continue
            if frame.src != "READER":
                out.append(BadFrame("type", item if isinstance(item, bytes) else b""))
                continue
            self._last_rx, self._up, self._peer = now, True, "READER"
            if frame.type == "HB":
                continue
            seq = frame.seq
            if frame.type == "HELLO" and frame.get("proto") != "1":
                self._write("NAK", (("of", str(seq)), ("reason", "version")), now)
                continue
            self._write("ACK", (("of", str(seq)),), now)
            if frame.type == "HELLO":
                if seq != self._hello_last:
                    self._hello_last = seq
                    if seq == 1:
                        self._seen.clear()
                        out.append(frame)
                    self._seen.append(seq)
                continue
            if seq in self._seen:
                continue
            self._seen.append(seq)
            self._hello_last = None
            out.append(Frame((seq - 1) % 65535 + 1, frame.src, frame.type, frame.fields))  # ASCII seq range
        return out

    def send(self, type_: str, fields: tuple[tuple[str, str], ...], now: float) -> None:
        raise ValueError(f"device {self.name}: the reader's line takes no lamp commands ({type_})")

    @property
    def carries_lamp(self) -> bool:
        return False

    def tick(self, now: float) -> list[str]:
        silent = []
        if self._up and now >= self._last_rx + self.silence_s:
            self._up = False
            silent.append("READER")
        if now >= self._last_tx + HEARTBEAT_S:
            self._write("HB", (), now)
        return silent

    def next_deadline(self) -> float:
        due = self._last_tx + HEARTBEAT_S
        if self._up:
            due = min(due, self._last_rx + self.silence_s)
        return due

    @property
    def has_output(self) -> bool:
        return bool(self._out)

    def take_output(self) -> bytes:
        out, self._out = bytes(self._out), bytearray()
        return out

    @property
    def up(self) -> bool:
        return self._up

    @property
    def peer(self) -> str | None:
        return self._peer
