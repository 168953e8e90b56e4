"""A dialect for the campaign tests: the shipped ASCII dialect, which notes in the file named by the environment
variable ``XOCDIA_TEST_DIALECT_MARKS`` (when set) the process that built it, so a test sees which processes ran a
seed with it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from harness.wire.dialects.ascii import AsciiDialect

MARKS = "XOCDIA_TEST_DIALECT_MARKS"


class MarkerDialect(AsciiDialect):
    name = "test-marker"
    summary = "the ASCII dialect, noting each process that builds it"

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        path = os.environ.get(MARKS)
        if path:
            with open(path, "a", encoding="utf-8") as marks:
                marks.write(f"{os.getpid()}\n")
