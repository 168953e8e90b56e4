"""Field value codecs of message bodies (docs/protocol.md §2, §6): one field's value to and from its text.

This module knows what each field of each message may hold; it knows nothing of frames (version, seq, src,
CRC, length), which are :mod:`harness.wire.text`'s job. Every check here raises :class:`FieldError`
with a message that says what is allowed and what was given; the frame layer prefixes the field name and
the message type, and turns it into an ``EncodeError`` or a ``BadFrame``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import fields
from enum import StrEnum
from typing import Any

from harness.errors import XocdiaError
from harness.wire.messages import (
    MESSAGE_TYPES,
    TAGGABLE,
    BowlOff,
    Drop,
    DropItem,
    Message,
    NakReason,
    ProblemReason,
    ReshakeReason,
    VoidClause,
)

MAX_SEQ = 65535
MAX_AT_DIGITS = 32  # an event time is a §2 value: at most 32 characters
VALUE = re.compile(r"[A-Za-z0-9._:-]{1,32}\Z")  # a §2 value
UINT = re.compile(r"(?:0|[1-9][0-9]{0,9})\Z")  # a whole number: no sign, no leading zeros, at most 10 digits
_AT = re.compile(r"(?:0|[1-9][0-9]{0,31})\Z")


class FieldError(XocdiaError, ValueError):
    """A field value that is not allowed; the message says what is allowed and what was given."""


def enc_value(v: Any) -> str:
    """``v`` as a §2 value. Raises :class:`FieldError` unless it is a str of 1-32 ``A-Z a-z 0-9 . _ : -``."""
    if not isinstance(v, str) or not VALUE.match(v):
        raise FieldError(f"must be 1-32 characters of A-Z a-z 0-9 . _ : -, got {v!r}")
    return v


def _enc_uint(limit: int, low: int = 0) -> Callable[[Any], str]:
    def enc(v: Any) -> str:
        if type(v) is not int or not low <= v <= limit:
            raise FieldError(f"must be a whole number {low}..{limit}, got {v!r}")
        return str(v)

    return enc


def _dec_uint(limit: int, low: int = 0) -> Callable[[str], Any]:
    def dec(s: str) -> int:
        if not UINT.match(s) or not low <= int(s) <= limit:
            raise FieldError(f"must be a whole number {low}..{limit}, got {s!r}")
        return int(s)

    return dec


def _enc_bool(v: Any) -> str:
    if type(v) is not bool:
        raise FieldError(f"must be a bool, got {v!r}")
    return "1" if v else "0"


def _dec_bool(s: str) -> bool:
    if s not in ("0", "1"):
        raise FieldError(f"must be 0 or 1, got {s!r}")
    return s == "1"


def _enc_token(v: Any) -> str:
    if v is None:
        return "-"
    if type(v) is not int or not 0 <= v <= 3:
        raise FieldError(f"must be a token 0..3 or None, got {v!r}")
    return str(v)


def _dec_token(s: str) -> int | None:
    if s == "-":
        return None
    if s not in ("0", "1", "2", "3"):
        raise FieldError(f"must be a token 0..3 or -, got {s!r}")
    return int(s)


def _faces(allowed: str) -> tuple[Callable[[Any], str], Callable[[str], Any]]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or len(v) != 4 or v.strip(allowed):  # hot path: strip leaves what is not allowed
            raise FieldError(f"must be 4 characters of {allowed}, got {v!r}")
        return v

    return check, check


def _enum(cls: type[StrEnum]) -> tuple[Callable[[Any], str], Callable[[str], Any]]:
    allowed = "|".join(m.value for m in cls)

    def enc(v: Any) -> str:
        if not isinstance(v, cls):
            raise FieldError(f"must be one of {allowed}, got {v!r}")
        return str(v._value_)  # hot path: .value is a property of the enum class, _value_ a plain attribute

    def dec(s: str) -> Any:
        try:
            return cls(s)
        except ValueError:
            raise FieldError(f"must be one of {allowed}, got {s!r}") from None

    return enc, dec


Codec = tuple[Callable[[Any], str], Callable[[str], Any]]
"""A field's (encode, decode) pair; each raises :class:`FieldError` for a value it does not allow."""

_BY_NAME: dict[str, Codec] = {
    "id": (enc_value, enc_value),
    "fw": (enc_value, enc_value),
    "round": (enc_value, enc_value),
    "proto": (_enc_uint(MAX_SEQ, 1), _dec_uint(MAX_SEQ, 1)),
    "of": (_enc_uint(MAX_SEQ, 1), _dec_uint(MAX_SEQ, 1)),
    "ms": (_enc_uint(86_400_000), _dec_uint(86_400_000)),
    "touch": (_enc_bool, _dec_bool),
    "overlap": (_enc_bool, _dec_bool),
    "token": (_enc_token, _dec_token),
    "item": _enum(DropItem),
    "clause": _enum(VoidClause),
}
_BY_CLASS_FIELD: dict[tuple[str, str], Codec] = {
    ("Nak", "reason"): _enum(NakReason),
    ("Problem", "reason"): _enum(ProblemReason),
    ("LampReshake", "reason"): _enum(ReshakeReason),
    ("Result", "faces"): _faces("RWSU"),
    ("ReaderRearranged", "faces"): _faces("RW"),
}


def _layout(cls: type[Message]) -> tuple[tuple[str, Codec], ...]:
    out = []
    for f in fields(cls):
        if f.name == "confidence":
            continue  # a read's per-token confidence is not in the text protocol (§6): xocdia-ascii drops it
        codec = _BY_CLASS_FIELD.get((cls.__name__, f.name)) or _BY_NAME[f.name]
        out.append((f.name, codec))
    return tuple(out)


LAYOUT: dict[type[Message], tuple[tuple[str, Codec], ...]] = {cls: _layout(cls) for cls in MESSAGE_TYPES}
"""Every message type's catalogue fields in wire order (the dataclass field order), each with its codec."""


def enc_at(v: Any) -> str:
    """``v`` as an event time. Raises :class:`FieldError` (naming ``at``) unless it is an int >= 0 of at most
    32 digits."""
    if type(v) is not int or v < 0 or len(str(v)) > MAX_AT_DIGITS:
        raise FieldError(f"at: must be a whole number of milliseconds, 0 or more, at most 32 digits, got {v!r}")
    return str(v)


_OPTIONAL = ("round", "at")  # the optional trailing fields of a device data message, in wire order


def trailing(cls: type[Message], extra: list[str]) -> tuple[str | None, int | None]:
    """The optional round tag and event time among the fields after the catalogue's (docs/protocol.md §6,
    revisions 1.1 and 1.2): ``(None, None)`` when ``extra`` holds neither (any other surplus is left for the
    field-count check). Raises FieldError naming the field when one is misplaced, repeated or malformed."""
    keys = [item.partition("=")[0] for item in extra]
    if not any(k in _OPTIONAL for k in keys):
        return None, None
    if cls not in TAGGABLE:
        name = next(k for k in keys if k in _OPTIONAL)
        raise FieldError(f"{name}: only device data messages (not HELLO, not the lamp) carry round= or at=")
    for name in _OPTIONAL:
        if keys.count(name) > 1:
            raise FieldError(f"{name}: given {keys.count(name)} times, at most once")
    if keys == ["at", "round"]:
        raise FieldError("at: must come after round (catalogue fields, then round=, then at=)")
    if keys not in (["round"], ["at"], ["round", "at"]):
        raise FieldError(f"{' '.join(extra)!r}: after the catalogue's fields only round=<id> then at=<ms> may follow")
    values = {key: item.partition("=")[2] for key, item in zip(keys, extra, strict=True)}
    tag = values.get("round")
    if tag is not None and not VALUE.match(tag):
        raise FieldError(f"round: {tag!r} is not a value (§2)")
    text = values.get("at")
    if text is not None and not _AT.match(text):
        raise FieldError(f"at: {text!r} is not a whole number of milliseconds (no sign, no leading zeros, 1-32 digits)")
    return tag, None if text is None else int(text)


CROSS_CHECKED: frozenset[type[Message]] = frozenset({BowlOff, Drop})
"""The message types :func:`cross_check` has a rule for (for every other one it does nothing)."""


def cross_check(msg: Message) -> None:
    """Rules between fields of one message (docs/protocol.md §6). Raises :class:`FieldError` naming ``token``
    when BOWL_OFF's token disagrees with touch, or DROP's token with item."""
    if isinstance(msg, BowlOff) and (msg.touch != (msg.token is not None)):
        raise FieldError("token: must be 0..3 when touch=1 and - when touch=0")
    if isinstance(msg, Drop) and ((msg.item is DropItem.TOKEN) != (msg.token is not None)):
        raise FieldError("token: must be 0..3 when item=token and - otherwise")
