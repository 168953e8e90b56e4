"""The harness's errors. Every error the harness raises on purpose derives from :class:`XocdiaError`; bad input
from a person or a file is an :class:`InputError` (also a ``ValueError``). The CLI catches the root once, at its
boundary (:func:`harness.cli.main`), and prints the message as one line.

The root and :class:`InputError` are defined in :mod:`simulator.errors` and re-exported here: the simulator's own
errors (``ProfileError``, ``ScriptError``, ``DistributionError``) must share the root, and the simulator may not
import the harness, so the root lives at the bottom of the dependency graph. The harness imports them from here.

The tree (a domain error stays in its own module, deriving from the root)::

    XocdiaError                                   simulator.errors
    ├── InputError (also ValueError)              simulator.errors
    │   ├── ProfileError, ScriptError             simulator.profile, simulator.script
    │   ├── DistributionError                     simulator.distributions
    │   ├── BenchError                            harness.bench.config
    │   ├── ScheduleError                         harness.faults.schedule
    │   ├── RecordError                           harness.stats.readers
    │   ├── ReadingError, AllowListError          harness.rules.reading, harness.rules.audit
    │   ├── Refused                               here: a request refused on purpose (a safety rule)
    │   │   └── InjectionRefused                  harness.faults.prepare
    │   ├── MissingExtra                          here: an optional part of the package is not installed
    │   └── CliError                              harness.cli.common
    ├── AdapterError                              here
    ├── BenchTimeout (also AssertionError)        harness.bench.rig
    └── EncodeError, FieldError (also ValueError) harness.wire.text, harness.wire.text.fields
"""

from __future__ import annotations

import importlib.util

from simulator.errors import InputError, XocdiaError

__all__ = ["AdapterError", "InputError", "MissingExtra", "Refused", "XocdiaError", "require_extra"]


class AdapterError(XocdiaError):
    """The server refused a request or could not be reached. ``code`` is the server's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Refused(InputError):
    """A request the harness refuses on purpose (a safety rule, e.g. faults on a bench not marked as a fault
    target); the CLI prints ``refused:`` before the message."""


class MissingExtra(InputError):
    """A command needs an optional part of the package (an extra) that is not installed; the message names the
    ``pip install`` that adds it."""


def require_extra(extra: str, modules: dict[str, str], command: str) -> None:
    """Check that the distributions behind an extra are importable.

    ``modules`` maps an importable module name to the distribution that provides it (``{"pytest_bdd": "pytest-bdd"}``).

    Raises:
        MissingExtra: ``COMMAND needs DIST, ...: pip install 'xocdia-hil[EXTRA]'`` naming the missing ones.
    """
    missing = [dist for module, dist in modules.items() if importlib.util.find_spec(module) is None]
    if missing:
        raise MissingExtra(f"{command} needs {', '.join(missing)}, not installed: pip install 'xocdia-hil[{extra}]'")
