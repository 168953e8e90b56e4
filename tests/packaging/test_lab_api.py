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


def _import_each_old_path() -> dict[str, object]:
    """Import every old path in a fresh interpreter (no module imported yet) and report its warnings and whether
    each of its names is the very object of its new home."""
    script = textwrap.dedent(
        """
        import importlib, json, sys, warnings
        from harness.moved import MOVED
        out = {}
        for old, homes in MOVED.items():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                sys.modules.pop(old, None)
                module = importlib.import_module(old)
            news = [importlib.import_module(h) for h in homes]
            same = all(
                any(getattr(n, name, None) is value for n in news)
                for name, value in vars(module).items() if not name.startswith("_")
            )
            names = [name for name in vars(module) if not name.startswith("_")]
            out[old] = {
                "warnings": [str(w.message) for w in caught if w.category is DeprecationWarning],
                "same": same,
                "names": len(names),
            }
        print(json.dumps(out))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_a_moved_path_warns_naming_its_new_home_and_holds_the_same_objects() -> None:
    found = _import_each_old_path()
    assert sorted(found) == sorted(MOVED)
    for old, seen in found.items():
        assert isinstance(seen, dict)
        assert seen["same"], old
        assert seen["names"] > 0, old
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
