"""``xocdia-jsonl``'s wire format (docs/dialects/xocdia-jsonl.md): lines of one JSON object each, mapped to and from
semantic frames.

Guarantees: :class:`LineFramer` yields each complete line once, skips keepalives and reports an over-long line once;
:class:`JsonlMap` writes the canonical compact form (keys in the spec's order) and refuses anything the schema does
not allow, naming the field; a token read below ``min_confidence`` decodes as ``U``. The dialogue that uses this
codec is in :mod:`harness.wire.dialects.jsonl.ends`, the dialect in :mod:`harness.wire.dialects.jsonl`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, NoReturn

from harness.wire.dialects.base import ComposedCodec, FrameCodec, Framer, MessageMap
from harness.wire.dialects.parts import NoIntegrity
from harness.wire.frame_errors import BadFrame, EncodeError, ErrorReason
from harness.wire.messages import (
    Ack,
    Frame,
    Heartbeat,
    Hello,
    Message,
    Nak,
    NakReason,
    ReaderRearranged,
    Result,
    Source,
    check_confidence,
    default_confidence,
)
from harness.wire.text import parse_frame
from harness.wire.text.envelope import crc16

#: The longest line, ``\n`` included.
MAX_LINE = 4096
#: Data objects are numbered 1..MAX_SEQ in one run of the reader (power-up to power-down); no wrap.
MAX_SEQ = 2**31 - 1
#: The largest device time: exact as a JSON number in every implementation (2^53 - 1).
MAX_TS = 2**53 - 1
DEFAULT_MIN_CONFIDENCE = 0.5
VERSION = 1

_VALUE = re.compile(r"[A-Za-z0-9._:-]{1,32}\Z")
_FACES = re.compile(r"[RWSU]{4}\Z")
_FACES_RW = re.compile(r"[RW]{4}\Z")
_ENVELOPE = frozenset({"v", "src", "type"})
#: type -> (required keys, optional keys) besides v, src and type.
_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "hello": (frozenset({"seq", "id", "proto", "fw"}), frozenset()),
    "result": (frozenset({"seq", "faces", "overlap", "confidence"}), frozenset({"round", "ts"})),
    "rearranged": (frozenset({"seq", "faces", "confidence"}), frozenset({"round", "ts"})),
    "hb": (frozenset(), frozenset()),
    "ack": (frozenset({"of"}), frozenset()),
    "nak": (frozenset({"of", "reason"}), frozenset()),
}
#: Who may send each type.
_SENDERS: dict[str, frozenset[Source]] = {
    "hello": frozenset({Source.READER}),
    "result": frozenset({Source.READER}),
    "rearranged": frozenset({Source.READER}),
    "hb": frozenset({Source.READER, Source.SERVER}),
    "ack": frozenset({Source.SERVER}),
    "nak": frozenset({Source.SERVER}),
}
_DATA = frozenset({"hello", "result", "rearranged"})
_CONTROL = frozenset({"hb", "ack", "nak"})
_SRC = {"READER": Source.READER, "SRV": Source.SERVER}
_NAK_REASONS = {r.value: r for r in NakReason}


# --- values ------------------------------------------------------------------------------------------------------


class _Bad(Exception):
    """A field error inside :meth:`JsonlMap.decode` (never escapes it)."""

    def __init__(self, reason: ErrorReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _is_int(value: object) -> bool:
    return type(value) is int  # bool is not an int here


def _int(obj: Mapping[str, Any], key: str, low: int, high: int) -> int:
    value = obj[key]
    if not _is_int(value) or not low <= value <= high:
        raise _Bad(ErrorReason.FIELD, f"{key}: must be a whole number {low}..{high}, got {_show(value)}")
    return int(value)


def _text(obj: Mapping[str, Any], key: str) -> str:
    value = obj[key]
    if type(value) is not str or not _VALUE.match(value):
        raise _Bad(ErrorReason.FIELD, f"{key}: must be 1 to 32 characters of A-Z a-z 0-9 . _ : -, got {_show(value)}")
    return value


def _show(value: object) -> str:
    text = json.dumps(value) if isinstance(value, str | int | float | bool) or value is None else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _confidence(obj: Mapping[str, Any]) -> list[float]:
    value = obj["confidence"]
    if type(value) is not list or len(value) != 4:
        raise _Bad(ErrorReason.FIELD, f"confidence: must be a list of 4 numbers, got {_show(value)}")
    out: list[float] = []
    for i, c in enumerate(value):
        if type(c) not in (int, float) or not 0.0 <= c <= 1.0:  # NaN fails the comparison; bool is refused
            raise _Bad(ErrorReason.FIELD, f"confidence[{i}]: must be a number 0..1, got {_show(c)}")
        out.append(float(c))
    return out


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


# --- framing ------------------------------------------------------------------------------------------------------


class LineFramer(Framer):
    """Lines ending in ``\\n``, at most ``max_line`` bytes with the ``\\n``. An empty line (``\\n`` or ``\\r\\n``) is
    a keepalive and yields nothing; a line too long is reported once (``too_long``) and skipped to its ``\\n``, so the
    tail of an over-long line is never taken for an object."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self._buf = bytearray()
        self._skipping = False

    def wrap(self, sealed: bytes) -> bytes:
        return sealed + b"\n"

    def feed(self, data: bytes) -> list[bytes | BadFrame]:
        out: list[bytes | BadFrame] = []
        buf = self._buf
        buf += data
        start = 0
        limit = self.max_line
        while True:
            end = buf.find(b"\n", start)
            if end < 0:
                rest = len(buf) - start
                if self._skipping:
                    start = len(buf)
                elif rest >= limit:  # no room left for the '\n'
                    out.append(BadFrame(ErrorReason.TOO_LONG, bytes(buf[start : start + limit]), "line too long"))
                    self._skipping = True
                    start = len(buf)
                break
            if self._skipping:
                self._skipping = False
            else:
                line = bytes(buf[start:end])
                if len(line) + 1 > limit:
                    out.append(BadFrame(ErrorReason.TOO_LONG, line[:limit], "line too long"))
                elif line and line != b"\r":
                    out.append(line)
            start = end + 1
        del buf[:start]
        return out


# --- message map --------------------------------------------------------------------------------------------------


def _conf_text(kind: str, faces: str, confidence: object) -> str:
    """The ``confidence`` list's inside: the read's own values, or :func:`default_confidence` when it gives none.
    Raises EncodeError naming ``confidence`` for a value that is not four numbers 0..1."""
    if confidence is None:
        return ",".join("0.0" if f == "U" else "1.0" for f in faces)
    try:
        values = check_confidence(confidence)
    except ValueError as exc:
        raise EncodeError(f"{kind}: {exc}") from None
    return ",".join(repr(c) for c in values)  # repr: the shortest text that reads back as the same float


class JsonlMap(MessageMap):
    """One JSON object (a line without its ``\\n``) ↔ a semantic frame. A token whose confidence is below
    ``min_confidence`` reads ``U``."""

    def __init__(self, min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> None:
        self.min_confidence = min_confidence

    # encoding: canonical, compact, keys in the order of the spec
    def encode(self, frame: Frame) -> bytes:
        msg, src, seq = frame.message, frame.src, frame.seq
        if frame.version != VERSION:
            raise EncodeError(f"version: xocdia-jsonl speaks version {VERSION}, got {frame.version!r}")
        kind = _TYPE_OF.get(type(msg))
        if kind is None or src not in _SENDERS[kind]:
            raise EncodeError(
                f"{src!s} {msg.TYPE}: xocdia-jsonl carries only the reader's hello, result, rearranged and hb, and the"
                " server's ack, nak and hb"
            )
        head = f'{{"v":1,"src":"{src.value}","type":"{kind}"'
        if kind in _DATA:
            if not _is_int(seq) or not 1 <= seq <= MAX_SEQ:
                raise EncodeError(f"{kind}: seq must be 1..{MAX_SEQ}, got {seq!r}")
            head += f',"seq":{seq}'
        elif seq != 0:
            raise EncodeError(f"{kind} is a control object: seq must be 0, got {seq!r}")
        if (frame.round is not None or frame.at is not None) and kind not in ("result", "rearranged"):
            raise EncodeError(f"{kind}: only result and rearranged carry round and ts")
        if isinstance(msg, Hello):
            if not (isinstance(msg.id, str) and _VALUE.match(msg.id)):
                raise EncodeError(f"hello: id must be 1 to 32 characters of A-Z a-z 0-9 . _ : -, got {msg.id!r}")
            if not (isinstance(msg.fw, str) and _VALUE.match(msg.fw)):
                raise EncodeError(f"hello: fw must be 1 to 32 characters of A-Z a-z 0-9 . _ : -, got {msg.fw!r}")
            if not _is_int(msg.proto) or not 0 <= msg.proto <= 65535:
                raise EncodeError(f"hello: proto must be 0..65535, got {msg.proto!r}")
            body = f'{head},"id":"{msg.id}","proto":{msg.proto},"fw":"{msg.fw}"}}'
        elif isinstance(msg, Result | ReaderRearranged):
            faces = msg.faces
            pattern = _FACES if isinstance(msg, Result) else _FACES_RW
            if not isinstance(faces, str) or not pattern.match(faces):
                allowed = "R, W, S or U" if isinstance(msg, Result) else "R or W"
                raise EncodeError(f"{kind}: faces must be 4 of {allowed}, got {faces!r}")
            body = f'{head},"faces":"{faces}"'
            if isinstance(msg, Result):
                if type(msg.overlap) is not bool:
                    raise EncodeError(f"result: overlap must be a bool, got {msg.overlap!r}")
                body += ',"overlap":true' if msg.overlap else ',"overlap":false'
            body += f',"confidence":[{_conf_text(kind, faces, msg.confidence)}]'
            if frame.round is not None:
                if not (isinstance(frame.round, str) and _VALUE.match(frame.round)):
                    raise EncodeError(f"{kind}: round must be 1 to 32 characters of A-Z a-z 0-9 . _ : -")
                body += f',"round":"{frame.round}"'
            if frame.at is not None:
                if not _is_int(frame.at) or not 0 <= frame.at <= MAX_TS:
                    raise EncodeError(f"{kind}: ts (the event time at) must be 0..{MAX_TS} ms, got {frame.at!r}")
                body += f',"ts":{frame.at}'
            body += "}"
        elif isinstance(msg, Ack):
            if not _is_int(msg.of) or not 1 <= msg.of <= MAX_SEQ:
                raise EncodeError(f"ack: of must be 1..{MAX_SEQ}, got {msg.of!r}")
            body = f'{head},"of":{msg.of}}}'
        elif isinstance(msg, Nak):
            if not _is_int(msg.of) or not 1 <= msg.of <= MAX_SEQ:
                raise EncodeError(f"nak: of must be 1..{MAX_SEQ}, got {msg.of!r}")
            if not isinstance(msg.reason, NakReason):
                raise EncodeError(f"nak: reason must be one of {', '.join(_NAK_REASONS)}, got {msg.reason!r}")
            body = f'{head},"of":{msg.of},"reason":"{msg.reason.value}"}}'
        else:  # Heartbeat
            body = head + "}"
        return body.encode("ascii")

    # decoding: strict schema
    def decode(self, body: bytes) -> Frame | BadFrame:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return BadFrame(ErrorReason.SYNTAX, body, "not UTF-8")
        try:
            obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
        except RecursionError:
            return BadFrame(ErrorReason.SYNTAX, body, "not JSON: nested too deep")
        except ValueError as exc:
            return BadFrame(ErrorReason.SYNTAX, body, f"not JSON: {str(exc)[:80]}")
        if type(obj) is not dict:
            return BadFrame(ErrorReason.SYNTAX, body, "not a JSON object")
        seq: int | None = None
        src_text = obj.get("src")
        src = _SRC.get(src_text) if type(src_text) is str else None
        kind = obj.get("type")
        raw_seq = obj.get("seq")
        control = type(kind) is str and kind in _CONTROL
        if src is Source.READER and type(raw_seq) is int and 1 <= raw_seq <= MAX_SEQ and not control:
            seq = raw_seq  # trustworthy enough to answer with a nak
        try:
            v = obj.get("v")
            if not _is_int(v):
                raise _Bad(ErrorReason.FIELD, f"v: must be the whole number {VERSION}, got {_show(v)}")
            if type(kind) is not str:
                raise _Bad(ErrorReason.FIELD, f"type: must be a string, got {_show(kind)}")
            if type(src_text) is not str:
                raise _Bad(ErrorReason.FIELD, f"src: must be READER or SRV, got {_show(src_text)}")
            if v != VERSION:
                raise _Bad(ErrorReason.VERSION, f"v {v}: this end speaks {VERSION}")
            if src is None:
                raise _Bad(ErrorReason.TYPE, f"src {_show(src_text)}: only READER and SRV speak on this line")
            keys = _KEYS.get(kind)
            if keys is None:
                raise _Bad(ErrorReason.TYPE, f"unknown type {_show(kind)}")
            if src not in _SENDERS[kind]:
                raise _Bad(ErrorReason.TYPE, f"{src.value} does not send {kind}")
            required, optional = keys
            given = obj.keys() - _ENVELOPE
            missing = sorted(required - given)
            if missing:
                raise _Bad(ErrorReason.FIELD, f"{kind}: missing {', '.join(missing)}")
            extra = sorted(given - required - optional)
            if extra:
                raise _Bad(ErrorReason.FIELD, f"{kind}: unknown key {extra[0]!r}")
            return self._frame(kind, src, obj)
        except _Bad as bad:
            return BadFrame(bad.reason, body, bad.detail, seq, src)

    def _frame(self, kind: str, src: Source, obj: dict[str, Any]) -> Frame:
        msg: Message
        if kind == "hb":
            return Frame(0, src, Heartbeat())
        if kind == "ack":
            return Frame(0, src, Ack(_int(obj, "of", 1, MAX_SEQ)))
        if kind == "nak":
            of = _int(obj, "of", 1, MAX_SEQ)
            reason = _NAK_REASONS.get(obj["reason"]) if type(obj["reason"]) is str else None
            if reason is None:
                raise _Bad(ErrorReason.FIELD, f"reason: must be one of {', '.join(_NAK_REASONS)}")
            return Frame(0, src, Nak(of, reason))
        seq = _int(obj, "seq", 1, MAX_SEQ)
        if kind == "hello":
            msg = Hello(_text(obj, "id"), _int(obj, "proto", 0, 65535), _text(obj, "fw"))
            return Frame(seq, src, msg)
        faces = obj["faces"]
        pattern = _FACES if kind == "result" else _FACES_RW
        if type(faces) is not str or not pattern.match(faces):
            allowed = "R, W, S or U" if kind == "result" else "R or W"
            raise _Bad(ErrorReason.FIELD, f"faces: must be 4 of {allowed}, got {_show(faces)}")
        confidence = _confidence(obj)
        low = [i for i, c in enumerate(confidence) if c < self.min_confidence and faces[i] != "U"]
        if low:
            if kind == "rearranged":
                raise _Bad(
                    ErrorReason.FIELD,
                    f"rearranged: token {low[0]} read with confidence {confidence[low[0]]:g},"
                    f" below {self.min_confidence:g}",
                )
            faces = "".join("U" if i in low else f for i, f in enumerate(faces))
        # the read's own values, or None where they are what a read of these faces giving none means: one read, one
        # frame, which encodes back to a line that decodes to it again
        carried = None if tuple(confidence) == default_confidence(faces) else check_confidence(confidence)
        round_tag = _text(obj, "round") if "round" in obj else None
        at = _int(obj, "ts", 0, MAX_TS) if "ts" in obj else None
        if kind == "result":
            overlap = obj["overlap"]
            if type(overlap) is not bool:
                raise _Bad(ErrorReason.FIELD, f"overlap: must be true or false, got {_show(overlap)}")
            msg = Result(faces, overlap, carried)
        else:
            msg = ReaderRearranged(faces, carried)
        return Frame(seq, src, msg, round=round_tag, at=at)


_TYPE_OF: dict[type[Message], str] = {
    Hello: "hello",
    Result: "result",
    ReaderRearranged: "rearranged",
    Heartbeat: "hb",
    Ack: "ack",
    Nak: "nak",
}


def golden_frame(case: Mapping[str, Any], line: int = 0) -> Frame:
    """The frame a golden vector names: ``seq`` and ``message``, read through the ASCII protocol's parser, and for a
    read the ``confidence`` it carries when the vector gives one (a read whose confidence is not the default, which
    the ASCII words cannot say). Raises ValueError naming the line when it does not parse or its confidence is not
    four numbers 0..1 on a read."""
    seq = int(case["seq"])
    body = f"1 {min(seq, 1)} {case['message']}".encode("ascii")  # the ASCII parser stops at seq 65535
    parsed = parse_frame(b"$%s*%04X\r\n" % (body, crc16(body)))
    if isinstance(parsed, BadFrame):
        raise ValueError(f"golden vector line {line}: {parsed.reason.value}: {parsed.detail}")
    frame = replace(parsed, seq=seq)
    if "confidence" in case:
        if not isinstance(frame.message, Result | ReaderRearranged):
            raise ValueError(f"golden vector line {line}: confidence: only a result or rearranged read carries one")
        try:
            frame = replace(frame, message=replace(frame.message, confidence=check_confidence(case["confidence"])))
        except ValueError as exc:
            raise ValueError(f"golden vector line {line}: {exc}") from None
    return frame


def jsonl_codec(min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> FrameCodec:
    """The dialect's codec: :class:`LineFramer`, no integrity check (TCP), :class:`JsonlMap`."""
    return ComposedCodec(LineFramer, NoIntegrity(), JsonlMap(min_confidence))
