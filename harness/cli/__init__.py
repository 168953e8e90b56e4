"""The ``xocdia-hil`` command line.

Each subcommand lives in its own module under ``harness.cli`` and exposes ``register(subparsers)``, which adds
its parser and sets ``func`` (``Callable[[argparse.Namespace], int]``) as the handler. A new subcommand is one new
module and one line in :data:`SUBCOMMANDS`.

Errors are handled once, here, at the boundary (:func:`main`): every :class:`~harness.errors.XocdiaError` that a
subcommand lets through is printed as one line, ``xocdia-hil: error: MESSAGE`` (``refused: MESSAGE`` for a
:class:`~harness.errors.Refused` request), with exit status 2 for an :class:`~harness.errors.InputError` (bad
arguments, bad files: the user can fix them; :class:`~harness.cli.common.CliError` is the command line's own) and
1 for any other (the bench or the server failed). Subcommands raise or let errors through; they catch one only to
add context the message alone would not give (``cannot start bench NAME: ...``) or to choose another outcome.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.metadata
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from harness.cli.common import OneLineParser
from harness.errors import InputError, Refused, XocdiaError

SUBCOMMANDS: tuple[str, ...] = (
    "harness.cli.simulate",
    "harness.cli.rtp",
    "harness.cli.audit",
    "harness.cli.devices",
    "harness.cli.inject",
    "harness.cli.campaign",
    "harness.cli.certify",
    "harness.cli.run",
    "harness.cli.rules_audit",
    "harness.cli.dialects",
    "harness.cli.replay",
    "harness.cli.init",
    "harness.cli.fixtures",
    "harness.cli.docs",
    "harness.cli.examples",
    "harness.cli.bench",
    "harness.cli.evidence",
    "harness.cli.verify",
)


def _command(module_name: str) -> str:
    """The subcommand a module registers: its last name, ``_`` written ``-`` (``rules_audit`` → ``rules-audit``)."""
    return module_name.rsplit(".", 1)[1].replace("_", "-")


def version() -> str:
    """The installed distribution's version (``0.1.0``); ``unknown`` when the package is not installed (a bare
    checkout on ``PYTHONPATH``). Never raises."""
    try:
        return importlib.metadata.version("xocdia-hil")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every registered subcommand, or with just ``only`` (a subcommand name).

    Building a single subcommand's parser imports only its module, so ``xocdia-hil simulate`` does not pay for
    scipy and matplotlib, which other subcommands need.
    """
    parser = OneLineParser(
        prog="xocdia-hil",
        description="Hardware-in-the-loop bench and certification harness for the live Xoc Dia table.",
    )
    parser.add_argument("--version", action="version", version=f"xocdia-hil {version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=OneLineParser)
    for module_name in SUBCOMMANDS:
        if only is None or _command(module_name) == only:
            importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit status (0 ok, 1 a check failed or the bench failed, 2 a usage or input
    error)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    names = {_command(module_name) for module_name in SUBCOMMANDS}
    parser = build_parser(args_list[0] if args_list and args_list[0] in names else None)
    args = parser.parse_args(args_list)
    previous = _stop_on_sigterm()
    try:
        status: int = args.func(args)
    except XocdiaError as exc:  # the one place the harness's errors become a line of text and an exit status
        refused = "refused: " if isinstance(exc, Refused) else ""
        print(f"xocdia-hil: error: {refused}{exc}", file=sys.stderr)
        return 2 if isinstance(exc, InputError) else 1
    except KeyboardInterrupt:
        print("xocdia-hil: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `xocdia-hil simulate ... | head`: the reader left, nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return status


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _stop_on_sigterm() -> Any:
    """SIGTERM ends a command as Ctrl-C does: ``finally`` blocks and context managers run, so temporary ports,
    links, folders and servers are released. Only in the main thread (where signal handlers can be set); returns
    the handler it replaced (None when it set none), for :func:`main` to put back."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _interrupt)


def console() -> int:
    """The ``xocdia-hil`` console script: :func:`main`, then a quick exit.

    The process ends right after, so its last garbage collection is skipped (``gc.freeze``): a simulation keeps
    millions of ground-truth events alive in reference cycles (the SimPy world), and collecting them only to hand
    the memory back to the operating system takes seconds after a long run (docs/performance.md). Files are still
    flushed and closed as usual; only the cyclic collector's final pass is left out.
    """
    status = main()
    gc.freeze()
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console())
