"""The device-dialect seam: how a table's devices put its semantic messages on a line, in small parts a lab writes.

The table speaks in semantic messages (:mod:`harness.wire.messages`: BOWL ON, READER RESULT, lamp OPEN ...)
inside a :class:`~harness.wire.messages.Frame` (sender, sequence number, round tag, event time). A
*dialect* decides everything between those frames and the bytes on a line:

- :class:`Framer`: where one frame ends and the next begins (delimiters, a length prefix, STX/ETX with escaping);
- :class:`Integrity`: the check sealed onto each frame (CRC-16/CCITT-FALSE, CRC-16/MODBUS, LRC, none);
- :class:`MessageMap`: frame bodies ↔ semantic frames. A body with no meaning is returned as a
  :class:`~harness.wire.text.BadFrame` (reason ``type``): kept and traced, never silently dropped;
- the dialogue: who speaks first, acknowledgements, retransmission, heartbeats, polling. It is the pair of line ends a
  dialect builds: :class:`DeviceEnd` (the devices' side of one line) and :class:`ServerEnd` (a server's side).

:class:`ComposedCodec` makes a :class:`FrameCodec` out of the three parts; a dialect may instead return a codec of
its own from :meth:`Dialect.codec` (the shipped ASCII dialect does, for speed). One line may carry several devices
(an addressed bus): :meth:`Dialect.lines` says which line carries which device roles.

Nothing here touches a port or a clock: line ends are fed bytes and the time (sim or wall seconds) and say when
they next need to run, exactly like :class:`harness.wire.link.Link`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from harness.errors import InputError
from harness.wire.frame_errors import BadFrame, ErrorReason
from harness.wire.line_events import LinkEvent
from harness.wire.messages import DEVICES, Frame, Message, Source

#: The kinds of medium a line may need; a bench maps each to a transport (docs/dialects/README.md).
MEDIA = ("serial", "tcp")
#: The dialogues a dialect may declare.
DIALOGUES = ("push", "poll")
#: The forms of round id a dialect's lamp commands (and round tags) may carry: any protocol value (``text``: 1-32 of
#: ``A-Z a-z 0-9 . _ : -``) or an unsigned 32-bit number written in decimal without leading zeros (``numeric``).
ROUND_ID_FORMS = ("text", "numeric")
#: The largest round id a ``numeric`` dialect carries.
MAX_NUMERIC_ROUND_ID = 2**32 - 1


class DialectError(InputError):
    """A dialect that cannot be used: an unknown name, a class missing a part, a bad option. The message names the
    field and the allowed values."""


@dataclass(frozen=True, slots=True)
class ProtocolCapabilities:
    """What a dialect's protocol carries of the semantic frames (:mod:`harness.wire.messages`), declared once per
    dialect class (:attr:`Dialect.capabilities`). The defaults are what the shipped ``xocdia-ascii`` carries.

    The conformance kit checks exactly what is declared (a declared item must survive the wire unchanged, an
    undeclared one is not compared), and a scenario whose steps rely on an undeclared item is not applicable
    (:func:`harness.cert.steps.context.needs`). Who polls is :attr:`Dialect.dialogue`.

    Attributes:
        round_tags: device reports carry the round they belong to (``Frame.round``).
        event_times: device reports carry the device time of the event (``Frame.at``, ms).
        identities: devices say who they are (HELLO ``id``, ``proto`` and ``fw``).
        token_sensor: the console reports the tokens placed on the plate (``CONSOLE TOKENS``).
        positions: which token dropped (``SHAKER DROP token``) or was touched (``BOWL OFF token``).
        problem_reasons: the console's ``PROBLEM`` says why (``equipment`` or ``reshake_cap``).
        confidence: a read carries its confidence per token (a token read too unsure is ``U``).
        betting_time_on_open: the lamp's ``OPEN`` carries the betting time (``ms``).
        round_ids: the round ids lamp commands (and round tags) carry: one of :data:`ROUND_ID_FORMS`.
        resend_after_reconnect: a device report not acknowledged when the connection dropped goes out again on the
            next connection under its own sequence number, so the server can tell the copy from a new report and
            deliver it once (false: the dialogue numbers every connection afresh, or keeps no report across one).

    Raises:
        DialectError: a field of the wrong type, or ``round_ids`` not one of :data:`ROUND_ID_FORMS`.
    """

    round_tags: bool = True
    event_times: bool = True
    identities: bool = True
    token_sensor: bool = True
    positions: bool = True
    problem_reasons: bool = True
    confidence: bool = False
    betting_time_on_open: bool = True
    resend_after_reconnect: bool = False
    round_ids: str = "text"

    def __post_init__(self) -> None:
        for name in capability_names():
            if type(getattr(self, name)) is not bool:
                raise DialectError(f"capabilities.{name}: must be true or false; got {getattr(self, name)!r}")
        if self.round_ids not in ROUND_ID_FORMS:
            raise DialectError(
                f"capabilities.round_ids: must be one of {', '.join(ROUND_ID_FORMS)}; got {self.round_ids!r}"
            )

    def as_dict(self) -> dict[str, bool | str]:
        """Every field by name, in declaration order (what ``describe()`` shows)."""
        return {name: getattr(self, name) for name in (*capability_names(), "round_ids")}

    def lacking(self) -> list[str]:
        """The names of the yes/no capabilities this declaration does not have, in declaration order."""
        return [name for name in capability_names() if not getattr(self, name)]


def capability_names() -> tuple[str, ...]:
    """The yes/no fields of :class:`ProtocolCapabilities` (every field but ``round_ids``), in declaration order."""
    return tuple(f for f in ProtocolCapabilities.__dataclass_fields__ if f != "round_ids")


# --- the three codec parts -------------------------------------------------------------------------------------


class Framer(ABC):
    """Splits a byte stream into frames and wraps a sealed frame for the wire. Stateful: each stream decoder gets a new
    framer (a reopened port starts a new one), so a partial frame never outlives its connection."""

    @abstractmethod
    def wrap(self, sealed: bytes) -> bytes:
        """The bytes that put ``sealed`` (a body with its integrity check) on the wire."""

    @abstractmethod
    def feed(self, data: bytes) -> list[bytes | BadFrame]:
        """Consume bytes in any slicing; return each complete sealed frame, and each run of bytes that could not be
        a frame as a :class:`BadFrame` (``garbage``, ``truncated``, ``too_long``), in order. Never raises."""


class Integrity(ABC):
    """The check sealed onto every frame body."""

    name: ClassVar[str] = ""

    @abstractmethod
    def seal(self, body: bytes) -> bytes:
        """``body`` with its check appended (or otherwise applied)."""

    @abstractmethod
    def open(self, sealed: bytes) -> bytes | None:
        """The body of a sealed frame whose check holds; None when it does not. Never raises."""


class MessageMap(ABC):
    """Frame bodies ↔ semantic frames."""

    @abstractmethod
    def encode(self, frame: Frame) -> bytes:
        """The body for ``frame``. Raises :class:`~harness.wire.text.EncodeError` naming the field when the
        dialect cannot express it."""

    @abstractmethod
    def decode(self, body: bytes) -> Frame | BadFrame:
        """The frame a body stands for, or a :class:`BadFrame` (``syntax``, ``type``, ``field`` ...) carrying the body.
        Never raises."""


class StreamDecoder(Protocol):
    """A per-line decoder: bytes in any slicing → frames and errors, in order; never raises."""

    def feed(self, data: bytes) -> list[Frame | BadFrame]: ...


class FrameCodec(ABC):
    """Encodes frames and makes stream decoders: what a line end needs from the three parts."""

    @abstractmethod
    def encode(self, frame: Frame) -> bytes:
        """The wire bytes of ``frame``. Raises EncodeError naming the field."""

    @abstractmethod
    def decoder(self) -> StreamDecoder:
        """A new stream decoder (one per line end; it holds partial frames)."""


class ComposedCodec(FrameCodec):
    """A codec from a framer factory, an integrity check and a message map."""

    def __init__(self, framer: type[Framer] | Any, integrity: Integrity, mapping: MessageMap) -> None:
        self.framer_factory = framer
        self.integrity = integrity
        self.mapping = mapping
        self._wrapper: Framer = framer()

    def encode(self, frame: Frame) -> bytes:
        return self._wrapper.wrap(self.integrity.seal(self.mapping.encode(frame)))

    def decoder(self) -> StreamDecoder:
        return _ComposedDecoder(self.framer_factory(), self.integrity, self.mapping)


class _ComposedDecoder:
    def __init__(self, framer: Framer, integrity: Integrity, mapping: MessageMap) -> None:
        self.framer, self.integrity, self.mapping = framer, integrity, mapping

    def feed(self, data: bytes) -> list[Frame | BadFrame]:
        out: list[Frame | BadFrame] = []
        for item in self.framer.feed(data):
            if isinstance(item, BadFrame):
                out.append(item)
                continue
            body = self.integrity.open(item)
            if body is None:
                out.append(BadFrame(ErrorReason.CRC, item, f"{self.integrity.name or 'integrity'} check failed"))
                continue
            out.append(self.mapping.decode(body))
        return out


# --- line ends ---------------------------------------------------------------------------------------------------

#: One event on a line end, with the device role it concerns (a bus line carries several).
RoleEvent = tuple[Source, LinkEvent]


@dataclass(frozen=True, slots=True)
class LineSpec:
    """One line of a table: its name (the server knows the line by it), the device roles it carries (more than one
    on an addressed bus), the medium it needs, and the dialect speaking on it."""

    name: str
    roles: tuple[Source, ...]
    medium: str
    dialect: Dialect = field(compare=False)

    @property
    def trace_name(self) -> str:
        """The line's name in traces: its device (``BOWL``) for a one-device line, else its name in capitals."""
        return self.roles[0].value if len(self.roles) == 1 else self.name.upper()


@dataclass(frozen=True, slots=True)
class EndSettings:
    """What a bench asks of a line end: identity, acknowledgements, timers (seconds; ``math.inf`` turns heartbeats
    off)."""

    unit: str = "0001"
    firmware: str = "xocdia-hil-0.1"
    require_ack: bool = True
    heartbeat_s: float = 1.0
    silence_s: float = 3.0


class DeviceEnd(ABC):
    """The devices' end of one line: sends their reports, receives the server's commands.

    The owner writes :meth:`take_output` to the port, feeds what it reads to :meth:`receive`, and calls :meth:`poll` by
    :meth:`next_deadline`. Every returned event names the role it concerns.
    """

    roles: tuple[Source, ...]

    @abstractmethod
    def open(self, now: float) -> None:
        """The port is (re)connected: start the dialogue (e.g. HELLO). Queued messages are kept."""

    @abstractmethod
    def close(self) -> None:
        """The port is gone: stop sending; queued and unacknowledged messages are kept for the next :meth:`open`."""

    @abstractmethod
    def send(self, src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> None:
        """Queue a report from device ``src`` (one of :attr:`roles`) with its round tag and event time. Never drops
        it. Raises ValueError for a role the line does not carry."""

    @abstractmethod
    def receive(self, data: bytes, now: float) -> list[RoleEvent]:
        """Consume bytes read from the port; returns what happened, in order."""

    @abstractmethod
    def poll(self, now: float) -> list[RoleEvent]:
        """Run the timers due at ``now``; returns what happened."""

    @abstractmethod
    def next_deadline(self) -> float | None:
        """The earliest time :meth:`poll` has work to do, or None (only input can change anything)."""

    @abstractmethod
    def take_output(self) -> bytes:
        """Bytes to write to the port, in order; each call returns only new bytes."""

    @abstractmethod
    def take_events(self) -> list[RoleEvent]:
        """Events raised outside :meth:`receive`/:meth:`poll` (e.g. by :meth:`close`)."""

    @abstractmethod
    def pending(self) -> int:
        """Messages queued or unacknowledged (0 when the server has everything)."""


class DelegatingDeviceEnd(DeviceEnd):
    """A device end that does what ``inner`` does: the base of a wrapper that changes one part of an end (drops its
    output, records what it sends, hides an optional capability) and passes the rest on. It offers none of
    ``inner``'s optional capabilities unless a subclass adds them."""

    def __init__(self, inner: DeviceEnd) -> None:
        self.inner = inner
        self.roles = inner.roles

    def open(self, now: float) -> None:
        self.inner.open(now)

    def close(self) -> None:
        self.inner.close()

    def send(self, src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> None:
        self.inner.send(src, message, now, round, at)

    def receive(self, data: bytes, now: float) -> list[RoleEvent]:
        return self.inner.receive(data, now)

    def poll(self, now: float) -> list[RoleEvent]:
        return self.inner.poll(now)

    def next_deadline(self) -> float | None:
        return self.inner.next_deadline()

    def take_output(self) -> bytes:
        return self.inner.take_output()

    def take_events(self) -> list[RoleEvent]:
        return self.inner.take_events()

    def pending(self) -> int:
        return self.inner.pending()


class ServerEnd(ABC):
    """A server's end of one line, speaking the dialect: what the conformance kit talks to, and what carries a lab's
    dialect to the in-process reference engine. Delivers each new device report once, as a semantic frame."""

    roles: tuple[Source, ...]

    @abstractmethod
    def receive(self, data: bytes, now: float) -> list[Frame | BadFrame]:
        """Consume bytes; returns each new device data frame once (duplicates and control frames are handled here),
        and every error (for the trace)."""

    @abstractmethod
    def send(self, message: Message, now: float) -> None:
        """Queue a server command (a lamp command) for the device that takes it."""

    @abstractmethod
    def tick(self, now: float) -> list[Source]:
        """Run the timers (polls, retries, heartbeats); returns the roles that have just gone silent."""

    @abstractmethod
    def next_deadline(self) -> float | None:
        """The earliest time :meth:`tick` may act, or None."""

    @abstractmethod
    def take_output(self) -> bytes:
        """Bytes to write to the port."""


# --- the dialect ------------------------------------------------------------------------------------------------


class Dialect(ABC):
    """A named way for a table's devices to talk. Subclasses set the class attributes and build the parts.

    Args:
        options: the bench file's ``devices.options`` (validated by the subclass; unknown keys are errors).

    Raises:
        DialectError: an unknown or invalid option (the message names it and the allowed values).
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    dialogue: ClassVar[str] = "push"  # one of DIALOGUES
    #: The device roles this dialect can carry itself; others go to its companion (see :meth:`lines`).
    carries: ClassVar[frozenset[Source]] = frozenset(DEVICES)
    #: Options and their defaults; a subclass validates values in :meth:`configure`.
    defaults: ClassVar[Mapping[str, Any]] = {}
    #: The options that govern a line's dialogue at the server's end too (a poll interval, a confidence threshold):
    #: a bench hands them to the server with each line of this dialect (:meth:`server_options`).
    server_keys: ClassVar[tuple[str, ...]] = ()
    #: False when frames carry no integrity check (the medium checks bytes, e.g. TCP): the conformance kit then does
    #: not demand that a bit-flipped frame be refused.
    integrity_checked: ClassVar[bool] = True
    #: What the protocol carries of the semantic frames; the conformance kit checks exactly this, and scenarios that
    #: need more are not applicable on a bench speaking the dialect.
    capabilities: ClassVar[ProtocolCapabilities] = ProtocolCapabilities()

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        given = dict(options or {})
        unknown = sorted(set(given) - set(self.defaults))
        if unknown:
            allowed = ", ".join(sorted(self.defaults)) or "none"
            raise DialectError(
                f"devices.options: unknown option {unknown[0]!r} for dialect {self.name!r}; allowed: {allowed}"
            )
        self.options: dict[str, Any] = {**self.defaults, **given}
        self.configure(self.options)

    def configure(self, options: Mapping[str, Any]) -> None:
        """Validate and apply options (default: none to check). Raises DialectError naming
        ``devices.options.<key>``."""
        return None

    def server_options(self) -> dict[str, Any]:
        """The options a server's end of this dialect's lines takes (:attr:`server_keys`), as configured."""
        return {key: self.options[key] for key in self.server_keys}

    def lines(self, roles: Sequence[Source]) -> list[LineSpec]:
        """The lines that carry ``roles``. Default: one serial line per device, named after it (``bowl`` ...)."""
        return [LineSpec(src.value.lower(), (src,), "serial", self) for src in roles]

    @abstractmethod
    def codec(self) -> FrameCodec:
        """The codec of this dialect's frames (a :class:`ComposedCodec` of its parts, or one of its own)."""

    @abstractmethod
    def device_end(self, line: LineSpec, settings: EndSettings) -> DeviceEnd:
        """The devices' end of ``line``."""

    @abstractmethod
    def server_end(self, line: LineSpec, settings: EndSettings, now: float) -> ServerEnd:
        """A server's end of ``line``, opened at ``now``."""

    #: The dialect's golden vectors, relative to the fixtures folder (``protocol/NAME/golden.jsonl``); "" for none.
    golden_file: ClassVar[str] = ""

    def parse_golden(self, text: str) -> list[tuple[Frame, bytes]]:
        """The frames and exact bytes of :attr:`golden_file`'s ``text``, for the conformance kit (default: none).
        Raises ValueError naming the line of a vector that does not parse."""
        return []

    def describe(self) -> dict[str, Any]:
        """What ``xocdia-hil dialects --json`` prints for this dialect."""
        return {
            "name": self.name,
            "summary": self.summary,
            "dialogue": self.dialogue,
            "carries": sorted(s.value for s in self.carries),
            "options": dict(self.defaults),
            "integrity_checked": self.integrity_checked,
            "capabilities": self.capabilities.as_dict(),
        }


def check_parts(cls: type[Dialect]) -> None:
    """Raise :class:`DialectError` naming what a dialect class lacks (a name, a dialogue, an abstract part)."""
    where = f"{cls.__module__}:{cls.__qualname__}"
    if not isinstance(cls, type) or not issubclass(cls, Dialect):
        raise DialectError(f"devices.dialect: {where} is not a subclass of harness.wire.dialects.Dialect")
    missing = sorted(getattr(cls, "__abstractmethods__", ()))
    if missing:
        raise DialectError(f"devices.dialect: {where} is missing part(s): {', '.join(missing)}")
    if not cls.name:
        raise DialectError(f"devices.dialect: {where} has no name (set the class attribute 'name')")
    if not isinstance(cls.capabilities, ProtocolCapabilities):
        raise DialectError(
            f"devices.dialect: {where}.capabilities must be a harness.lab.ProtocolCapabilities;"
            f" got {type(cls.capabilities).__name__}"
        )
    if cls.dialogue not in DIALOGUES:
        raise DialectError(
            f"devices.dialect: {where}.dialogue must be one of {', '.join(DIALOGUES)}; got {cls.dialogue!r}"
        )
