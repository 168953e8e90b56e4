"""Wire protocol v1 codec (docs/protocol.md, revision 1.2), written for the server from the document alone.

:func:`encode` builds a frame; :class:`Decoder` turns bytes in any slicing into :class:`Frame` objects and
:class:`BadFrame` reports (never raises), applying the checks of §8 in their order.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

from gameserver.fastinit import fast_init

VERSION = 1
MAX_FRAME = 128
SOURCES = frozenset({"BOWL", "SHAKER", "READER", "LAMP", "CONSOLE", "SRV"})
CONTROL = frozenset({"ACK", "NAK", "HB"})
_VALUE = re.compile(r"^[A-Za-z0-9._:-]{1,32}$")
_VALUE_BYTES = re.compile(rb"[A-Za-z0-9._:-]{1,32}")  # _VALUE on a frame's bytes (fullmatch; no newline there)
_INT = re.compile(r"^(0|[1-9][0-9]*)$")
_KEY = re.compile(r"^[a-z_]+$")
_NAME = re.compile(r"^[A-Z]+$")
_TAIL = re.compile(rb"\*[0-9A-F]{4}\r\n$")


def _one_of(*allowed: str) -> Callable[[str], bool]:
    return lambda v: v in allowed


def _integer(v: str) -> bool:
    return bool(_INT.match(v))


def _seq(v: str) -> bool:
    return _integer(v) and 1 <= int(v) <= 65535


def _value(v: str) -> bool:
    return bool(_VALUE.match(v))


def _faces(alphabet: str) -> Callable[[str], bool]:
    return lambda v: len(v) == 4 and all(c in alphabet for c in v)


_BOOL = _one_of("0", "1")
_TOKEN = _one_of("0", "1", "2", "3", "-")
_ANY: dict[str, tuple[tuple[str, Callable[[str], bool]], ...]] = {
    "HELLO": (("id", _value), ("proto", _integer), ("fw", _value)),
    "ACK": (("of", _seq),),
    "NAK": (("of", _seq), ("reason", _one_of("version", "type", "field", "state"))),
    "HB": (),
}
#: (src, TYPE) -> fields in wire order with their validators (§6).
CATALOGUE: dict[tuple[str, str], tuple[tuple[str, Callable[[str], bool]], ...]] = {
    **{(src, t): spec for src in SOURCES for t, spec in _ANY.items()},
    ("BOWL", "ON"): (),
    ("BOWL", "OFF"): (("touch", _BOOL), ("token", _TOKEN)),
    ("SHAKER", "START"): (),
    ("SHAKER", "END"): (),
    ("SHAKER", "DROP"): (("item", _one_of("bowl", "plate", "token")), ("token", _TOKEN)),
    ("READER", "RESULT"): (("faces", _faces("RWSU")), ("overlap", _BOOL)),
    ("READER", "REARRANGED"): (("faces", _faces("RW")),),
    ("CONSOLE", "TOKENS"): (),
    ("CONSOLE", "REASSEMBLED"): (),
    ("CONSOLE", "REARRANGED"): (),
    ("CONSOLE", "PROBLEM"): (("reason", _one_of("equipment", "reshake_cap")),),
    ("CONSOLE", "RESOLVED"): (),
    ("SRV", "OPEN"): (("round", _value), ("ms", _integer)),
    ("SRV", "CLOSE"): (("round", _value),),
    ("SRV", "RESHAKE"): (("round", _value), ("reason", _one_of("drop", "standing"))),
    ("SRV", "PAUSE"): (("round", _value),),
    ("SRV", "RESUME"): (("round", _value),),
    ("SRV", "VOID"): (("round", _value), ("clause", _one_of("SH-4a", "SH-4b", "SH-5", "ERR-3"))),
}
#: Device data messages that may end with the optional round tag ``round=<id>`` (§6, "Round tag").
TAGGABLE: frozenset[tuple[str, str]] = frozenset(
    k for k in CATALOGUE if k[0] in ("BOWL", "SHAKER", "READER", "CONSOLE") and k[1] not in {"HELLO", *CONTROL}
)
_ROUND_TAG = ("round", _value)
#: Revision 1.2's device time ``at=<ms>``: the device's monotonic clock (ms since its power-up) when the fact
#: happened; a non-negative decimal integer without sign or leading zeros.
_DEVICE_TIME = ("at", lambda v: _integer(v) and _value(v))  # 1 to 32 digits, like every value (§2)


def _fields_ok(src: str, type_: str, fields: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> bool:
    """The fields are exactly the catalogue's, in order, with valid values — plus, on a device data message,
    the optional trailing round tag (revision 1.1) and then the optional device time (revision 1.2)."""
    spec = CATALOGUE[(src, type_)]
    if (src, type_) in TAGGABLE:
        extra = [k for k, _ in fields[len(spec) :]]
        spec = (*spec, *(f for f in (_ROUND_TAG, _DEVICE_TIME) if f[0] in extra))
    # hot path: every key first, then the values in order (as comparing key lists, then all(), would), no lists built
    if len(fields) != len(spec):
        return False
    for (key, _), (k, _) in zip(spec, fields, strict=True):
        if k != key:
            return False
    return all(ok(v) for (_, ok), (_, v) in zip(spec, fields, strict=True))


@fast_init
@dataclass(frozen=True)
class Frame:
    """A valid frame. ``fields`` keep wire order."""

    seq: int
    src: str
    type: str
    fields: tuple[tuple[str, str], ...] = ()

    @property
    def control(self) -> bool:
        """ACK, NAK and HB are control frames (seq 0, never acknowledged)."""
        return self.type in CONTROL

    def get(self, key: str) -> str:
        """A field's wire value. Raises KeyError if absent."""
        for k, v in self.fields:
            if k == key:
                return v
        raise KeyError(key)

    @property
    def round_tag(self) -> str | None:
        """The round a device data frame is tagged with (§6, "Round tag"), or None for an untagged frame
        (and for every frame that is not a device data message)."""
        if (self.src, self.type) not in TAGGABLE:
            return None
        return self._last("round")

    @property
    def device_time_ms(self) -> int | None:
        """The device time ``at=<ms>`` of a device data frame (revision 1.2: the device's own monotonic clock,
        in ms, when the fact happened), or None when the frame has none (and for every frame that is not a
        device data message)."""
        if (self.src, self.type) not in TAGGABLE:
            return None
        at = self._last("at")
        return None if at is None else int(at)

    def _last(self, key: str) -> str | None:
        """The value of the last field named ``key`` (as ``dict(self.fields).get(key)``), or None."""
        for k, v in reversed(self.fields):  # hot path: the round tag and device time are at the end
            if k == key:
                return v
        return None


@dataclass(frozen=True)
class BadFrame:
    """A refused frame or discarded bytes (returned by :func:`parse` and :class:`Decoder`, never raised).
    ``kind``: garbage|truncated|too_long|syntax|crc|version|type|field. ``nak`` is the NAK reason owed (None: drop
    silently); ``seq`` the frame's seq when a NAK is owed."""

    kind: str
    raw: bytes
    nak: str | None = None
    seq: int | None = None


def crc16(body: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, xorout 0)."""
    return binascii.crc_hqx(body, 0xFFFF)


def encode(seq: int, src: str, type_: str, fields: tuple[tuple[str, str], ...] = ()) -> bytes:
    """The exact bytes of a frame. Raises ValueError for a message or field values the catalogue refuses."""
    spec = CATALOGUE.get((src, type_))
    if spec is None:
        raise ValueError(f"no message {src} {type_} in the catalogue")
    if not _fields_ok(src, type_, fields):
        raise ValueError(f"fields {fields!r} do not match {src} {type_}")
    if not (seq == 0 if type_ in CONTROL else 1 <= seq <= 65535):
        raise ValueError(f"seq {seq} is not valid for {type_}")
    body = (f"{VERSION} {seq} {src} {type_}" + "".join([f" {k}={v}" for k, v in fields])).encode("ascii")
    frame = b"$%s*%04X\r\n" % (body, crc16(body))
    if len(frame) > MAX_FRAME:
        raise ValueError(f"frame is {len(frame)} bytes, over {MAX_FRAME}")
    return frame


def encode_ack(of: int) -> bytes:
    """``encode(0, "SRV", "ACK", (("of", str(of)),))``: the server's acknowledgement of the frame with seq ``of``
    (raises ValueError alike)."""
    if type(of) is not int or not 1 <= of <= 65535:
        return encode(0, "SRV", "ACK", (("of", str(of)),))
    body = b"1 0 SRV ACK of=%d" % of  # hot path: one ACK per frame received, its fields known valid
    return b"$%s*%04X\r\n" % (body, binascii.crc_hqx(body, 0xFFFF))


def parse(raw: bytes) -> Frame | BadFrame:
    """Check one complete frame (``$`` to ``\\n``) in the order of §8 step 3."""
    if type(raw) is bytes and raw[:1] == b"$":
        frame = _seen(raw[1:])
        if frame is not None:
            return frame
    return _parse_new(raw)


def _parse_new(raw: bytes) -> Frame | BadFrame:
    """:func:`parse` for a frame :func:`_seen` did not decode: every check, and the message part kept if valid."""
    result = _parse_checked(raw)
    if isinstance(result, Frame):
        _learn(bytes(raw[1:-7]), result)
    return result


def _parse_checked(raw: bytes) -> Frame | BadFrame:
    """Every check of §8 step 3, in order, on one complete frame (what :func:`parse` does for a frame whose
    message part it has not seen)."""
    if not raw.startswith(b"$") or not _TAIL.search(raw):
        return BadFrame("syntax", raw)
    body, crc = raw[1:-7], raw[-6:-2]
    if crc16(body) != int(crc, 16):
        return BadFrame("crc", raw)
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        return BadFrame("syntax", raw)
    parts = text.split(" ")
    if len(parts) < 4 or any(not p for p in parts):
        return BadFrame("syntax", raw)
    ver, seq_s, src, type_ = parts[:4]
    if not (_integer(ver) and _integer(seq_s) and _NAME.match(src) and _NAME.match(type_)):
        return BadFrame("syntax", raw)
    seq = int(seq_s)
    if not (seq == 0 if type_ in CONTROL else 1 <= seq <= 65535):
        return BadFrame("syntax", raw)
    nak_seq = None if seq == 0 else seq
    if int(ver) != VERSION:
        return BadFrame("version", raw, "version", nak_seq)
    spec = CATALOGUE.get((src, type_))
    if spec is None:
        return BadFrame("type", raw, "type", nak_seq)
    pairs: list[tuple[str, str]] = []
    for token in parts[4:]:
        key, eq, value = token.partition("=")
        if not eq or not _KEY.match(key) or not _VALUE.match(value):
            return BadFrame("field", raw, "field", nak_seq)
        pairs.append((key, value))
    if not _fields_ok(src, type_, pairs):
        return BadFrame("field", raw, "field", nak_seq)
    frame = Frame(seq, src, type_, tuple(pairs))
    if not _cross_fields_ok(frame):
        return BadFrame("field", raw, "field", nak_seq)
    return frame


# hot path: a device repeats a few dozen message parts, so each is checked once.
#: ``SRC TYPE fields`` of valid frames, less a trailing round tag and device time -> (src, type, fields, control);
#: emptied when full.
_SEEN: dict[bytes, tuple[str, str, tuple[tuple[str, str], ...], bool]] = {}
_SEEN_MAX = 1024


def _learn(body: bytes, frame: Frame) -> None:
    """Keep the message part of the valid frame ``frame`` (whose body, between ``$`` and ``*``, is ``body``)."""
    if len(_SEEN) >= _SEEN_MAX:
        _SEEN.clear()
    rest = body.split(b" ", 2)[2]
    fields = frame.fields
    if (frame.src, frame.type) in TAGGABLE:
        # the device time is last, the round tag before it; without either the message part is still valid
        if fields and fields[-1][0] == "at":
            rest, fields = rest.rpartition(b" at=")[0], fields[:-1]
        if len(fields) > len(CATALOGUE[(frame.src, frame.type)]) and fields[-1][0] == "round":
            rest, fields = rest.rpartition(b" round=")[0], fields[:-1]
    _SEEN[rest] = (frame.src, frame.type, fields, frame.type in CONTROL)


def _seen(tail: bytes) -> Frame | None:
    """The frame ``$`` + ``tail`` when it is valid and its message part is in :data:`_SEEN`, else None (then
    :func:`_parse_checked` decides)."""
    body = tail[:-7]
    if tail[-7:] != b"*%04X\r\n" % binascii.crc_hqx(body, 0xFFFF):  # hot path: the tail and the CRC, one test
        return None
    words = body.split(b" ", 2)
    if len(words) != 3:
        return None
    ver, seq_text, rest = words
    known = _SEEN.get(rest)
    at = tag = None
    if known is None:  # a device data frame with its device time, its round tag, or both?
        head, sep, at_text = rest.rpartition(b" at=")
        if sep:
            if not at_text.isdigit() or len(at_text) > 32 or (at_text[0] == 0x30 and len(at_text) > 1):
                return None
            at = at_text.decode()
            known = _SEEN.get(head)
        if known is None:
            head, sep, tag_text = head.rpartition(b" round=")
            if not sep or not _VALUE_BYTES.fullmatch(tag_text):
                return None
            known = _SEEN.get(head)
            if known is None or len(known[2]) != len(CATALOGUE[(known[0], known[1])]):
                return None  # the part kept has a round tag of its own
            tag = tag_text.decode()
        if (known[0], known[1]) not in TAGGABLE:
            return None
    if ver != b"1" or not seq_text.isdigit() or (seq_text[0] == 0x30 and len(seq_text) > 1):
        return None
    seq = int(seq_text)
    src, type_, fields, control = known
    if not (seq == 0 if control else 1 <= seq <= 65535):
        return None
    if tag is not None:
        fields = (*fields, ("round", tag))
    return Frame(seq, src, type_, fields if at is None else (*fields, ("at", at)))


def _cross_fields_ok(frame: Frame) -> bool:
    """Rules between fields: OFF touch=1 needs a token (touch=0 needs ``-``); DROP names a token only for
    item=token."""
    if (frame.src, frame.type) == ("BOWL", "OFF"):
        return (frame.get("touch") == "1") == (frame.get("token") != "-")
    if (frame.src, frame.type) == ("SHAKER", "DROP"):
        return (frame.get("item") == "token") == (frame.get("token") != "-")
    return True


class Decoder:
    """Stream resynchronisation of §8: feed bytes in any slicing, get frames and errors in order."""

    def __init__(self) -> None:
        self._buf = b""  # a frame begun: '$' and at most 126 more bytes, no '\n'
        self._skipping = False  # after too_long: silently discard until the next '$'

    def feed(self, data: bytes) -> list[Frame | BadFrame]:
        """Consume ``data``; return what became complete."""
        # hot path: one split on '$' per call; each piece after a '$' is a frame up to its '\n', then garbage.
        data = self._buf + data if self._buf else bytes(data)
        self._buf = b""
        pieces = data.split(b"$")
        out: list[Frame | BadFrame] = []
        if pieces[0] and not self._skipping:
            out.append(BadFrame("garbage", pieces[0]))
        last = len(pieces) - 1
        if last:
            self._skipping = False
        for i in range(1, last + 1):
            piece = pieces[i]
            end = piece.find(b"\n", 0, MAX_FRAME - 1)
            if end >= 0:
                tail = piece[: end + 1]  # hot path: parse(b"$" + tail) without building the frame's bytes again
                frame = _seen(tail)
                out.append(frame if frame is not None else _parse_new(b"$" + tail))
                if end + 1 < len(piece):
                    out.append(BadFrame("garbage", piece[end + 1 :]))
            elif len(piece) >= MAX_FRAME - 1:  # 128 bytes with the '$' and still no end
                out.append(BadFrame("too_long", b"$" + piece[: MAX_FRAME - 1]))
                self._skipping = i == last
            elif i < last:
                out.append(BadFrame("truncated", b"$" + piece))
            else:
                self._buf = b"$" + piece
        return out
