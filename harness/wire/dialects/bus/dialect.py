"""``xocdia-bus``: a binary, length-prefixed, CRC-16/MODBUS dialect on an addressed multi-drop bus where the server
polls each device, like an RS-485 sensor bus (docs/dialects/xocdia-bus.md). One serial line named ``bus`` carries
all five devices by default; the option ``lines`` splits them over several buses.

Addresses are fixed by role: BOWL=1, SHAKER=2, READER=3, LAMP=4, CONSOLE=5. The frames are in
:mod:`harness.wire.dialects.bus.codec`, the dialogue (polls, acknowledgements, lamp writes, silence) in
:mod:`harness.wire.dialects.bus.ends`.
"""

from __future__ import annotations

import json
import re
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
from harness.wire.dialects.bus.catalogue import ADDRESS, ROLE_AT, Poll
from harness.wire.dialects.bus.codec import CODEC
from harness.wire.dialects.bus.devices import BusDeviceEnd
from harness.wire.dialects.bus.master import BusServerEnd
from harness.wire.messages import DEVICES, Frame, Source
from harness.wire.text import parse_frame
from harness.wire.text.envelope import crc16

__all__ = ["ADDRESS", "BusDialect", "golden_frame"]

_LINE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}\Z")
_ROLE_NAMES = ", ".join(s.value for s in DEVICES)


class BusDialect(Dialect):
    """The polled bus (see the module doc). Options:

    - ``poll_interval_s`` (0.05): a poll cycle starts this often; each device is polled once a cycle (and again at
      once while it has reports, up to 4 times);
    - ``response_timeout_s`` (0.02): how long the master waits for a reply before it repeats the request;
    - ``retries`` (2): repeats of an unanswered request within a cycle (a device already reported silent: none);
    - ``lines`` (null): line name -> list of roles, to split the devices over several buses (every role exactly
      once); null: one line ``bus`` with all of them.
    """

    name = "xocdia-bus"
    summary = "binary frames, length prefix, CRC-16/MODBUS, addressed multi-drop bus, the server polls each device"
    dialogue = "poll"
    defaults: ClassVar[Mapping[str, Any]] = {
        "poll_interval_s": 0.05,
        "response_timeout_s": 0.02,
        "retries": 2,
        "lines": None,
    }
    server_keys = ("poll_interval_s", "response_timeout_s", "retries")

    golden_file = "protocol/xocdia-bus/golden.jsonl"
    #: docs/dialects/xocdia-bus.md §3-§4: the trailer's round tag and event time, HELLO, every report with its token
    #: and reason bytes, OPEN's betting time, round ids as text; no per-token confidence.
    capabilities = ProtocolCapabilities()

    def configure(self, options: Mapping[str, Any]) -> None:
        for key in ("poll_interval_s", "response_timeout_s"):
            value = options[key]
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0.001 <= value <= 10:
                raise DialectError(f"devices.options.{key}: must be a number of seconds 0.001..10; got {value!r}")
        retries = options["retries"]
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 10:
            raise DialectError(f"devices.options.retries: must be a whole number 0..10; got {retries!r}")
        self.plan = self._plan(options["lines"])

    @staticmethod
    def _plan(lines: Any) -> list[tuple[str, tuple[Source, ...]]]:
        where = "devices.options.lines"
        if lines is None:
            return [("bus", DEVICES)]
        if not isinstance(lines, Mapping) or not lines:
            raise DialectError(
                f"{where}: must be a mapping of line name -> list of roles ({_ROLE_NAMES}); got {lines!r}"
            )
        plan: list[tuple[str, tuple[Source, ...]]] = []
        seen: dict[Source, str] = {}
        for name, roles in lines.items():
            if not isinstance(name, str) or not _LINE_NAME.match(name):
                raise DialectError(f"{where}: line name {name!r} must be 1-32 of a-z 0-9 _ - (starting a-z 0-9)")
            if not isinstance(roles, list | tuple) or not roles:
                raise DialectError(f"{where}.{name}: must be a non-empty list of roles ({_ROLE_NAMES}); got {roles!r}")
            parsed = []
            for role in roles:
                src = next((s for s in DEVICES if isinstance(role, str) and s.value == role.upper()), None)
                if src is None:
                    raise DialectError(f"{where}.{name}: unknown role {role!r}; allowed: {_ROLE_NAMES}")
                if src in seen:
                    raise DialectError(
                        f"{where}: {src.value} is on {seen[src]!r} and {name!r}; each of {_ROLE_NAMES} exactly once"
                    )
                seen[src] = name
                parsed.append(src)
            plan.append((name, tuple(sorted(parsed, key=ADDRESS.__getitem__))))
        missing = [s.value for s in DEVICES if s not in seen]
        if missing:
            raise DialectError(
                f"{where}: no line carries {', '.join(missing)}; every role ({_ROLE_NAMES}) exactly once"
            )
        return plan

    def lines(self, roles: Sequence[Source]) -> list[LineSpec]:
        wanted = set(roles)
        out = []
        for name, carried in self.plan:
            kept = tuple(r for r in carried if r in wanted)
            if kept:
                out.append(LineSpec(name, kept, "serial", self))
        return out

    def codec(self) -> FrameCodec:
        return CODEC

    def device_end(self, line: LineSpec, settings: EndSettings) -> DeviceEnd:
        return BusDeviceEnd(self, line, settings)

    def server_end(self, line: LineSpec, settings: EndSettings, now: float) -> ServerEnd:
        return BusServerEnd(self, line, settings, now)

    def parse_golden(self, text: str) -> list[tuple[Frame, bytes]]:
        """Every vector of :attr:`golden_file`: its frame (:func:`golden_frame`) and its ``hex`` bytes."""
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                case = json.loads(line)
                out.append((golden_frame(case), bytes.fromhex(case["hex"])))
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"line {n}: {exc}") from None
        return out


def golden_frame(case: Mapping[str, Any]) -> Frame:
    """The semantic frame a golden vector describes (``addr``, ``src``, ``type``, ``seq`` and ``fields``, the field
    strings of docs/protocol.md), read through the ASCII protocol's own parser so that the strings mean what that
    document says. Raises ValueError when they do not make a frame."""
    fields = case["fields"]
    if case["type"] == "POLL":
        return Frame(0, Source.SERVER, Poll(ROLE_AT[int(case["addr"])], int(fields["ack"])))
    body = " ".join(["1", str(case["seq"]), case["src"], case["type"], *(f"{k}={v}" for k, v in fields.items())])
    raw = body.encode("ascii")
    frame = parse_frame(b"$%s*%04X\r\n" % (raw, crc16(raw)))
    if not isinstance(frame, Frame):
        raise ValueError(f"{body!r}: {frame.detail}")
    return frame
