"""Small helpers shared by the CLI subcommands."""

from __future__ import annotations

import argparse
import sys
import typing
from typing import TextIO

from harness.errors import InputError


class CliError(InputError):
    """A problem the user can fix, found by the command line itself (an option, a folder); printed as one line by
    the boundary in :func:`harness.cli.main`, exit status 2 like every :class:`~harness.errors.InputError`."""


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1, with a message that names the bad value."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0 (seeds)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {value}")
    return value


class Progress:
    """A one-line progress bar on a terminal stream; silent when the stream is not a terminal."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None, force: bool = False) -> None:
        self.total = max(total, 1)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = force or self.stream.isatty()
        self._shown = -1

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        percent = done * 100 // self.total
        if percent == self._shown:
            return
        self._shown = percent
        filled = percent * 30 // 100
        bar = "#" * filled + "." * (30 - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{self.total} ({percent}%)")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self._shown >= 0:
            self.stream.write("\n")
            self.stream.flush()


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are a single line on stderr (exit status 2)."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def add_dialect_option(parser: argparse.ArgumentParser) -> None:
    """``--dialect NAME|module:Class``: the device dialect the bench's table speaks instead of its file's
    (``xocdia-hil dialects`` lists them)."""
    parser.add_argument(
        "--dialect",
        default=None,
        help="device dialect instead of the bench file's (a name from 'xocdia-hil dialects', or module:Class)",
    )
