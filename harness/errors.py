"""Every error the harness raises derives from :class:`XocdiaError`; bad input from a person or a file is an
:class:`InputError` (also a ``ValueError``). The CLI catches the root once and prints the message."""

from __future__ import annotations


class AdapterError(Exception):
    """The server refused a request or could not be reached. ``code`` is the server's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
