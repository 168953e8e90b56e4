"""Bytes to frames (docs/protocol.md §2, §3, §8): :func:`parse_frame` for one complete frame, :class:`FrameDecoder`
for a byte stream in any slicing.

Guarantees: never raises on input; resynchronises on ``$``; reports every corrupt, truncated or invalid frame as a
:class:`BadFrame` and returns a :class:`Frame` only for a frame that passed every check. Each field's value is checked
and converted by :mod:`harness.wire.text.fields`; repeats are decoded through
:mod:`harness.wire.text.known_frames`.
"""

from __future__ import annotations

import re
from typing import Any

from harness.wire.frame_errors import BadFrame, ErrorReason
from harness.wire.messages import CATALOGUE, PROTOCOL_VERSION, Frame, Source
from harness.wire.text.envelope import MAX_FRAME, crc16
from harness.wire.text.fields import LAYOUT, MAX_SEQ, UINT, FieldError, cross_check, trailing
from harness.wire.text.known_frames import known_frame, remember

_HEX4 = re.compile(rb"[0-9A-F]{4}\Z")
# hot path: bound by assignment, not by the import: CPython 3.11 compiles ``<imported name>.match(...)`` without
# LOAD_METHOD (a bound method per call), which slows parse_frame down.
_UINT = UINT

_SOURCE_OF: dict[str, Source] = {s.value: s for s in Source}


def parse_frame(raw: bytes) -> Frame | BadFrame:
    """Check and decode one complete frame (``$`` .. ``\\r\\n``). Never raises."""
    if type(raw) is bytes and 9 <= len(raw) <= MAX_FRAME and raw[0] == 0x24:  # '$'
        frame = known_frame(raw[1:])
        if frame is not None:
            return frame
    return _parse_new(raw)


def _parse_new(raw: bytes) -> Frame | BadFrame:
    """:func:`_parse_checked`, remembering the message part of a valid frame for :func:`known_frame`."""
    result = _parse_checked(raw)
    if type(result) is Frame:
        remember(bytes(raw[1:-7]), result)
    return result


def _parse_checked(raw: bytes) -> Frame | BadFrame:
    """Every check of docs/protocol.md §8 on one complete frame, in order (what :func:`parse_frame` does when
    :func:`known_frame` cannot vouch for the frame)."""
    if len(raw) > MAX_FRAME:
        return BadFrame(ErrorReason.TOO_LONG, raw, f"{len(raw)} bytes, the limit is {MAX_FRAME}")
    if len(raw) < 9 or raw[0:1] != b"$" or raw[-2:] != b"\r\n" or raw[-7:-6] != b"*" or not _HEX4.match(raw[-6:-2]):
        return BadFrame(ErrorReason.SYNTAX, raw, "frame must be $BODY*XXXX\\r\\n (XXXX upper-case hex)")
    body = raw[1:-7]
    want = int(raw[-6:-2], 16)
    got = crc16(body)
    if want != got:
        return BadFrame(ErrorReason.CRC, raw, f"crc {want:04X} in frame, {got:04X} computed")
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        return BadFrame(ErrorReason.SYNTAX, raw, "body is not ASCII")
    parts = text.split(" ")
    if len(parts) < 4 or "" in parts or not _UINT.match(parts[0]) or not _UINT.match(parts[1]):
        return BadFrame(ErrorReason.SYNTAX, raw, "must be 'VER SEQ SRC TYPE' then fields, one space apart")
    seq = int(parts[1])
    src = _SOURCE_OF.get(parts[2])
    if int(parts[0]) != PROTOCOL_VERSION:
        return BadFrame(ErrorReason.VERSION, raw, f"version {parts[0]}, this end speaks 1", seq, src)
    if seq > MAX_SEQ:
        return BadFrame(ErrorReason.SYNTAX, raw, f"seq {seq} above {MAX_SEQ}")
    if src is None:
        return BadFrame(ErrorReason.TYPE, raw, f"unknown src {parts[2]!r}", seq, None)
    cls = CATALOGUE.get((src, parts[3]))
    if cls is None:
        return BadFrame(ErrorReason.TYPE, raw, f"{src!s} does not send {parts[3]!r}", seq, src)
    if (seq == 0) != cls.CONTROL:
        what = "0 for a control frame" if cls.CONTROL else "1..65535 for a data frame"
        return BadFrame(ErrorReason.SYNTAX, raw, f"{cls.TYPE}: seq must be {what}, got {seq}", seq, src)
    layout = LAYOUT[cls]
    given = parts[4:]
    tag: str | None = None
    at: int | None = None
    if len(given) > len(layout):  # only a surplus can hold a round tag or an event time
        try:
            tag, at = trailing(cls, given[len(layout) :])
        except FieldError as exc:
            return BadFrame(ErrorReason.FIELD, raw, f"{cls.TYPE}: {exc}", seq, src)
        if tag is not None or at is not None:
            del given[len(layout) :]
    if len(given) != len(layout):
        names = " ".join(n for n, _ in layout) or "no fields"
        return BadFrame(ErrorReason.FIELD, raw, f"{cls.TYPE} takes {names}; got {len(given)} fields", seq, src)
    values: dict[str, Any] = {}
    try:
        for (name, (_enc, dec)), item in zip(layout, given, strict=True):
            key, eq, value = item.partition("=")
            if key != name or not eq:
                raise FieldError(f"expected field {name}=..., got {item!r}")
            try:
                values[name] = dec(value)
            except FieldError as exc:
                raise FieldError(f"{name}: {exc}") from None
        msg = cls(**values)
        cross_check(msg)
    except FieldError as exc:
        return BadFrame(ErrorReason.FIELD, raw, f"{cls.TYPE}: {exc}", seq, src)
    return Frame(seq=seq, src=src, message=msg, version=PROTOCOL_VERSION, round=tag, at=at)


class FrameDecoder:
    """A resynchronising stream decoder: feed it bytes in any slicing, get frames and errors in order.

    Guarantees: never raises on any input; returns a :class:`Frame` only for a complete frame that
    passed every check of docs/protocol.md §8; every discarded byte is in some :class:`BadFrame`.
    """

    __slots__ = ("_buf", "_skipping")

    def __init__(self) -> None:
        self._buf = b""  # an incomplete frame: '$' and at most 127 more bytes, no '\n'
        self._skipping = False  # discarding the rest of an over-long frame until the next '$'

    def feed(self, data: bytes) -> list[Frame | BadFrame]:
        """Consume ``data``; return the frames and errors completed by it, in stream order."""
        # hot path: one split on '$' per feed; a whole known frame per piece is the common case (see known_frame).
        data = self._buf + data if self._buf else bytes(data)
        self._buf = b""
        pieces = data.split(b"$")
        out: list[Frame | BadFrame] = []
        lead = pieces[0]  # before the first '$': garbage, or the tail of an over-long frame
        if lead and not self._skipping:
            out.append(BadFrame(ErrorReason.GARBAGE, lead, "bytes outside a frame"))
        last = len(pieces) - 1
        if not last:
            return out
        self._skipping = False
        for piece in pieces[1:last]:
            frame = known_frame(piece) if len(piece) < MAX_FRAME else None
            if frame is None:
                self._piece(piece, False, out)
            else:
                out.append(frame)
        piece = pieces[last]  # often incomplete when fed in small reads: not worth a CRC until it ends in CRLF
        frame = known_frame(piece) if len(piece) < MAX_FRAME and piece[-2:] == b"\r\n" else None
        if frame is None:
            self._piece(piece, True, out)
        else:
            out.append(frame)
        return out

    def _piece(self, piece: bytes, last: bool, out: list[Frame | BadFrame]) -> None:
        """Judge the bytes after one '$' up to the next (``last``: up to the end of what was fed)."""
        n = len(piece)
        nl = piece.find(b"\n", 0, MAX_FRAME - 1)
        if nl == n - 1 and nl >= 0:  # one whole frame, which known_frame could not vouch for
            out.append(_parse_new(b"$" + piece))
        elif nl >= 0:
            out.append(parse_frame(b"$" + piece[: nl + 1]))
            out.append(BadFrame(ErrorReason.GARBAGE, piece[nl + 1 :], "bytes outside a frame"))
        elif n >= MAX_FRAME:
            out.append(BadFrame(ErrorReason.TOO_LONG, b"$" + piece[: MAX_FRAME - 1], "no end within 128 bytes"))
            self._skipping = last
        elif not last:
            out.append(BadFrame(ErrorReason.TRUNCATED, b"$" + piece, "frame cut by a new '$'"))
        else:
            self._buf = b"$" + piece  # an incomplete frame: wait for more bytes

    @property
    def pending(self) -> int:
        """Bytes held for an incomplete frame."""
        return len(self._buf)
