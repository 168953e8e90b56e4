"""``xocdia-jsonl``: a JSON-lines result reader over TCP, like a camera or OCR reader (docs/dialects/xocdia-jsonl.md).

The reader is the only device this dialect carries: it pushes what it reads as one UTF-8 JSON object per line, with
its own device-clock timestamp (``ts``, milliseconds → the frame's event time ``at``), the round tag and a confidence
per token. The other devices of the table speak the *companion* dialect (option ``companion``, default
``xocdia-ascii``) on their own lines, so a table mixes serial devices and a networked camera.

The dialogue is the reader's own, not :class:`~harness.wire.link.Link`'s: the reader numbers its data objects
(``hello``, ``result``, ``rearranged``) once per power-up and never restarts the numbering on a reconnect, so the server
suppresses a result it already has even when the reader re-sends it on a new connection (the acknowledgement was lost
with the old one). Stop and wait, retransmission, heartbeats and silence follow docs/protocol.md §4-§5.

Confidence: the emulated reader sends ``1.0`` for every token it reads (R, W, S) and ``0.0`` for a token it cannot read
(U); a receiver reads a token below ``min_confidence`` as ``U`` (a ``rearranged`` read with such a token is refused).

This module is the dialect (options, lines, ends); the wire format is :mod:`harness.wire.dialects.jsonl.codec`, the
dialogue :mod:`harness.wire.dialects.jsonl.ends`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from harness.wire.dialects.base import (
    DeviceEnd,
    Dialect,
    DialectError,
    EndSettings,
    FrameCodec,
    LineSpec,
    ProtocolCapabilities,
    ServerEnd,
)
from harness.wire.dialects.jsonl.codec import (
    DEFAULT_MIN_CONFIDENCE,
    golden_frame,
    jsonl_codec,
)
from harness.wire.dialects.jsonl.ends import ReaderEnd, ReaderServerEnd
from harness.wire.messages import Frame, Source


class JsonlReaderDialect(Dialect):
    """The reader on a TCP line in JSON lines; the other devices in the companion dialect."""

    name = "xocdia-jsonl"
    summary = (
        "JSON-lines result reader over TCP (socket://): reads with the reader's own timestamps and per-token"
        " confidence, acknowledged by seq; the other devices speak the companion dialect"
    )
    dialogue = "push"
    carries = frozenset({Source.READER})
    integrity_checked = False  # TCP checks the bytes; the schema is checked strictly instead
    golden_file = "protocol/xocdia-jsonl/golden.jsonl"
    #: docs/dialects/xocdia-jsonl.md: the reader's round tag, its timestamp ``ts``, its hello and a confidence per
    #: token. It carries no console, shaker, bowl or lamp: no token sensor, positions, problem reasons or lamp
    #: commands (the companion's lines carry those, under the companion's own declaration). The reader numbers its
    #: objects per run, not per connection: a read not acknowledged when the connection dropped goes out again after
    #: the next hello under its own ``seq`` (§4), which the server takes for a copy.
    capabilities = ProtocolCapabilities(
        token_sensor=False,
        positions=False,
        problem_reasons=False,
        confidence=True,
        betting_time_on_open=False,
        resend_after_reconnect=True,
    )
    defaults: ClassVar[Mapping[str, Any]] = {
        "companion": "xocdia-ascii",
        "companion_options": {},
        "min_confidence": DEFAULT_MIN_CONFIDENCE,
    }
    server_keys = ("min_confidence",)

    def configure(self, options: Mapping[str, Any]) -> None:
        from harness.wire.dialects.registry import load_dialect, names  # lazy: the registry names this module

        level = options["min_confidence"]
        if type(level) not in (int, float) or not 0.0 <= level <= 1.0:
            raise DialectError(f"devices.options.min_confidence: must be a number 0..1; got {level!r}")
        self.min_confidence = float(level)
        companion = options["companion"]
        allowed = [n for n in names() if n != self.name]
        hint = f"allowed: {', '.join(allowed)} (or 'package.module:Class')"
        if not isinstance(companion, str) or not companion or companion == self.name:
            raise DialectError(f"devices.options.companion: must name another dialect; got {companion!r}; {hint}")
        companion_options = options["companion_options"]
        if not isinstance(companion_options, Mapping):
            raise DialectError(
                "devices.options.companion_options: must be a mapping (the companion's options);"
                f" got {companion_options!r}"
            )
        try:
            self.companion = load_dialect(companion, companion_options, field="devices.options.companion")
        except DialectError as exc:
            text = str(exc)
            if text.startswith("devices.options.companion: unknown dialect"):
                raise DialectError(f"devices.options.companion: unknown dialect {companion!r}; {hint}") from None
            if text.startswith("devices.options:"):  # the companion refused one of its options
                text = "devices.options.companion_options:" + text.removeprefix("devices.options:")
            elif text.startswith("devices.options."):
                text = "devices.options.companion_options." + text.removeprefix("devices.options.")
            raise DialectError(text) from None
        if isinstance(self.companion, JsonlReaderDialect):
            raise DialectError(f"devices.options.companion: must name another dialect; got {companion!r}; {hint}")
        self._codec = jsonl_codec(self.min_confidence)

    def lines(self, roles: Sequence[Source]) -> list[LineSpec]:
        """The reader's TCP line (``reader``), then the companion's lines for the other roles."""
        out = [LineSpec("reader", (Source.READER,), "tcp", self)] if Source.READER in roles else []
        others = [r for r in roles if r is not Source.READER]
        if others:
            lacking = [r.value for r in others if r not in self.companion.carries]
            if lacking:
                raise DialectError(
                    f"devices.options.companion: {self.companion.name!r} does not carry {', '.join(lacking)};"
                    " the companion must carry every device but the reader"
                )
            out += self.companion.lines(others)
        return out

    def codec(self) -> FrameCodec:
        return self._codec

    def device_end(self, line: LineSpec, settings: EndSettings) -> DeviceEnd:
        if line.roles != (Source.READER,):
            return self.companion.device_end(line, settings)
        return ReaderEnd(self._codec, settings)

    def server_end(self, line: LineSpec, settings: EndSettings, now: float) -> ServerEnd:
        if line.roles != (Source.READER,):
            return self.companion.server_end(line, settings, now)
        return ReaderServerEnd(self._codec, settings, now)

    def parse_golden(self, text: str) -> list[tuple[Frame, bytes]]:
        """The canonical vectors of :attr:`golden_file`: each line's ``bytes`` (the exact line) and its frame, written
        as ``seq`` and ``message`` (the message in the text of docs/protocol.md: ``READER RESULT faces=RWRR overlap=0
        round=12 at=5000``). Vectors marked ``"canonical": false`` only decode to their frame and are left out."""
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            case = json.loads(line)
            if not case.get("canonical", True):
                continue
            out.append((golden_frame(case, n), case["bytes"].encode("utf-8")))
        return out

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["companion"] = self.companion.name
        out["medium"] = "tcp"
        return out
