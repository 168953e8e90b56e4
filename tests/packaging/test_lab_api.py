"""The lab-facing API is one module, :mod:`harness.lab`, whose names are pinned here: removing or renaming one is a
deliberate act that changes this list (and docs/lab-api.md). Paths that moved keep importing the same objects, with a
DeprecationWarning that names the new path, so a lab's code written against an earlier layout does not break silently.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import harness.lab as lab
from harness.moved import MOVED

PINNED = sorted(
    [
        "DEVICES",
        "ENTRY_POINT_GROUP",
        "Ack",
        "AdapterError",
        "AsciiBodyMap",
        "BadFrame",
        "BetRecordRow",
        "BetReply",
        "BetResult",
        "BowlOff",
        "BowlOn",
        "ComposedCodec",
        "ConsoleRearranged",
        "Crc16CcittFalse",
        "Crc16Modbus",
        "CrashPoints",
        "DelimitedFramer",
        "Delivered",
        "DeviceEnd",
        "DeviceRole",
        "Dialect",
        "DialectError",
        "Drop",
        "DropItem",
        "EncodeError",
        "EndSettings",
        "ErrorReason",
        "EventWatching",
        "Faultable",
        "ForgetsRoundEvents",
        "Frame",
        "FrameCodec",
        "Framer",
        "GameServerAdapter",
        "Heartbeat",
        "Hello",
        "InputError",
        "Integrity",
        "LampClose",
        "LampOpen",
        "LampPause",
        "LampReshake",
        "LampResume",
        "LampVoid",
        "LengthPrefixedFramer",
        "LineConfigurable",
        "LineNegotiating",
        "LineSpec",
        "LinkChanged",
        "LinkEvent",
        "Lrc",
        "Message",
        "MessageMap",
        "Nak",
        "NakReason",
        "NoIntegrity",
        "NoiseReporting",
        "PlayerSpec",
        "Pluggable",
        "Problem",
        "ProblemReason",
        "ProtocolCapabilities",
        "PushDialect",
        "ReaderRearranged",
        "Reassembled",
        "Received",
        "Refused",
        "Rejected",
        "Replugging",
        "ReshakeReason",
        "Resolved",
        "Restartable",
        "Result",
        "RoleEvent",
        "RoundEvent",
        "RoundEventKind",
        "RoundRecords",
        "RoundStatus",
        "ServerEnd",
        "ServerSetup",
        "ShakeEnd",
        "ShakeStart",
        "Source",
        "StreamDecoder",
        "StxEtxFramer",
        "TokensPlaced",
        "Transport",
        "TransportClosed",
        "VoidClause",
        "Wrapping",
        "XocdiaError",
        "load_adapter",
        "load_dialect",
        # the device-end capabilities, the listening and broker ends, the refusal codes, the table configuration
        "AckLosing",
        "AddressForging",
        "CheckFlip",
        "CheckFlipping",
        "DelegatingDeviceEnd",
        "ForgeEncoding",
        "Forging",
        "Identifying",
        "ListenPort",
        "LostAck",
        "MqttPort",
        "Muting",
        "NoiseBodies",
        "NoiseFrames",
        "NoiseKind",
        "Principals",
        "Redial",
        "Redialing",
        "RefusalCode",
        "Releasing",
        "Renumbering",
        "TableConfig",
        "TableConfigError",
    ]
)


def test_the_lab_api_names_are_pinned() -> None:
    assert sorted(lab.__all__) == PINNED
    assert len(set(lab.__all__)) == len(lab.__all__)


def test_every_lab_name_is_defined_outside_the_moved_paths() -> None:
    for name in lab.__all__:
        obj = getattr(lab, name)
        home = getattr(obj, "__module__", None)
        assert home is None or home not in MOVED, f"{name} lives in a moved path {home}"


#: Names the old modules offered, as they stood before the move (their ``__all__`` or their imports): a lab's import
#: of any of them must keep working through the moved path.
OLD_NAMES: dict[str, set[str]] = {
    "harness.adapters.base": {
        "AdapterError", "BetRecordRow", "BetReply", "CrashPoints", "GameServerAdapter", "PlayerSpec", "RoundEvent",
        "ServerSetup",
    },
    "harness.wire.protocol.messages": {"DEVICES", "CATALOGUE", "PROTOCOL_VERSION", "Frame", "Message", "BowlOn"},
    "harness.wire.protocol.codec": {
        "MAX_AT_DIGITS", "MAX_FRAME", "MAX_SEQ", "NAK_FOR", "BadFrame", "EncodeError", "ErrorReason", "FrameDecoder",
        "crc16", "encode", "encode_body", "parse_frame",
    },
    "harness.wire.protocol.link": {
        "HEARTBEAT_S", "RETRIES", "RETRY_AFTER_S", "SILENCE_S", "SLOW_RETRY_S", "Delivered", "Link", "LinkChanged",
        "LinkEvent", "Received", "Refused", "Rejected", "Frame", "Hello", "Source",
    },
    "harness.wire.dialects.ascii_v1": {
        "AsciiBodyMap", "AsciiCodec", "AsciiDialect", "MAX_FRAME", "BadFrame", "ErrorReason", "FrameDecoder", "crc16",
        "encode", "encode_body", "parse_frame", "Frame", "PushDialect", "FrameCodec", "MessageMap", "StreamDecoder",
    },
    "harness.wire.dialects.bus_codec": {
        "ACK", "ADDRESS", "AT_LIMIT", "CLAUSES", "CODEC", "DROP_ITEMS", "FLAG_AT32", "FLAG_ATLONG", "FLAG_ROUND",
        "HELLO", "LAMP_CODES", "MAX_LEN", "MAX_MS", "MAX_SEQ", "MIN_LEN", "NAK", "NAKS", "NOTHING", "NO_TOKEN", "POLL",
        "PROBLEMS", "REPORT_CODES", "RESHAKES", "ROLE_AT", "START", "UINT32", "BusFramer", "BusMessageMap", "Poll",
        "bus_codec", "decode_body", "encode_body",
    },
    "harness.wire.dialects.bus_ends": {"BURST", "EPS", "HOLD_CYCLES", "BusDeviceEnd", "BusServerEnd"},
}  # fmt: skip


def _import_each_old_path() -> dict[str, object]:
    """Import every old path in a fresh interpreter (no module imported yet) and report its warnings and the public
    names it holds."""
    script = textwrap.dedent(
        """
        import importlib, json, sys, warnings
        from harness.moved import MOVED
        out = {}
        for old in MOVED:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                sys.modules.pop(old, None)
                module = importlib.import_module(old)
            out[old] = {
                "warnings": [str(w.message) for w in caught if w.category is DeprecationWarning],
                "names": sorted(name for name in vars(module) if not name.startswith("_")),
            }
        print(json.dumps(out))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_a_moved_path_warns_naming_its_new_home_and_keeps_the_names_it_had() -> None:
    found = _import_each_old_path()
    assert sorted(found) == sorted(MOVED)
    for old, seen in found.items():
        assert isinstance(seen, dict)
        assert seen["names"], old
        assert OLD_NAMES.get(old, set()) <= set(seen["names"]), (old, OLD_NAMES[old] - set(seen["names"]))
        new = MOVED[old][0]
        assert any(f"{old} has moved: import {new}" in w for w in seen["warnings"]), (old, seen["warnings"])


def test_a_lab_dialect_written_against_the_old_paths_still_runs(tmp_path: object) -> None:
    """A dialect written with the import lines the docs showed before the move: it loads, encodes and decodes."""
    script = textwrap.dedent(
        """
        import warnings
        warnings.simplefilter("error")
        try:
            from harness.wire.dialects.ascii_v1 import AsciiBodyMap
        except DeprecationWarning as w:
            print("warned:", w)
        warnings.simplefilter("ignore")
        from harness.wire.dialects import ComposedCodec, FrameCodec
        from harness.wire.dialects.ascii_v1 import AsciiBodyMap
        from harness.wire.dialects.parts import Lrc, StxEtxFramer
        from harness.wire.dialects.push import PushDialect
        from harness.wire.protocol.messages import BowlOn, Frame, Source
        import harness.lab as lab

        class Acme(PushDialect):
            name = "acme-test"
            def codec(self) -> FrameCodec:
                return ComposedCodec(StxEtxFramer, Lrc(), AsciiBodyMap())

        frame = Frame(1, Source.BOWL, BowlOn())
        codec = Acme().codec()
        decoder = codec.decoder()
        back = decoder.feed(codec.encode(frame))
        assert [f for f in back if isinstance(f, lab.Frame)] == [frame], back
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "warned: harness.wire.dialects.ascii_v1 has moved: import harness.wire.dialects.ascii" in done.stdout
    assert done.stdout.strip().endswith("ok")
