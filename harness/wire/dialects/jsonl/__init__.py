"""``xocdia-jsonl`` (docs/dialects/xocdia-jsonl.md): a JSON-lines result reader over TCP, beside companion-dialect
lines for the other devices. :mod:`~harness.wire.dialects.jsonl.codec` is the wire format,
:mod:`~harness.wire.dialects.jsonl.ends` the reader's dialogue, :mod:`~harness.wire.dialects.jsonl.dialect` the
dialect (options, lines, ends)."""

from harness.wire.dialects.jsonl.codec import (
    DEFAULT_MIN_CONFIDENCE,
    MAX_LINE,
    MAX_SEQ,
    MAX_TS,
    VERSION,
    JsonlMap,
    LineFramer,
    golden_frame,
    jsonl_codec,
)
from harness.wire.dialects.jsonl.dialect import JsonlReaderDialect
from harness.wire.dialects.jsonl.ends import FAST_RETRIES, REMEMBER, RETRY_S, SLOW_RETRY_S, ReaderEnd, ReaderServerEnd

__all__ = [
    "DEFAULT_MIN_CONFIDENCE",
    "FAST_RETRIES",
    "MAX_LINE",
    "MAX_SEQ",
    "MAX_TS",
    "REMEMBER",
    "RETRY_S",
    "SLOW_RETRY_S",
    "VERSION",
    "JsonlMap",
    "JsonlReaderDialect",
    "LineFramer",
    "ReaderEnd",
    "ReaderServerEnd",
    "golden_frame",
    "jsonl_codec",
]
