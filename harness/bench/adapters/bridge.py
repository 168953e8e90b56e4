"""A lab's dialect on the in-process reference server: its own server end (:meth:`Dialect.server_end`) speaks the
dialect on the line, and each frame crosses to the reference server's line interface as the server's own frame.

The reference server speaks the shipped dialects natively (``gameserver.dialects``); any other dialect reaches it
through this bridge, so a lab's dialect certifies in-process without the server knowing it. The crossing goes through
the ASCII protocol's text form (the harness encodes, the server parses), which both sides already share as golden
vectors: no field is translated by hand.
"""

from __future__ import annotations

import math
from dataclasses import replace

from gameserver.dialects.base import ServerLine
from gameserver.protocol import BadFrame as ServerBadFrame
from gameserver.protocol import Frame as ServerFrame
from gameserver.protocol import encode as server_encode
from gameserver.protocol import parse as server_parse
from harness.wire.dialects.base import EndSettings, LineSpec
from harness.wire.dialects.capabilities import Releasing
from harness.wire.frame_errors import BadFrame, EncodeError
from harness.wire.messages import Frame, Source
from harness.wire.text import encode, parse_frame


class BridgedLine(ServerLine):
    """The reference server's view of a line spoken in a lab's dialect."""

    def __init__(self, line: LineSpec, now: float, silence_s: float) -> None:
        super().__init__(line.name, tuple(r.value for r in line.roles), now, silence_s)
        self.dialect = line.dialect.name
        self.spec = line
        self.end = line.dialect.server_end(line, EndSettings(unit="ref", silence_s=silence_s), now)
        self._out = bytearray()
        self._up = True
        self._peer: str | None = None

    def feed(self, data: bytes, now: float) -> list[ServerFrame | ServerBadFrame]:
        out: list[ServerFrame | ServerBadFrame] = []
        for item in self.end.receive(data, now):
            if isinstance(item, BadFrame):
                out.append(ServerBadFrame(item.reason.value, item.raw))
                continue
            self._up = True
            self._peer = item.src.value
            out.append(_to_server(item))
        return out

    def send(self, type_: str, fields: tuple[tuple[str, str], ...], now: float) -> None:
        frame = parse_frame(server_encode(1, "SRV", type_, fields))
        if isinstance(frame, BadFrame):  # pragma: no cover - the server only sends lamp commands it can encode
            raise ValueError(f"lamp command {type_} does not parse: {frame.detail}")
        self.end.send(frame.message, now)

    @property
    def carries_lamp(self) -> bool:
        return Source.LAMP in self.spec.roles

    def tick(self, now: float) -> list[str]:
        silent = [r.value for r in self.end.tick(now)]
        if silent:
            self._up = False
        return silent

    def released(self, now: float) -> list[ServerFrame | ServerBadFrame]:
        """The reports the dialect's server end let go without new bytes (when it is
        :class:`~harness.wire.dialects.capabilities.Releasing`), as the reference server's frames."""
        if not isinstance(self.end, Releasing):
            return []
        return [
            ServerBadFrame(f.reason.value, f.raw) if isinstance(f, BadFrame) else _to_server(f)
            for f in self.end.released(now)
        ]

    def next_deadline(self) -> float:
        due = self.end.next_deadline()
        return math.inf if due is None else due

    @property
    def has_output(self) -> bool:
        self._out += self.end.take_output()
        return bool(self._out)

    def take_output(self) -> bytes:
        self._out += self.end.take_output()
        out, self._out = bytes(self._out), bytearray()
        return out

    @property
    def up(self) -> bool:
        return self._up

    @property
    def peer(self) -> str | None:
        return self._peer


def _to_server(frame: Frame) -> ServerFrame | ServerBadFrame:
    """The reference server's frame for a harness frame, through the ASCII text form (seq fixed at 1: the dialect's
    own end has already acknowledged and de-duplicated it)."""
    try:
        raw = encode(replace(frame, seq=1, version=1))
    except EncodeError as exc:  # the dialect decoded a value the protocol cannot hold: refuse it, named
        return ServerBadFrame("field", str(exc).encode("utf-8", "replace")[:128])
    return server_parse(raw)
