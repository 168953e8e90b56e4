"""Device dialects: how a table's devices put its semantic messages on their lines (docs/dialects/README.md)."""

from harness.wire.dialects.base import (
    ComposedCodec,
    DeviceEnd,
    Dialect,
    DialectError,
    EndSettings,
    FrameCodec,
    Framer,
    Integrity,
    LineSpec,
    MessageMap,
    ServerEnd,
)
from harness.wire.dialects.capabilities import Forging, NoiseKind
from harness.wire.dialects.registry import DEFAULT_DIALECT, ENTRY_POINT_GROUP, dialect_class, load_dialect, plan_lines

__all__ = [
    "DEFAULT_DIALECT",
    "ENTRY_POINT_GROUP",
    "ComposedCodec",
    "DeviceEnd",
    "Dialect",
    "DialectError",
    "EndSettings",
    "Forging",
    "FrameCodec",
    "Framer",
    "Integrity",
    "LineSpec",
    "MessageMap",
    "NoiseKind",
    "ServerEnd",
    "dialect_class",
    "load_dialect",
    "plan_lines",
]
