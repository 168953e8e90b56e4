"""The serial trace's file, bounded: a size cap with rotation, so that a noisy or hostile line cannot fill the disk.

The trace is appended to ``PATH``; a write that would take ``PATH`` past ``max_bytes`` first rotates it:
``PATH.N-1`` → ``PATH.N`` ... ``PATH`` → ``PATH.1``, the oldest (``PATH.keep``) dropped, and a new ``PATH`` begun.
So the trace never takes more than ``max_bytes × (keep + 1)`` on disk (a single record longer than ``max_bytes``
is written whole into a file of its own). ``keep = 0`` keeps no old file: ``PATH`` is started afresh.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
DEFAULT_KEEP = 4


class RotatingTrace:
    """A text sink for the gateway's trace (``write`` and ``flush``), on one file rotated at ``max_bytes``.

    Not thread-safe: the gateway writes under its own lock. ``write`` raises ``OSError`` when the file cannot be
    written or rotated (a full disk), even when a first part of the text was written; the size counts the bytes
    that reached the file."""

    def __init__(self, path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES, keep: int = DEFAULT_KEEP) -> None:
        """Open ``path`` for appending (created if missing). Raises OSError when it cannot be."""
        if max_bytes < 1 or keep < 0:
            raise ValueError(f"trace: max_bytes must be >= 1 and keep >= 0; got {max_bytes}, {keep}")
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.keep = keep
        self._file = self.path.open("ab", buffering=0)
        self._size = self.path.stat().st_size

    def write(self, text: str) -> int:
        """Append ``text`` (UTF-8), rotating first when it would take the file past ``max_bytes``."""
        data = text.encode("utf-8")
        if self._size and self._size + len(data) > self.max_bytes:
            self._rotate()
        view = memoryview(data)
        while view:  # an unbuffered write may take only part of the bytes (the disk filling up): write the rest,
            written = self._file.write(view) or 0  # which raises once nothing more fits
            if written == 0:
                raise OSError(f"trace {self.path}: no byte written")
            self._size += written
            view = view[written:]
        return len(text)

    def flush(self) -> None:
        """Nothing is buffered: every write reaches the file at once."""

    def _rotate(self) -> None:
        self._file.close()
        if self.keep:
            for n in range(self.keep - 1, 0, -1):
                older = Path(f"{self.path}.{n}")
                if older.exists():
                    os.replace(older, f"{self.path}.{n + 1}")
            os.replace(self.path, f"{self.path}.1")
        self._file = self.path.open("wb", buffering=0)
        self._size = 0

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RotatingTrace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
