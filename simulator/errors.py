"""The project's one exception root: :class:`XocdiaError`, and :class:`InputError` for bad input.

Every error the simulator and the harness raise on purpose derives from :class:`XocdiaError`; bad input from a
person or a file (a profile, a script, a bench file, a fault schedule, an option) is an :class:`InputError`, which
is also a ``ValueError``. The root lives here, in the simulator, because the simulator is the bottom of the
project's dependency graph: it may import nothing from the harness (an import contract in ``pyproject.toml``), yet
its own errors must share the root with the harness's. :mod:`harness.errors` re-exports both, so the harness
imports them from there. The reference server (``gameserver``) keeps its own errors: it imports neither package.
"""

from __future__ import annotations


class XocdiaError(Exception):
    """The root of every error the project's own code raises on purpose; the message is for a person.

    The ``xocdia-hil`` command line catches it once, prints the message as one line and exits 2 for an
    :class:`InputError`, 1 for anything else.
    """


class InputError(XocdiaError, ValueError):
    """Bad input from a person or a file; the message names where (file, dotted field, option) and what is
    allowed."""
