"""``xocdia-bus`` frames for the server, written from docs/dialects/xocdia-bus.md alone (the golden vectors in
fixtures/protocol/xocdia-bus/ are the shared contract; no code is shared with the bench).

A frame is ``A5 LEN ADDR TYPE SEQ payload CRClo CRChi``: LEN counts the bytes after it (body and CRC), the CRC is
CRC-16/MODBUS of the body (ADDR .. last payload byte), low byte first. :func:`encode` builds one from the server's
text form (a type name and ``key=value`` strings, as :class:`gameserver.protocol.Frame` holds them); :class:`Decoder`
hunts frames in a byte stream and returns :class:`BusFrame` or :class:`~gameserver.protocol.BadFrame`, never raising.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gameserver.protocol import BadFrame, Frame

START = 0xA5
MIN_LEN, MAX_LEN = 5, 128
ADDRESSES = {"BOWL": 1, "SHAKER": 2, "READER": 3, "LAMP": 4, "CONSOLE": 5}
ROLE_OF = {a: r for r, a in ADDRESSES.items()}
_VALUE = re.compile(r"^[A-Za-z0-9._:-]{1,32}$")
_DIGITS = re.compile(r"^(0|[1-9][0-9]{0,31})$")

POLL, NOTHING, ACK, NAK, HELLO = 0x01, 0x80, 0x81, 0x82, 0x90

# Field kinds: a one-byte enumeration is the tuple of its wire strings (a value's index is its byte).
TEXT, U16, MS, BOOL, TOKEN = "text", "u16", "ms", "bool", "token"
FACES_ALL, FACES_RW = "faces:RWSU", "faces:RW"
Kind = str | tuple[str, ...]

#: type code -> (device role or "SRV" for a lamp command, type name, catalogue fields)
TYPES: dict[int, tuple[str, str, tuple[tuple[str, Kind], ...]]] = {
    HELLO: ("*", "HELLO", (("id", TEXT), ("proto", U16), ("fw", TEXT))),
    0x10: ("SRV", "OPEN", (("round", TEXT), ("ms", MS))),
    0x11: ("SRV", "CLOSE", (("round", TEXT),)),
    0x12: ("SRV", "RESHAKE", (("round", TEXT), ("reason", ("drop", "standing")))),
    0x13: ("SRV", "PAUSE", (("round", TEXT),)),
    0x14: ("SRV", "RESUME", (("round", TEXT),)),
    0x15: ("SRV", "VOID", (("round", TEXT), ("clause", ("SH-4a", "SH-4b", "SH-5", "ERR-3")))),
    0xA0: ("BOWL", "ON", ()),
    0xA1: ("BOWL", "OFF", (("touch", BOOL), ("token", TOKEN))),
    0xB0: ("SHAKER", "START", ()),
    0xB1: ("SHAKER", "END", ()),
    0xB2: ("SHAKER", "DROP", (("item", ("bowl", "plate", "token")), ("token", TOKEN))),
    0xC0: ("READER", "RESULT", (("faces", FACES_ALL), ("overlap", BOOL))),
    0xC1: ("READER", "REARRANGED", (("faces", FACES_RW),)),
    0xE0: ("CONSOLE", "TOKENS", ()),
    0xE1: ("CONSOLE", "REASSEMBLED", ()),
    0xE2: ("CONSOLE", "REARRANGED", ()),
    0xE3: ("CONSOLE", "PROBLEM", (("reason", ("equipment", "reshake_cap")),)),
    0xE4: ("CONSOLE", "RESOLVED", ()),
}
CODE_OF = {(src, name): code for code, (src, name, _f) in TYPES.items() if src != "*"}
NAK_REASONS = ("version", "type", "field", "state")


def crc16_modbus(data: bytes) -> int:
    """CRC-16/MODBUS: reflected polynomial 0xA001, initial 0xFFFF, no final XOR (``123456789`` -> 0x4B37)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def frame_bytes(body: bytes) -> bytes:
    """Start byte, length, body and CRC (low byte first)."""
    crc = crc16_modbus(body)
    return bytes((START, len(body) + 2)) + body + bytes((crc & 0xFF, crc >> 8))


@dataclass(frozen=True)
class BusFrame:
    """One decoded frame: the address it concerns, who sent it (``SRV`` for a request) and the server's text form
    (``type``, ``seq`` and ``fields`` as a :class:`gameserver.protocol.Frame` would hold them). A POLL is ``POLL``
    with the field ``ack``; a NOTHING reply is ``HB``; a lamp's write acknowledgement ``ACK of=<seq>``."""

    addr: int
    src: str
    type: str
    seq: int
    fields: tuple[tuple[str, str], ...] = ()

    def to_frame(self) -> Frame:
        return Frame(self.seq, self.src, self.type, self.fields)


# --- encoding -------------------------------------------------------------------------------------------------------


def _put(kind: Kind, value: str) -> bytes:
    if isinstance(kind, tuple):
        if value not in kind:
            raise ValueError(f"{value!r} is not one of {'|'.join(kind)}")
        return bytes((kind.index(value),))
    if kind == TEXT:
        if not _VALUE.match(value):
            raise ValueError(f"{value!r} is not a value")
        return bytes((len(value),)) + value.encode("ascii")
    if kind == BOOL:
        if value not in ("0", "1"):
            raise ValueError(f"{value!r} is not 0 or 1")
        return bytes((int(value),))
    if kind == TOKEN:
        if value not in ("-", "0", "1", "2", "3"):
            raise ValueError(f"{value!r} is not a token")
        return b"\xff" if value == "-" else bytes((int(value),))
    if kind in (FACES_ALL, FACES_RW):
        alphabet = kind.split(":")[1]
        if len(value) != 4 or any(c not in alphabet for c in value):
            raise ValueError(f"{value!r} is not 4 of {alphabet}")
        return value.encode("ascii")
    limit, size = (65535, 2) if kind == U16 else (86_400_000, 4)
    if not _DIGITS.match(value) or int(value) > limit or (kind == U16 and int(value) == 0):
        raise ValueError(f"{value!r} is out of range")
    return int(value).to_bytes(size, "big")


def encode(addr: int, src: str, type_: str, seq: int, fields: tuple[tuple[str, str], ...] = ()) -> bytes:
    """The wire bytes of one frame in the server's text form (see :class:`BusFrame`). Raises ValueError."""
    if addr not in ROLE_OF:
        raise ValueError(f"address {addr} is not 1..5")
    given = dict(fields)
    if type_ == "POLL":
        return frame_bytes(bytes((addr, POLL, _byte(given.get("ack", "0"), 0))))
    if type_ == "HB":
        return frame_bytes(bytes((addr, NOTHING, 0)))
    if type_ == "ACK":
        return frame_bytes(bytes((addr, ACK, _byte(given["of"], 1))))
    if type_ == "NAK":
        return frame_bytes(bytes((addr, NAK, _byte(given["of"], 1))) + _put(NAK_REASONS, given["reason"]))
    code = HELLO if type_ == "HELLO" else CODE_OF.get((src, type_))
    if code is None:
        raise ValueError(f"no bus type for {src} {type_}")
    owner, _name, spec = TYPES[code]
    if owner == "SRV":
        right = src == "SRV" and addr == ADDRESSES["LAMP"]
    else:
        right = src == ROLE_OF[addr] and owner in ("*", src)
    if not right:
        raise ValueError(f"{src} {type_} does not go on address {addr}")
    if not 1 <= seq <= 255:
        raise ValueError(f"seq {seq} is not 1..255")
    names = [k for k, _ in fields]
    if names[: len(spec)] != [k for k, _ in spec]:
        raise ValueError(f"fields {names} do not match {type_}")
    if not _consistent(type_, given):
        raise ValueError(f"{type_}: token does not agree with {'touch' if type_ == 'OFF' else 'item'}")
    body = bytes((addr, code, seq)) + b"".join(_put(kind, v) for (_k, kind), (_n, v) in zip(spec, fields, strict=False))
    extra = fields[len(spec) :]
    if owner in ("*", "SRV"):
        if extra:
            raise ValueError(f"{type_} takes no round tag or event time")
        return frame_bytes(body)
    flags, tail = 0, b""
    keys = [k for k, _ in extra]
    if keys not in ([], ["round"], ["at"], ["round", "at"]):
        raise ValueError(f"after the fields only round then at may follow, got {keys}")
    if "round" in keys:
        flags |= 1
        tail += _put(TEXT, dict(extra)["round"])
    if "at" in keys:
        text = dict(extra)["at"]
        if not _DIGITS.match(text):
            raise ValueError(f"at={text!r} is not a number of ms")
        at = int(text)
        if at < 1 << 32:
            flags |= 2
            tail += at.to_bytes(4, "big")
        else:
            flags |= 4
            size = (at.bit_length() + 7) // 8
            tail += bytes((size,)) + at.to_bytes(size, "big")
    return frame_bytes(body + bytes((flags,)) + tail)


def _byte(text: str, low: int) -> int:
    if not _DIGITS.match(text) or not low <= int(text) <= 255:
        raise ValueError(f"{text!r} is not {low}..255")
    return int(text)


# --- decoding -------------------------------------------------------------------------------------------------------


class _Short(Exception):
    """A payload that does not match its type (reported as ``field``)."""


def _get(body: bytes, pos: int, kind: Kind) -> tuple[str, int]:
    """One field's text and the position after it. Raises _Short."""
    if pos >= len(body):
        raise _Short
    if isinstance(kind, tuple):
        if body[pos] >= len(kind):
            raise _Short
        return kind[body[pos]], pos + 1
    if kind == TEXT:
        size = body[pos]
        raw = body[pos + 1 : pos + 1 + size]
        text = raw.decode("latin-1")
        if len(raw) != size or not _VALUE.match(text):
            raise _Short
        return text, pos + 1 + size
    if kind == BOOL:
        if body[pos] > 1:
            raise _Short
        return str(body[pos]), pos + 1
    if kind == TOKEN:
        b = body[pos]
        if b == 0xFF:
            return "-", pos + 1
        if b > 3:
            raise _Short
        return str(b), pos + 1
    if kind in (FACES_ALL, FACES_RW):
        faces = body[pos : pos + 4].decode("latin-1")
        if len(faces) != 4 or any(c not in kind.split(":")[1] for c in faces):
            raise _Short
        return faces, pos + 4
    size, low, high = (2, 1, 65535) if kind == U16 else (4, 0, 86_400_000)
    if pos + size > len(body):
        raise _Short
    n = int.from_bytes(body[pos : pos + size], "big")
    if not low <= n <= high:
        raise _Short
    return str(n), pos + size


def parse_body(body: bytes) -> BusFrame | BadFrame:
    """Check one body (its CRC already checked): address, type, seq, then the fields (``syntax``, ``type``,
    ``field``)."""
    if len(body) < 3 or body[0] not in ROLE_OF:
        return BadFrame("syntax", body)
    addr, code, seq = body[0], body[1], body[2]
    role = ROLE_OF[addr]
    if code == POLL:
        return BusFrame(addr, "SRV", "POLL", 0, (("ack", str(seq)),)) if len(body) == 3 else BadFrame("field", body)
    if code in (NOTHING, ACK, NAK):
        if (seq == 0) != (code == NOTHING):
            return BadFrame("syntax", body)
        if code == NOTHING:
            return BusFrame(addr, role, "HB", 0) if len(body) == 3 else BadFrame("field", body)
        if code == ACK:
            return BusFrame(addr, role, "ACK", 0, (("of", str(seq)),)) if len(body) == 3 else BadFrame("field", body)
        if len(body) != 4 or body[3] >= len(NAK_REASONS):
            return BadFrame("field", body)
        return BusFrame(addr, role, "NAK", 0, (("of", str(seq)), ("reason", NAK_REASONS[body[3]])))
    entry = TYPES.get(code)
    if entry is None:
        return BadFrame("type", body)
    owner, type_, spec = entry
    if (owner == "SRV" and role != "LAMP") or owner not in ("*", "SRV", role):
        return BadFrame("type", body)
    if seq == 0:
        return BadFrame("syntax", body)
    fields: list[tuple[str, str]] = []
    pos = 3
    try:
        for key, kind in spec:
            value, pos = _get(body, pos, kind)
            fields.append((key, value))
        if owner not in ("*", "SRV"):
            if pos >= len(body):
                raise _Short
            flags = body[pos]
            pos += 1
            if flags & ~7 or flags & 6 == 6:
                raise _Short
            if flags & 1:
                value, pos = _get(body, pos, TEXT)
                fields.append(("round", value))
            if flags & 2:
                if pos + 4 > len(body):
                    raise _Short
                fields.append(("at", str(int.from_bytes(body[pos : pos + 4], "big"))))
                pos += 4
            elif flags & 4:
                size = body[pos] if pos < len(body) else 0
                raw = body[pos + 1 : pos + 1 + size]
                n = int.from_bytes(raw, "big")
                if len(raw) != size or not 5 <= size <= 14 or raw[0] == 0 or not 1 << 32 <= n < 10**32:
                    raise _Short
                fields.append(("at", str(n)))
                pos += 1 + size
        if pos != len(body) or not _consistent(type_, dict(fields)):
            raise _Short
    except _Short:
        return BadFrame("field", body)
    return BusFrame(addr, "SRV" if owner == "SRV" else role, type_, seq, tuple(fields))


def _consistent(type_: str, fields: dict[str, str]) -> bool:
    """BOWL OFF names a token exactly when touch=1, SHAKER DROP exactly when item=token."""
    if type_ == "OFF":
        return (fields["touch"] == "1") == (fields["token"] != "-")
    if type_ == "DROP":
        return (fields["item"] == "token") == (fields["token"] != "-")
    return True


class Decoder:
    """Hunts frames in a byte stream: at each start byte a frame is taken only when its length is possible, all of
    it has arrived and its CRC holds. Bytes before a start byte are ``garbage``; a start byte whose candidate fails
    the CRC (``crc``) or has an impossible length (``syntax``) is reported with the bytes up to the next start byte,
    where the hunt goes on; a candidate still incomplete when a later start byte begins a whole valid frame is
    ``truncated``, and so is a valid one when a start byte inside it begins a whole, valid and well-formed frame
    reaching past it. Never raises."""

    def __init__(self) -> None:
        self._buf = b""

    def _whole(self, buf: bytes, i: int) -> int:
        """End of a whole CRC-valid frame at ``i``; 0 while incomplete; -1 when it cannot be one."""
        if i + 2 > len(buf):
            return 0
        size = buf[i + 1]
        if size < MIN_LEN or size > MAX_LEN:
            return -1
        end = i + 2 + size
        if end > len(buf):
            return 0
        body = buf[i + 2 : end - 2]
        crc = crc16_modbus(body)
        return end if buf[end - 2] == crc & 0xFF and buf[end - 1] == crc >> 8 else -1

    def _reaching_past(self, buf: bytes, i: int, end: int) -> int | None:
        """0: the valid frame ``buf[i:end]`` stands. A position inside it: a whole, valid, well-formed frame starts
        there and ends after ``end`` (the first was cut and the next frame's head completed its CRC by chance).
        None: wait, its last byte is a start byte followed by a plausible length (a real frame ending in 0xA5 is
        followed by a start byte, an impossible length, or by nothing)."""
        for j in range(i + 1, end):
            if buf[j] == START:
                other = self._whole(buf, j)
                if other > end and isinstance(parse_body(buf[j + 2 : other - 2]), BusFrame):
                    return j
        last = end - 1
        if buf[last] == START and len(buf) > end and MIN_LEN <= buf[end] <= MAX_LEN and not self._whole(buf, last):
            return None
        return 0

    def feed(self, data: bytes) -> list[BusFrame | BadFrame]:
        buf = self._buf + bytes(data)
        out: list[BusFrame | BadFrame] = []
        i = 0
        while i < len(buf):
            s = buf.find(START, i)
            if s != i:
                out.append(BadFrame("garbage", buf[i:] if s < 0 else buf[i:s]))
                if s < 0:
                    i = len(buf)
                    break
                i = s
            end = self._whole(buf, i)
            if end > 0:
                # a cut frame whose CRC the next frame's first bytes happened to complete?
                late = self._reaching_past(buf, i, end)
                if late is None:
                    break
                if late:
                    out.append(BadFrame("truncated", buf[i:late]))
                    i = late
                    continue
                out.append(parse_body(buf[i + 2 : end - 2]))
                i = end
                continue
            following = buf.find(START, i + 1)
            if end < 0:
                stop = len(buf) if following < 0 else following
                size = buf[i + 1]
                out.append(BadFrame("crc" if MIN_LEN <= size <= MAX_LEN else "syntax", buf[i:stop]))
                i = stop
                continue
            while following >= 0 and self._whole(buf, following) <= 0:
                following = buf.find(START, following + 1)
            if following < 0:
                break  # wait for the rest
            out.append(BadFrame("truncated", buf[i:following]))
            i = following
        self._buf = buf[i:]
        return out
