"""``xocdia-ascii``: the ASCII protocol of docs/protocol.md, one device per line, devices push (the server's own
decoder and link)."""

from __future__ import annotations

from gameserver.dialects.base import ServerLine
from gameserver.link import ServerLink
from gameserver.protocol import BadFrame, Decoder, Frame


class AsciiLine(ServerLine):
    """A push line speaking the ASCII protocol: :class:`~gameserver.protocol.Decoder` and
    :class:`~gameserver.link.ServerLink`."""

    dialect = "xocdia-ascii"

    def __init__(self, name: str, roles: tuple[str, ...], now: float, silence_s: float) -> None:
        super().__init__(name, roles, now, silence_s)
        self.link = ServerLink(name, now, silence_s)
        self.decoder = Decoder()

    def feed(self, data: bytes, now: float) -> list[Frame | BadFrame]:
        out: list[Frame | BadFrame] = []
        link = self.link
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                out.append(item)
            frame = link.receive(item, now)
            if frame is not None:
                out.append(frame)
        return out

    def send(self, type_: str, fields: tuple[tuple[str, str], ...], now: float) -> None:
        self.link.send(type_, fields, now)

    @property
    def carries_lamp(self) -> bool:
        return "LAMP" in self.roles or self.link.peer == "LAMP"

    def tick(self, now: float) -> list[str]:
        if self.link.tick(now):
            return list(self.roles) or [self.link.peer or self.name]
        return []

    def next_deadline(self) -> float:
        return self.link.deadline  # hot path: asked for every line on every service step

    @property
    def has_output(self) -> bool:
        return self.link.has_output

    def take_output(self) -> bytes:
        link = self.link
        return link.take_output() if link.has_output else b""  # hot path: asked on every service step

    @property
    def up(self) -> bool:
        return self.link.up

    @property
    def peer(self) -> str | None:
        return self.link.peer
